"""The engine: runs a resolved plan's steps (preflight first) and rollbacks, journalled, resumable.

One action loop serves the preflight, every step, the reboot and the rollback: for each action it
skips what the journal says finished or what its done-check (re-probed *now*, never trusted from
planning time) says is done, else journals ``action-start``, emits, executes through the executor,
journals ``action-end`` with the outcome (ok, failed, timeout, cancelled) and emits. A failed action
stops the run with its state kept and a :class:`RunFailed` event (last 50 lines, matching known
issues, choices); a cancelled one stops it as ``stopped``. A step whose actions need what the executor
cannot provide (a GPU in a rehearsal) is skipped with the executor's reason. A reboot step records the
boot id, arms the resume unit (``--yes``) and the login notice, and ends the run reboot-pending; the
next ``execute()`` on a new boot id continues after it.
"""

from __future__ import annotations

import io
import tempfile
import threading
import time
from collections import deque
from contextlib import AbstractContextManager, nullcontext
from enum import Enum
from pathlib import Path
from typing import IO, TYPE_CHECKING, Callable, Sequence

from wizard.host import Host
from wizard.model import KERNEL_DRIVER, Action, ResolvedPlan, StepPlan, hide_passwords
from wizard.record import record, replace
from wizard.runner import events as ev
from wizard.runner import resume_unit
from wizard.runner.executor import Executor
from wizard.runner.journal import RunView, atomic_write
from wizard.runner.rollback import claimed_paths
from wizard.runner.records import (ActionEnd, ActionOutcome, ActionSkip, ActionStart, Phase, PreflightSkip, Rebooted,
                                   RebootPending, Resume, Retry, RollbackStart, RunEnd, RunStart, RunState,
                                   StepDrift, StepEnd, StepOutcome, StepSkip, StepStart)
from wizard.runner.runs import RESUME_MARKER, Run
from wizard.runner.shell import ShellResult
from wizard.runner.signals import reason_of

if TYPE_CHECKING:
    from wizard.mirror.credentials import Credential

TAIL_LINES = 50
BOOT_ID = "/proc/sys/kernel/random/boot_id"
REBOOT_TO_LOAD = "reboot to load the changed kernel driver (amdgpu): it is not in use until then"


class Mode(str, Enum):
    START = "start"  # a new run
    RESUME = "resume"  # after a reboot, a crash or a stop
    RETRY = "retry"  # after a failure


@record
class Outcome:
    """How a call to the engine ended."""

    state: RunState
    run_id: str
    message: str = ""
    failure: ev.RunFailed | None = None
    skipped: tuple[str, ...] = ()
    reboot_needed: bool = False



class _Sink:
    """Receives output chunks: the step log gets the bytes, the view gets lines, we keep a tail."""

    def __init__(self, log: IO[bytes], emit: Callable[[ev.Event], None], step: int, action: int) -> None:
        self.log, self.emit, self.step, self.action = log, emit, step, action
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)
        self._carry = b""
        self.lines = 0

    def feed(self, chunk: bytes) -> None:  # runs on the reader thread; must never raise
        try:
            if b"@" in chunk:  # a mirror URL's password, as an action echoes it (best effort: one chunk at a time)
                text = hide_passwords(chunk.decode("utf-8", "surrogateescape"))
                self.log.write(text.encode("utf-8", "surrogateescape"))
            else:
                self.log.write(chunk)
            self.log.flush()
            complete, nl, self._carry = (self._carry + chunk).rpartition(b"\n")  # no newline: all in carry
            if len(self._carry) > 65536:  # a "line" without end (progress bars): show it anyway
                complete = complete + b"\n" + self._carry if nl else self._carry
                nl, self._carry = b"\n", b""
            if nl:
                self._publish(complete)
        except Exception:  # noqa: BLE001 - a view error must not kill the reader (sh pitfall 2)
            pass

    def _publish(self, block: bytes) -> None:
        """Whole lines (no trailing newline): decoded and split at C speed; a line redrawn with
        carriage returns (a progress bar) keeps only what was drawn last."""
        text = hide_passwords(block.decode("utf-8", "replace"))  # a newline never falls inside a UTF-8 sequence
        lines = text.split("\n")
        if "\r" in text:
            lines = [line.rstrip("\r").rsplit("\r", 1)[-1] for line in lines]
        out = tuple(lines)
        self.lines += len(out)
        self.tail.extend(out)
        self.emit(ev.OutputLines(self.step, self.action, out))

    def close(self) -> None:
        try:
            if self._carry:
                self._publish(self._carry)
                self._carry = b""
        except Exception:  # noqa: BLE001
            pass


