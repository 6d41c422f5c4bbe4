"""Extract an evidence bundle (``.tar.gz``) made by someone else, and nothing else.

Python's ``tarfile.extractall(filter="data")`` is not relied on (CVE-2025-4517: a symlink chain
longer than PATH_MAX gets past it on the Python 3.11 of many machines). Instead, member by member:

* only regular files, directories and symbolic links whose target is relative and stays inside the
  bundle; anything else (hard links, devices, FIFOs, sparse files, ``..`` or absolute names,
  absolute or escaping links, a name given twice) refuses the whole bundle;
* every directory on a member's way is opened with ``O_NOFOLLOW`` from the one above it, so a link
  (extracted earlier or planted) is never walked through; files are created ``O_CREAT | O_EXCL |
  O_NOFOLLOW``, mode 0600 (directories 0700), owned by whoever extracts;
* the decompressed stream itself is bounded (:class:`Limits`: bytes, members, seconds), so a small
  archive cannot expand without end, whatever tarfile reads internally;
* after the last member every link is resolved, and one that ends outside the bundle refuses it.

The directory lives under ``$TMPDIR`` (mode 0700) and is removed on an error, at exit, and on
SIGTERM or SIGHUP (see :func:`_remove_on_signal`).
"""

from __future__ import annotations

import atexit
import gzip
import os
import shutil
import signal
import stat
import tarfile
import tempfile
import time
import zlib
from pathlib import Path
from types import FrameType
from typing import BinaryIO

from wizard.record import record


PREFIX = "rocm-wizard-bundle-"


@record
class Limits:
    """What one bundle may hold. A real one (``report --bundle``) is well under a megabyte."""

    total_bytes: int = 256 << 20  # decompressed: headers and file data together
    members: int = 5_000
    seconds: float = 30.0


class ArchiveError(Exception):
    """The archive is refused; ``str()`` is one line, naming the member where there is one."""


class _Bounded:
    """A read-only stream that stops with ArchiveError after ``limit`` bytes or past a deadline."""

    def __init__(self, raw: BinaryIO, limits: Limits, started: float) -> None:
        self._raw = raw
        self._left = limits.total_bytes
        self._limits = limits
        self._deadline = started + limits.seconds

    def read(self, size: int = -1) -> bytes:
        if time.monotonic() > self._deadline:
            raise ArchiveError(f"extraction took longer than {self._limits.seconds:g} s")
        want = self._left + 1 if size is None or size < 0 else min(size, self._left + 1)
        data = self._raw.read(want)
        self._left -= len(data)
        if self._left < 0:
            raise ArchiveError(f"expands to more than {self._limits.total_bytes >> 20} MiB")
        return data


_created: set[str] = set()  # extraction dirs of this process, removed at exit and on SIGTERM/SIGHUP


def remove(directory: str | Path) -> None:
    """Remove an extraction directory (and forget it)."""
    _created.discard(str(directory))
    shutil.rmtree(directory, ignore_errors=True)


def _remove_all() -> None:
    for d in list(_created):
        remove(d)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    _remove_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)  # die of the signal, as before, with the directories gone


