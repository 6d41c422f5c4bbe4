"""Executors: how an action reaches the machine, chosen once per run.

The engine knows one interface: ``run(action, on_output, cancel)`` returns a :class:`ShellResult`,
``unavailable(requirement)`` says when the machine cannot provide what an action needs (a rehearsal
has no GPU), and privilege questions (does this run need sudo, ask for it, keep it alive) go through
the executor too. The live machine and the stand-in sandbox are the two executors here; a real root
(a rehearsal with the real package managers) and a remote host plug in the same way.
"""

from __future__ import annotations

import os
import threading
from contextlib import AbstractContextManager, nullcontext
from typing import Callable, Mapping, Protocol, Sequence

from wizard.model import Action
from wizard.record import record
from wizard.runner import shell
from wizard.runner.privilege import Privilege

# The environment every action runs with on top of the machine's: plain output, no prompts.
BASE_ENV = {
    "LC_ALL": "C",
    "LANG": "C",
    "PYTHONUNBUFFERED": "1",
    "NO_COLOR": "1",
    "TERM": "dumb",
    "DEBIAN_FRONTEND": "noninteractive",
    "PIP_NO_INPUT": "1",
}

OutputSink = Callable[[bytes], None]


class Executor(Protocol):
    name: str

    def run(self, action: Action, *, on_output: OutputSink, cancel: threading.Event | None) -> shell.ShellResult: ...

    def unavailable(self, requirement: str) -> str | None: ...

    def needs_authentication(self, actions: Sequence[Action]) -> bool: ...

    def authenticate(self, *, yes: bool) -> None: ...

    def kept_alive(self, actions: Sequence[Action]) -> AbstractContextManager[None]: ...

    @property
    def unit_user(self) -> str | None: ...

    @property
    def resumes_at_boot(self) -> bool:
        """Whether a boot of this machine starts the armed resume unit (a rehearsal machine never boots)."""
        ...


@record(frozen=False)
class LiveExecutor:
    """The machine the wizard runs on: root actions through ``sudo -n --`` unless already root."""

    environ: Mapping[str, str]
    privilege: Privilege
    name: str = "live"

    def _env(self) -> dict[str, str]:
        env = dict(self.environ)
        env.update(BASE_ENV)
        return env

    def run(self, action: Action, *, on_output: OutputSink, cancel: threading.Event | None) -> shell.ShellResult:
        return shell.run(self.privilege.wrap(action), env=self._env(), on_output=on_output, timeout=action.timeout,
                         cancel=cancel)

    def unavailable(self, requirement: str) -> str | None:
        return None

    def needs_authentication(self, actions: Sequence[Action]) -> bool:
        return self.privilege.needs_sudo(actions)

    def authenticate(self, *, yes: bool) -> None:
        self.privilege.authenticate(yes=yes, environ=self.environ)

    def kept_alive(self, actions: Sequence[Action]) -> AbstractContextManager[None]:
        if self.needs_authentication(actions):
            return self.privilege.kept_alive(self.environ)
        return nullcontext()

    @property
    def resumes_at_boot(self) -> bool:
        return True

    @property
    def unit_user(self) -> str | None:
        """The user the boot-time resume runs as (None: root)."""
        if self.privilege.is_root:
            return None
        try:
            import pwd

            return pwd.getpwuid(os.getuid()).pw_name
        except (KeyError, ImportError):
            return None
