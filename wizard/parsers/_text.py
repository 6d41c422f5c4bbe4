"""Shared clean-up for pasted command output: decoding, ANSI colours, CRLF, fences, prompts.

Every parser starts from :func:`lines`, which never raises and keeps 1-based line numbers of
the original text, so a Fact can point at the line that said it.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from wizard import lazy_re

TYPE_CHECKING = False  # typing's, not imported at run time (wizard/record.py says why)
if TYPE_CHECKING:
    from typing import Any, TypeVar

    F = TypeVar("F", bound=Callable[..., Any])

# Longer lines are cut here before any pattern sees them: no command output the readers know has one, and every
# pattern's cost grows with the line (a 1 MB line must not cost more than a 4 KB one)
MAX_LINE = 4096

# One parse (a public reader called from outside any other) may take this many seconds of CPU time; past it the
# parse stops with ParseBudgetExceeded. Ordinary outputs take milliseconds; the cap bounds what line caps do not
# (8 MiB of short lines). ROCM_WIZARD_PARSE_BUDGET (seconds) overrides it.
PARSE_BUDGET_S = 2.0
BUDGET_ENV = "ROCM_WIZARD_PARSE_BUDGET"
_DEADLINE: ContextVar[tuple[float, float, str] | None] = ContextVar("parse_deadline", default=None)


class ParseBudgetExceeded(Exception):
    """A parse ran past its time budget. The message is one line."""


def parse_budget() -> float:
    try:
        given = float(os.environ.get(BUDGET_ENV, ""))
    except ValueError:
        return PARSE_BUDGET_S
    return given if given > 0 else PARSE_BUDGET_S


@contextmanager
def budget(what: str) -> Iterator[None]:
    """The time budget of one parse of ``what``; a parse inside another shares the outer one's."""
    if _DEADLINE.get() is not None:
        yield
        return
    seconds = parse_budget()
    token = _DEADLINE.set((time.thread_time() + seconds, seconds, what))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def check_budget() -> None:
    """ParseBudgetExceeded when the parse under way is past its budget (nothing outside a parse)."""
    d = _DEADLINE.get()
    if d is not None and time.thread_time() > d[0]:
        raise ParseBudgetExceeded(f"reading stopped: one parse ({d[2]}) took more than {d[1]:g} s of CPU, the "
                                  "readers' time budget; the input is too large or too costly to read (a hostile or "
                                  "damaged paste or bundle?)")


class Budgeted(list[tuple[int, str]]):
    """Numbered lines whose iteration checks the parse's time budget every 64 lines."""

    def __iter__(self) -> Iterator[tuple[int, str]]:
        for i, item in enumerate(super().__iter__()):
            if not i & 63:
                check_budget()
            yield item


# CSI (colours, cursor moves), OSC (titles, hyperlinks) and two-byte escapes.
_ANSI_RE = lazy_re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
# ... and what is left of a colour code once a web page or a log dropped its ESC byte: "[37mROCk module is loaded[0m"
# (rocminfo prints its status lines between COL_WHT "\x1B[37m" / COL_RED and COL_RESET "\x1B[0m": ROCm/rocminfo
# c6f7a17c85e0cdd75bf062e7a3490e831c87eb94 rocminfo.cc). Read only on a line that holds the reset "[0m" too: a lone
# "[5m" is text.
_BARE_SGR_RE = lazy_re.compile(r"\[(?:\d{1,3}(?:;\d{1,3}){0,4})?m")
# Control characters other than tab; CR and LF are handled before this runs.
_CTRL_RE = lazy_re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# A shell prompt followed by a command: "$ rocminfo", "user@host:~/x$ lspci -nn",
# "(venv) user@host:~$ pip freeze", "root@box:/# cat ...", "❯ rocminfo", "➜  ~ lspci"; bash's user is
# "I have no name!" for a uid without a passwd entry (a container run with -u 1000).
_PROMPT_RE = lazy_re.compile(
    r"^\s*(?:\([^()\s]{1,64}\)\s*)?"
    r"(?:(?:[\w.-]+|I have no name!)@[\w.-]+(?::[^\s$#]*)?\s?[$#%]|\[[^\]\n]{1,80}\][$#%]|[$%❯➜»]|>>>|PS [^>]{0,80}>)"
    r"\s*(?P<cmd>\S.*)?$"
)


def ascii_number(text: str) -> bool:
    """``text`` is a whole number in ASCII digits (what a pattern's ``[0-9]+`` matches; ``str.isdecimal`` alone takes
    any script's digits)."""
    return text.isascii() and text.isdecimal()


def to_text(data: object) -> str:
    """Best-effort text from str, bytes or None; anything else is empty."""
    if data is None:
        return ""
    if isinstance(data, str):
        return data
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data).decode("utf-8", errors="replace")
    return ""


def clean_line(line: str) -> str:
    """Strip ANSI escapes and stray control characters; keep tabs."""
    if "\x1b" in line:
        line = _ANSI_RE.sub("", line)
    if "[0m" in line:
        line = _BARE_SGR_RE.sub("", line)
    # most lines hold no control character at all: isprintable says so in C, and a reader whose lines all pass
    # never compiles the pattern (detect reads os-release this way)
    return line if line.isprintable() else _CTRL_RE.sub("", line)


