"""The engine: runs a resolved plan's actions in order, journalled, resumable.

For each step: skip it if the journal says it is done; otherwise for each action skip it if the
journal says it finished or its done-check passes *now* (re-probed, never trusted from planning
time), else write ``action-start``, run it, write ``action-end``. A failed action stops the run with
its state kept and a :class:`RunFailed` event (last 50 lines, matching known issues, choices). A
reboot step records the boot id, arms the resume unit (``--yes``) and the login notice, and ends the
run with state ``reboot-pending``; the next ``execute()`` on a new boot id continues after it.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Sequence

from wizard.host import Host
from wizard.model import Action, ResolvedPlan, StepPlan
from wizard.runner import events as ev
from wizard.runner import resume_unit, shell
from wizard.runner.journal import RunView, atomic_write
from wizard.runner.privilege import Privilege
from wizard.runner.runs import RESUME_MARKER, Run

TAIL_LINES = 50
BASE_ENV = {
    "LC_ALL": "C",
    "LANG": "C",
    "PYTHONUNBUFFERED": "1",
    "NO_COLOR": "1",
    "TERM": "dumb",
    "DEBIAN_FRONTEND": "noninteractive",
    "PIP_NO_INPUT": "1",
}
BOOT_ID = "/proc/sys/kernel/random/boot_id"
SANDBOX_VERIFY_SKIP = "sandbox: the verify step needs --verify-python PATH (a CPU torch); skipped, not passed"


@dataclass(frozen=True)
class Outcome:
    state: str  # "done" | "failed" | "reboot-pending" | "stopped"
    run_id: str
    message: str = ""
    failure: ev.RunFailed | None = None
    skipped: tuple[str, ...] = ()


class _Sink:
    """Receives output chunks: the step log gets the bytes, the view gets lines, we keep a tail."""

    def __init__(self, log: IO[bytes], emit: Callable[[ev.Event], None], step: int, action: int) -> None:
        self.log, self.emit, self.step, self.action = log, emit, step, action
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)
        self._carry = b""
        self.lines = 0

    def feed(self, chunk: bytes) -> None:  # runs on the reader thread; must never raise
        try:
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
        text = block.decode("utf-8", "replace")  # a newline never falls inside a UTF-8 sequence
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


class Engine:
    def __init__(
        self,
        host: Host,
        plan: ResolvedPlan,
        run: Run,
        *,
        privilege: Privilege,
        on_event: Callable[[ev.Event], None] | None = None,
        yes: bool = False,
        verify_python: str | None = None,
        ask_reboot: Callable[[], bool] | None = None,
        cancel: threading.Event | None = None,
        resume_command: Sequence[str] | None = None,
        diagnose: Callable[[str], Sequence[ev.Finding]] | None = None,
    ) -> None:
        self.host, self.plan, self.run, self.priv = host, plan, run, privilege
        self._on_event = on_event
        self.yes = yes
        self.verify_python = verify_python
        self.ask_reboot = ask_reboot
        self.cancel = cancel or threading.Event()
        self.resume_command = list(resume_command or [*resume_unit.wizard_command(), "resume", "--yes"])
        self.diagnose = diagnose if diagnose is not None else default_diagnose
        root = getattr(host, "root", None)
        self.sandbox_root: Path | None = (
            Path(root) if getattr(host, "name", "").startswith("sandbox:") and root is not None else None
        )
        self.journal = run.journal

    # ------------------------------------------------------------------------- helpers
    def emit(self, event: ev.Event) -> None:
        if self._on_event is not None:
            try:
                self._on_event(event)
            except Exception:  # noqa: BLE001 - a view must not break the run
                pass

    def boot_id(self) -> str | None:
        text = self.host.read_text(BOOT_ID)
        return text.strip() if text else None

    def env(self) -> dict[str, str]:
        env = dict(self.host.environ)
        env.update(BASE_ENV)
        return env

    def _map_program(self, argv: Sequence[str]) -> list[str] | None:
        """In a sandbox an absolute program path means the one inside the sandbox root."""
        if self.sandbox_root is None or not argv[0].startswith("/"):
            return list(argv)
        root = str(self.sandbox_root)
        if argv[0] == root or argv[0].startswith(root.rstrip("/") + "/"):
            return list(argv)
        inside = self.sandbox_root / argv[0].lstrip("/")
        if inside.is_file():
            return [str(inside), *argv[1:]]
        standin = self.host.which(os.path.basename(argv[0]))
        if standin:
            return [standin, *argv[1:]]
        return None

    def _exec(self, action: Action, log: IO[bytes], step: int, index: int, *, quiet: bool = False) -> tuple[shell.ShellResult, _Sink]:
        emit = (lambda e: None) if quiet else self.emit
        sink = _Sink(log, emit, step, index)
        mapped = self._map_program(action.argv)
        if mapped is None:
            msg = f"sandbox: no stand-in for {action.argv[0]} (nothing outside the sandbox is run)"
            sink.feed((msg + "\n").encode())
            sink.close()
            return shell.ShellResult(127, 0.0, error=msg), sink
        argv = self.priv.wrap(action, mapped)
        res = shell.run(argv, env=self.env(), on_output=sink.feed, timeout=action.timeout, cancel=self.cancel)
        sink.close()
        return res, sink

    def _check(self, action: Action, log: IO[bytes], step: int, index: int) -> bool:
        assert action.check is not None
        probe = Action(action.check, "done-check", root=action.root, as_user=action.as_user, env=action.env, timeout=60)
        log.write(f"--- done-check: {probe.shown()}\n".encode())
        res, _ = self._exec(probe, log, step, index, quiet=True)
        log.write(f"--- done-check exit {res.exit_code}\n".encode())
        return res.exit_code == 0 and not res.timed_out

    # ------------------------------------------------------------------------- the run
    def execute(self, *, mode: str = "start") -> Outcome:
        """``mode``: "start" (a new run), "resume" or "retry" (continue this run)."""
        view = self.run.view()
        boot = self.boot_id()
        if view.state == "not-started":
            self.journal.append(
                "run-start", run=self.run.id, plan=self.plan.name, plan_file=str(self.run.plan_path),
                steps=len(self.plan.steps), kinds=[s.kind for s in self.plan.steps],
                titles=[s.title for s in self.plan.steps], yes=self.yes, boot_id=boot, host=self.host.name,
            )
            view = self.run.view()
            resumed = False
        else:
            if view.finished:
                return Outcome(view.state, self.run.id, f"run {self.run.id} is already {view.state}")
            self.journal.append("retry" if mode == "retry" else "resume", run=self.run.id, boot_id=boot, yes=self.yes)
            resumed = True
        marker = self.run.state_root / RESUME_MARKER
        if marker.exists():
            marker.unlink()
        self.emit(ev.RunStarted(self.run.id, self.plan.name, len(self.plan.steps), resumed,
                                str(self.journal.path), str(self.run.logs)))
        skipped: list[str] = []
        for i, step in enumerate(self.plan.steps):
            if i in view.done_steps:
                self.emit(ev.StepDoneEarlier(i, step.kind, step.title, view.step_outcomes.get(i, "ok"),
                                             view.step_durations.get(i), view.step_logs.get(i)))
                continue
            if i in view.skipped_steps:
                self.emit(ev.StepSkipped(i, step.kind, step.title, view.skipped_steps[i]))
                skipped.append(f"{step.title}: {view.skipped_steps[i]}")
                continue
            reason = step.skipped_reason
            if reason is None and step.kind == "verify" and self.sandbox_root is not None and not self.verify_python:
                reason = SANDBOX_VERIFY_SKIP
            if reason is not None:
                self.journal.append("step-skip", step=i, kind=step.kind, reason=reason)
                self.emit(ev.StepSkipped(i, step.kind, step.title, reason))
                skipped.append(f"{step.title}: {reason}")
                continue
            if step.reboot:
                out = self._reboot_step(i, step, view, boot)
            else:
                out = self._run_step(i, step, view)
            if out is not None:
                return out
        self._disarm(view)
        self.journal.append("run-end", state="done")
        self.emit(ev.RunFinished("done", self.run.id, tuple(skipped)))
        return Outcome("done", self.run.id, "plan finished", skipped=tuple(skipped))

    def _actions_of(self, step: StepPlan) -> Sequence[Action]:
        if step.kind == "verify" and self.sandbox_root is not None and self.verify_python:
            return [_with_python(a, self.verify_python) for a in step.actions]
        return step.actions

    def _run_step(self, i: int, step: StepPlan, view: RunView) -> Outcome | None:
        log_path = self.run.step_log(i, step.kind)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self.journal.append("step-start", step=i, kind=step.kind, title=step.title, log=str(log_path))
        self.emit(ev.StepStarted(i, len(self.plan.steps), step.kind, step.title, str(log_path)))
        t0 = time.monotonic()
        changed = False
        verify_real = step.kind == "verify" and self.sandbox_root is not None
        with open(log_path, "ab") as log:
            for a, action in enumerate(self._actions_of(step)):
                shown = action.shown()
                if (i, a) in view.done_actions:
                    self.emit(ev.ActionSkipped(i, a, shown, "done (journal)"))
                    continue
                if action.check and self._check(action, log, i, a):
                    self.journal.append("action-skip", step=i, action=a, reason="done-check passed")
                    self.emit(ev.ActionSkipped(i, a, shown, "already done (done-check passed)"))
                    continue
                if (i, a) in view.open_actions and not action.idempotent and not action.check:
                    msg = ("the run was interrupted inside this action, which is not safe to repeat and has no "
                           "done-check: check by hand whether it took effect, then retry or roll back")
                    return self._fail(i, a, step, shown, None, msg, (), str(log_path))
                log.write(f"=== [{time.strftime('%H:%M:%S')}] {shown}\n".encode())
                log.flush()
                self.journal.append("action-start", step=i, action=a, argv=shown, log=str(log_path),
                                    boot_id=self.boot_id())
                self.emit(ev.ActionStarted(i, a, shown, action.description))
                if verify_real:
                    res, sink = self._exec_real(action, log, i, a)
                else:
                    res, sink = self._exec(action, log, i, a)
                outcome = ("timeout" if res.timed_out else "cancelled" if res.cancelled
                           else "ok" if res.exit_code in action.ok_codes else "failed")
                log.write(f"=== exit {res.exit_code} ({outcome}, {res.duration:.2f}s)\n".encode())
                log.flush()
                self.journal.append("action-end", step=i, action=a, argv=shown, exit_code=res.exit_code,
                                    duration=round(res.duration, 3), log=str(log_path), boot_id=self.boot_id(),
                                    outcome=outcome)
                self.emit(ev.ActionFinished(i, a, res.exit_code, res.duration, outcome))
                if outcome != "ok":
                    if outcome == "cancelled":
                        self.journal.append("run-end", state="stopped")
                        self.emit(ev.RunFinished("stopped", self.run.id))
                        return Outcome("stopped", self.run.id, "stopped by the user; `rocm-wizard resume` continues")
                    why = (f"timed out after {action.timeout:g}s" if res.timed_out
                           else res.error or f"exited with {res.exit_code}")
                    return self._fail(i, a, step, shown, res.exit_code, why, tuple(sink.tail), str(log_path))
                changed = True
        outcome = "ok" if changed else "unchanged"
        self.journal.append("step-end", step=i, kind=step.kind, outcome=outcome)
        self.emit(ev.StepFinished(i, step.kind, outcome, time.monotonic() - t0))
        return None

    def _exec_real(self, action: Action, log: IO[bytes], step: int, index: int) -> tuple[shell.ShellResult, _Sink]:
        """The sandbox's verify step: the real suite, run by the given (CPU torch) interpreter."""
        sink = _Sink(log, self.emit, step, index)
        env = dict(os.environ)
        env.update(BASE_ENV)
        env.update(dict(action.env))
        res = shell.run(list(action.argv), env=env, on_output=sink.feed, timeout=action.timeout, cancel=self.cancel)
        sink.close()
        return res, sink

    def _fail(self, i: int, a: int | None, step: StepPlan, shown: str, code: int | None, why: str,
              tail: tuple[str, ...], log_path: str) -> Outcome:
        findings: tuple[ev.Finding, ...] = ()
        if tail:
            try:
                findings = tuple(self.diagnose("\n".join(tail)))
            except Exception:  # noqa: BLE001 - a diagnosis bug must not hide the failure itself
                findings = ()
        self.journal.append("run-end", state="failed", step=i, action=a, exit_code=code, message=why)
        failure = ev.RunFailed(i, a, step.kind, shown, code, why, tail, log_path, findings)
        self.emit(failure)
        self.emit(ev.RunFinished("failed", self.run.id))
        return Outcome("failed", self.run.id, f"step {i + 1} ({step.title}) failed: {why}", failure)

    # ------------------------------------------------------------------------- reboot
    def _reboot_step(self, i: int, step: StepPlan, view: RunView, boot: str | None) -> Outcome | None:
        if view.reboot_step == i and view.reboot_boot_id and boot and boot != view.reboot_boot_id:
            self.journal.append("rebooted", step=i, boot_id_before=view.reboot_boot_id, boot_id=boot)
            self._disarm(view)
            self.journal.append("step-end", step=i, kind=step.kind, outcome="ok")
            self.emit(ev.StepFinished(i, step.kind, "ok", 0.0))
            return None
        actions = list(step.actions) or [Action(("systemctl", "reboot"), "reboot", root=True)]
        last = len(actions) - 1
        if view.reboot_step == i and (i, last) in view.done_actions:
            msg = "the reboot was requested but the machine has not rebooted yet; reboot, then run `rocm-wizard resume`"
            self.journal.append("run-end", state="reboot-pending")
            self.emit(ev.RebootPending(i, boot, False, msg))
            return Outcome("reboot-pending", self.run.id, msg)
        log_path = self.run.step_log(i, step.kind)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self.journal.append("step-start", step=i, kind=step.kind, title=step.title, log=str(log_path))
        self.emit(ev.StepStarted(i, len(self.plan.steps), step.kind, step.title, str(log_path)))
        with open(log_path, "ab") as log:
            unit = self._arm(log, i)
            now = self.yes or self.ask_reboot is None or self.ask_reboot()
            self.journal.append("reboot-pending", step=i, boot_id=boot, unit=unit, now=now)
            if not now:
                msg = "reboot when ready, then run `rocm-wizard resume` (a login notice will remind you)"
                self.journal.append("run-end", state="reboot-pending")
                self.emit(ev.RebootPending(i, boot, unit, msg))
                return Outcome("reboot-pending", self.run.id, msg)
            sub = StepPlan(step.kind, step.title, tuple(actions))
            out = self._run_actions_for_reboot(i, sub, view, log, str(log_path))
            if out is not None:
                return out
        msg = ("rebooting; the run resumes by itself after the boot" if unit
               else "rebooting; after the boot run `rocm-wizard resume`")
        self.journal.append("run-end", state="reboot-pending")
        self.emit(ev.RebootPending(i, boot, unit, msg))
        return Outcome("reboot-pending", self.run.id, msg)

    def _run_actions_for_reboot(self, i: int, step: StepPlan, view: RunView, log: IO[bytes], log_path: str) -> Outcome | None:
        for a, action in enumerate(step.actions):
            if (i, a) in view.done_actions and a != len(step.actions) - 1:
                continue
            shown = action.shown()
            self.journal.append("action-start", step=i, action=a, argv=shown, log=log_path, boot_id=self.boot_id())
            self.emit(ev.ActionStarted(i, a, shown, action.description))
            res, sink = self._exec(action, log, i, a)
            outcome = "ok" if res.exit_code in action.ok_codes and not res.timed_out else "failed"
            self.journal.append("action-end", step=i, action=a, argv=shown, exit_code=res.exit_code,
                                duration=round(res.duration, 3), log=log_path, boot_id=self.boot_id(), outcome=outcome)
            self.emit(ev.ActionFinished(i, a, res.exit_code, res.duration, outcome))
            if outcome != "ok":
                return self._fail(i, a, self.plan.steps[i], shown, res.exit_code,
                                  res.error or f"exited with {res.exit_code}", tuple(sink.tail), log_path)
        return None

    def _staging(self) -> Path:
        return self.run.dir / "resume"

    def _arm(self, log: IO[bytes], step: int) -> bool:
        """Trigger file, login notice, and (``--yes``) the resume unit. Idempotent."""
        marker = self.run.state_root / RESUME_MARKER
        atomic_write(marker, self.run.id + "\n")
        stage = self._staging()
        stage.mkdir(parents=True, exist_ok=True)
        notice = stage / "rocm-wizard.sh"
        atomic_write(notice, resume_unit.notice_text(marker, [c for c in self.resume_command if c != "--yes"]))
        unit_file = None
        if self.yes:
            user = None if self.priv.is_root or self.sandbox_root is not None else _user_name()
            unit_file = stage / resume_unit.UNIT_NAME
            atomic_write(unit_file, resume_unit.unit_text(self.resume_command, marker, user=user))
        for act in resume_unit.install_actions(unit_file, notice):
            res, _ = self._exec(act, log, step, -1, quiet=True)
            if not res.ok:
                log.write(f"--- could not {act.description} (exit {res.exit_code})\n".encode())
                if unit_file is not None and act.description != "login notice":
                    return False
        return unit_file is not None

    def _disarm(self, view: RunView) -> None:
        marker = self.run.state_root / RESUME_MARKER
        try:
            marker.unlink()
        except FileNotFoundError:
            pass
        if view.reboot_step is None and not any(r == "reboot" for r in view.step_kinds) and not any(
            s.reboot for s in self.plan.steps
        ):
            return
        log_path = self.run.logs / "resume-cleanup.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "ab") as log:
            unit_there = self.host.exists(resume_unit.UNIT_PATH)
            for act in resume_unit.remove_actions(unit_there):
                self._exec(act, log, -1, -1, quiet=True)


