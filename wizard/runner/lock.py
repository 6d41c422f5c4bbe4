"""One wizard per machine: an flock'ed lock file that names its holder.

The kernel drops an flock when its holder dies (even by ``kill -9``), so a lock file whose flock
can be taken is stale by definition; its old content still says who left it.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wizard.record import record



@record
class Holder:
    pid: int
    start_time: str  # ISO time the holder started
    command: str
    proc_start: str | None = None  # /proc/<pid>/stat field 22, to tell a reused pid apart

    def describe(self) -> str:
        """One printable line: a user's own lock file (a user-only plan's, read by a wizard run as root) is that
        user's to write, so what it says reaches root's terminal without its control characters."""
        text = f"pid {self.pid}, started {self.start_time}: {self.command}"
        return "".join(c if c.isprintable() else "?" for c in text)


# The fds of the locks this process holds: every action inherits them (shell.run), so a wizard killed with
# SIGKILL leaves its lock held until the last process it started is gone, and a resume cannot start an action
# that is still running. A process an action leaves behind (a daemon it starts, ``cmd &``) inherits them too: the
# wizard lets go explicitly at its end (LOCK_UN drops the lock of every copy), so that process holds nothing after
# the run. One rule, the dry-run script's too (wizard.script): held while the run or an action it started lives;
# let go at the run's end, whatever its actions left behind.
_HELD: set[int] = set()


def held_fds() -> frozenset[int]:
    return frozenset(_HELD)


class LockHeld(Exception):
    def __init__(self, holder: Holder | None, path: Path) -> None:
        who = holder.describe() if holder else "unknown holder"
        # a holder that names no start time (the dry-run script's) is not told apart from a reused pid: never "gone"
        if holder is not None and holder.proc_start is not None and _proc_start(holder.pid) != holder.proc_start:
            super().__init__(f"the lock is still held by a process a rocm-wizard run started ({who}; that wizard is "
                             "gone, an action it ran is not): wait for it to end, or stop it; lock file: " + str(path))
        else:
            super().__init__(f"another rocm-wizard run holds the lock ({who}); lock file: {path}")
        self.holder = holder
        self.path = path


def _proc_start(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read().decode("ascii", "replace")
        return data[data.rfind(")") + 2 :].split()[19]
    except (OSError, IndexError):
        return None


def read_holder(path: Path) -> Holder | None:
    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
        return Holder(int(d["pid"]), str(d["start_time"]), str(d["command"]), d.get("proc_start"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def held(path: Path) -> Holder | None:
    """The process holding the lock at ``path`` now (None: nobody does); never creates or changes the file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return read_holder(path) or Holder(0, "?", "another rocm-wizard")
    except OSError:
        return None
    finally:
        os.close(fd)  # closing drops a shared lock this call took
    return None


def _make_dirs(d: Path) -> os.stat_result:
    """Make ``d`` and its missing parents, each owned as the nearest folder that existed is (the place they are
    made in): a wizard run as root that takes a user's lock in a real root's /home/user makes
    ~/.local/state/rocm-wizard the user's, as the user's own run would, never root's (a root-owned ~/.local breaks
    the user's own programs). Returns that folder's stat."""
    missing: list[Path] = []
    p = d
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    there = p.stat()
    for q in reversed(missing):
        try:
            q.mkdir(mode=0o700 if q == d else 0o755)
        except FileExistsError:
            continue
        _own_like(q, there)
    return there


def _own_like(path: Path, there: os.stat_result) -> None:
    if os.geteuid() == 0 and (there.st_uid, there.st_gid) != (0, 0):
        os.chown(path, there.st_uid, there.st_gid, follow_symlinks=False)