def _remove_on_signal() -> None:
    """Install the removal for SIGTERM and SIGHUP where nothing else handles them (main thread only)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, _on_signal)


atexit.register(_remove_all)


NAME_MAX_BYTES = 4096  # PATH_MAX: a longer member name (GNU long name, pax path) is refused before it is read
PAX_MAX_BYTES = 64 << 10  # a pax header: a path, a link path, times and ids; never megabytes


def _q(name: str) -> str:
    """A member name as a one-line message quotes it: at most 100 characters (a name may be megabytes)."""
    return repr(name if len(name) <= 100 else name[:97] + "...")


class _TarInfo(tarfile.TarInfo):
    """Refuses a GNU long-name / long-link block or a pax header larger than any real one on its header, before
    tarfile reads it into memory (a 249 KB archive held a 250 MiB name: 1.96 GB and 16 s)."""

    def _proc_member(self, tarfile_: tarfile.TarFile) -> tarfile.TarInfo:
        big = (self.size > NAME_MAX_BYTES if self.type in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK)
               else self.size > PAX_MAX_BYTES if self.type in (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE)
               else False)
        if big:
            raise ArchiveError(f"a member whose name or header is {self.size} bytes; a bundle's names are at most "
                               f"{NAME_MAX_BYTES} bytes")
        out: tarfile.TarInfo = super()._proc_member(tarfile_)  # type: ignore[misc]
        return out


def _split(name: str) -> list[str]:
    """A member name as path components; ArchiveError for an absolute name or a ``..``."""
    if len(name.encode("utf-8", "surrogateescape")) > NAME_MAX_BYTES:
        raise ArchiveError(f"member {_q(name)}: a name longer than {NAME_MAX_BYTES} bytes")
    if name.startswith("/") or "\x00" in name:
        raise ArchiveError(f"member {_q(name)}: an absolute path")
    parts = [p for p in name.split("/") if p and p != "."]
    if ".." in parts:
        raise ArchiveError(f"member {_q(name)}: '..' leads outside the bundle")
    return parts


class _Dest:
    """The extraction directory, reached only through directory descriptors opened without following links."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)

    def close(self) -> None:
        os.close(self.fd)

    def parent(self, parts: list[str], member: str) -> int:
        """A new descriptor of the directory holding parts[-1], creating missing directories (0700)."""
        fd = os.dup(self.fd)
        try:
            for part in parts[:-1]:
                fd = self._enter(fd, part, member)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def mkdirs(self, parts: list[str], member: str) -> None:
        fd = self.parent(parts, member)
        try:
            fd = self._enter(fd, parts[-1], member)
        finally:
            os.close(fd)

    @staticmethod
    def _enter(fd: int, part: str, member: str) -> int:
        try:
            os.mkdir(part, 0o700, dir_fd=fd)
        except FileExistsError:
            pass
        try:
            sub = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
        except OSError:
            raise ArchiveError(f"member {_q(member)}: its path goes through a link or a file") from None
        os.close(fd)
        return sub


def _link_target_ok(parts: list[str], target: str) -> bool:
    if not target or target.startswith("/") or "\x00" in target:
        return False
    depth = len(parts) - 1
    for comp in target.split("/"):
        if comp == "..":
            depth -= 1
            if depth < 0:
                return False
        elif comp and comp != ".":
            depth += 1
    return True


def _write_file(dest: _Dest, parts: list[str], member: tarfile.TarInfo, src: BinaryIO, started: float,
                limits: Limits) -> None:
    dfd = dest.parent(parts, member.name)
    try:
        try:
            fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                         dir_fd=dfd)
        except FileExistsError:
            raise ArchiveError(f"member {_q(member.name)}: given twice") from None
    finally:
        os.close(dfd)
    with os.fdopen(fd, "wb") as out:
        left = member.size
        while left > 0:
            chunk = src.read(min(left, 1 << 20))
            if not chunk:
                raise ArchiveError(f"member {_q(member.name)}: truncated")
            out.write(chunk)
            left -= len(chunk)
            if time.monotonic() > started + limits.seconds:
                raise ArchiveError(f"extraction took longer than {limits.seconds:g} s")


def _check_links(root: str, links: list[str]) -> None:
    """Every extracted link, resolved by the kernel, must end inside the bundle."""
    real_root = os.path.realpath(root)
    for rel in links:
        try:
            resolved = os.path.realpath(os.path.join(root, rel), strict=False)
        except (OSError, ValueError):
            raise ArchiveError(f"member {_q(rel)}: a link that cannot be resolved") from None
        if resolved != real_root and not resolved.startswith(real_root + "/"):
            raise ArchiveError(f"member {_q(rel)}: a link that leads outside the bundle")
        if len(os.path.join(root, rel)) >= 4096 or len(resolved) >= 4096:
            raise ArchiveError(f"member {_q(rel)}: a link path longer than PATH_MAX")