@record
class _Stop:
    """Why an action loop stopped early."""

    outcome: ActionOutcome
    index: int
    shown: str
    result: ShellResult | None
    tail: tuple[str, ...]
    message: str


class Engine:
    def __init__(
        self,
        host: Host,
        plan: ResolvedPlan,
        run: Run,
        *,
        executor: Executor,
        on_event: Callable[[ev.Event], None] | None = None,
        yes: bool = False,
        ask_reboot: Callable[[], bool] | None = None,
        cancel: threading.Event | None = None,
        resume_command: Sequence[str] | None = None,
        resume_env: Sequence[tuple[str, str]] = (),
        diagnose: Callable[[str], Sequence[ev.Finding]] | None = None,
        skip_preflight: Sequence[str] = (),
        cli: Sequence[str] = ("rocm-wizard",),
        credentials: Sequence[Credential] = (),
    ) -> None:
        self.host, self.plan, self.run, self.executor = host, plan, run, executor
        self.credentials = tuple(credentials)  # mirror logins, handed to the actions that name their mirror
        self._on_event = on_event
        self.yes = yes
        self.ask_reboot = ask_reboot
        self.cancel = cancel or threading.Event()
        self.resume_command = list(resume_command or [*resume_unit.wizard_command(), "resume", "--yes"])
        self.resume_env = tuple(resume_env)
        self.diagnose = diagnose if diagnose is not None else default_diagnose
        self.skip_preflight = tuple(skip_preflight)
        self.cli = tuple(cli)
        self.journal = run.journal

    # ------------------------------------------------------------------------- helpers
    def command(self, *words: str) -> str:
        """The command the user types for this machine (``rocm-wizard --sandbox DIR resume``)."""
        return " ".join([*self.cli, *words])

    def emit(self, event: ev.Event) -> None:
        if self._on_event is not None:
            try:
                self._on_event(event)
            except Exception:  # noqa: BLE001 - a view must not break the run
                pass

    def boot_id(self) -> str | None:
        text = self.host.read_text(BOOT_ID)
        return text.strip() if text else None

    def _exec(self, action: Action, log: IO[bytes], step: int, index: int, *,
              quiet: bool = False) -> tuple[ShellResult, _Sink]:
        sink = _Sink(log, (lambda e: None) if quiet else self.emit, step, index)
        with self._handed(action) as action:
            res = self.executor.run(action, on_output=sink.feed, cancel=self.cancel)
        sink.close()
        return res, sink

    def _handed(self, action: Action) -> AbstractContextManager[Action]:
        """``action`` with the logins of the mirrors it names in files its environment names, never in its argv."""
        if not self.credentials:
            return nullcontext(action)
        from wizard.mirror import credentials

        place = getattr(self.executor, "handover", None)
        where = place(action) if place is not None else credentials.Handed(Path(tempfile.gettempdir()),
                                                                            tempfile.gettempdir())
        return credentials.handed(action, self.credentials, where)

    def _check(self, action: Action, log: IO[bytes], step: int, index: int) -> bool:
        assert action.check is not None
        return self._probe(Action(action.check, "done-check", root=action.root, as_user=action.as_user,
                                  env=action.env, timeout=60), log, step, index)

    def _probe(self, probe: Action, log: IO[bytes], step: int, index: int) -> bool:
        """Run a check quietly (its output in the log only): True when it passes."""
        log.write(f"--- done-check: {probe.shown()}\n".encode())
        res, _ = self._exec(probe, log, step, index, quiet=True)
        log.write(f"--- done-check exit {res.exit_code}\n".encode())
        return res.exit_code == 0 and not res.timed_out

    def _claimed(self, action: Action) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(absent, existing): the paths ``action`` may create, as they are before it runs."""
        paths = claimed_paths(action)
        absent = tuple(p for p in paths if not self.host.exists(p))
        return absent, tuple(p for p in paths if p not in absent)

    # ------------------------------------------------------------------------- the action loop
    def _actions(self, phase: Phase, step: int, actions: Sequence[Action], log: IO[bytes], log_path: str, *,
                 done: set[int], interrupted: set[int], skip: dict[int, str] | None = None) -> tuple[bool, _Stop | None]:
        """Run ``actions`` in order. Returns (something ran, why it stopped or None)."""
        changed = False
        for a, action in enumerate(actions):
            shown = action.shown()
            if self.cancel.is_set():  # a stop (the user, a signal) arrived between actions
                return changed, _Stop(ActionOutcome.CANCELLED, a, shown, None, (),
                                      reason_of(self.cancel) or "stopped by the user")
            if a in done and not action.repeat:
                self.emit(ev.ActionSkipped(step, a, shown, "done (journal)", phase))
                continue
            if skip and a in skip:
                self.journal.append(ActionSkip(step, a, skip[a], phase))
                self.emit(ev.ActionSkipped(step, a, shown, skip[a], phase))
                continue
            if action.check and self._check(action, log, step, a):
                self.journal.append(ActionSkip(step, a, "done-check passed", phase))
                self.emit(ev.ActionSkipped(step, a, shown, "already done (done-check passed)", phase))
                continue
            if a in interrupted and not action.idempotent and not action.check:
                return changed, _Stop(ActionOutcome.FAILED, a, shown, None, (),
                                      "the run was interrupted inside this action, which is not safe to repeat and "
                                      "has no done-check: check by hand whether it took effect, then retry or roll "
                                      "back")
            log.write(f"=== [{time.strftime('%H:%M:%S')}] {shown}\n".encode())
            log.flush()
            absent, existed = self._claimed(action) if phase is Phase.RUN and a not in interrupted else ((), ())
            self.journal.append(ActionStart(step, a, shown, log_path, self.boot_id(), phase, absent, existed))
            note = progress_note(action)
            self.emit(ev.ActionStarted(step, a, shown, hide_passwords(action.description), phase, note))
            if note is not None:
                log.write(f"{note}\n".encode())
                self.emit(ev.OutputLines(step, a, (note,)))
            res, sink = self._exec(action, log, step, a)
            outcome = (ActionOutcome.TIMEOUT if res.timed_out else ActionOutcome.CANCELLED if res.cancelled
                       else ActionOutcome.OK if res.exit_code in action.ok_codes else ActionOutcome.FAILED)
            log.write(f"=== exit {res.exit_code} ({outcome.value}, {res.duration:.2f}s)\n".encode())
            log.flush()
            self.journal.append(ActionEnd(step, a, shown, res.exit_code, round(res.duration, 3), log_path,
                                          self.boot_id(), outcome, phase))
            self.emit(ev.ActionFinished(step, a, res.exit_code, res.duration, outcome, phase))
            if outcome is not ActionOutcome.OK:
                why = (f"timed out after {action.timeout:g}s" if res.timed_out and action.timeout
                       else reason_of(self.cancel) or "stopped by the user" if res.cancelled
                       else res.error or f"exited with {res.exit_code}")
                return changed, _Stop(outcome, a, shown, res, tuple(sink.tail), why)
            changed = True
        return changed, None

    # ------------------------------------------------------------------------- the run
    def execute(self, *, mode: Mode = Mode.START) -> Outcome:
        view = self.run.view()
        boot = self.boot_id()
        if view.state is RunState.NOT_STARTED:
            user = self.executor.user_for(self.plan)
            self.journal.append(RunStart(
                self.run.id, self.plan.name, str(self.run.plan_path), len(self.plan.steps),
                tuple(s.kind for s in self.plan.steps), tuple(s.title for s in self.plan.steps), self.yes, boot,
                self.host.name, self.run.plan_digest(), user))
            self.executor.adopt_user(user)
            resumed = False
        else:
            if view.finished and not (view.state is RunState.DONE and self.drift(view)):
                return Outcome(view.state, self.run.id, f"run {self.run.id} is already {view.state.value}"
                               + ("; every step's check passes on the machine" if view.state is RunState.DONE else ""))
            rec = Retry if mode is Mode.RETRY else Resume
            self.executor.adopt_user(view.user)  # the boot-time resume runs as root: the run's user comes back
            self.journal.append(rec(self.run.id, boot, self.yes))
            resumed = True
        if self.skip_preflight:
            self.journal.append(PreflightSkip(tuple(self.skip_preflight)))
        view = self.run.view()
        marker = self.run.state_root / RESUME_MARKER
        if marker.exists():
            marker.unlink()
        self.emit(ev.RunStarted(self.run.id, self.plan.name, len(self.plan.steps), resumed,
                                str(self.journal.path), str(self.run.logs)))
        skipped: list[str] = []
        for i, step in enumerate(self.plan.steps):
            if i in view.done_steps and self._drifted(i, step):
                view = self.run.view()  # the step is not done any more: it runs again, every action of it
            if i in view.done_steps:
                self.emit(ev.StepDoneEarlier(i, step.kind, step.title,
                                             StepOutcome(view.step_outcomes.get(i, StepOutcome.OK.value)),
                                             view.step_durations.get(i), view.step_logs.get(i)))
                continue
            if i in view.skipped_steps:
                self.emit(ev.StepSkipped(i, step.kind, step.title, view.skipped_steps[i]))
                skipped.append(f"{step.title}: {view.skipped_steps[i]}")
                continue
            reason = step.skipped_reason or self._unavailable(step)
            if reason is not None:
                self.journal.append(StepSkip(i, step.kind, reason))
                self.emit(ev.StepSkipped(i, step.kind, step.title, reason))
                skipped.append(f"{step.title}: {reason}")
                continue
            out = self._reboot_step(i, step, view, boot) if step.reboot else self._run_step(i, step, view)
            if out is not None:
                return out
        self._disarm(view)
        reboot_needed = self._reboot_needed()
        message = REBOOT_TO_LOAD if reboot_needed else "plan finished"
        self.journal.append(RunEnd(RunState.DONE, message=message, reboot_needed=reboot_needed))
        self.emit(ev.RunFinished(RunState.DONE, self.run.id, tuple(skipped), reboot_needed, message))
        return Outcome(RunState.DONE, self.run.id, message, skipped=tuple(skipped), reboot_needed=reboot_needed)

    def drift(self, view: RunView | None = None) -> list[tuple[int, StepPlan]]:
        """The steps the journal records as done whose done-check fails on the machine now (nothing is
        journalled: what ``status`` and a resume of a finished run ask)."""
        view = view or self.run.view()
        out: list[tuple[int, StepPlan]] = []
        try:  # the checks' output, for whoever wonders why; a reader who cannot write the logs still asks
            self.run.logs.mkdir(parents=True, exist_ok=True)
            log: IO[bytes] = open(self.run.logs / "drift.log", "ab")
        except OSError:
            log = io.BytesIO()
        with log:
            for i in sorted(view.done_steps):
                step = self.plan.steps[i] if i < len(self.plan.steps) else None
                if step is None or step.check is None or step.reboot:
                    continue
                if not self._probe(replace(step.check, timeout=step.check.timeout or 60), log, i, -1):
                    out.append((i, step))
        return out

    def _drifted(self, i: int, step: StepPlan) -> bool:
        """A step the journal records as done whose done-check on the machine now fails: journalled as
        drift (the replay no longer counts it done) and reported; the record alone never says done."""
        if step.check is None or step.reboot:
            return False
        log_path = self.run.step_log(i, step.kind)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "ab") as log:
            if self._probe(replace(step.check, timeout=step.check.timeout or 60), log, i, -1):
                return False
            shown = step.check.shown()
            log.write(f"--- drift: step {i + 1} is recorded as done, but its check fails now ({shown}): "
                      "it runs again\n".encode())
        self.journal.append(StepDrift(i, step.kind, shown))
        self.emit(ev.StepDrift(i, step.kind, step.title, step.check.description or shown))
        return True

    def _unavailable(self, step: StepPlan) -> str | None:
        for req in dict.fromkeys(r for a in step.actions for r in a.requires):
            why = self.executor.unavailable(req)
            if why:
                return why
        return None

    def _reboot_needed(self) -> bool:
        """The kernel driver changed (an action that ran says so) and no reboot step followed."""
        view = self.run.view()
        last_change = max((s for s, a in view.ran_actions
                           if s < len(self.plan.steps) and a < len(self.plan.steps[s].actions)
                           and KERNEL_DRIVER in self.plan.steps[s].actions[a].changes), default=None)
        if last_change is None:
            return False
        return not any(s > last_change for s in view.rebooted_steps)

    def _preflight_skips(self, step: StepPlan, view: RunView) -> dict[int, str]:
        if step.kind != "preflight":
            return {}
        names = set(view.preflight_skipped)
        return {a: "skipped by --skip-preflight" for a, act in enumerate(step.actions) if act.name in names}

    def _run_step(self, i: int, step: StepPlan, view: RunView) -> Outcome | None:
        log_path = self.run.step_log(i, step.kind)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self.journal.append(StepStart(i, step.kind, step.title, str(log_path)))
        self.emit(ev.StepStarted(i, len(self.plan.steps), step.kind, step.title, str(log_path)))
        t0 = time.monotonic()
        done = {a for s, a in view.done_actions if s == i}
        interrupted = {a for s, a in view.open_actions if s == i}
        with open(log_path, "ab") as log:
            changed, stop = self._actions(Phase.RUN, i, step.actions, log, str(log_path), done=done,
                                          interrupted=interrupted, skip=self._preflight_skips(step, view))
        if stop is not None:
            return self._stopped(i, step, stop, str(log_path))
        outcome = StepOutcome.OK if changed else StepOutcome.UNCHANGED
        self.journal.append(StepEnd(i, step.kind, outcome))
        self.emit(ev.StepFinished(i, step.kind, outcome, time.monotonic() - t0))
        return None

    def _stopped(self, i: int, step: StepPlan, stop: _Stop, log_path: str) -> Outcome:
        if stop.outcome is ActionOutcome.CANCELLED:
            msg = f"{stop.message}; `{self.command('resume')}` continues"
            self.journal.append(RunEnd(RunState.STOPPED, step=i, action=stop.index, message=msg))
            self.emit(ev.RunFinished(RunState.STOPPED, self.run.id, message=msg))
            return Outcome(RunState.STOPPED, self.run.id, msg)
        code = stop.result.exit_code if stop.result is not None else None
        return self._fail(i, stop.index, step, stop.shown, code, stop.message, stop.tail, log_path)

    def _fail(self, i: int, a: int | None, step: StepPlan, shown: str, code: int | None, why: str,
              tail: tuple[str, ...], log_path: str) -> Outcome:
        findings: tuple[ev.Finding, ...] = ()
        if tail:
            try:
                findings = tuple(self.diagnose("\n".join(tail)))
            except Exception:  # noqa: BLE001 - a diagnosis bug must not hide the failure itself
                findings = ()
        what = "preflight check failed" if step.kind == "preflight" else f"step {i + 1} ({step.title}) failed"
        self.journal.append(RunEnd(RunState.FAILED, step=i, action=a, exit_code=code, message=why))
        action = step.actions[a] if a is not None and 0 <= a < len(step.actions) else None
        failure = ev.RunFailed(i, a, step.kind, shown, code, why, tail, log_path, findings,
                               check=action.name if action is not None and step.kind == "preflight" else None,
                               description=hide_passwords(action.description) if action is not None else "")
        self.emit(failure)
        self.emit(ev.RunFinished(RunState.FAILED, self.run.id, message=why))
        return Outcome(RunState.FAILED, self.run.id, f"{what}: {why}", failure)

    # ------------------------------------------------------------------------- reboot
    def _reboot_step(self, i: int, step: StepPlan, view: RunView, boot: str | None) -> Outcome | None:
        if view.reboot_step == i and view.reboot_boot_id and boot and boot != view.reboot_boot_id:
            self.journal.append(Rebooted(i, view.reboot_boot_id, boot))
            self._disarm(view)
            self.journal.append(StepEnd(i, step.kind, StepOutcome.OK))
            self.emit(ev.StepFinished(i, step.kind, StepOutcome.OK, 0.0))
            return None
        actions = list(step.actions) or [Action(("systemctl", "reboot"), "reboot", root=True, idempotent=False)]
        last = len(actions) - 1
        if view.reboot_step == i and (i, last) in view.done_actions:
            msg = ("the reboot was requested but the machine has not rebooted yet; reboot, then run "
                   f"`{self.command('resume')}`")
            self.journal.append(RunEnd(RunState.REBOOT_PENDING, step=i, message=msg))
            self.emit(ev.RebootPending(i, boot, False, msg))
            self.emit(ev.RunFinished(RunState.REBOOT_PENDING, self.run.id, message=msg))
            return Outcome(RunState.REBOOT_PENDING, self.run.id, msg)
        log_path = self.run.step_log(i, step.kind)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self.journal.append(StepStart(i, step.kind, step.title, str(log_path)))
        self.emit(ev.StepStarted(i, len(self.plan.steps), step.kind, step.title, str(log_path)))
        with open(log_path, "ab") as log:
            unit = self._arm(log, i)
            now = self.yes or self.ask_reboot is None or self.ask_reboot()
            self.journal.append(RebootPending(i, boot, unit, now))
            if not now:
                msg = f"reboot when ready, then run `{self.command('resume')}`" + (
                    " (a login notice will remind you)" if self.executor.resumes_at_boot else "")
                self.journal.append(RunEnd(RunState.REBOOT_PENDING, step=i, message=msg))
                self.emit(ev.RebootPending(i, boot, unit, msg))
                self.emit(ev.RunFinished(RunState.REBOOT_PENDING, self.run.id, message=msg))
                return Outcome(RunState.REBOOT_PENDING, self.run.id, msg)
            # the reboot itself is always run again (a journal cannot know whether it happened)
            done = {a for s, a in view.done_actions if s == i and a != last}
            _, stop = self._actions(Phase.RUN, i, actions, log, str(log_path), done=done, interrupted=set())
            if stop is not None:
                return self._stopped(i, step, stop, str(log_path))
        msg = ("rebooting; the run resumes by itself after the boot" if unit and self.executor.resumes_at_boot
               else f"rebooting; after the boot run `{self.command('resume')}`")
        self.journal.append(RunEnd(RunState.REBOOT_PENDING, step=i, message=msg))
        self.emit(ev.RebootPending(i, boot, unit, msg))
        self.emit(ev.RunFinished(RunState.REBOOT_PENDING, self.run.id, message=msg))
        return Outcome(RunState.REBOOT_PENDING, self.run.id, msg)

    def _arm(self, log: IO[bytes], step: int) -> bool:
        """Trigger file, login notice, and (``--yes``) the resume unit. Idempotent."""
        marker = self.run.state_root / RESUME_MARKER
        atomic_write(marker, self.run.id + "\n")
        stage = self.run.dir / "resume"
        stage.mkdir(parents=True, exist_ok=True)
        notice = stage / "rocm-wizard.sh"
        atomic_write(notice, resume_unit.notice_text(marker, [c for c in self.resume_command if c != "--yes"]))
        unit_file = None
        why_not = resume_unit.untrusted(self.resume_command) if self.yes else None
        if why_not:
            log.write(f"--- no resume unit: root runs only root-owned code at boot, and {why_not}; after the "
                      f"reboot run `sudo {self.command('resume')}`\n".encode())
            self.emit(ev.OutputLines(step, -1, (f"no resume unit: {why_not} (root runs only root-owned code at "
                                                f"boot); after the reboot run `sudo {self.command('resume')}`",)))
        elif self.yes:
            unit_file = stage / resume_unit.UNIT_NAME
            atomic_write(unit_file, resume_unit.unit_text(self.resume_command, marker, user=self.executor.unit_user,
                                                          environment=self.resume_env))
        for act in resume_unit.install_actions(unit_file, notice):
            res, _ = self._exec(act, log, step, -1, quiet=True)
            if not res.ok:
                log.write(f"--- could not {act.description} (exit {res.exit_code})\n".encode())
                if unit_file is not None and act.description != "login notice":
                    return False
        return unit_file is not None

    def _disarm(self, view: RunView | None = None) -> None:
        """The trigger, the login notice and the resume unit go when the run needs them no more."""
        marker = self.run.state_root / RESUME_MARKER
        try:
            marker.unlink()
        except FileNotFoundError:
            pass
        notice_there = self.host.exists(resume_unit.NOTICE_PATH)
        unit_there = self.host.exists(resume_unit.UNIT_PATH)
        if not (notice_there or unit_there):
            return
        log_path = self.run.logs / "resume-cleanup.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "ab") as log:
            for act in resume_unit.remove_actions(unit_there):
                self._exec(act, log, -1, -1, quiet=True)

    # ------------------------------------------------------------------------- rollback
    def rollback(self, actions: Sequence[tuple[str, Action]], cannot: Sequence[str]) -> Outcome:
        """Run a rollback through the same action loop, journalled as the rollback phase: the first
        call records the actions (``rollback-start``); a call after an interrupted or failed rollback
        continues exactly those, skipping the ones that finished."""
        from wizard.runner.planfile import action_from_json, action_to_json

        view = self.run.view()
        self.executor.adopt_user(view.user)  # undoing a user's venv runs as that user, never as root
        if view.rollback is None:
            self.journal.append(RollbackStart(tuple({"why": why, "action": action_to_json(a)} for why, a in actions),
                                              tuple(cannot)))
        else:
            actions = [(str(d.get("why", "")), action_from_json(d.get("action") or {})) for d in view.rollback.actions]
            cannot = list(view.rollback.cannot)
            self.journal.append(RollbackStart((), ()))  # a marker: the rollback goes on from here
        view = self.run.view()
        self.emit(ev.RollbackStarted(self.run.id, len(actions), tuple(cannot)))
        log_path = self.run.logs / "rollback.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        acts = [a for _, a in actions]
        with open(log_path, "ab") as log:
            for n, (why, a) in enumerate(actions):
                if n not in view.rolled_back:
                    log.write(f"=== {why}\n".encode())
            _, stop = self._actions(Phase.ROLLBACK, -1, acts, log, str(log_path), done=set(view.rolled_back),
                                    interrupted=set(view.rollback_open))
        if stop is not None and stop.outcome is ActionOutcome.CANCELLED:
            # journalled as an interrupted rollback (no run-end): `rollback` continues it, nothing calls it done
            msg = f"rollback {stop.message}; `{self.command('rollback')}` continues it"
            self.emit(ev.RunFinished(RunState.ROLLING_BACK, self.run.id, message=msg))
            return Outcome(RunState.ROLLING_BACK, self.run.id, msg)
        if stop is not None:
            why = actions[stop.index][0]
            msg = f"rollback: {why} failed ({stop.message}); log: {log_path}; `{self.command('rollback')}` tries again"
            self.journal.append(RunEnd(RunState.ROLLBACK_FAILED, action=stop.index,
                                       exit_code=stop.result.exit_code if stop.result else None, message=msg))
            self.emit(ev.RunFinished(RunState.ROLLBACK_FAILED, self.run.id, message=msg))
            return Outcome(RunState.ROLLBACK_FAILED, self.run.id, msg)
        self._disarm()
        reboot_needed = any(KERNEL_DRIVER in a.changes for a in acts)
        msg = f"rolled back run {self.run.id}" + (f"; {len(cannot)} item(s) could not be restored" if cannot else "")
        if reboot_needed:
            msg += f"; {REBOOT_TO_LOAD}"
        self.journal.append(RunEnd(RunState.ROLLED_BACK, message=msg, reboot_needed=reboot_needed))
        self.emit(ev.RunFinished(RunState.ROLLED_BACK, self.run.id, tuple(cannot), reboot_needed, msg))
        return Outcome(RunState.ROLLED_BACK, self.run.id, msg, skipped=tuple(cannot), reboot_needed=reboot_needed)


NO_METADATA_NOTE = ("note: AMD's package indexes serve no PEP 658 metadata, so pip downloads each wheel whole (several "
                    "GB for torch and its device packages) and may print nothing for minutes: that is downloading, not "
                    "a hang (known issue pip-amd-index-no-metadata)")


def progress_note(action: Action) -> str | None:
    """A line shown when an action starts that will look stuck although it works: a pip install from one of AMD's
    indexes (https://<...>.amd.com/), which serve no PEP 658 metadata."""
    argv = action.argv
    if "pip" in argv and "install" in argv and any(a.startswith("https://") and ".amd.com/" in a for a in argv):
        return NO_METADATA_NOTE
    return None


def default_diagnose(text: str) -> list[ev.Finding]:
    """Known issues a failure's output shows: the causes, and the failures it shows whose cause is one of several
    (a symptom: "hipErrorNoBinaryForGpu", with its fix's ways); without the machine's facts, an issue that holds only
    for some GPUs or systems is no more than "to check", and is left out rather than shown as the cause."""
    from wizard.diagnose import SYMPTOM, diagnose_error_text

    return [ev.Finding(str(f.id), str(f.title), str(f.fix), tuple(getattr(f, "sources", ()) or ()))
            for f in diagnose_error_text(text) if f.to_check in (None, SYMPTOM)]
