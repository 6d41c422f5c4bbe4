r"""The environment a systemd unit file (or one of its drop-ins) gives its service's processes.

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

How one ``Environment=`` value becomes assignments is systemd's own code, read in systemd/systemd (stored copies of
src/core/load-fragment.c ``config_parse_environ``, src/basic/extract-word.c ``extract_first_word``,
src/basic/escape.c ``cunescape_one``, src/basic/env-util.c ``env_assignment_is_valid``, src/shared/conf-parser.c;
the index that served them named no commit) and systemd.syntax(7) "Quoting"
(https://www.freedesktop.org/software/systemd/man/latest/systemd.syntax.html#Quoting): the value is split into
words at blanks with ``EXTRACT_CUNESCAPE|EXTRACT_UNQUOTE``: a quote (``"`` or ``'``) anywhere in a word opens a
quoted part that blanks do not split, and a backslash starts a C-style escape inside and outside quotes alike (single
quotes included): ``\a \b \f \n \r \t \v \\ \" \' \s`` (a space), ``\xHH``, ``\nnn`` (octal, at most 255),
``\uHHHH``, ``\UHHHHHHHH``; a NUL is refused. "Only escape patterns which match the syntax in the table are
allowed". A word that cannot be read (an unknown escape such as ``\q``, a quote left open, a trailing backslash) ends
the line: ``config_parse_environ`` logs "Invalid syntax, ignoring: %s" and returns, so the words before it stay set
and the rest set nothing. Each word's specifiers are then expanded, and a word that is no valid assignment ("Invalid
environment assignment, ignoring: %s": a name of letters, digits and ``_`` not starting with a digit, a value that is
valid UTF-8) is skipped while the words after it are still read.

Specifiers (``resolve_specifiers``) are resolved for the service being read: an instance's ``%i %I %n %N %p %P %f``
are its own, though its template's file is read once for all of them. systemd.unit(5) "Specifiers": "Specifiers must
be known and resolvable for the setting to be valid"; src/core/load-fragment.c ``config_parse_environ``
(systemd/systemd@2557246cc8e616977cc233f92b4e7fbc45d0946f) skips a word whose specifiers fail, "Failed to resolve
specifiers in %s, ignoring: %m", and reads the next (seen on systemd 252: ``B=%Z%i`` is "ignoring: Invalid slot"). The
unescaping of ``%I %P %f`` is src/basic/unit-name.c's (systemd/systemd@8e542fcdc41db44895bbb7124909eea5fe2dea4d:
``unit_name_unescape``, ``unit_name_path_unescape``).
"""

from __future__ import annotations

import re

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
    """Whether ``logical_lines`` may join lines of ``text`` (a line, stripped, ends in a backslash; a doubled one,
    which does not continue, counts too: a quick check that may say yes for nothing, never no for a join): cheap where
    the text holds no backslash (most units). Its line ends are str.splitlines's, "\\r\\n" and "\\r" among them."""
    return "\\" in text and any(ln.rstrip().endswith("\\") for ln in text.splitlines())


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, line) with backslash continuations joined, as systemd reads a unit
    (src/shared/conf-parser.c, systemd.syntax(7)): a line continues where it ends in a backslash that is not itself
    escaped (a doubled backslash at the end is one backslash of the value, not a continuation), the backslash "is
    replaced by a space character" and the next line is appended as it is; "When a comment line or lines follow a line
    ending with a backslash, the comment block is ignored, so the continued line is concatenated with whatever follows
    the comment block"."""
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for i, raw in enumerate(text.splitlines(), 1):
        head = raw.lstrip(" \t")
        if head[:1] in ("#", ";"):
            if pending is None:
                out.append((i, head))
            continue  # inside a continuation: skipped, the line goes on after it
        if pending is not None:
            start, line = pending[0], pending[1] + raw
        else:
            start, line = i, raw
        if line.endswith("\\") and (len(line) - len(line.rstrip("\\"))) % 2 == 1:
            pending = (start, line[:-1] + " ")
            continue
        pending = None
        out.append((start, line.strip()))
    if pending is not None:
        out.append((pending[0], pending[1].strip()))
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


# the specifiers systemd.unit(5) "Specifiers" lists (systemd 252): a word with any other one cannot be resolved
_KNOWN_SPECIFIERS = frozenset("aAbBCdEfgGhHiIjJlLmMnNopPqsStTuUvVwWyY%")


