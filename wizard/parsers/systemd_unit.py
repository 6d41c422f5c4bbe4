"""The environment a systemd unit file (or one of its drop-ins) gives its service's processes.

``unit_environment(text, home)`` -> the ``[Service]`` section's ``Environment=`` and ``EnvironmentFile=`` lines, in
order, as :class:`UnitEnvLine` records; how they combine across the unit and its drop-ins is the caller's
(``wizard.probes.env_settings``). What systemd.exec(5) says of them
(systemd/systemd@004e3ed11aea1bd8644711055a97abf072a509cb:man/systemd.exec.xml):

- ``Environment=``: "Each line is unquoted using the rules described in "Quoting" section in systemd.syntax(7) and
  becomes a list of variable assignments" (``Environment="VAR1=word1 word2" VAR2=word3``); no variable expansion,
  specifier expansion yes (``%h``, ``%%``); "If the empty string is assigned to this option, the list of environment
  variables is reset, all prior assignments have no effect".
- ``EnvironmentFile=``: "an absolute filename or wildcard expression, optionally prefixed with "-", which indicates
  that if the file does not exist, it will not be read"; an empty assignment resets the list of files; "Settings from
  these files override settings made with Environment=".

A unit's lines are joined at a trailing backslash (systemd.unit(5)); ``#`` and ``;`` start a comment line.
"""

from __future__ import annotations

import re
import shlex

from wizard import lazy_re
from wizard.parsers._text import never_raises
from wizard.record import record

_NAME_RE = lazy_re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@record
class UnitEnvLine:
    """One ``Environment=`` or ``EnvironmentFile=`` line of a ``[Service]`` section."""

    line: int  # the first line of the (joined) logical line
    kind: str  # "env" (Environment=) | "file" (EnvironmentFile=)
    pairs: tuple[tuple[str, str], ...] = ()  # Environment=: (name, value) in order; none with `reset`
    path: str | None = None  # EnvironmentFile=: the file, its '-' removed
    optional: bool = False  # EnvironmentFile=: the '-' prefix (a missing file is no error)
    reset: bool = False  # the empty assignment: every earlier line of this kind has no effect


def continues_a_line(text: str) -> bool:
    """Whether ``logical_lines`` joins lines of ``text`` (a line, stripped, ends in a backslash): cheap where the
    text holds no backslash (most units). Its line ends are str.splitlines's, "\\r\\n" and "\\r" among them."""
    return "\\" in text and any(ln.rstrip().endswith("\\") for ln in text.splitlines())


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, line) with backslash continuations joined, as systemd reads a unit."""
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for i, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if pending is not None:
            start, head = pending
            line = f"{head} {line}"
        else:
            start = i
        if line.endswith("\\"):
            pending = (start, line[:-1].rstrip())
            continue
        pending = None
        out.append((start, line))
    if pending is not None:
        out.append(pending)
    return out


_SPECIFIER_RE = lazy_re.compile(r"%(.)", re.DOTALL)


def expand_specifiers(value: str, home: str | None) -> str:
    """``%h`` as the home of the manager's user (where known) and ``%%`` as ``%``; other specifiers as written. One
    pass from the left, as systemd reads them: ``%%h`` is a literal ``%h``, not ``%`` and the home."""
    if "%" not in value:
        return value

    def one(m: re.Match[str]) -> str:
        c = m.group(1)
        if c == "%":
            return "%"
        return home if c == "h" and home else m.group(0)

    return _SPECIFIER_RE.sub(one, value)


def _pairs(value: str, home: str | None) -> tuple[tuple[str, str], ...] | None:
    """The assignments of one Environment= value; None where its quoting is broken (systemd ignores the line)."""
    try:
        words = shlex.split(value, posix=True)
    except ValueError:
        return None
    out: list[tuple[str, str]] = []
    for word in words:
        name, sep, val = word.partition("=")
        if sep and _NAME_RE.match(name):
            out.append((name, expand_specifiers(val, home)))
    return tuple(out)


@never_raises(list)
def unit_environment(text: object, home: str | None = None) -> list[UnitEnvLine]:
    """The Environment= / EnvironmentFile= lines of the unit text's [Service] section, in order (``home``: what
    ``%h`` stands for)."""
    if not isinstance(text, str) or "Environment" not in text:
        return []
    out: list[UnitEnvLine] = []
    section = ""
    for number, line in logical_lines(text):
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            continue
        if section != "Service" or not line.startswith("Environment"):
            continue
        key, sep, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if not sep:
            continue
        if key == "Environment":
            if not value:
                out.append(UnitEnvLine(number, "env", reset=True))
                continue
            pairs = _pairs(value, home)
            if pairs:
                out.append(UnitEnvLine(number, "env", pairs=pairs))
        elif key == "EnvironmentFile":
            if not value:
                out.append(UnitEnvLine(number, "file", reset=True))
                continue
            optional = value.startswith("-")
            path = expand_specifiers(value[1:] if optional else value, home).strip()
            if path:
                out.append(UnitEnvLine(number, "file", path=path, optional=optional))
    return out
