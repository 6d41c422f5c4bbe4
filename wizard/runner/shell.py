"""Runs one argv list with its output streamed in chunks. The only module that imports ``sh``, and only
when it first runs something (sh's import reads the installed packages' metadata: tens of ms that a
front end's start would wait for).

stdout and stderr are merged into one pipe that a reader thread drains with ``os.read`` (64 KiB at a
time), so a flood costs one callback per chunk, not per line, and memory stays bounded whatever the
child prints. stdin is /dev/null, so nothing can wait on a prompt. The child gets its own process
group (not its own session: sudo's tty ticket stays valid), so a timeout or a cancel ends the whole
tree: SIGTERM, a grace period, then SIGKILL for whatever ignored it.
"""

from __future__ import annotations

import functools
import os
import select
import shutil
import signal
import threading
import time
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from wizard.record import record

if TYPE_CHECKING:
    import sh

CHUNK = 65536
PIPE_BYTES = 1 << 20
CHILD_UMASK = 0o022  # /proc/sys/fs/pipe-max-size's default: allowed without privileges


@record
class ShellResult:
    exit_code: int | None  # None: could not start; negative: killed by that signal
    duration: float
    timed_out: bool = False
    cancelled: bool = False
    error: str | None = None  # why it could not start

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.cancelled


def resolve(program: str, environ: Mapping[str, str]) -> str | None:
    if "/" in program:
        return program if os.access(program, os.X_OK) and os.path.isfile(program) else None
    return shutil.which(program, path=environ.get("PATH", ""))


def _widen(fd: int) -> None:
    """Give the output pipe PIPE_BYTES of buffer (Linux; best effort): a child that floods its output
    keeps running while the reader waits for the interpreter (a UI sharing it), instead of blocking
    on a full 64 KiB pipe."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass


def _child_umask(keep: frozenset[int] = frozenset()) -> None:
    """Actions run under the system's usual umask 022 (the package managers expect it), whatever the
    wizard's own (077, for its state files) or the caller's was; the wizard's lock fds ``keep`` stay open in
    them (lock.held_fds)."""
    os.umask(CHILD_UMASK)
    for fd in keep:
        os.set_inheritable(fd, True)


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    on_output: Callable[[bytes], None],
    timeout: float | None = None,
    cancel: threading.Event | None = None,
    cwd: str | None = None,
    kill_grace: float = 3.0,
) -> ShellResult:
    """Run ``argv``; every chunk of merged stdout/stderr goes to ``on_output`` (which must not raise)."""
    start = time.monotonic()
    exe = resolve(argv[0], env)
    if exe is None:
        msg = f"{argv[0]}: command not found"
        on_output((msg + "\n").encode())
        return ShellResult(127, time.monotonic() - start, error=msg)
    import sh

    from wizard.runner.lock import held_fds

    keep = held_fds()
    r, w = os.pipe()
    _widen(r)
    devnull = open(os.devnull, "rb")
    try:
        try:
            proc = sh.Command(exe)(
                *argv[1:],
                _bg=True,
                _bg_exc=False,
                _out=w,
                _err_to_out=True,
                _in=devnull,
                _tty_out=False,
                _new_group=True,
                _return_cmd=True,
                _env=dict(env),
                _cwd=cwd,
                _ok_code=list(range(256)),
                _preexec_fn=functools.partial(_child_umask, keep),
                _pass_fds=set(keep),
            )
        except (OSError, sh.CommandNotFound) as exc:
            os.close(r)
            msg = f"{argv[0]}: cannot start: {exc}"
            on_output((msg + "\n").encode())
            return ShellResult(126, time.monotonic() - start, error=msg)
        finally:
            os.close(w)
        pgid = proc.pid
        reader_done = threading.Event()
        stop_reader = threading.Event()

        def _read() -> None:
            try:
                while True:
                    ready, _, _ = select.select([r], [], [], 0.2)
                    if not ready:
                        if stop_reader.is_set():
                            return
                        continue
                    data = os.read(r, CHUNK)
                    if not data:
                        return
                    on_output(data)
            except OSError:
                return
            finally:
                reader_done.set()

        reader = threading.Thread(target=_read, name=f"output of {argv[0]}", daemon=True)
        reader.start()
        deadline = None if timeout is None else start + timeout
        timed_out = cancelled = False
        delay, eof = 0.001, False
        while True:
            if not _alive(proc):
                break
            # the end of its output almost always means the child is exiting: from then on poll
            # closely (a fresh back-off), so the exit is seen within a millisecond or two
            if eof:
                time.sleep(delay)
            elif reader_done.wait(delay):
                eof, delay = True, 0.0005
                continue
            delay = min(delay * 2, 0.05)
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                timed_out = True
            elif cancel is not None and cancel.is_set():
                cancelled = True
            if timed_out or cancelled:
                _terminate(proc, pgid, kill_grace)
                break
        code = _exit_code(proc)
        if timed_out or cancelled:
            _killpg(pgid, signal.SIGKILL)  # leftovers of the group
            _group_gone(pgid, 5.0)  # the caller may release the lock now: no child of the action lives on
        # a daemonised grandchild may keep the pipe open: stop reading shortly after exit
        reader_done.wait(2.0)
        stop_reader.set()
        reader.join(5.0)
        os.close(r)
        return ShellResult(code, time.monotonic() - start, timed_out=timed_out, cancelled=cancelled)
    finally:
        devnull.close()


def _exit_code(proc: "sh.RunningCommand") -> int | None:
    import sh

    try:
        proc.wait()
    except sh.ErrorReturnCode:
        pass
    return proc.exit_code


def _alive(proc: "sh.RunningCommand") -> bool:
    alive, _ = proc.process.is_alive()
    return bool(alive)


def _wait_gone(proc: "sh.RunningCommand", seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not _alive(proc):
            return True
        time.sleep(0.02)
    return not _alive(proc)


def _group_gone(pgid: int, seconds: float) -> bool:
    """Wait until no process of the group is left (killed members are reaped by their parents)."""
    end = time.monotonic() + seconds
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            pass
        if time.monotonic() >= end:
            return False
        time.sleep(0.02)


def _terminate(proc: "sh.RunningCommand", pgid: int, grace: float) -> None:
    _killpg(pgid, signal.SIGTERM)
    if _wait_gone(proc, grace):
        return
    _killpg(pgid, signal.SIGKILL)
    _wait_gone(proc, 5.0)
