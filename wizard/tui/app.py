"""WizardApp: owns the Session, maps each Stage to its screen, runs the run service on a worker thread.

The engine's events go into one deque (its callback does nothing else, so a flood never blocks the
runner); a 15 Hz timer drains it in order, folds each event into ``session.run`` and hands the output
lines to the current screen's log pane in one batch (style.md C1). Moves implied by the run (failed,
reboot, verify, done, stopped) and the user's typed messages (``wizard.tui.messages``) go through
``Session.fire``; screens never pick the next screen themselves. Runs go through the same run service
as the CLI: the same lock, the same refusal of a new plan while another run is unfinished, a retry
bound to the run that failed.
"""

from __future__ import annotations

import importlib
import os
import threading
from collections import deque
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.notifications import SeverityLevel

from wizard import exit_codes
from wizard.runner import events as ev
from wizard.runner.records import RunState
from wizard.runner.signals import StopRequest
from wizard.session import IllegalTransition, Move, RunProgress, Session, Stage
from wizard.tui.messages import (MoveRequested, PlanChosen, ResumeRequested, RetryRequested, RollbackRequested,
                                 RunConfirmed, RunUpdated)
from wizard.tui.services import SUDO_REASON, Services

if TYPE_CHECKING:
    from wizard.tui.screens.base import StageScreen

# each stage's screen, as (module in wizard.tui.screens, class): a module is imported when its first screen is
# shown, so the first screen does not wait for the others
SCREENS: dict[Stage, tuple[str, str]] = {
    Stage.DETECT: ("machine", "DetectScreen"), Stage.DIAGNOSE: ("machine", "DiagnoseScreen"),
    Stage.CHOOSE: ("plans", "ChooseScreen"), Stage.REVIEW: ("plans", "ReviewScreen"),
    Stage.CONFIRM: ("plans", "ConfirmScreen"), Stage.RUN: ("run", "RunScreen"), Stage.FAILED: ("run", "FailedScreen"),
    Stage.REBOOT: ("run", "RebootScreen"), Stage.RESUME: ("run", "ResumeScreen"),
    Stage.VERIFY: ("results", "VerifyScreen"), Stage.REPORT: ("results", "ReportScreen"),
}
FLUSH_HZ = 15
# how long a toast stays, by severity: a glance for news, a little longer for what went wrong (the screen keeps it)
TOAST_SECONDS: dict[str, float] = {"information": 4.0, "warning": 8.0, "error": 8.0}


def screen_class(stage: Stage) -> type[StageScreen]:
    module, name = SCREENS[stage]
    cls: type[StageScreen] = getattr(importlib.import_module(f"wizard.tui.screens.{module}"), name)
    return cls


class Job(str, Enum):
    START = "start"
    RESUME = "resume"  # after a reboot or an interruption, or a retry after a failure
    ROLLBACK = "rollback"


