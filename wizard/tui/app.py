"""WizardApp: owns the Session, maps each Stage to its screen, runs the engine on a worker thread.

The engine's events go into one deque (its callback does nothing else, so a flood never blocks the
runner); a 15 Hz timer drains it in order, folds each event into ``session.run`` and hands the output
lines to the current screen's log pane in one batch (style.md C1). Machine events implied by the
run (failed, reboot, verify, done, stopped) and by the user (``Advance`` messages) go through
``Session.fire``; screens never pick the next screen themselves.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import App
from textual.binding import Binding

from wizard import exit_codes
from wizard.session import IllegalTransition, RunState, Session, Stage
from wizard.tui.messages import Advance
from wizard.tui.screens.base import StageScreen
from wizard.tui.screens.machine import DetectScreen, DiagnoseScreen
from wizard.tui.screens.modals import HelpModal
from wizard.tui.screens.plans import ChooseScreen, ConfirmScreen, ReviewScreen
from wizard.tui.screens.results import ReportScreen, VerifyScreen
from wizard.tui.screens.run import (FailedScreen, RebootModal, RebootScreen, ResumeScreen, RunScreen,
                                    reboot_question)
from wizard.tui.services import SUDO_REASON, Services

SCREENS: dict[Stage, type[StageScreen]] = {
    Stage.DETECT: DetectScreen, Stage.DIAGNOSE: DiagnoseScreen, Stage.CHOOSE: ChooseScreen,
    Stage.REVIEW: ReviewScreen, Stage.CONFIRM: ConfirmScreen, Stage.RUN: RunScreen, Stage.FAILED: FailedScreen,
    Stage.REBOOT: RebootScreen, Stage.RESUME: ResumeScreen, Stage.VERIFY: VerifyScreen, Stage.REPORT: ReportScreen,
}
FLUSH_HZ = 15


class WizardApp(App[int]):
    CSS_PATH = Path(__file__).with_name("wizard.tcss")
    TITLE = "rocm-wizard"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("ctrl+c", "interrupt", "Quit", show=False, priority=True),
        Binding("ctrl+t", "toggle_theme", "Theme", show=False),
    ]

    def __init__(self, services: Services, session: Session | None = None, *, theme: str | None = None) -> None:
        super().__init__()
        self.services = services
        self.session = session if session is not None else services.new_session()
        self.events: deque[Any] = deque()
        self.cancel = threading.Event()
        self.running = False
        self.quitting = False
        self.reboot_now = False
        self._last_outcome: Any = None
        self.theme = theme or os.environ.get("ROCM_WIZARD_THEME") or "textual-dark"

    # ------------------------------------------------------------------ stages
    @property
    def can_rehearse(self) -> bool:
        return self.services.host.name == "live" and not self.services.read_only

    @property
    def needs_sudo(self) -> bool:
        rc, plan = self.services.run_control, self.session.resolved
        return bool(rc is not None and plan is not None and rc.needs_sudo(plan))

    def on_mount(self) -> None:
        if self.session.pending is not None and not self.session.read_only:
            self.session.stage = Stage.RESUME
        self.set_interval(1 / FLUSH_HZ, self.drain)
        self.push_screen(SCREENS[self.session.stage]())

    def show_stage(self) -> None:
        self.switch_screen(SCREENS[self.session.stage]())

    def fire(self, event: str) -> bool:
        try:
            self.session.fire(event)
        except IllegalTransition as exc:
            self.notify(str(exc), severity="warning")
            return False
        self.show_stage()
        return True

    @on(Advance)
    def _advance(self, msg: Advance) -> None:
        s = self.session
        if msg.event == "choose":
            self.choose(msg.arg or "")
        elif msg.event == "yes":
            if self.authenticate() and self.fire("yes"):
                self.start_run("start")
        elif msg.event in ("retry", "resume"):
            if self.session.can(msg.event) and self.authenticate() and self.fire(msg.event):
                self.start_run(msg.event)
        elif msg.event == "rollback":
            if s.can("rollback") and self.fire("rollback"):
                self.start_run("rollback")
        elif msg.event == "later":
            if self.fire("later"):
                self.notify(f"the run stays pending; `{self.services.relaunch_hint}` offers it again")
        else:
            self.fire(msg.event)

    def choose(self, spec: str) -> None:
        from wizard.planner import PlanError, PlanRefused

        s = self.session
        try:
            plan = self.services.resolve(spec, s.facts)
        except PlanRefused as exc:
            s.resolve_error = tuple(exc.reasons)
            self.notify("\n".join(f"✘ {r}" for r in exc.reasons), title=f"{spec} is refused for this machine",
                        severity="error", timeout=12)
            return
        except PlanError as exc:
            s.resolve_error = (str(exc),)
            self.notify(str(exc), title="cannot open this plan", severity="error", timeout=12)
            return
        s.chosen, s.resolved, s.resolve_error = spec, plan, ()
        s.run = RunState.for_plan(plan)
        self.fire("choose")

    # ------------------------------------------------------------------ sudo
    def authenticate(self) -> bool:
        rc = self.services.run_control
        plan = self.session.resolved if self.session.stage == Stage.CONFIRM else (rc.current_plan() if rc else None)
        if rc is None or plan is None or not rc.needs_sudo(plan):
            return True
        ok = self.services.authenticator(self, SUDO_REASON)
        if not ok:
            self.notify("sudo did not grant administrator rights; nothing was changed", severity="error")
        return ok

    # ------------------------------------------------------------------ running
    def start_run(self, mode: str) -> None:
        rc = self.services.run_control
        if rc is None:
            self.session.run.error = "this machine is read-only here (a recorded bundle)"
            self.fire("failed")
            return
        if mode != "start" and self.session.resolved is None:
            plan = rc.current_plan()
            if plan is not None:
                self.session.resolved = plan
                self.session.chosen = plan.name
                self.session.run = RunState.for_plan(plan)
        self.cancel = threading.Event()
        self.running = True
        self.session.run.error = None
        if mode == "rollback":
            self.session.run.failure = None
        self._run_worker(mode)

    @work(thread=True, exclusive=True, group="runner", exit_on_error=False)
    def _run_worker(self, mode: str) -> None:
        rc = self.services.run_control
        assert rc is not None
        outcome: Any = None
        error: str | None = None
        try:
            if mode == "start":
                outcome = rc.start(self.session.resolved, self.events.append, ask_reboot=self._ask_reboot,
                                   cancel=self.cancel)
            elif mode == "rollback":
                outcome = rc.rollback(self.events.append, cancel=self.cancel)
            else:
                outcome = rc.resume(self.events.append, mode="retry" if mode == "retry" else "resume",
                                    ask_reboot=self._ask_reboot, cancel=self.cancel)
        except Exception as exc:  # noqa: BLE001 - shown on the Failed screen, never a traceback
            error = f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc)
        self.call_from_thread(self._run_ended, outcome, error)

    def _ask_reboot(self) -> bool:
        """Called by the engine on its thread: ask on the UI thread, wait for the answer."""
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
        """Fold queued engine events into the session, in order; one log write per tick."""
        if not self.events:
            return
        lines: list[str] = []
        implied: list[str] = []
        run = self.session.run
        with self.batch_update():
            while self.events:
                e = self.events.popleft()
                if type(e).__name__ == "OutputLines":
                    lines.extend(e.lines)
                m = run.apply(e)
                if m is not None:
                    implied.append(m)
            screen = self.screen
            if lines and hasattr(screen, "add_lines"):
                screen.add_lines(lines)
            if hasattr(screen, "refresh_run"):
                screen.refresh_run()
        for m in implied:
            if self.session.can(m):
                self.fire(m)

    def _run_ended(self, outcome: Any, error: str | None) -> None:
        self.running = False
        self.drain()
        self._last_outcome = outcome
        s = self.session
        if error is not None or (outcome is not None and outcome.state == "failed" and s.run.failure is None):
            s.run.error = error or outcome.message
            s.run.state = "failed"
            if s.can("failed"):
                self.fire("failed")
            self.notify(s.run.error or "", title="the run could not go on", severity="error", timeout=15)
        elif outcome is not None and outcome.state == "rolled-back":
            s.run.state = "rolled-back"
            s.run.skipped = tuple(f"not restorable: {c}" for c in outcome.skipped)
            self.notify(outcome.message, title="rolled back", timeout=10)
            for event in ("stopped", "stop"):
                if s.can(event):
                    self.fire(event)
                    break
        if self.quitting:
            self.exit(130, return_code=130, message=self.stop_message())
        elif outcome is not None and outcome.state == "reboot-pending" and self.reboot_now:
            self.exit(exit_codes.REBOOT_PENDING, return_code=exit_codes.REBOOT_PENDING,
                      message=f"rocm-wizard: rebooting; run {outcome.run_id} is reboot-pending.\n"
                      f"After the boot, run `{self.services.relaunch_hint}`: it offers to resume.")

    # ------------------------------------------------------------------ leaving
    def stop_message(self) -> str:
        run = self.session.run
        if run.run_id:
            return (f"rocm-wizard: stopped; the journal is consistent ({run.journal}).\n"
                    f"Run `{self.services.relaunch_hint}` (or `rocm-wizard resume`) to continue.")
        return "rocm-wizard: nothing was changed."

    def action_interrupt(self) -> None:
        if self.running:
            self.quitting = True
            self.cancel.set()
            self.notify("stopping the current command; the journal stays consistent…", severity="warning")
            return
        self.exit(130, return_code=130, message=self.stop_message())

    def action_quit_wizard(self) -> None:
        s = self.session
        if s.stage == Stage.REBOOT:
            self.exit(exit_codes.REBOOT_PENDING, return_code=exit_codes.REBOOT_PENDING,
                      message=f"rocm-wizard: reboot pending. {s.run.reboot_message or ''}\n"
                      f"After the boot, run `{self.services.relaunch_hint}`: it offers to resume.")
            return
        code = exit_codes.OK
        if s.run.state in ("failed", "stopped"):
            code = exit_codes.FAILURE
        self.exit(code, return_code=code, message=self.stop_message() if s.run.state in ("failed", "stopped") else None)

    def action_help(self) -> None:
        keys = [(b.key_display or b.key, b.description) for b in self.screen.BINDINGS
                if isinstance(b, Binding) and b.description]
        self.push_screen(HelpModal(keys))

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"

    def action_export(self) -> None:
        s = self.session
        if s.resolved is None:
            return
        try:
            path = self.services.export_script(s.resolved, s.facts)
        except Exception as exc:  # noqa: BLE001 - an unwritable directory is a message, not a crash
            self.notify(f"could not export: {exc}", severity="error")
            return
        s.exported = str(path)
        self.notify(f"dry-run script written: {path}", title="exported", timeout=10)

    def action_rehearse(self) -> None:
        if not self.can_rehearse:
            self.notify("a rehearsal starts from a live machine; this one is already "
                        f"{self.services.host.name}", severity="warning")
            return
        try:
            services = self.services.rehearsal()
            session = services.new_session()
        except Exception as exc:  # noqa: BLE001
            self.notify(f"could not open the rehearsal machine: {exc}", severity="error")
            return
        self.services, self.session = services, session
        if session.pending is not None:
            session.stage = Stage.RESUME
        self.show_stage()
        self.notify(f"rehearsal machine: {services.host.name}; every step runs there, nothing touches this machine",
                    timeout=10)

    def plan_file(self) -> str | None:
        rc = self.services.run_control
        run = rc.current_run() if rc is not None else None
        return str(run.plan_path) if run is not None and self.session.run.run_id else None


def make_app(services: Services, session: Session | None = None, *, theme: str | None = None) -> WizardApp:
    return WizardApp(services, session, theme=theme)


__all__ = ["WizardApp", "make_app"]
