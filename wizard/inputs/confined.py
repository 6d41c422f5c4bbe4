"""Read a directory made by someone else without ever leaving it.

A bundle directory (or one extracted from a ``.tar.gz``) may hold links and special files. Every
path is walked from the directory one component at a time through directory descriptors opened
with ``O_NOFOLLOW``; a link is resolved by reading it, with its target taken inside the directory
(an absolute target from the directory's top, ``..`` stopping there), at most 40 links per path,
as the probes expect of a machine's root. Only regular files are read, opened ``O_NONBLOCK`` so a
FIFO can never stall a reader; a device, FIFO or socket reads as missing. A link swapped in while
reading fails the ``O_NOFOLLOW`` open and reads as missing too.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

MAX_LINKS = 40  # the kernel's own limit on links in one lookup

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC



def read_regular(fd: int, limit: int) -> bytes | None:
    """Up to ``limit`` bytes of the open ``fd`` if it is a regular file (None for a FIFO, a device, a socket, a
    directory, or a read error); closes ``fd``. Opened non-blocking, a FIFO with no writer never stalls the reader."""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks: list[bytes] = []
        left = limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)

class ConfinedDir:
    """Read-only access to the tree under ``top``; paths are absolute as seen from ``top`` (``/etc/x``)."""

    def __init__(self, top: Path | str) -> None:
        self.top = Path(top)

    def _walk(self, path: str, *, follow_last: bool = True) -> tuple[int, str] | None:
        """(descriptor of the parent directory, last component), resolved inside ``top``; None if absent.

        The last component is '' for the top itself. The caller closes the descriptor.
        """
        try:
            top_fd = os.open(self.top, _DIR_FLAGS)
        except OSError:
            return None
        stack = [top_fd]  # directory descriptors from the top down
        todo = [p for p in path.split("/") if p][::-1]
        hops = 0
        try:
            while todo:
                part = todo.pop()
                if part == ".":
                    continue
                if part == "..":
                    if len(stack) > 1:
                        os.close(stack.pop())
                    continue
                try:
                    target = os.readlink(part, dir_fd=stack[-1])
                except OSError as exc:
                    if exc.errno == errno.ENOENT:
                        return None
                    target = None  # not a link
                if target is not None and (todo or follow_last):
                    hops += 1
                    if hops > MAX_LINKS:
                        return None
                    if target.startswith("/"):
                        while len(stack) > 1:
                            os.close(stack.pop())
                    todo.extend([p for p in target.split("/") if p][::-1])
                    continue
                if not todo:
                    fd = os.dup(stack[-1])
                    return fd, part
                try:
                    stack.append(os.open(part, _DIR_FLAGS, dir_fd=stack[-1]))
                except OSError:
                    return None
            return os.dup(stack[-1]), ""
        finally:
            for fd in stack:
                os.close(fd)

    def _open(self, path: str, flags: int) -> int | None:
        walked = self._walk(path)
        if walked is None:
            return None
        dfd, name = walked
        try:
            return os.open(name or ".", flags, dir_fd=dfd)
        except OSError:
            return None
        finally:
            os.close(dfd)

    def read(self, path: str, limit: int) -> bytes | None:
        """Up to ``limit`` bytes of a regular file; None for anything else or anything missing."""
        fd = self._open(path, _FILE_FLAGS)
        return None if fd is None else read_regular(fd, limit)

    def lstat(self, path: str) -> os.stat_result | None:
        """The entry itself (a link is not followed at the last component)."""
        return self._stat(path, follow_last=False)

    def stat(self, path: str) -> os.stat_result | None:
        """What the path leads to inside ``top`` (links followed inside it)."""
        return self._stat(path, follow_last=True)

    def _stat(self, path: str, *, follow_last: bool) -> os.stat_result | None:
        walked = self._walk(path, follow_last=follow_last)
        if walked is None:
            return None
        dfd, name = walked
        try:
            return os.stat(name or ".", dir_fd=dfd, follow_symlinks=False)
        except OSError:
            return None
        finally:
            os.close(dfd)

    def is_file(self, path: str) -> bool:
        st = self.stat(path)
        return st is not None and stat.S_ISREG(st.st_mode)

    def is_dir(self, path: str) -> bool:
        st = self.stat(path)
        return st is not None and stat.S_ISDIR(st.st_mode)

    def listdir(self, path: str) -> list[str]:
        fd = self._open(path, _DIR_FLAGS)
        if fd is None:
            return []
        try:
            return sorted(os.listdir(fd))
        except OSError:
            return []
        finally:
            os.close(fd)

    def readlink(self, path: str) -> str | None:
        """The target of the link at ``path`` as written (never followed), None for anything else."""
        walked = self._walk(path, follow_last=False)
        if walked is None:
            return None
        dfd, name = walked
        try:
            return os.readlink(name, dir_fd=dfd) if name else None
        except OSError:
            return None
        finally:
            os.close(dfd)

    def resolve(self, path: str) -> str:
        """The path with every link resolved inside ``top`` (``/`` is ``top``); the path itself if absent."""
        parts: list[str] = []
        todo = [p for p in path.split("/") if p][::-1]
        hops = 0
        while todo:
            part = todo.pop()
            if part == ".":
                continue
            if part == "..":
                if parts:
                    parts.pop()
                continue
            st = self.lstat("/" + "/".join([*parts, part]))
            if st is not None and stat.S_ISLNK(st.st_mode) and hops < MAX_LINKS:
                hops += 1
                walked = self._walk("/" + "/".join(parts))
                if walked is None:
                    return path
                dfd, name = walked
                try:
                    pfd = os.open(name or ".", _DIR_FLAGS, dir_fd=dfd)
                except OSError:
                    return path
                finally:
                    os.close(dfd)
                try:
                    target = os.readlink(part, dir_fd=pfd)
                except OSError:
                    return path
                finally:
                    os.close(pfd)
                if target.startswith("/"):
                    parts = []
                todo.extend([p for p in target.split("/") if p][::-1])
                continue
            parts.append(part)
        return "/" + "/".join(parts)
