"""Untrusted input: the checks every value from a command line, a plan file or stdin passes first.

rocm-wizard runs as root and writes some values into shell files, units and argv lists. A value
that fails a check here is refused with one line (:class:`InputError`), before anything happens.

* :func:`shell_path`: a path written into a shell file or run as root (a venv): absolute, no
  control character (newline, NUL...), no ``..`` component.
* :func:`cli_path`: a path typed on the command line: not empty, no control character; made absolute.
* :func:`plain`: a name or path used as given (``--python python3``): not empty, no control character.
* :func:`docker_image`: a Docker image reference (``[registry/]name[:tag][@digest]``), checked in
  linear time after a length bound, so a huge value is refused at once.
* :func:`read_bounded`: at most ``limit`` bytes from a stream (stdin), refused when there is more.
* :func:`shell_export`: ``export NAME='value'``, quoted for any value.

Bundles (a recorded machine from someone else) are read by :mod:`wizard.inputs.archive` (extraction
of a ``.tar.gz``) and :mod:`wizard.inputs.confined` (reads that never leave the bundle directory).
"""

from __future__ import annotations

import os
import re

from wizard import lazy_re

TYPE_CHECKING = False  # typing's, not imported at run time (wizard/record.py says why)
if TYPE_CHECKING:
    from typing import BinaryIO

MAX_PATH = 4096  # PATH_MAX on Linux
MAX_IMAGE = 512  # docker's name limit is 255; with a tag (128) and a digest the whole stays below this


class InputError(ValueError):
    """A value that is refused; ``str()`` is the one-line reason."""


def shown(value: str, width: int = 60) -> str:
    """A value as a message may quote it: printable, on one line, at most ``width`` characters."""
    text = value if len(value) <= width else value[: width - 3] + "..."
    return repr(text) if any(not ch.isprintable() for ch in text) else text


def _control(value: str) -> bool:
    return any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value)


def plain(value: str, what: str) -> str:
    """A name or path as given (``python3``, ``./venv``, ``seed-7900xt``): not empty, no control character."""
    if not value:
        raise InputError(f"{what}: an empty value")
    if _control(value):
        raise InputError(f"{what} {shown(value)}: a value with a control character (newline, NUL...)")
    if len(value) > MAX_PATH:
        raise InputError(f"{what}: longer than {MAX_PATH} characters")
    return value


def shell_path(value: str, what: str) -> str:
    """An absolute path without control characters or ``..``; normalised (no ``//``, no trailing ``/``)."""
    if not value:
        raise InputError(f"{what}: an empty path")
    if len(value) > MAX_PATH:
        raise InputError(f"{what}: a path longer than {MAX_PATH} characters")
    if _control(value):
        raise InputError(f"{what} {shown(value)}: a path with a control character (newline, NUL...)")
    if not value.startswith("/"):
        raise InputError(f"{what} {shown(value)}: not an absolute path")
    parts = value.split("/")
    if ".." in parts:
        raise InputError(f"{what} {shown(value)}: a path with '..' in it; give the real path")
    return "/" + "/".join(p for p in parts if p and p != ".")


def cli_path(value: str, what: str) -> str:
    """A path typed on the command line (relative or ``~`` allowed), as a checked absolute path."""
    if not value:
        raise InputError(f"{what}: an empty path")
    if _control(value):
        raise InputError(f"{what} {shown(value)}: a path with a control character (newline, NUL...)")
    if len(value) > MAX_PATH:
        raise InputError(f"{what}: a path longer than {MAX_PATH} characters")
    return shell_path(os.path.abspath(os.path.expanduser(value)), what)


# distribution/reference's grammar, one piece at a time (each bounded by MAX_IMAGE before it is matched)
_DOMAIN_LABEL = lazy_re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?")
_PORT = lazy_re.compile(r"[0-9]{1,5}")
_PATH_COMPONENT = lazy_re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*")
_TAG = lazy_re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_DIGEST = lazy_re.compile(r"[a-z0-9]+(?:[+._-][a-z0-9]+)*:[0-9a-fA-F]{32,}")


def _domain(text: str) -> bool:
    host, _, port = text.partition(":")
    if port and not _PORT.fullmatch(port):
        return False
    if host.startswith("[") and host.endswith("]"):  # an IPv6 literal
        return bool(re.fullmatch(r"\[[0-9A-Fa-f:.]+\]", host))
    return all(_DOMAIN_LABEL.fullmatch(label) for label in host.split("."))


def docker_image(value: str) -> str:
    """A Docker image reference, e.g. ``rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0``."""
    what = "--image"
    if not value:
        raise InputError(f"{what}: an empty image name")
    if len(value) > MAX_IMAGE:
        raise InputError(f"{what}: {len(value)} characters; an image reference has at most {MAX_IMAGE}")
    bad = f"{what} {shown(value)}: not a Docker image reference ([registry/]name[:tag][@digest])"
    name, at, digest = value.partition("@")
    if at and not _DIGEST.fullmatch(digest):
        raise InputError(bad)
    slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > slash:
        name, tag = name[:colon], name[colon + 1:]
        if not _TAG.fullmatch(tag):
            raise InputError(bad)
    parts = name.split("/")
    first = parts[0]
    if len(parts) > 1 and ("." in first or ":" in first or first == "localhost" or first != first.lower()):
        if not _domain(first):
            raise InputError(bad)
        parts = parts[1:]
    if len("/".join(parts)) > 255 or not all(_PATH_COMPONENT.fullmatch(p) for p in parts):
        raise InputError(bad)
    return value


def read_bounded(stream: BinaryIO, limit: int, what: str) -> bytes:
    """All of ``stream`` when it holds at most ``limit`` bytes; refused (without reading on) otherwise."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"{what}: more than {limit >> 20} MiB; give the relevant part")
    return data


_NAME = lazy_re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def shell_export(name: str, value: str) -> str:
    """``export NAME=VALUE`` with VALUE quoted for the shell (a ``;``, a space or ``$(...)`` stays text)."""
    if not _NAME.fullmatch(name):
        raise InputError(f"{shown(name)}: not an environment variable name")
    if "\x00" in value:
        raise InputError(f"{name}: a value with a NUL character")
    import shlex  # here: ~0.6 ms of every detect otherwise (its pattern)

    if value.startswith("~/"):  # a path in the home of whoever sources the file: only $HOME is expanded
        return f'export {name}="$HOME"/{shlex.quote(value[2:])}'
    return f"export {name}={shlex.quote(value)}"
