"""The sandbox's executor: actions run inside a rehearsal machine, through its stand-in programs."""

from __future__ import annotations

import os
import threading
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Mapping, Sequence

from wizard.model import NEEDS_GPU, Action, ResolvedPlan
from wizard.record import field, record
from wizard.runner import shell
from wizard.runner.executor import BASE_ENV, OutputSink, RehearsalMachine
from wizard.runner.privilege import Privilege

SANDBOX_NO_GPU = ("sandbox: the verify step needs --verify-python PATH (a CPU torch) to run the suite on this "
                  "rehearsal machine; skipped, not passed")
# The sandbox's stand-ins read this: the CPU torch interpreter that plays the venv's torch in a rehearsal.
SANDBOX_VERIFY_PYTHON = "ROCM_WIZARD_SANDBOX_VERIFY_PYTHON"


@record(frozen=False)
class SandboxExecutor(RehearsalMachine):
    """A rehearsal machine: a root directory whose PATH holds only stand-in programs (wizard.sandbox).

    A program named by an absolute path is the one inside the root, or else the stand-in of that name;
    nothing outside the root is ever run. Root actions go through the sandbox's own sudo, which asks
    for a password only where the sandbox was given one. The sandbox has no GPU: an action that needs
    one is unavailable unless a CPU torch plays the venv's torch (``verify_python``)."""

    root: Path
    environ: Mapping[str, str]
    verify_python: str | None = None
    name: str = "sandbox"
    privilege: Privilege = field(default_factory=lambda: Privilege(is_root=False))

    def _env(self) -> dict[str, str]:
        env = dict(self.environ)
        env.update(BASE_ENV)
        if self.verify_python:
            env[SANDBOX_VERIFY_PYTHON] = self.verify_python
        return env

    def _which(self, program: str) -> str | None:
        return shell.resolve(program, self.environ)

    def map_program(self, argv: Sequence[str]) -> list[str] | None:
        """An absolute program path means the one inside the root (else the stand-in of its name);
        None: it would leave the root."""
        from wizard.sandbox.machine import Escape, inside as mapped

        if not argv or not argv[0].startswith("/"):
            return list(argv)
        try:
            inside = mapped(self.root, argv[0])  # normalised: '..' never climbs out of the root
        except Escape:
            return None
        if inside.is_file():
            return [str(inside), *argv[1:]]
        standin = self._which(os.path.basename(argv[0]))
        return [standin, *argv[1:]] if standin else None

    def run(self, action: Action, *, on_output: OutputSink, cancel: threading.Event | None) -> shell.ShellResult:
        mapped = self.map_program(action.command())
        if mapped is None:
            msg = f"sandbox: no stand-in for {action.argv[0]} (nothing outside the sandbox is run)"
            on_output((msg + "\n").encode())
            return shell.ShellResult(127, 0.0, error=msg)
        argv = self.privilege.wrap(action, mapped)
        # the machine's working directory is its "/": a relative operand names a file of the sandbox, not of the host
        return shell.run(argv, env=self._env(), on_output=on_output, timeout=action.timeout, cancel=cancel,
                         cwd=str(self.root))

    def unavailable(self, requirement: str) -> str | None:
        if requirement == NEEDS_GPU and not self.verify_python:
            return SANDBOX_NO_GPU
        return None

    def needs_authentication(self, actions: Sequence[Action]) -> bool:
        from wizard.sandbox.machine import sudo_password_required

        return sudo_password_required(self.root) and self.privilege.needs_sudo(actions)

    def authenticate(self, *, yes: bool) -> None:
        self.privilege.authenticate(yes=yes, environ=self.environ)

    def kept_alive(self, actions: Sequence[Action]) -> AbstractContextManager[None]:
        if self.needs_authentication(actions):
            return self.privilege.kept_alive(self.environ)
        return nullcontext()