def _with_python(action: Action, python: str) -> Action:
    """In a sandbox the venv holds stand-ins, not torch: verify the given CPU torch, on the CPU.

    ``... verify --python <venv python> ...`` becomes ``... verify --python <python> --device cpu ...``,
    still run by the wizard's own interpreter (the suite itself runs in ``python``).
    """
    argv = list(action.argv)
    if "--python" in argv:
        argv[argv.index("--python") + 1] = python
    if "--device" in argv:
        argv[argv.index("--device") + 1] = "cpu"
    elif "verify" in argv:
        at = argv.index("verify") + 1
        argv[at:at] = ["--device", "cpu"]
    if os.path.basename(argv[0]).startswith("python"):
        argv[0] = sys.executable
    return Action(tuple(argv), action.description, env=action.env, ok_codes=action.ok_codes, timeout=action.timeout)


def _user_name() -> str | None:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (KeyError, ImportError):
        return None


def default_diagnose(text: str) -> list[ev.Finding]:
    """Known issues matching a failure's output, through wizard.diagnose once it exists."""
    try:
        from wizard.diagnose import diagnose_error_text
    except ImportError:
        return []
    out = []
    for f in diagnose_error_text(text):
        out.append(ev.Finding(str(f.id), str(f.title), str(f.fix), tuple(getattr(f, "sources", ()) or ())))
    return out
