"""The state and log directories a run trusts: created 0700 / 0600 under umask 077, checked before use.

Root reads its state dir back (plan.json, the journal, the backup manifest) and acts on it, so a
state dir someone else can write is a way to make root run their commands. Before any run, resume,
rollback or abandon touches them, every directory and file of the state and log trees must be owned
by root or by the user running the wizard, must not be a symlink, and must not be writable by group
or others; otherwise the command stops with one line naming the path and nothing is created. The
wizard's own files are made under umask 077; the actions it runs get umask 022 (``shell.CHILD_UMASK``), the
system default the package managers expect.
"""

from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from wizard import paths

STATE_UMASK = 0o077
LIMIT = 20000  # files checked at most (a state dir holds a few per run)


class StateError(Exception):
    """A state or log path the wizard may not trust (one line)."""


def bad_path(path: str) -> str | None:
    """Why a state path cannot be used (a newline or another control character breaks the unit
    and the login notice that name it)."""
    if any(ord(c) < 32 or ord(c) == 127 for c in path):
        return f"the state path {path!r} holds a control character (newline, tab ...): choose another one"
    return None


def _why(path: str, st: os.stat_result, me: int) -> str | None:
    if stat.S_ISLNK(st.st_mode):
        return f"{path} is a symlink"
    if st.st_uid not in (0, me):
        return f"{path} is owned by uid {st.st_uid}, neither root nor the user running the wizard (uid {me})"
    if st.st_mode & 0o022:
        return f"{path} is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})"
    if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
        return f"{path} is neither a file nor a directory"
    return None


def untrusted(path: Path) -> str | None:
    """Why the one path ``path`` may not be trusted (None: it may, or it is not there)."""
    try:
        return _why(str(path), os.lstat(path), os.geteuid())
    except FileNotFoundError:
        return None


def not_linked(lock: Path) -> str | None:
    """Why the lock file ``lock`` in a state dir the wizard does not check as a whole (a rehearsal machine's user
    state dir, taken by the wizard itself) may not be opened: its dir or itself a symlink (one planted there has the
    lock's truncation and holder record land in the file it names), or the lock no file. Its owner is not asked: a
    real root's user dir is its user's while the wizard runs as root."""
    for path in (lock.parent, lock):
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(st.st_mode):
            return f"{path} is a symlink"
        if path == lock and not stat.S_ISREG(st.st_mode):
            return f"{path} is not a file"
    return None


def check_tree(top: Path, skip: frozenset[str] = frozenset()) -> None:
    """Every directory and file under ``top`` (``top`` included) may be trusted, or StateError. ``skip``: names
    of ``top``'s entries that are not the wizard's state (the rehearsal machines: their roots hold symlinks and
    other users' files by design, and a run never reads them)."""
    me = os.geteuid()
    seen = 0
    try:
        st = os.lstat(top)
    except FileNotFoundError:
        return
    why = _why(str(top), st, me)
    if why:
        raise StateError(why)
    for d, dirs, files in os.walk(top):
        if d == str(top):
            dirs[:] = [n for n in dirs if n not in skip]
            files = [n for n in files if n not in skip]
        for name in [*dirs, *files]:
            p = os.path.join(d, name)
            seen += 1
            if seen > LIMIT:
                return
            try:
                why = _why(p, os.lstat(p), me)
            except FileNotFoundError:
                continue
            if why:
                raise StateError(why)


def _make(top: Path) -> None:
    """Create ``top`` 0700 (and its missing parents 0755: /var/lib exists on every machine)."""
    if top.is_dir() or top.is_symlink():
        return
    top.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
    try:
        os.mkdir(top, 0o700)
    except FileExistsError:
        pass


@contextmanager
def private() -> Iterator[None]:
    """umask 077 while the block runs (the wizard's own files: 0600, directories 0700), then the caller's."""
    old = os.umask(STATE_UMASK)
    try:
        yield
    finally:
        os.umask(old)


def prepare(state_root: Path, log_root: Path) -> None:
    """Before a run touches its state (inside :func:`private`): both trees checked (StateError), then
    created 0700. The rehearsal machines kept in the state dir (``paths.REHEARSALS``) are not its state."""
    skip = frozenset({paths.REHEARSALS})
    for top in (state_root, log_root):
        why = bad_path(str(top))
        if why:
            raise StateError(why)
        check_tree(top, skip)
    for top in (state_root, log_root):
        _make(top)
        check_tree(top, skip)