def _kind(m: tarfile.TarInfo) -> str:
    if m.type in (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.CONTTYPE):
        return "file"
    if m.isdir():
        return "dir"
    if m.issym():
        return "symlink"
    if m.islnk():
        return "a hard link"
    if m.ischr() or m.isblk():
        return "a device"
    if m.isfifo():
        return "a FIFO"
    if m.issparse():
        return "a sparse file"
    return f"an entry of tar type {m.type!r}"


def extract(archive: str | Path, limits: Limits = Limits()) -> Path:
    """Extract ``archive`` into a new directory and return it; ArchiveError (directory removed) if refused."""
    _remove_on_signal()
    started = time.monotonic()
    directory = tempfile.mkdtemp(prefix=PREFIX)
    _created.add(directory)
    try:
        _extract_into(Path(archive), directory, limits, started)
    except ArchiveError:
        remove(directory)
        raise
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        remove(directory)
        raise ArchiveError(f"not a readable .tar.gz ({exc})") from None
    except OSError as exc:
        remove(directory)
        raise ArchiveError(f"cannot extract: {exc.strerror or exc}") from None
    except BaseException:
        remove(directory)
        raise
    return Path(directory)


def _extract_into(archive: Path, directory: str, limits: Limits, started: float) -> None:
    fd = os.open(archive, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as raw:
        if not stat.S_ISREG(os.fstat(raw.fileno()).st_mode):
            raise ArchiveError("not a regular file")
        dest = _Dest(directory)
        links: list[str] = []
        try:
            with gzip.GzipFile(fileobj=raw, mode="rb") as gz:
                stream = _Bounded(gz, limits, started)  # type: ignore[arg-type]
                with tarfile.open(fileobj=stream, mode="r|", tarinfo=_TarInfo) as tf:  # type: ignore[call-overload]
                    count = 0
                    for member in tf:
                        count += 1
                        if count > limits.members:
                            raise ArchiveError(f"more than {limits.members} members")
                        _extract_member(tf, member, dest, links, started, limits)
        finally:
            dest.close()
        _check_links(directory, links)


def _extract_member(tf: tarfile.TarFile, member: tarfile.TarInfo, dest: _Dest, links: list[str],
                    started: float, limits: Limits) -> None:
    parts = _split(member.name)
    kind = _kind(member)
    if not parts:
        if kind == "dir":
            return  # "./" itself
        raise ArchiveError(f"member {_q(member.name)}: no name")
    if kind == "dir":
        dest.mkdirs(parts, member.name)
    elif kind == "file":
        if member.size > limits.total_bytes:  # refused on its header, before a byte of it is written
            raise ArchiveError(f"member {_q(member.name)}: {member.size >> 20} MiB; a bundle holds at most "
                               f"{limits.total_bytes >> 20} MiB")
        src = tf.extractfile(member)
        assert src is not None
        _write_file(dest, parts, member, src, started, limits)  # type: ignore[arg-type]
    elif kind == "symlink":
        if member.linkname.startswith("/"):
            raise ArchiveError(f"member {_q(member.name)}: a link to an absolute path ({_q(member.linkname)})")
        if not _link_target_ok(parts, member.linkname):
            raise ArchiveError(f"member {_q(member.name)}: a link that leads outside the bundle")
        dfd = dest.parent(parts, member.name)
        try:
            os.symlink(member.linkname, parts[-1], dir_fd=dfd)
        except FileExistsError:
            raise ArchiveError(f"member {_q(member.name)}: given twice") from None
        finally:
            os.close(dfd)
        links.append("/".join(parts))
    else:
        raise ArchiveError(f"member {_q(member.name)}: {kind}; a bundle holds files and directories only")