def lines(data: object, *, rstrip: bool = True) -> list[tuple[int, str]]:
    """(1-based line number, cleaned line) pairs; markdown fence lines become empty. ``rstrip=False`` keeps each line's
    trailing blanks (a reader whose program gives them a meaning: a shell's ``\\ `` at a line's end is a space)."""
    text = to_text(data)
    if not text:
        return []
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    out = Budgeted()
    for no, raw in enumerate(text.split("\n"), start=1):
        if not no & 1023:
            check_budget()
        line = clean_line(raw[:MAX_LINE])
        if rstrip:
            line = line.rstrip()
        while line.startswith("> ") or line == ">":  # markdown block quote
            line = line[2:]
        if line.lstrip().startswith(("```", "~~~")):
            line = ""
        out.append((no, line))
    return out


def heading_title(title: str) -> str:
    """A markdown heading's text without its closing hashes (``## GPU ##`` -> ``GPU``): done here, not by a
    pattern's ``\\s*#*\\s*$``, whose overlapping quantifiers cost cubic time on a long line."""
    return title.rstrip().rstrip("#").rstrip() or title.strip()


# A stored thread's labels line ("labels: AMD Radeon VII, ROCm 6.1.0, Under Investigation"): the triagers' tags; ROCm's
# issue form turns the reporter's GPU and ROCm version answers into labels. The one pattern for it: the paste splitter
# keeps the line apart as the thread's header, the mentions reader reads its labels.
LABELS_LINE = lazy_re.compile(r"(?i)^\s*labels:\s*(?P<labels>\S.*)$")


def prompt_command(line: str) -> str | None:
    """The command of a pasted prompt line ("" for a bare prompt), or None if not a prompt."""
    m = _PROMPT_RE.match(line)
    if not m:
        return None
    return (m.group("cmd") or "").strip()


def int_or_none(text: str | None, base: int = 10) -> int | None:
    """int(text) or None; never raises."""
    if text is None:
        return None
    try:
        return int(text.strip(), base)
    except (ValueError, TypeError):
        return None


def leading_int(text: str | None) -> int | None:
    """The leading decimal integer of e.g. "29772(0x744c)" or "8096068KB"."""
    if not text:
        return None
    m = _LEADING_INT_RE.match(text)
    return int(m.group(1)) if m else None


_LEADING_INT_RE = lazy_re.compile(r"\s*(\d+)")

_NORMALISE_RE = lazy_re.compile(r"[-_.]+")


def canonical_name(name: str) -> str:
    """PEP 503 normalised project name (same result as packaging.utils.canonicalize_name, which the
    parsers do not import: packaging.utils brings packaging.tags and costs ~15 ms of detect's start)."""
    return _NORMALISE_RE.sub("-", name).lower()


def none_if_na(value: str | None) -> str | None:
    """Map the placeholders tools print for "unknown" to None."""
    if value is None:
        return None
    v = value.strip()
    if not v or v.lower() in _NA_VALUES:
        return None
    return v


_NA_VALUES = frozenset({"n/a", "na", "none", "null", "unknown", "could not collect", "no cuda", "-"})


def bdf_from_location(location: int | None, domain: int | None = None) -> tuple[str | None, str | None]:
    """(full BDF or None, "bb:dd.f" or None) from a KFD location_id / rocminfo BDFID.

    bus = location >> 8, device = (location >> 3) & 0x1f, function = location & 7; the full form
    needs the PCI domain, which a location id does not carry.
    """
    if location is None or location < 0 or location > 0xFFFF:
        return None, None
    short = f"{(location >> 8) & 0xFF:02x}:{(location >> 3) & 0x1F:02x}.{location & 7}"
    if domain is None or domain < 0 or domain > 0xFFFFFFFF:
        return None, short
    return f"{domain:04x}:{short}", short


def never_raises(default: Callable[[], object]) -> Callable[[F], F]:
    """Guard a public parser: any exception yields ``default()``, and the call has a time budget (a
    :class:`ParseBudgetExceeded` passes through).

    The unguarded function stays reachable as ``parser.__wrapped__``; the property tests run
    that one, so a bug is a failing test rather than silently empty facts.
    """

    def wrap(func: F) -> F:
        what = f"{func.__module__.rpartition('.')[2]}.{func.__name__}"

        @functools.wraps(func)
        def guarded(*args: object, **kwargs: object) -> Any:
            try:
                with budget(what):
                    return func(*args, **kwargs)
            except ParseBudgetExceeded:
                raise  # said in one line by the command, never taken for an empty reading
            except Exception:  # noqa: BLE001 - parsers must never take detect() down
                return default()

        return guarded  # type: ignore[return-value]  # functools.wraps keeps the signature F names

    return wrap


def json_payload(data: object) -> object | None:
    """A JSON document pasted in text (fences, prompts, colours around it), or None."""
    import json  # stdlib, loaded only when a paste looks like JSON

    cleaned = [line for _no, line in lines(data)]
    start = next((i for i, s in enumerate(cleaned) if s.lstrip().startswith(("{", "["))), None)
    if start is None:
        return None
    end = next((i for i in range(len(cleaned) - 1, start - 1, -1) if cleaned[i].rstrip().endswith(("}", "]"))), None)
    if end is None:
        return None
    try:
        payload: object = json.loads("\n".join(cleaned[start : end + 1]))
        return payload
    except (ValueError, RecursionError):
        return None
