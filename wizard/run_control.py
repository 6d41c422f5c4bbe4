"""The runner behind a front end: where state lives, the lock, creating and continuing runs.

A thin layer over ``wizard.runner`` (engine, journal, lock, privilege) that the Textual app uses and
that holds no view code: every call is blocking and reports progress through the engine's event
callback, so the caller decides which thread it runs on.
"""

from __future__ import annotations

import threading
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ContextManager, Sequence

from wizard.host import Host
from wizard.model import ResolvedPlan
from wizard.runner import events as ev
from wizard.runner import runs
from wizard.runner.engine import BOOT_ID, Engine, Outcome
from wizard.runner.lock import Lock
from wizard.runner.privilege import Privilege
from wizard.session import PendingRun

LOCK_NAME = "lock"
PENDING_STATES = ("reboot-pending", "interrupted", "failed", "stopped")


class RunBlocked(Exception):
    """A new run cannot start: another one is unfinished."""


@dataclass
class RunControl:
    host: Host
    state_root: Path
    log_root: Path
    privilege: Privilege
    machine_state: str  # the state dir as the machine sees it (what plans write into)
    verify_python: str | None = None
    resume_command: Sequence[str] | None = None

    @classmethod
    def for_ctx(cls, ctx: Any, *, verify_python: str | None = None) -> RunControl:
        """From a command Context (or anything with host, sandbox and state_dir), as the CLI commands do."""
        from wizard.runner import cli_support as cs

        state, logs, machine_state = cs.state_roots(ctx)
        return cls(ctx.host, state, logs, cs.privilege(ctx), machine_state, verify_python, cs.resume_command(ctx))

    @classmethod
    def for_sandbox(cls, host: Host, sandbox: str, *, verify_python: str | None = None) -> RunControl:
        from types import SimpleNamespace

        return cls.for_ctx(SimpleNamespace(host=host, sandbox=sandbox, state_dir=None), verify_python=verify_python)

    # -- what is there -------------------------------------------------------------------
    def current_run(self) -> runs.Run | None:
        return runs.current(self.state_root, self.log_root)

    def pending(self) -> PendingRun | None:
        run = self.current_run()
        if run is None:
            return None
        try:
            view = run.view()
        except Exception:  # noqa: BLE001 - an unreadable journal is reported by `status`, not here
            return None
        if view.state not in PENDING_STATES:
            return None
        boot = self.host.read_text(BOOT_ID)
        rebooted = bool(view.reboot_boot_id and boot and boot.strip() != view.reboot_boot_id)
        return PendingRun(run.id, view.plan, view.state, view.next_step, view.total_steps,
                          tuple(view.step_titles), rebooted, str(run.journal.path))

    def needs_sudo(self, plan: ResolvedPlan) -> bool:
        root = getattr(self.host, "root", None)
        if self.host.name.startswith("sandbox:") and root is not None:
            from wizard.sandbox.machine import sudo_password_required

            if not sudo_password_required(Path(root)):
                return False  # the sandbox's sudo stand-in is passwordless unless given a password
        return self.privilege.needs_sudo([a for s in plan.steps for a in s.actions])

    # -- running ---------------------------------------------------------------------------
    def kept_alive(self, plan: ResolvedPlan) -> ContextManager[None]:
        """While a run that uses sudo goes on, its ticket is refreshed (``sudo -n -v``, every minute)."""
        return self.privilege.kept_alive(self.host.environ) if self.needs_sudo(plan) else nullcontext()

    def lock(self) -> Lock:
        return Lock(self.state_root / LOCK_NAME)

    def _engine(self, plan: ResolvedPlan, run: runs.Run, on_event: Callable[[ev.Event], None],
                ask_reboot: Callable[[], bool] | None, cancel: threading.Event) -> Engine:
        kw: dict[str, Any] = {}
        if self.resume_command is not None:
            kw["resume_command"] = self.resume_command
        return Engine(self.host, plan, run, privilege=self.privilege, on_event=on_event, yes=False,
                      verify_python=self.verify_python, ask_reboot=ask_reboot, cancel=cancel, **kw)

    def start(self, plan: ResolvedPlan, on_event: Callable[[ev.Event], None], *,
              ask_reboot: Callable[[], bool] | None = None, cancel: threading.Event | None = None) -> Outcome:
        cancel = cancel or threading.Event()
        with self.lock():
            prev = self.current_run()
            if prev is not None:
                v = prev.view()
                if v.state in ("interrupted", "reboot-pending", "failed", "running"):
                    raise RunBlocked(f"run {prev.id} ({v.plan}) is {v.state}: resume it (restart the wizard) "
                                     "or undo it with `rocm-wizard rollback` first")
            run = runs.create(self.state_root, self.log_root, plan)
            with self.kept_alive(plan):
                return self._engine(plan, run, on_event, ask_reboot, cancel).execute(mode="start")

    def resume(self, on_event: Callable[[ev.Event], None], *, mode: str = "resume",
               ask_reboot: Callable[[], bool] | None = None, cancel: threading.Event | None = None) -> Outcome:
        """Continue the current run ("resume" after a reboot or an interruption, "retry" after a failure)."""
        cancel = cancel or threading.Event()
        with self.lock():
            run = self.current_run()
            if run is None:
                return Outcome("failed", "", "no run to continue")
            plan = run.plan()
            with self.kept_alive(plan):
                return self._engine(plan, run, on_event, ask_reboot, cancel).execute(mode=mode)

    def current_plan(self) -> ResolvedPlan | None:
        run = self.current_run()
        return run.plan() if run is not None else None

    def rollback(self, on_event: Callable[[ev.Event], None], *, cancel: threading.Event | None = None) -> Outcome:
        """Undo what the current run's backup allows (the same steps as `rocm-wizard rollback --yes`:
        wizard.runner.rollback.build, journalled rollback-* records, run-end rolled-back)."""
        from wizard.runner import rollback

        cancel = cancel or threading.Event()
        with self.lock():
            run = self.current_run()
            if run is None:
                return Outcome("failed", "", "no run to roll back")
            plan = run.plan()
            rb = rollback.build(self.host, plan, run.view())
            if rb.cannot:
                on_event(ev.OutputLines(-1, -1, tuple(f"cannot restore: {c}" for c in rb.cannot)))
            with self.kept_alive(plan):
                return rollback.execute(self._engine(plan, run, on_event, None, cancel), run, rb)
