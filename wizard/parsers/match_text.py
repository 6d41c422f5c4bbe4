"""Texts as known-issue signatures see them: what the program printed, with what its way into a paste added taken
off again. The one normaliser for signature matching (``wizard.diagnose`` applies it to every text it searches, and
the line a finding shows as evidence is cut from its result).

Every step keeps a line a line, so a match's line number is the original's:

* ANSI colours go, CRLF and a lone CR end a line (as a terminal shows them);
* HTML character references left in text copied from a rendered page become their characters (``&quot; &#39;
  &#x27; &gt; &lt; &amp; &nbsp;`` and numeric ones);
* Unicode spaces (U+00A0 from a browser's copy of ``&nbsp;``, U+2009, U+202F ...) become a space, invisible
  characters (U+200B, U+FEFF, U+00AD ...) go, typographic quotes become ' and ", and an en or em dash that starts a
  flag (``–device``: auto-correct's ``--``) becomes ``--``;
* a prefix a logger or the paste put before each line goes: journalctl's "Nov 30 05:00:00 host ollama[123]: ", the
  kernel's "[   12.345678] ", "kernel: ", docker compose's "service-1  | ", a Markdown quote's "> ", a diff's "+ ";
  a Go log/slog line ("time=... level=ERROR source=... msg=\\"...\\"") keeps its message, unquoted, and what
  follows it;
* a line that is one string literal ("...", '...', maybe with a JSON list's comma after it) with an escape in it,
  or a whole text that is one, keeps what is inside.

One step may split a line: text quoted inside a JSON, Python or Go string (``\\"``, ``\\'``, ``\\\\`` and a
literal ``\\n``) is unescaped, its ``\\n`` a new line; :class:`MatchText` maps each line back to the one it came
from.
"""

from __future__ import annotations

import functools
import re

from wizard import lazy_re
from wizard.record import record

_ANSI = lazy_re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_ENTITY = lazy_re.compile(r"&(?:(quot|apos|amp|lt|gt|nbsp)|#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6}));")
_NAMED = {"quot": '"', "apos": "'", "amp": "&", "lt": "<", "gt": ">", "nbsp": " "}
_CHARS = str.maketrans({
    **dict.fromkeys(map(chr, (0xA0, 0x1680, *range(0x2000, 0x200B), 0x202F, 0x205F, 0x3000)), " "),
    **dict.fromkeys(map(chr, (0xAD, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF)), None),
    **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
})
_FLAG_DASH = lazy_re.compile("(?<![^\\s\"'(\\[=`])[\u2013\u2014](?=[A-Za-z])")
_PREFIX = lazy_re.compile(
    r"^(?:(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d"  # journalctl -o short: "Nov 30 05:00:00 host ollama[123]: "
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?)"  # -o short-iso
    r" [\w.-]{1,64} [\w.@/-]{1,64}(?:\[\d{1,10}\])?: "
    r"|\[ {0,12}\d{1,10}\.\d{1,9}\] ?"  # the kernel's "[   12.345678] "
    r"|kernel: "
    r"|[\w.-]{1,64}[-_]\d{1,4} {1,40}\| ?"  # docker compose logs: "service-1  | "
    r"|(?:>[ \t]){1,16}|>$"  # a Markdown quote, nested or not (never Python's ">>> ")
    r"|\+ )",  # a diff's added line
    re.MULTILINE,
)
_SLOG = lazy_re.compile(  # Go's log/slog TextHandler: time, level, maybe source, then msg (quoted when it must be)
    r'^time=\S{1,64} level=[A-Za-z]{1,10} (?:source=\S{1,256} )?msg=(?:"((?:[^"\\]|\\.)*)"|(\S*))', re.MULTILINE)
_QUOTED = lazy_re.compile(r"""^([ \t]*)(["'])(.*)\2,?[ \t]*$""", re.MULTILINE)  # a line that is one string literal?
_ESCAPE = lazy_re.compile(r"\\([\"'\\nr])")
_UNESCAPED = {'"': '"', "'": "'", "\\": "\\", "n": "\n", "r": ""}


@record
class MatchText:
    text: str
    lines: tuple[int, ...] = ()  # for each line of text, its line (0-based) in the input; () where they are the same

    def line_of(self, row: int) -> int:
        """The input's line (0-based) of ``text``'s line ``row``."""
        return self.lines[row] if self.lines else row


def _entity(m: re.Match[str]) -> str:
    if m.group(1):
        return _NAMED[m.group(1)]
    code = int(m.group(2)) if m.group(2) else int(m.group(3), 16)
    if code < 0x20 or 0xD800 <= code < 0xE000 or code > 0x10FFFF:
        return m.group(0)  # a control character (a line break among them) or no character: kept as written
    return chr(code)


def _message(m: re.Match[str]) -> str:
    return m.group(1) if m.group(1) is not None else m.group(2)


def _literal(whole_text: str, m: re.Match[str]) -> str:
    """A line that is one string literal (no unescaped quote of its kind inside) written as code writes one (with
    an escape in it, or the whole text): its content. A quoted line of prose or output stays as it is."""
    quote, body = m.group(2), m.group(3)
    if quote in body.replace("\\\\", "").replace("\\" + quote, ""):
        return m.group(0)
    return m.group(1) + body if "\\" in body or m.group(0).strip() == whole_text else m.group(0)


def _unescape(m: re.Match[str]) -> str:
    return _UNESCAPED[m.group(1)]


def line_breaks(text: str) -> str:
    """``text`` without ANSI colours, its CRLF and lone CR line breaks (as a terminal shows them)."""
    return _ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "\n")


def match_text(text: str) -> MatchText:
    """``text`` as signatures are matched against it, with the map of its lines back to the lines of
    ``line_breaks(text)``."""
    text = line_breaks(text)
    if "&" in text:
        text = _ENTITY.sub(_entity, text)
    text = _FLAG_DASH.sub("--", text.translate(_CHARS))
    for _ in range(4):  # nested: "> Nov 30 ... kernel: [ 12.3] ..."
        text, n = _PREFIX.subn("", text)
        if not n:
            break
    if "msg=" in text:
        text = _SLOG.sub(_message, text)
    if '"' in text or "'" in text:
        text = _QUOTED.sub(functools.partial(_literal, text.strip()), text)
    if "\\" not in text:
        return MatchText(text)
    if "\\n" not in text:
        return MatchText(_ESCAPE.sub(_unescape, text))
    out: list[str] = []
    origin: list[int] = []
    for i, line in enumerate(text.split("\n")):
        parts = _ESCAPE.sub(_unescape, line).split("\n") if "\\" in line else [line]
        out += parts
        origin += [i] * len(parts)
    return MatchText("\n".join(out), tuple(origin))


EVIDENCE_CHARS = 300  # an evidence line is cut here


def evidence_line(text: str, start: int, end: int) -> tuple[int, str]:
    """(row, line) of a match from ``start`` to ``end`` in ``text``: the row (0-based) it starts on, and the line it
    is on, stripped (a match over several lines: those lines, stripped, joined with " / "), at most
    ``EVIDENCE_CHARS`` characters."""
    first = text.rfind("\n", 0, start) + 1
    last = text.find("\n", end)
    line = text[first: last if last != -1 else len(text)].strip()
    if "\n" in line:
        line = " / ".join(x.strip() for x in line.splitlines() if x.strip())
    return text.count("\n", 0, start), line[:EVIDENCE_CHARS]
