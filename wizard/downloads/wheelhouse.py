"""Where the wheelhouse is, what it holds, and pruning it (``rocm-wizard cache``).

* ``ROCM_WIZARD_CACHE_DIR``: the cache in that directory (tests, CI);
* root: /var/cache/rocm-wizard;
* a user: $XDG_CACHE_HOME/rocm-wizard (default ~/.cache/rocm-wizard).

The wheelhouse is ``CACHE/wheelhouse``: the files plans downloaded, by their own names, and the ``.part``
files of downloads a kill or a dropped link interrupted (the next run continues them).
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
    if home is None and ((os.geteuid() == 0) if is_root is None else is_root):
        return Path(ROOT_CACHE)
    if home is not None:
        return Path(home) / ".cache" / "rocm-wizard"
    xdg = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return Path(xdg) / "rocm-wizard"


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
        if cutoff is not None and f.mtime >= cutoff:
            continue
        (wheelhouse / f.name).unlink(missing_ok=True)
        gone.append(f)
    return tuple(gone)