def _unescape(text: str) -> bytes | None:
    """A unit name's part with its escaping undone as systemd's ``unit_name_unescape`` does (src/basic/unit-name.c):
    "-" is "/", ``\\xHH`` one byte; any other backslash: None (-EINVAL)."""
    out = bytearray()
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "-":
            out += b"/"
        elif c == "\\":
            digits = text[i + 2:i + 4]
            if text[i + 1:i + 2] != "x" or len(digits) != 2 or not all(d in _HEX for d in digits):
                return None
            out.append(int(digits, 16))
            i += 4
            continue
        else:
            out += c.encode()
        i += 1
    return bytes(out)


def _path_unescape(text: str) -> bytes | None:
    """``unit_name_path_unescape``: "-" alone is "/"; else the unescaped text with "/" in front, None where it is empty,
    begins or ends with "/" ("Don't accept trailing or leading slashes") or is no normalized path (an empty, "." or
    ".." part: systemd 252's ``systemd-escape --unescape --path a--b`` fails)."""
    if text == "-":
        return b"/"
    raw = _unescape(text) if text else None
    if not raw or raw.startswith(b"/") or raw.endswith(b"/") or any(
            part in (b"", b".", b"..") for part in raw.split(b"/")):
        return None
    return b"/" + raw


def _one_specifier(c: str, home: str | None, unit: str | None, name: str, prefix: str, instance: str,
                   at: str) -> str | None:
    """What ``%c`` stands for in ``unit``'s words (``resolve_specifiers``): its text, ``%c`` itself where it stays as
    written, or None (systemd cannot resolve it: the word is skipped)."""
    if c == "%":
        return "%"
    if c not in _KNOWN_SPECIFIERS:
        return None
    if c == "h":
        return home or f"%{c}"
    if not name or c not in "nNpPiIf" or (at and not instance and c in "iInNf"):  # a template has no instance
        return f"%{c}"
    if c in "nNpi":
        return {"n": unit or "", "N": name, "p": prefix, "i": instance}[c]
    raw = _unescape(instance) if c == "I" else _unescape(prefix) if c == "P" else _path_unescape(
        instance if at else prefix)
    try:
        return raw.decode() if raw is not None else None
    except UnicodeDecodeError:  # env_value_is_valid: "if (!utf8_is_valid(e)) return false"
        return None


def resolve_specifiers(value: str, home: str | None, unit: str | None = None) -> str | None:
    """``value`` with its specifiers resolved as systemd resolves them for the unit ``unit`` (a service's name, an
    instance's own: ``foo@bar.service``), or None where systemd cannot (it then skips the word, "Failed to resolve
    specifiers in %s, ignoring"): a letter systemd.unit(5) does not list, an instance or prefix that does not unescape.
    ``%h`` is ``home`` (as written where it is not known), ``%%`` a ``%``; the unit's own (``unit`` given): ``%n`` the
    name, ``%N`` without the type suffix, ``%p`` before the "@" (``%N`` for a name without one), ``%i`` the instance
    (empty for a name without one), ``%I`` / ``%P`` unescaped, ``%f`` the instance (else the prefix) unescaped as a path.
    A template read as a service of its own (``foo@.service``) has no instance: ``%i %I %n %N %f`` stay as written, as
    does every specifier of the machine systemd runs on (``%H``, ``%m``, ...)."""
    if "%" not in value:
        return value
    name = unit[:-len(".service")] if unit and unit.endswith(".service") else (unit or "")
    prefix, at, instance = name.partition("@")
    failed = False

    def one(m: re.Match[str]) -> str:
        nonlocal failed
        got = _one_specifier(m.group(1), home, unit, name, prefix, instance, at)
        if got is None:
            failed = True
            return ""
        return got

    out = _SPECIFIER_RE.sub(one, value)
    return None if failed else out


_BLANKS = " \t\n\r"  # systemd's WHITESPACE: the separators of Environment='s words
_SIMPLE_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, '"': 34, "'": 39, "s": 32}
_HEX = "0123456789abcdefABCDEF"