class WizardApp(App[int]):
    CSS_PATH = Path(__file__).with_name("wizard.tcss")
    TITLE = "rocm-wizard"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("ctrl+c", "interrupt", "Quit", show=False, priority=True),
        Binding("ctrl+t", "toggle_theme", "Theme", show=False),
    ]

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """Notifications carry paths, commands and errors: always shown literally, never parsed as markup. They
        are short-lived (``TOAST_SECONDS`` by severity, never longer): what must stay is on the screen itself."""
        limit = TOAST_SECONDS[severity]
        App.notify(self, message, title=title, severity=severity, timeout=min(timeout or limit, limit), markup=False)

    def __init__(self, services: Services, session: Session | None = None, *, theme: str | None = None) -> None:
        super().__init__()
        self.services = services
        self.session = session if session is not None else services.new_session()
        self.events: deque[ev.Event] = deque()
        self.cancel = StopRequest()
        self.running = False
        self.quitting = False
        self.reboot_now = False
        self._last_outcome: Any = None
        self.last_job: Job | None = None  # what the last run job was (a retry repeats a start that never began)
        self.verified: str | None = None  # the Report's "verify again" summary line
        self.theme = theme or os.environ.get("ROCM_WIZARD_THEME") or "textual-dark"

    # ------------------------------------------------------------------ stages
    @property
    def can_rehearse(self) -> bool:
        return self.services.host.name == "live" and not self.services.read_only

    @property
    def needs_sudo(self) -> bool:
        runs, plan = self.services.runs, self.session.resolved
        return bool(runs is not None and plan is not None and runs.needs_authentication(plan))

    def on_mount(self) -> None:
        if self.session.pending is not None and not self.session.read_only:
            self.session.stage = Stage.RESUME
        self.set_interval(1 / FLUSH_HZ, self.drain)
        self.push_screen(screen_class(self.session.stage)())
        if not self.is_headless:
            self._catch_stop_signals()

    def _catch_stop_signals(self) -> None:
        """SIGTERM and SIGHUP (the terminal closed, a kill): stopped as a run started by the CLI is, the journal
        recording the stop and the signal that asked for it; then the wizard exits 1."""
        import asyncio
        import signal

        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(sig, self._stop_signal, sig.name)

    def _stop_signal(self, name: str) -> None:
        if self.running:
            self.quitting = True
            self.cancel.request(f"interrupted by {name}")
            return
        self.exit(exit_codes.FAILURE, return_code=exit_codes.FAILURE, message=self.stop_message())

    def show_stage(self) -> None:
        self.switch_screen(screen_class(self.session.stage)())

    def fire(self, move: Move) -> bool:
        try:
            self.session.fire(move)
        except IllegalTransition as exc:
            self.notify(str(exc), severity="warning")
            return False
        if move in (Move.LATER, Move.NEXT, Move.BACK, Move.RESTART) and self.services.runs is not None:
            self.session.blocked = self.services.runs.blocked()
            self.session.pending = None if self.session.read_only else self.services.runs.pending()
        self.show_stage()
        return True

    @on(MoveRequested)
    def _move(self, msg: MoveRequested) -> None:
        if msg.move is Move.LATER:
            if self.fire(Move.LATER):
                self.notify("u offers it again (resume, roll back or abandon)", title="the run stays pending")
        elif msg.move is Move.PENDING:
            s = self.session
            if s.pending is not None and self.fire(Move.PENDING):
                s.chosen = s.resolved = None  # a resume or a rollback goes on with the pending run's own plan
        else:
            self.fire(msg.move)

    def abandon(self, run_id: str) -> None:
        """Forget the pending run (nothing on the machine changes), then go on as with "Later"."""
        from wizard.runner.service import RunError

        runs = self.services.runs
        if runs is None:
            return
        try:
            line = runs.abandon(run_id)
        except RunError as exc:
            self.notify(exc.message, title="not abandoned", severity="error")
            return
        if self.session.can(Move.LATER):
            self.fire(Move.LATER)
        self.notify(line, title="abandoned")

    @on(PlanChosen)
    def _chosen(self, msg: PlanChosen) -> None:
        self.choose(msg.spec)

    @on(RunConfirmed)
    def _confirmed(self) -> None:
        runs = self.services.runs
        blocked = runs.blocked() if runs is not None else None
        if blocked:
            self.session.blocked = blocked
            self.notify(blocked, title="a new plan cannot start", severity="error")
            return
        if self.authenticate() and self.fire(Move.YES):
            self.start_job(Job.START)

    @property
    def start_refused(self) -> bool:
        """The last job was a new run the run service refused before it recorded one (a plan made for another
        machine, the lock held): no run exists to retry, resume or roll back; the machine's runs are as they were."""
        return self.last_job is Job.START and self.session.run.run_id is None and self.session.run.failure is None

    @on(RetryRequested)
    def _retry(self, msg: RetryRequested) -> None:
        if self.session.can(Move.RETRY) and self.authenticate() and self.fire(Move.RETRY):
            if self.start_refused:  # starting it again, never resuming the machine's last run instead
                self.start_job(Job.START)
            else:
                self.start_job(Job.RESUME, msg.run_id)

    @on(ResumeRequested)
    def _resume(self, msg: ResumeRequested) -> None:
        if self.session.can(Move.RESUME) and self.authenticate() and self.fire(Move.RESUME):
            self.start_job(Job.RESUME, msg.run_id)

    @on(RollbackRequested)
    def _rollback(self, msg: RollbackRequested) -> None:
        from wizard.runner.service import RunError
        from wizard.tui.screens.run import RollbackModal, rollback_text

        runs = self.services.runs
        if runs is None or not self.session.can(Move.ROLLBACK):
            return
        try:
            _, rb = runs.rollback_plan(msg.run_id)
        except RunError as exc:
            self.notify(exc.message, title="cannot roll back", severity="error")
            return

        def answered(yes: bool | None) -> None:
            if yes and self.authenticate(rollback=True) and self.fire(Move.ROLLBACK):
                self.start_job(Job.ROLLBACK, msg.run_id)

        self.push_screen(RollbackModal(rollback_text(rb.actions, rb.cannot), True), answered)

    def choose(self, spec: str) -> None:
        from wizard.planner import PlanError, PlanRefused

        s = self.session
        runs = self.services.runs
        if runs is not None:
            s.blocked = runs.blocked()
            if s.blocked:
                self.notify(s.blocked, title="a new plan cannot start", severity="error")
                self.show_stage()
                return
        try:
            plan = self.services.resolve(spec, venv=s.venv)
        except PlanRefused as exc:
            self.refuse(spec, tuple(exc.reasons), f"{spec} is refused for this machine")
            return
        except PlanError as exc:
            self.refuse(spec, (str(exc),), f"cannot open {spec}")
            return
        s.chosen, s.resolved, s.resolve_error, s.refused = spec, plan, (), None
        s.run = RunProgress.for_plan(plan)
        self.fire(Move.CHOOSE)

    def refuse(self, spec: str, reasons: tuple[str, ...], headline: str) -> None:
        """A plan that cannot be opened: its reasons go on Choose's refusal banner, the toast only points there."""
        s = self.session
        s.refused, s.resolve_error = spec, reasons
        screen = self.stage_screen()
        if screen is not None and hasattr(screen, "show_refusal"):
            screen.show_refusal()
        self.notify("the reasons are at the top of the screen", title=headline, severity="error")

    # ------------------------------------------------------------------ sudo
    def authenticate(self, *, rollback: bool = False) -> bool:
        runs = self.services.runs
        if runs is None:
            return True
        if rollback:
            try:
                _, rb = runs.rollback_plan()
            except Exception:  # noqa: BLE001 - the rollback itself reports why it cannot run
                return True
            need = runs.machine.executor.needs_authentication([a for _, a in rb.actions])
        else:
            plan = self.session.resolved if self.session.stage == Stage.CONFIRM else runs.current_plan()
            need = plan is not None and runs.needs_authentication(plan)
        if not need:
            return True
        ok = self.services.authenticator(self, SUDO_REASON)
        if not ok:
            self.notify("sudo did not grant administrator rights; nothing was changed", severity="error")
        return ok

    # ------------------------------------------------------------------ running
    def start_job(self, job: Job, run_id: str | None = None) -> None:
        runs = self.services.runs
        if runs is None:
            self.session.run.error = "this machine is read-only here (a recorded bundle)"
            self.fire(Move.FAILED)
            return
        if job is not Job.START and self.session.resolved is None:
            plan = runs.current_plan()
            if plan is not None:
                self.session.resolved = plan
                self.session.chosen = plan.name
                self.session.run = RunProgress.for_plan(plan)
        self.cancel = StopRequest()
        self.running = True
        self.last_job = job
        self.session.run.error = None
        if job is Job.ROLLBACK:
            self.session.run.failure = None
        self._run_worker(job, run_id)

    @work(thread=True, exclusive=True, group="runner", exit_on_error=False)
    def _run_worker(self, job: Job, run_id: str | None) -> None:
        from wizard.runner.service import RunError

        runs = self.services.runs
        assert runs is not None
        outcome: Any = None
        error: str | None = None
        granted = lambda: None  # noqa: E731 - root was asked for on the UI thread, before this worker
        try:
            if job is Job.START:
                assert self.session.resolved is not None
                outcome = runs.start(self.session.resolved, on_event=self.events.append, authenticate=granted,
                                     ask_reboot=self._ask_reboot, cancel=self.cancel)
            elif job is Job.ROLLBACK:
                outcome = runs.rollback(run_id=run_id, on_event=self.events.append, authenticate=granted,
                                        cancel=self.cancel)
            else:
                outcome = runs.resume(run_id=run_id, on_event=self.events.append, authenticate=granted,
                                      ask_reboot=self._ask_reboot, cancel=self.cancel)
        except RunError as exc:
            error = exc.message
        except Exception as exc:  # noqa: BLE001 - shown on the Failed screen, never a traceback
            error = f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc)
        self.call_from_thread(self._run_ended, outcome, error)

    def _ask_reboot(self) -> bool:
        """Called by the engine on its thread: ask on the UI thread, wait for the answer."""
        from wizard.tui.screens.run import RebootModal, reboot_question

        answer: dict[str, bool] = {}
        done = threading.Event()

        def ask() -> None:
            self.drain()
            run = self.session.run
            step = run.steps[run.current].title if run.current is not None and run.steps else "Reboot"
            text = reboot_question(self.session.resolved.title if self.session.resolved else "the plan", step,
                                   self.services.relaunch_hint)

            def answered(now: bool | None) -> None:
                answer["now"] = bool(now)
                done.set()

            self.push_screen(RebootModal(text), answered)

        self.call_from_thread(ask)
        while not done.wait(0.1):
            if self.cancel.is_set():
                return False
        self.reboot_now = answer.get("now", False)
        return self.reboot_now

    def drain(self) -> None:
        """Fold queued engine events into the session (``RunProgress``, the fold the CLI's view keeps too), in
        order; then one typed update (``RunUpdated``, the new output lines) per tick to the stage's screen, which a
        screen not mounted yet receives as a message after its mount (``StageScreen.deliver``)."""
        if not self.events:
            return
        lines: list[str] = []
        implied: list[Move] = []
        run = self.session.run
        with self.batch_update():
            while self.events:
                e = self.events.popleft()
                if isinstance(e, ev.OutputLines):
                    lines.extend(e.lines)
                m = run.apply(e)
                if m is not None:
                    implied.append(m)
            screen = self.stage_screen()
            if screen is not None:  # never before the screen is mounted (then the update waits as a message)
                screen.deliver(RunUpdated(tuple(lines)))
        for m in implied:
            if self.session.can(m):
                self.fire(m)

    def stage_screen(self) -> StageScreen | None:
        """The stage's screen: the top one, or the one under the dialogs above it."""
        from wizard.tui.screens.base import StageScreen

        return next((sc for sc in reversed(self.screen_stack) if isinstance(sc, StageScreen)), None)

    def _run_ended(self, outcome: Any, error: str | None) -> None:
        self.running = False
        self.drain()
        self._last_outcome = outcome
        s = self.session
        if self.services.runs is not None:
            s.blocked = self.services.runs.blocked()
        if error is not None or (outcome is not None and outcome.state is RunState.FAILED and s.run.failure is None):
            s.run.error = error or outcome.message
            s.run.state = RunState.FAILED
            if s.can(Move.FAILED):
                self.fire(Move.FAILED)
            self.notify(s.run.error or "", title="the run could not go on", severity="error")
        elif outcome is not None and outcome.state in (RunState.ROLLED_BACK, RunState.ROLLBACK_FAILED,
                                                       RunState.ROLLING_BACK):
            s.run.state = outcome.state
            s.run.reboot_needed = outcome.reboot_needed
            s.run.skipped = tuple(f"not restorable: {c}" for c in outcome.skipped)
            self.notify(outcome.message, title="rolled back" if outcome.state is RunState.ROLLED_BACK
                        else "the rollback was stopped" if outcome.state is RunState.ROLLING_BACK
                        else "the rollback failed",
                        severity="information" if outcome.state is RunState.ROLLED_BACK else "error")
            for mv in (Move.STOPPED, Move.STOP):
                if s.can(mv):
                    self.fire(mv)
                    break
        if self.quitting:
            self.exit(exit_codes.FAILURE, return_code=exit_codes.FAILURE, message=self.stop_message())
        elif outcome is not None and outcome.state is RunState.REBOOT_PENDING and self.reboot_now:
            self.exit(exit_codes.REBOOT_PENDING, return_code=exit_codes.REBOOT_PENDING,
                      message=f"rocm-wizard: rebooting; run {outcome.run_id} is reboot-pending.\n"
                      f"After the boot, run `{self.services.relaunch_hint}`: it offers to resume.")

    # ------------------------------------------------------------------ leaving
    def stop_message(self) -> str:
        run = self.session.run
        if run.run_id:
            return (f"rocm-wizard: stopped; the journal is consistent ({run.journal}).\n"
                    f"Run `{self.services.relaunch_hint}` (or `{self.services.relaunch_hint} resume`) to continue.")
        return "rocm-wizard: nothing was changed."

    def action_interrupt(self) -> None:
        if self.running:
            self.quitting = True
            self.cancel.set()
            self.notify("stopping the current command; the journal stays consistent…", severity="warning")
            return
        self.exit(exit_codes.FAILURE, return_code=exit_codes.FAILURE, message=self.stop_message())

    def action_quit_wizard(self) -> None:
        s = self.session
        if s.stage == Stage.REBOOT:
            self.exit(exit_codes.REBOOT_PENDING, return_code=exit_codes.REBOOT_PENDING,
                      message=f"rocm-wizard: reboot pending. {s.run.reboot_message or ''}\n"
                      f"After the boot, run `{self.services.relaunch_hint}`: it offers to resume.")
            return
        from wizard.tui.screens.results import exit_summary

        code = exit_codes.OK
        bad = s.run.state in (RunState.FAILED, RunState.STOPPED, RunState.ROLLBACK_FAILED)
        if bad:
            code = exit_codes.FAILURE
        summary = exit_summary(s, self.verified) if s.stage == Stage.REPORT else None
        self.exit(code, return_code=code, message=summary or (self.stop_message() if bad else None))

    def action_help(self) -> None:
        from wizard.tui.screens.modals import HelpModal

        screen = self.screen
        keys: list[tuple[str, str]] = []
        for b in screen.BINDINGS:  # the screen's own keys that work now (the footer's, and the hidden ones)
            if not isinstance(b, Binding) or not b.description:
                continue
            action = b.action.split("(", 1)[0]
            if action.startswith("app.") or screen.check_action(action, ()) is not False:
                keys.append((b.key_display or b.key.replace(",", ", "), b.description))
        self.push_screen(HelpModal(keys, self.services.relaunch_hint))

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"

    def export_to(self, path: str) -> None:
        """Write the dry-run script where the user said (Review's export dialog)."""
        s = self.session
        if s.resolved is None:
            return
        try:
            written = self.services.export_script(s.resolved, Path(path).expanduser())
        except OSError as exc:  # an unwritable place is a message, not a crash
            self.notify(f"could not write {path}: {exc.strerror or exc}", title="not exported", severity="error")
            return
        s.exported = str(written)
        self.notify(f"dry-run script written: {written}", title="exported")

    def plan_options(self) -> list[Any]:
        """Every plan for this machine, resolved once, when Choose is first shown (not before the first screen)."""
        s = self.session
        if not s.options:
            s.options = self.services.plan_options()
        return s.options

    def findings(self) -> list[Any]:
        """The machine's diagnosis, made when Diagnose is first shown (the first screen does not wait for it)."""
        s = self.session
        if s.findings is None:
            from wizard.diagnose import diagnose

            s.findings = list(diagnose(self.services.for_diagnosis(s.facts), error_text=s.facts.error_text))
        return s.findings

    def diagnose_text(self, text: str) -> None:
        """Diagnose again with the error text the user pasted (as the CLI's --error-file)."""
        from wizard.diagnose import diagnose

        s = self.session
        if len(text.encode("utf-8", "replace")) > 8 << 20:
            self.notify("more than 8 MiB: paste the relevant part", severity="error")
            return
        s.error_text = "\n".join(t for t in (s.facts.error_text, text) if t)
        s.findings = list(diagnose(self.services.for_diagnosis(s.facts), error_text=s.error_text))
        self.show_stage()
        self.notify(f"diagnosed with the pasted text ({len(text.splitlines())} lines)")

    def verify_again(self) -> None:
        s = self.session
        if s.resolved is None or self.running:
            return
        self.notify("verifying again: each check in its own process…")
        self._verify_worker(s.resolved)

    @work(thread=True, exclusive=True, group="verify", exit_on_error=False)
    def _verify_worker(self, plan: Any) -> None:
        try:
            line = self.services.verify_again(plan)
        except Exception as exc:  # noqa: BLE001 - shown as a message, never a traceback
            self.call_from_thread(self.notify, str(getattr(exc, "args", [exc])[0] if exc.args else exc),
                                  title="not verified", severity="warning")
            return
        self.call_from_thread(self._verified, line)

    def _verified(self, line: str) -> None:
        self.verified = line
        if hasattr(self.screen, "show"):
            self.screen.show()
        self.notify(line, title="verified again", severity="information" if " OK: " in line else "error")

    def write_bundle(self, path: str) -> None:
        try:
            line = self.services.write_bundle(str(Path(path).expanduser()))
        except (ValueError, OSError) as exc:
            self.notify(str(exc), title="no bundle written", severity="error")
            return
        self.notify(line, title="evidence bundle")

    def choose_venv(self, venv: str | None) -> None:
        """Re-plan the chosen plan into another venv (None: the planner's default); a refusal keeps the old plan."""
        from wizard.planner import PlanError, PlanRefused

        s = self.session
        if s.chosen is None:
            return
        try:
            plan = self.services.resolve(s.chosen, venv=venv)
        except PlanRefused as exc:
            self.notify("\n".join(f"✘ {r}" for r in exc.reasons), title=f"{venv or 'the default venv'} is refused",
                        severity="error")
            return
        except PlanError as exc:
            self.notify(str(exc), severity="error")
            return
        s.venv, s.resolved = venv, plan
        s.run = RunProgress.for_plan(plan)
        self.show_stage()

    @property
    def real_root_unavailable(self) -> str | None:
        """Why the rehearsal cannot use a real Debian 12 root here (what to install), or None."""
        if not hasattr(self, "_real_root_why"):
            from wizard.tui.services import real_root_unavailable

            self._real_root_why = real_root_unavailable()
        return self._real_root_why

    def action_rehearse(self, real: bool = False) -> None:
        """``r``: pick a built-in machine and rehearse in the stand-in sandbox; ``d``: the same on a real
        Debian 12 root where mmdebstrap is available (else the stand-in sandbox, saying what to install).
        A machine used before asks whether to continue it or start over."""
        if not self.can_rehearse:
            self.notify("a rehearsal starts from a live machine; this one is already "
                        f"{self.services.host.name}", severity="warning")
            return
        if real and self.real_root_unavailable:
            self.notify(f"no real root here: {self.real_root_unavailable}; rehearsing in the stand-in sandbox",
                        severity="warning")
            real = False
        from wizard.tui.screens.modals import RehearsalModal, StartOverModal

        def picked(profile: str | None) -> None:
            if profile is None:
                return
            if real:
                chosen(profile)
            else:
                self.with_verify_torch(lambda: chosen(profile))

        def chosen(profile: str) -> None:
            if not self.services.rehearsal_used(profile, real=real):
                self.open_rehearsal(profile, real=real)
                return

            def answered(choice: str | None) -> None:
                if choice is not None:
                    self.open_rehearsal(profile, real=real, reset=choice == "reset")

            self.push_screen(StartOverModal(profile, str(self.services.rehearsal_dir(profile, real=real))), answered)

        self.push_screen(RehearsalModal(self.services, real=real), picked)

    def with_verify_torch(self, go: Callable[[], None]) -> None:
        """Before a stand-in rehearsal: find a CPU torch for its Verify step, or offer to make one; declined,
        say loudly that the rehearsal will not be verified."""
        from wizard.tui.screens.modals import VerifyTorchModal
        from wizard.tui.services import NO_TORCH

        found = self.services.find_cpu_torch()
        if found is not None:
            self.services.verify_python = found
            go()
            return

        def answered(choice: str | None) -> None:
            if choice == "make":
                self.notify(f"making a CPU torch in {self.services.cpu_torch_dir()} (minutes)…")
                self._make_torch_worker(go)
            elif choice == "skip":
                self.notify(f"{NO_TORCH}: this rehearsal's Verify step will be skipped and the run NOT verified "
                            "(--verify-python PATH verifies it)", title="NOT verified", severity="warning")
                go()

        self.push_screen(VerifyTorchModal(self.services.cpu_torch_commands()), answered)

    @work(thread=True, exclusive=True, group="cpu-torch", exit_on_error=False)
    def _make_torch_worker(self, go: Callable[[], None]) -> None:
        from wizard.tui.services import NO_TORCH

        from wizard.sandbox.cpu_torch import size_text

        try:
            made = self.services.make_cpu_torch()
        except (ValueError, OSError) as exc:
            self.call_from_thread(self.notify, f"{exc}; {NO_TORCH}: the rehearsal will NOT be verified",
                                  title="no CPU torch", severity="error")
        else:
            self.services.verify_python = made.python
            tried = f" (before it: {'; '.join(made.failures)})" if made.failures else ""
            self.call_from_thread(self.notify, f"CPU torch ready from {made.source}, downloaded "
                                  f"{size_text(made.downloaded_bytes)}{tried}; the rehearsal verifies with it")
        self.call_from_thread(go)

    def open_rehearsal(self, profile: str, *, real: bool = False, reset: bool = False) -> None:
        if real:
            self.notify("building a real Debian 12 root with the profile's starting stack (the first time takes a "
                        "minute or more; later uses reopen it)")
            self._open_rehearsal_worker(profile, reset)
            return
        self._open_rehearsal(profile, False, reset)

    @work(thread=True, exclusive=True, group="rehearsal")
    def _open_rehearsal_worker(self, profile: str, reset: bool) -> None:
        self._open_rehearsal(profile, True, reset)

    def _open_rehearsal(self, profile: str, real: bool, reset: bool) -> None:
        try:
            if reset:
                self.services.reset_rehearsal(profile, real=real)
            services = self.services.rehearsal(profile, real=real)
            session = services.new_session()
        except Exception as exc:  # noqa: BLE001
            self._notify_any_thread(f"could not open the rehearsal machine: {exc}", "error")
            return
        if real:
            self.call_from_thread(self._enter_rehearsal, services, session, profile, real)
        else:
            self._enter_rehearsal(services, session, profile, real)

    def _notify_any_thread(self, message: str, severity: str) -> None:
        if threading.current_thread() is threading.main_thread():
            self.notify(message, severity=severity)  # type: ignore[arg-type]
        else:
            self.call_from_thread(self.notify, message, severity=severity)

    def _enter_rehearsal(self, services: Services, session: Session, profile: str, real: bool) -> None:
        where = self.services.rehearsal_dir(profile, real=real)
        self.services.close()
        self.services, self.session = services, session
        if session.pending is not None:
            session.stage = Stage.RESUME
        self.show_stage()
        self.notify(f"rehearsal machine {profile} in {where}; every step runs there, nothing touches this machine")

    def on_unmount(self) -> None:
        self.services.close()

    def plan_file(self) -> str | None:
        runs = self.services.runs
        run = runs.current() if runs is not None else None
        return str(run.plan_path) if run is not None and self.session.run.run_id else None


def make_app(services: Services, session: Session | None = None, *, theme: str | None = None) -> WizardApp:
    return WizardApp(services, session, theme=theme)


__all__ = ["WizardApp", "make_app"]
