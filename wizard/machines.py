"""The machine a command acts on, as the run service needs it: its files, its executor, where its
state and logs live, and how the user names it on a command line. One place for the CLI and the TUI.

* the live machine: root actions through ``sudo -n --`` (or directly when root);
* a sandbox (``--sandbox DIR``): stand-in programs answer inside DIR, state in DIR/var/lib/rocm-wizard;
* ``--state-dir DIR`` / ``ROCM_WIZARD_STATE_DIR`` move the state (tests, CI).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from wizard import paths
from wizard.host import Host, LiveHost
from wizard.runner.executor import LiveExecutor
from wizard.runner.privilege import Privilege
from wizard.runner.resume_unit import wizard_command
from wizard.runner.service import Machine, RunService

if TYPE_CHECKING:
    from wizard.realroot.machine import RealRoot


def _given_state(state_dir: str | None) -> str | None:
    """The state dir named by --state-dir or ROCM_WIZARD_STATE_DIR, absolute (the boot-time resume keeps it)."""
    given = state_dir or os.environ.get(paths.ENV_VAR)
    return str(Path(given).expanduser().absolute()) if given else None


def live(host: Host, *, state_dir: str | None = None) -> Machine:
    state, logs = paths.state_dir(state_dir), paths.log_dir(state_dir)
    cli = ["rocm-wizard"]
    resume = [*wizard_command(), "resume", "--yes"]
    env: tuple[tuple[str, str], ...] = ()
    sd = _given_state(state_dir)
    if sd:
        cli += ["--state-dir", sd]
        resume += ["--state-dir", sd]
        env = ((paths.ENV_VAR, sd),)
    user = None if sd else _live_user_state(host)
    privilege = Privilege.detect(host.environ)
    root = privilege.is_root
    # a user's own run keeps its journal in their state dir: a system plan takes the system's lock too, as root
    system = None if sd or root else Path(paths.ROOT_STATE)
    return Machine(host, LiveExecutor(host.environ, privilege), state, logs, str(state), resume,
                   cli, resume_env=env, user_state=user, user_state_root=Path(user) if user else None,
                   user_state_owner=privilege.sudo_user if root else None,
                   user_state_for=_home_state if root and not sd else None,
                   system_state_root=system, system_state_owner="root" if system else None)


def _home_state(user: str) -> str | None:
    """A user's state dir, from their home (the user a run's actions run as: the journal's, a venv's owner)."""
    import pwd

    try:
        return paths.user_state_dir(pwd.getpwnam(user).pw_dir)
    except KeyError:
        return None


def _live_user_state(host: Host) -> str | None:
    """The state dir of the user a user-only plan is for: this user's; under sudo, SUDO_USER's; None for root
    itself (root's plans keep root's state dir)."""
    env = host.environ
    if os.geteuid() != 0:
        return str(paths.state_dir(environ=env, is_root=False))
    user = env.get("SUDO_USER")
    if not user or user == "root":
        return None
    import pwd

    try:
        return paths.user_state_dir(pwd.getpwnam(user).pw_dir)
    except KeyError:
        return None


def sandbox(host: LiveHost, root: str | Path, *, verify_python: str | None = None,
            state_dir: str | None = None, own_state: bool = False) -> Machine:
    """``own_state``: a rehearsal machine, whose state is its own /var/lib/rocm-wizard even where
    ROCM_WIZARD_STATE_DIR names another (the live machine's)."""
    from wizard.sandbox.executor import SandboxExecutor

    r = Path(root).absolute()
    if state_dir:
        state, logs = paths.state_dir(state_dir), paths.log_dir(state_dir)
    else:
        own: dict[str, str] | None = {} if own_state else None
        state, logs = paths.state_dir(machine_root=r, environ=own), paths.log_dir(machine_root=r, environ=own)
    cli = ["rocm-wizard", "--sandbox", str(r)]
    resume = [*wizard_command(), "resume", "--yes", "--sandbox", str(r)]
    env: tuple[tuple[str, str], ...] = ()
    if state_dir:
        sd = str(Path(state_dir).absolute())
        cli += ["--state-dir", sd]
        resume += ["--state-dir", sd]
        env = ((paths.ENV_VAR, sd),)
    # the wizard on the sandbox machine is `python3 -m wizard` (its stand-in runs this wizard on the sandbox)
    home = host.environ.get("HOME")
    user = None if state_dir or not home else paths.user_state_dir(home)
    return Machine(host, SandboxExecutor(r, host.environ, verify_python), state, logs,
                   str(state) if state_dir else paths.ROOT_STATE, resume, cli, wizard_python="python3",
                   resume_env=env, user_state=user, user_state_root=_under(r, user))


def realroot(host: Host, root: RealRoot) -> Machine:
    """A rehearsal on a real Debian 12 or 13 root: the root's own tools run every action (wizard.realroot)."""
    from wizard.realroot.executor import RealRootExecutor
    from wizard.realroot.machine import USER
    from wizard.realroot.rehearsal import mirrors

    r = root.path
    cli = ["rocm-wizard", "--sandbox", str(r), "--root", root.kind]
    resume = [*wizard_command(), "resume", "--yes", "--sandbox", str(r), "--root", root.kind]
    # its state is the root's own /var/lib/rocm-wizard, whatever ROCM_WIZARD_STATE_DIR says
    return Machine(host, RealRootExecutor(r), paths.state_dir(machine_root=r, environ={}),
                   paths.log_dir(machine_root=r, environ={}),
                   paths.ROOT_STATE, resume, cli, wizard_python="python3", mirrors=mirrors(root),
                   user_state=paths.user_state_dir(USER.home), user_state_root=_under(r, paths.user_state_dir(USER.home)))


def _under(root: Path, path: str | None) -> Path | None:
    """A path of a rehearsal machine, here (under its root)."""
    return None if path is None else Path(root) / path.lstrip("/")


def service(machine: Machine) -> RunService:
    return RunService(machine)
