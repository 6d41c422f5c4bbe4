"""Where runs keep their state and logs.

* ``--state-dir DIR`` or ``ROCM_WIZARD_STATE_DIR``: state in DIR, logs in DIR/logs (tests, CI).
* a sandbox: the sandbox machine's own /var/lib/rocm-wizard and /var/log/rocm-wizard under its root.
* root: /var/lib/rocm-wizard and /var/log/rocm-wizard.
* a user: $XDG_STATE_HOME/rocm-wizard (default ~/.local/state/rocm-wizard), logs in its logs/.

A plan that changes nothing system-wide (a venv, pip) keeps its backup and its script's progress in the
user's state dir wherever it runs (:func:`user_state_dir`), so it needs no root.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

ENV_VAR = "ROCM_WIZARD_STATE_DIR"
ROOT_STATE = "/var/lib/rocm-wizard"
ROOT_LOG = "/var/log/rocm-wizard"
REHEARSALS = "rehearsal"  # <state>/rehearsal/: the TUI's rehearsal machines, each with its own state inside


def _explicit(explicit: str | os.PathLike[str] | None, environ: Mapping[str, str]) -> Path | None:
    if explicit:
        return Path(explicit).expanduser().absolute()
    if environ.get(ENV_VAR):
        return Path(environ[ENV_VAR]).expanduser().absolute()
    return None


def _dirs(
    explicit: str | os.PathLike[str] | None,
    environ: Mapping[str, str] | None,
    is_root: bool | None,
    machine_root: str | os.PathLike[str] | None,
) -> tuple[Path, Path]:
    """(state, logs), by precedence: explicit/env var, a sandbox's root, root, the user's XDG state dir."""
    env = os.environ if environ is None else environ
    given = _explicit(explicit, env)
    if given is not None:
        return given, given / "logs"
    if machine_root is not None and str(machine_root) != "/":
        base = Path(machine_root)
        return base / ROOT_STATE.lstrip("/"), base / ROOT_LOG.lstrip("/")
    if (os.geteuid() == 0) if is_root is None else is_root:
        return Path(ROOT_STATE), Path(ROOT_LOG)
    xdg = env.get("XDG_STATE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".local", "state")
    user = Path(xdg) / "rocm-wizard"
    return user, user / "logs"


def state_dir(
    explicit: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    is_root: bool | None = None,
    machine_root: str | os.PathLike[str] | None = None,
) -> Path:
    """The directory holding runs/, the lock and the current-run pointer."""
    return _dirs(explicit, environ, is_root, machine_root)[0]


def log_dir(
    explicit: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    is_root: bool | None = None,
    machine_root: str | os.PathLike[str] | None = None,
) -> Path:
    """The directory holding one folder of per-step logs per run."""
    return _dirs(explicit, environ, is_root, machine_root)[1]


def rehearsal_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """Where the rehearsal machines of the machine whose state is ``state_dir(explicit)`` live. A live run
    neither reads nor checks it: each rehearsal machine keeps its state under its own root."""
    return state_dir(explicit) / REHEARSALS
def user_state_dir(home: str, environ: Mapping[str, str] | None = None) -> str:
    """The user's state dir as their machine names it: $XDG_STATE_HOME/rocm-wizard, else HOME/.local/state/..."""
    xdg = (environ or {}).get("XDG_STATE_HOME")
    return f"{xdg.rstrip('/') if xdg else home.rstrip('/') + '/.local/state'}/rocm-wizard"
