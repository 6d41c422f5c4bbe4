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
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Protocol, Sequence

from wizard.model import Action, ResolvedPlan
from wizard.record import record
from wizard.runner import shell
from wizard.runner.privilege import Privilege

if TYPE_CHECKING:
    from wizard.mirror.credentials import Handed

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

    def user_for(self, plan: ResolvedPlan) -> str | None:
        """The user whose venvs ``plan`` touches, recorded in the run's first journal record (None: this
        machine has no users of its own: its actions run as the wizard does)."""
        ...

    def adopt_user(self, user: str | None) -> None:
        """``as_user`` actions run as ``user`` (the one the journal recorded); None: no user is known."""
    @property
    def resumes_at_boot(self) -> bool:
        """Whether a boot of this machine starts the armed resume unit (a rehearsal machine never boots)."""
        ...


class RehearsalMachine:
    """What every rehearsal executor (stand-in sandbox, real root) answers alike: no users of its own, no
    resume unit, never a boot that starts one."""

    @property
    def unit_user(self) -> str | None:
        return None

    def user_for(self, plan: ResolvedPlan) -> str | None:
        return None  # a rehearsal machine has no users of its own

    def adopt_user(self, user: str | None) -> None:
        return None

    @property
    def resumes_at_boot(self) -> bool:
        return False  # a rehearsal machine never boots: its reboot changes the boot id, nothing starts the unit


@record(frozen=False)
class LiveExecutor:
    """The machine the wizard runs on: root actions through ``sudo -n --`` unless already root."""

    environ: Mapping[str, str]
    privilege: Privilege
    name: str = "live"
    user_known: bool = True  # False: a resumed run that recorded no user (as_user actions are refused as root)
    # requirement -> why this machine cannot provide it, as its operator declared it (fleet run --engine on a host
    # the controller knows has no GPU): the steps that need it are skipped and reported so, never passed
    declared_unavailable: tuple[tuple[str, str], ...] = ()

    def _env(self) -> dict[str, str]:
        env = dict(self.environ)
        env.update(BASE_ENV)
        return env

    def run(self, action: Action, *, on_output: OutputSink, cancel: threading.Event | None) -> shell.ShellResult:
        if action.as_user and self.privilege.is_root and not self.privilege.sudo_user and not self.user_known:
            msg = ("refused: this action runs as the user whose venvs the plan touches, and the run's journal names "
                   "no user: run it as that user (or through sudo), never as root")
            on_output((msg + "\n").encode())
            return shell.ShellResult(None, 0.0, error=msg)
        return shell.run(self.privilege.wrap(action), env=self._env(), on_output=on_output, timeout=action.timeout,
                         cancel=cancel)

    def unavailable(self, requirement: str) -> str | None:
        return dict(self.declared_unavailable).get(requirement)

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

    def handover(self, action: Action) -> Handed:
        """Where an action's mirror-login files go: a private temp dir, the invoking user's for an ``as_user``
        action of a wizard started with sudo (wizard.mirror.credentials)."""
        import pwd
        import tempfile

        from wizard.mirror.credentials import Handed

        uid = None
        if action.as_user and self.privilege.is_root and self.privilege.sudo_user:
            try:
                uid = pwd.getpwnam(self.privilege.sudo_user).pw_uid
            except KeyError:
                uid = None
        tmp = tempfile.gettempdir()
        return Handed(Path(tmp), tmp, uid)

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

    def user_for(self, plan: ResolvedPlan) -> str | None:
        """Not root: this user. Root: ``SUDO_USER``, else the owner of the first venv the plan touches (of
        the nearest directory above it that exists, for a new one), else root itself."""
        import pwd

        if not self.privilege.is_root:
            return self.unit_user
        if self.privilege.sudo_user:
            return self.privilege.sudo_user
        for step in plan.steps:
            venv = step.param("venv")
            p = str(venv) if venv else ""
            while p.startswith("/"):
                try:
                    uid = os.stat(p).st_uid
                except OSError:
                    p = os.path.dirname(p) if p != "/" else ""
                    continue
                try:
                    return pwd.getpwuid(uid).pw_name
                except KeyError:
                    return None  # an owner with no name: no user the actions could run as
        return "root"

    def adopt_user(self, user: str | None) -> None:
        self.user_known = user is not None
        if self.privilege.is_root and user and user != "root":
            self.privilege = Privilege(is_root=True, sudo_user=user, sudo=self.privilege.sudo)
