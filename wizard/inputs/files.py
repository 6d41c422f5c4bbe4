"""Write a file where other users may have planted something (a shared directory, /tmp).

:func:`new_file` writes through ``TARGET.partial`` created ``O_CREAT | O_EXCL | O_NOFOLLOW`` with the
given mode: a file or link planted under that name is an error and its target is never opened. The
finished file is then linked to TARGET only if TARGET does not exist (``replace=False``), or renamed
over it (``replace=True``: a link at TARGET is replaced itself, never followed).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator

_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@contextmanager
def new_file(target: Path, mode: int = 0o600, *, replace: bool = False) -> Iterator[BinaryIO]:
    """A binary file to write; on a clean exit it becomes ``target`` (FileExistsError with one line otherwise)."""
    tmp = target.with_name(target.name + ".partial")
    try:
        fd = os.open(tmp, _NEW, mode)
    except FileExistsError:
        raise FileExistsError(f"{tmp} already exists (an interrupted write, or planted by someone): "
                              "remove it, then retry") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fd, mode)  # the mode asked for, whatever the umask
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if replace:
            os.replace(tmp, target)
        else:
            os.link(tmp, target, follow_symlinks=False)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


def write_new(path: str | Path, data: bytes, *, dir_fd: int | None = None, mode: int = 0o600) -> None:
    """Create ``path`` (relative to ``dir_fd``) exclusively, without following a link, and write ``data``."""
    fd = os.open(path, _NEW, mode, dir_fd=dir_fd)
    with os.fdopen(fd, "wb") as fh:
        os.fchmod(fd, mode)
        fh.write(data)