def _escape(value: str, i: int) -> tuple[bytes, int] | None:
    """The bytes of the escape whose letter is at ``value[i]`` (after the backslash) and the index after it; None
    where systemd's ``cunescape_one`` refuses it (an unknown letter, too few digits, a NUL, octal above 255, a code
    point that is no character)."""
    c = value[i:i + 1]
    if c in _SIMPLE_ESCAPES:
        return bytes((_SIMPLE_ESCAPES[c],)), i + 1
    if c == "x":
        digits = value[i + 1:i + 3]
        if len(digits) == 2 and all(d in _HEX for d in digits) and digits != "00":
            return bytes((int(digits, 16),)), i + 3  # one byte as written, not a character
        return None
    if c in ("u", "U"):
        n = 4 if c == "u" else 8
        digits = value[i + 1:i + 1 + n]
        if len(digits) != n or not all(d in _HEX for d in digits):
            return None
        code = int(digits, 16)
        if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            return None
        return chr(code).encode(), i + 1 + n
    if c and c in "01234567":
        digits = value[i:i + 3]
        if len(digits) != 3 or not all(d in "01234567" for d in digits):
            return None
        code = int(digits, 8)
        if code == 0 or code > 255:
            return None
        return bytes((code,)), i + 3
    return None


def environment_words(value: str) -> tuple[list[bytes], bool]:
    """The words of an ``Environment=`` value as systemd's
    ``extract_first_word(..., EXTRACT_CUNESCAPE|EXTRACT_UNQUOTE)`` gives them (bytes: ``\\xHH`` is one byte as
    written), and whether the value was read to its end (False: a word could not be read, and it and the rest of the
    value set nothing)."""
    words: list[bytes] = []
    i, n = 0, len(value)
    while True:
        while i < n and value[i] in _BLANKS:
            i += 1
        if i >= n:
            return words, True
        word = bytearray()
        quote = ""
        while i < n:
            c = value[i]
            if c == "\\":
                got = _escape(value, i + 1)
                if got is None:
                    return words, False  # "Invalid syntax, ignoring": an unknown escape, or a trailing backslash
                word += got[0]
                i = got[1]
                continue
            if quote:
                if c == quote:
                    quote = ""
                else:
                    word += c.encode()
            elif c in ("'", '"'):
                quote = c
            elif c in _BLANKS:
                break
            else:
                word += c.encode()
            i += 1
        if quote:
            return words, False  # a quote left open
        words.append(bytes(word))


def _pairs(value: str, home: str | None, unit: str | None = None) -> tuple[tuple[str, str], ...]:
    """The assignments of one Environment= value in order: its words read as systemd reads them (``environment_words``;
    a word it cannot read ends the line, the words before it stay), each with its specifiers resolved for ``unit``
    (``resolve_specifiers``), a word whose specifiers do not resolve or that is no valid assignment skipped."""
    words, _whole = environment_words(value)
    out: list[tuple[str, str]] = []
    for raw in words:
        try:
            word = raw.decode()  # env_value_is_valid: "if (!utf8_is_valid(e)) return false"
        except UnicodeDecodeError:
            continue
        resolved = resolve_specifiers(word, home, unit)
        if resolved is None:  # "Failed to resolve specifiers in %s, ignoring": the next word is read
            continue
        name, sep, val = resolved.partition("=")
        if sep and _NAME_RE.match(name):
            out.append((name, val))
    return tuple(out)


@never_raises(list)
def unit_environment(text: object, home: str | None = None, unit: str | None = None) -> list[UnitEnvLine]:
    """The Environment= / EnvironmentFile= lines of the unit text's [Service] section, in order (``home``: what
    ``%h`` stands for; ``unit``: the service the text is read for, an instance's own name for its template's file:
    what ``%i``, ``%n``, ``%p``... stand for)."""
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
            pairs = _pairs(value, home, unit)
            if pairs:
                out.append(UnitEnvLine(number, "env", pairs=pairs))
        elif key == "EnvironmentFile":
            if not value:
                out.append(UnitEnvLine(number, "file", reset=True))
                continue
            optional = value.startswith("-")
            # config_parse_unit_env_file: "Failed to resolve unit specifiers in %s, ignoring": the line sets nothing
            path = (resolve_specifiers(value[1:] if optional else value, home, unit) or "").strip()
            if path:
                out.append(UnitEnvLine(number, "file", path=path, optional=optional))
    return out
