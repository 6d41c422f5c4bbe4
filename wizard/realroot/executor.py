"""The real root as a machine the wizard acts on: its host (files read under ROOT, commands run inside it)
and its executor (every action entered into the root: the root's own apt-get, dpkg, pip, python3, wget).

The wizard itself stays outside: it reads the root's files, keeps the run's state in the root's
/var/lib/rocm-wizard, and runs each action inside through :func:`wizard.realroot.enter.enter_argv` (a
private mount and PID namespace, chroot, the profile's user for user-scope actions, root for root actions).
A host path under ROOT in an action (the staged resume unit) is the machine's own path without the ROOT
prefix. A real root has no GPU and its mirror's torch wheels are placeholders: an action that needs a GPU
is unavailable there, and the step is skipped and said so, never passed.
"""

from __future__ import annotations

import subprocess
import threading
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Sequence

from wizard.host import CommandResult, LiveHost
from wizard.mirror.credentials import Handed
from wizard.model import NEEDS_GPU, Action, ResolvedPlan
from wizard.realroot import enter
from wizard.realroot.machine import USER
from wizard.record import record
from wizard.runner import shell
from wizard.runner.executor import BASE_ENV, OutputSink, RehearsalMachine

NO_GPU = ("real root: no GPU, and the rehearsal mirror's torch wheels are placeholders; the verify step is "
          "skipped, not passed")
HOST_PATH = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}


def machine_path(root: Path, arg: str) -> str:
    """A host path under ``root`` as the machine sees it; anything else unchanged."""
    r = str(root).rstrip("/")
    if arg == r:
        return "/"
    if arg.startswith(r + "/"):
        return arg[len(r):]
    return arg


class RealRootHost(LiveHost):
    """Files under ROOT (as the sandbox's host reads them); commands run inside the root as its user."""

    def __init__(self, root: Path | str) -> None:
        r = Path(root).absolute()
        super().__init__(r, environ=enter.environment(USER))
        self.name = f"realroot:{r}"

    def which(self, program: str) -> str | None:
        for d in self.environ.get("PATH", "").split(":"):
            if d and self.exists(f"{d}/{program}"):
                return f"{d}/{program}"
        return None

    def run(self, argv: list[str], timeout: float = 5.0) -> CommandResult:
        full = enter.enter_argv(self.root, argv, user=USER, confined=True)
        try:
            proc = subprocess.run(full, capture_output=True, env=HOST_PATH, timeout=max(timeout, 15.0),
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode("utf-8", "replace") if isinstance(exc.stdout, bytes) else ""
            return CommandResult(tuple(argv), None, out, "timed out", timed_out=True)
        except OSError as exc:
            return CommandResult(tuple(argv), None, "", str(exc))
        code = proc.returncode
        err = proc.stderr.decode("utf-8", "replace")
        if code == 127 or "No such file or directory" in err and code != 0:
            return CommandResult(tuple(argv), None, "", f"{argv[0]}: not found")
        return CommandResult(tuple(argv), code, proc.stdout.decode("utf-8", "replace"), err)


@record(frozen=False)
class RealRootExecutor(RehearsalMachine):
    root: Path
    name: str = "realroot"

    def argv(self, action: Action) -> list[str]:
        command = [machine_path(self.root, a) for a in action.command()]
        user = enter.ROOT_USER if action.root else USER
        return enter.enter_argv(self.root, command, user=user, env=BASE_ENV, confined=True)

    def run(self, action: Action, *, on_output: OutputSink, cancel: threading.Event | None) -> shell.ShellResult:
        return shell.run(self.argv(action), env=HOST_PATH, on_output=on_output, timeout=action.timeout, cancel=cancel)

    def unavailable(self, requirement: str) -> str | None:
        return NO_GPU if requirement == NEEDS_GPU else None

    def handover(self, action: Action) -> Handed:
        """Mirror-login files go to the root's /tmp, the root's user's for a user action."""
        uid = None
        if not action.root:
            try:
                for line in (self.root / "etc/passwd").read_text().splitlines():
                    f = line.split(":")
                    if len(f) > 2 and f[0] == USER.name:
                        uid = int(f[2])
            except (OSError, ValueError):
                uid = None
        return Handed(self.root / "tmp", "/tmp", uid)

    def needs_authentication(self, actions: Sequence[Action]) -> bool:
        return False  # the host's root enters the root; inside it, root actions run as its root

    def authenticate(self, *, yes: bool) -> None:
        return None

    def kept_alive(self, actions: Sequence[Action]) -> AbstractContextManager[None]:
        return nullcontext()


__all__ = ["RealRootHost", "RealRootExecutor", "machine_path", "NO_GPU"]
