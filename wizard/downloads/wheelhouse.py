"""Where the wheelhouse is, what it holds, and pruning it (``rocm-wizard cache``).

* ``ROCM_WIZARD_CACHE_DIR``: the cache in that directory (tests, CI);
* root: /var/cache/rocm-wizard (under sudo: the invoking user's, where that user's plans download);
* a user: $XDG_CACHE_HOME/rocm-wizard (default ~/.cache/rocm-wizard).

The wheelhouse is ``CACHE/wheelhouse``: the files plans downloaded, by their own names, and the ``.part``
files of downloads a kill or a dropped link interrupted (the next run continues them; prune leaves one a
running download holds).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Mapping

from wizard.record import record

ENV_VAR = "ROCM_WIZARD_CACHE_DIR"
ROOT_CACHE = "/var/cache/rocm-wizard"
WHEELHOUSE = "wheelhouse"
DAY_S = 86400


def cache_dir(environ: Mapping[str, str] | None = None, *, is_root: bool | None = None,
              home: str | None = None) -> Path:
    """The wizard's cache directory for this process, or for the user whose ``home`` is given."""
    env = os.environ if environ is None else environ
    if env.get(ENV_VAR):
        return Path(env[ENV_VAR]).expanduser().absolute()
    root = (os.geteuid() == 0) if is_root is None else is_root
    if home is None and root and env.get("SUDO_USER") not in (None, "", "root"):
        home = _home_of(env["SUDO_USER"])  # under sudo: the user's, where that user's plans download
    if home is None and root:
        return Path(ROOT_CACHE)
    if home is not None:
        return Path(home) / ".cache" / "rocm-wizard"
    xdg = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return Path(xdg) / "rocm-wizard"


def _home_of(user: str) -> str | None:
    import pwd

    try:
        return pwd.getpwnam(user).pw_dir
    except KeyError:
        return None


def wheelhouse_dir(environ: Mapping[str, str] | None = None, *, is_root: bool | None = None,
                   home: str | None = None) -> Path:
    return cache_dir(environ, is_root=is_root, home=home) / WHEELHOUSE


@record
class CachedFile:
    name: str
    size: int
    mtime: float
    partial: bool  # a .part a later run continues


def contents(wheelhouse: Path) -> tuple[CachedFile, ...]:
    """The wheelhouse's files, by name; empty when there is none yet."""
    if not wheelhouse.is_dir():
        return ()
    out = []
    for p in sorted(wheelhouse.iterdir()):
        if not p.is_file():
            continue
        st = p.stat()
        out.append(CachedFile(p.name, st.st_size, st.st_mtime, p.name.endswith(".part")))
    return tuple(out)


def prune(wheelhouse: Path, *, older_than_days: float | None = None, now: float | None = None) -> tuple[CachedFile, ...]:
    """Remove every file (``older_than_days`` None) or those not used for that many days; what was removed."""
    cutoff = None if older_than_days is None else (time.time() if now is None else now) - older_than_days * DAY_S
    gone = []
    for f in contents(wheelhouse):
        if (cutoff is not None and f.mtime >= cutoff) or (f.partial and _in_use(wheelhouse / f.name)):
            continue
        (wheelhouse / f.name).unlink(missing_ok=True)
        gone.append(f)
    return tuple(gone)


def _in_use(part: Path) -> bool:
    """A download holds this ``.part`` (its flock): pruning it would only make that run start over."""
    import fcntl

    try:
        with open(part, "rb") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(f, fcntl.LOCK_UN)
    except OSError:
        return False
    return False