class Lock:
    """``with Lock(path): ...``; raises :class:`LockHeld` when another live process holds it."""

    def __init__(self, path: Path, command: str | None = None) -> None:
        self.path = Path(path)
        self.command = command or " ".join(["rocm-wizard", *sys.argv[1:]])
        self._fd: int | None = None
        self.stale: Holder | None = None  # set when a dead holder's lock was taken over

    def acquire(self) -> "Lock":
        made = _make_dirs(self.path.parent)
        existed = self.path.exists()
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)  # a planted link is never followed
        if not existed:
            _own_like(self.path, made)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise LockHeld(read_holder(self.path), self.path) from None
        self.stale = read_holder(self.path)
        pid = os.getpid()
        info = {
            "pid": pid,
            "start_time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "command": self.command,
            "proc_start": _proc_start(pid),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
        os.fsync(fd)
        self._fd = fd
        _HELD.add(fd)
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)
        except OSError:
            pass
        try:
            fcntl.flock(self._fd, fcntl.LOCK_UN)  # closing alone leaves it held by the copies a daemon inherited
        except OSError:
            pass
        _HELD.discard(self._fd)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> "Lock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _helper_child() -> None:
    """The lock helper's start: umask 077 (the lock file it makes), and a process group of its own, as the engine's
    actions have (wizard.runner.shell): a Ctrl+C on the terminal reaches the wizard's foreground group, whose handler
    only asks the run to stop, and must not end the helper, and with it the lock, while the run's action still lives."""
    os.umask(0o077)
    os.setpgid(0, 0)


class HelperLock:
    """The same flock on ``path``, held by a helper process (``wizard.script.HOLD_LOCK``, the dry-run script's) that
    runs as another user (``prefix``: ``sudo -n -u USER -H --``): root never opens a file in a user's own state dir.
    The helper holds the lock until it reads a line (:meth:`release`) or its input ends; that input's write end is
    one of :func:`held_fds`, so every action inherits it as it inherits the wizard's own lock (the rule above)."""

    def __init__(self, path: Path, prefix: tuple[str, ...] = (), command: str | None = None,
                 environ: dict[str, str] | None = None) -> None:
        self.path = Path(path)
        self.prefix = prefix
        self.command = command or " ".join(["rocm-wizard", *sys.argv[1:]])
        self.environ = environ
        self._proc: subprocess.Popen[bytes] | None = None

    def acquire(self) -> "HelperLock":
        from wizard.script import HOLD_LOCK

        pid = os.getpid()
        info = json.dumps({"pid": pid, "start_time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "command": self.command,
                           "proc_start": _proc_start(pid)})
        # its stderr: sudo's reason where it refuses (a password required, a user not allowed), kept for that line
        with tempfile.TemporaryFile() as err:
            try:
                proc = subprocess.Popen([*self.prefix, "sh", "-c", HOLD_LOCK, "sh", str(self.path), info],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                        env=self.environ, preexec_fn=_helper_child)
            except OSError as exc:
                what = f"{exc.filename}: " if exc.filename else ""  # the program that could not start (no sudo)
                raise LockUnavailable(f"cannot take the lock {self.path}: {what}{exc.strerror or exc}") from None
            assert proc.stdin is not None and proc.stdout is not None
            took = proc.stdout.readline().decode("utf-8", "replace").strip()
            proc.stdout.close()
            if took == "locked":
                self._proc = proc
                _HELD.add(proc.stdin.fileno())
                return self
            proc.stdin.close()
            proc.wait()
            if took.startswith("held"):
                raise LockHeld(read_holder_line(took[len("held"):].strip()), self.path)
            if not took:
                err.seek(max(0, os.fstat(err.fileno()).st_size - 4096))
                said = [ln.strip() for ln in err.read().decode("utf-8", "replace").splitlines() if ln.strip()]
                took = "".join(c for c in said[-1] if c.isprintable()) if said else ""
        raise LockUnavailable(f"cannot take the lock {self.path}" + (f": {took}" if took else ""))

    def release(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.stdin is None:
            return
        _HELD.discard(proc.stdin.fileno())
        try:
            proc.stdin.write(b"let-go\n")
            proc.stdin.flush()
        except OSError:
            pass
        try:
            proc.stdin.close()
        except OSError:
            pass
        proc.wait()

    def __enter__(self) -> "HelperLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


class LockUnavailable(Exception):
    """The lock could not be taken for another reason than another run holding it (one line)."""


def read_holder_line(text: str) -> Holder | None:
    """The helper's "pid N, started T: COMMAND" as a holder (no start time: never told "gone")."""
    try:
        head, command = text.split(": ", 1)
        pid, started = head.split(", started ", 1)
        return Holder(int(pid.removeprefix("pid ")), started, command)
    except ValueError:
        return None
