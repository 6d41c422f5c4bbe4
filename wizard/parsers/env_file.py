"""Environment assignments from three kinds of text:

- ``parse_env_file``: ``NAME=value`` lines (``env`` output, env.txt, /etc/environment); an optional
  ``export`` / ``declare -x`` prefix and one pair of surrounding quotes are removed, nothing is
  expanded.
- ``parse_shell_rc``: shell startup files (~/.bashrc, ~/.profile). Assignments and ``export``
  lines at any point; function bodies and here-documents are skipped; assignments inside
  ``if``/``case``/loops or after ``&&``/``||`` are kept but marked ``conditional``.
- ``parse_activate``: a venv's ``bin/activate``: its VIRTUAL_ENV and the exports a person added
  beyond the standard template.
- ``parse_pam_environment``: /etc/environment as pam_env reads it: ``parse_env_file``'s lines, joined and cut as
  pam_env's line reader does (``_pam_lines``).

A shell file's lines are its logical lines (``_shell_lines``), as bash reads them: Bash manual "Escape Character"
(https://www.gnu.org/software/bash/manual/bash.html#Escape-Character): "If a \\newline pair appears, and the backslash
itself is not quoted, the \\newline is treated as a line continuation (that is, it is removed from the input stream and
effectively ignored)"; inside single quotes a backslash is a character ("Single Quotes": "preserves the literal value
of each character within the quotes") and the quote goes on over the line's end; inside double quotes a backslash
still escapes a newline ("Double Quotes": it keeps its meaning before "$", "`", "\"", "\\" or newline); a comment's
backslash continues nothing; a here-document's body is passed on line by line as it is. Only a newline ends a line for
bash: a backslash before a CRLF end quotes the carriage return and continues nothing (bash 5.2: ``export A=\\<CR><LF>``
sets A to $'\\r' and runs the next line as a command; the reader drops the CR, as it drops every CRLF line's); a
backslash that ends the file, no newline after it, is a character (``export A=1\\`` at the end sets A to 1\\); a
quote left open to the end of the file is a syntax error, "unexpected EOF while looking for matching", and bash runs
nothing from the command it opens in (the commands before it ran).
"""

from __future__ import annotations

import shlex

from wizard import lazy_re
from wizard.parsers._text import MAX_LINE, lines, never_raises, to_text
from wizard.record import record

_NAME_RE = lazy_re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ENV_LINE_RE = lazy_re.compile(r"^\s*(?:export\s+|declare\s+-x\s+|setenv\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_FUNC_RE = lazy_re.compile(r"^\s*(?:function\s+[\w:.-]+(?:\s*\(\s*\))?|[\w:.-]+\s*\(\s*\))\s*(?:\{|$)")
_HEREDOC_RE = lazy_re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_OPENERS = frozenset({"if", "case", "for", "while", "until", "select"})
_CLOSERS = frozenset({"fi", "esac", "done"})
# A line without any of these can neither assign nor open or close a block (shlex is slow: skip such lines).
_MAY_MATTER = lazy_re.compile(r"=|\b(?:export|declare|typeset|if|case|for|while|until|select|fi|esac|done|elif)\b")
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", ";;", "|&"})
_STANDARD_ACTIVATE = frozenset({"VIRTUAL_ENV", "PATH", "PYTHONHOME", "PS1", "VIRTUAL_ENV_PROMPT"})


@record
class EnvAssignment:
    name: str
    value: str | None  # None for a bare ``export NAME``
    line: int
    exported: bool = True
    conditional: bool = False


@record
class ActivateScript:
    virtual_env: str | None
    added: tuple[EnvAssignment, ...]  # exports beyond the standard venv template


def _strip_quotes(value: str) -> str:
    v = value.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
        return v[1:-1]
    return v


@never_raises(tuple)
def parse_env_file(text: object) -> tuple[EnvAssignment, ...]:
    out: list[EnvAssignment] = []
    for no, line in lines(text):
        if line.lstrip().startswith("#"):
            continue
        m = _ENV_LINE_RE.match(line)
        if m:
            out.append(EnvAssignment(m.group(1), _strip_quotes(m.group(2)), no))
    return tuple(out)


_COMMENT_AFTER = " \t;&|()<>"  # a "#" after one of these (or first on the line) starts a comment
_MAX_JOINED = 256  # physical lines one logical line may take; past it, the lines are read one by one


def _scan(part: str, state: str) -> tuple[str, bool]:
    """The quoting ``state`` ("" none, "'" single, '"' double, "$'" ANSI-C) after the shell reads ``part`` (a physical
    line, ``state`` the one its previous line ended in) and whether it ends in a backslash that continues the line
    (unquoted or in double quotes, not itself escaped)."""
    i, n = 0, len(part)
    while i < n:
        c = part[i]
        if state == "'":
            j = part.find("'", i)
            if j < 0:
                return state, False
            state, i = "", j + 1
            continue
        if c == "\\":
            if i + 1 == n:
                return state, state in ("", '"')
            i += 2
            continue
        if state == '"':
            if c == '"':
                state = ""
        elif state == "$'":
            if c == "'":
                state = ""
        elif c == "'":
            state = "$'" if i and part[i - 1] == "$" else "'"
        elif c == '"':
            state = '"'
        elif c == "#" and (i == 0 or part[i - 1] in _COMMENT_AFTER):
            return "", False  # the rest of the line is a comment
        i += 1
    return state, False


def _crlf_lines(text: str) -> frozenset[int]:
    """The numbers (as ``lines`` numbers them) of the lines that end in CR LF: for bash and pam_env a carriage return
    is a character, so the line's last character before its newline is no backslash."""
    if "\r\n" not in text:
        return frozenset()
    out: set[int] = set()
    no = 1
    for seg in text.split("\n"):
        crlf = seg.endswith("\r")
        no += (seg[:-1] if crlf else seg).count("\r")  # a lone CR ends a line for ``lines``
        if crlf:
            out.add(no)
        no += 1
    return frozenset(out)


def _shell_lines(data: object) -> list[tuple[int, str]]:
    """The logical lines of a shell file as bash reads them (the module's docstring): (first line number, line), a
    backslash-newline outside single quotes removed (not a backslash before CR LF, nor one that ends the file), a quote
    left open at a line's end going on over the newline. A quote left open to the end of the file ends the lines: bash
    runs nothing from there (one open past ``_MAX_JOINED`` lines leaves its lines as they are); a here-document's body
    passes line by line."""
    text = to_text(data)
    physical = lines(text, rstrip=False)
    crlf = _crlf_lines(text)
    out: list[tuple[int, str]] = []
    i, n = 0, len(physical)
    heredoc: str | None = None
    while i < n:
        no, line = physical[i]
        if heredoc is not None:
            heredoc = None if line.strip() == heredoc else heredoc
            out.append((no, line))
            i += 1
            continue
        if "\\" not in line and "'" not in line and '"' not in line:  # nothing in it quotes or continues
            parts, j = [line], i
        else:
            parts, j, state = [], i, ""
            while True:
                part = physical[j][1]
                state, continued = _scan(part, state)
                if continued and (physical[j][0] in crlf or j + 1 >= n):
                    # bash: before a CR the backslash quotes it (a character, dropped as every CRLF line's CR; in
                    # double quotes both are characters); at the file's very end it quotes nothing and stays
                    continued = False
                    if not state:
                        part = part[:-1] if physical[j][0] in crlf else part + "\\"  # shlex: one literal backslash
                if continued:
                    parts.append(part[:-1])
                elif state:
                    parts.append(part + "\n")
                else:
                    parts.append(part)
                    break
                if j + 1 >= n or j - i >= _MAX_JOINED:
                    break
                j += 1
            if state and not continued:  # a quote never closed
                if j + 1 >= n:
                    return out  # open to the end of the file: bash's syntax error, nothing of it runs
                out.extend(physical[i:j + 1])  # open past _MAX_JOINED lines: its lines as they are
                i = j + 1
                continue
        joined = "".join(parts)
        if "<<" in joined:
            m = _HEREDOC_RE.search(joined)
            if m:
                heredoc = m.group(2)
        out.append((no, joined[:MAX_LINE]))
        i = j + 1
    return out


def _pam_lines(data: object) -> list[tuple[int, str]]:
    """The lines pam_env reads from /etc/environment (linux-pam/linux-pam@ddab692c8409c9a3b5613bd21638dea404ba4edf:
    libpam_internal/pam_line.c ``_pam_line_assemble``, which modules/pam_env/pam_env.c calls with a NUL for the
    backslash): "Configuration lines may span across multiple lines in a file by ending a line with a backslash (\\)":
    the line's last character, blanks skipped, is looked at alone (no quoting, no escaping: a doubled backslash or one
    in quotes continues too) and cut off; each line's leading blanks are skipped and a "#" ends it ("we are only
    interested in characters before the first '#' character"), and a line holding one never continues; a line still
    continued at the end of the file is an "Incomplete read" and gives nothing. ``_pam_str_unescnl`` skips " ", "\\t"
    and "\\n" only: a line ending in CR LF ends in a carriage return, not a backslash, and never continues (libpam
    1.5.2's pam_env read "A=1\\<CR><LF>B=2<CR><LF>" as A=1\\<CR> and B=2<CR>). (first line number, line)."""
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    text = to_text(data)
    physical = lines(text, rstrip=False)
    crlf = _crlf_lines(text)
    if physical and not physical[-1][1]:
        physical.pop()  # what follows the file's last newline is no line (getline reads none: the file has ended)
    for no, raw in physical:
        body = raw.lstrip(" \t")
        end = body.rstrip(" \t")
        continued = "#" not in body and end.endswith("\\") and no not in crlf
        piece = end[:-1] if continued else body.split("#", 1)[0]
        start, text = (pending[0], pending[1] + piece) if pending else (no, piece)
        if continued:
            pending = (start, text[:MAX_LINE])
            continue
        pending = None
        if text.strip():
            out.append((start, text))
    return out


_QUOTES = ("'", '"')


def _pam_assignment(line: str) -> tuple[str, str] | None:
    """(name, value) of one of /etc/environment's lines as pam_env's ``_parse_env_file`` reads it
    (linux-pam/linux-pam@0588831303c27c32d6be8ae6cdf62daa40933745:modules/pam_env/pam_env.c; libpam 1.5.2 behaves so):
    an "export " prefix (one blank) skipped, a name of ASCII letters, digits and "_" up to the "=" (else "ignoring"),
    and a value whose first character is a quote losing it and, where the last character is a quote of either kind,
    that one too ("we try to be smart about quotes around the value, but not too smart"): ``A="1`` is 1, ``A="a"b"``
    a"b, ``A=  "x"`` keeps its blanks and quotes. None: no assignment (a bare name asks to unset: nothing is set)."""
    key = line.lstrip(" \n\t")
    if key.startswith("export "):
        key = key[7:]
    name, eq, value = key.partition("=")
    if not eq or not name or not all(c.isascii() and (c.isalnum() or c == "_") for c in name):
        return None
    if value[:1] in _QUOTES:
        value = value[1:-1] if value[-1:] in _QUOTES and len(value) > 1 else value[1:]
    return name, value


@never_raises(tuple)
def parse_pam_environment(text: object) -> tuple[EnvAssignment, ...]:
    """/etc/environment's assignments as pam_env reads them: its lines joined and cut as ``_pam_lines`` says, each
    read as ``_pam_assignment`` says."""
    out: list[EnvAssignment] = []
    for no, line in _pam_lines(text):
        pair = _pam_assignment(line)
        if pair:
            out.append(EnvAssignment(pair[0], pair[1], no))
    return tuple(out)


def _tokens(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: keep what the line says, unquoted
        return line.split("#", 1)[0].replace('"', " ").replace("'", " ").split()


def _commands(tokens: list[str]) -> list[tuple[list[str], bool]]:
    """Split at separators; the flag says the command ran after && or ||."""
    out: list[tuple[list[str], bool]] = []
    cur: list[str] = []
    after_logic = False
    for tok in tokens:
        if tok in _SEPARATORS or (tok and set(tok) <= set(";&|")):
            if cur:
                out.append((cur, after_logic))
            cur, after_logic = [], tok in ("&&", "||")
            continue
        cur.append(tok)
    if cur:
        out.append((cur, after_logic))
    return out


def _assignment(token: str) -> tuple[str, str] | None:
    name, eq, value = token.partition("=")
    if eq and _NAME_RE.match(name):
        return name, value
    return None


@never_raises(tuple)
def parse_shell_rc(text: object) -> tuple[EnvAssignment, ...]:
    out: list[EnvAssignment] = []
    func_depth = 0
    func_pending = False
    block_depth = 0
    heredoc: str | None = None
    for no, line in _shell_lines(text):
        s = line.strip()
        if heredoc is not None:
            if s == heredoc:
                heredoc = None
            continue
        if func_depth > 0 or func_pending:
            opened, closed = line.count("{"), line.count("}")
            if func_pending and opened:
                func_pending = False
            func_depth = max(0, func_depth + opened - closed)
            continue
        if not s or s.startswith("#"):
            continue
        if _FUNC_RE.match(line):
            func_depth = max(0, line.count("{") - line.count("}"))
            func_pending = "{" not in line
            continue
        hm = _HEREDOC_RE.search(line)
        if hm:
            heredoc = hm.group(2)
        if not _MAY_MATTER.search(line):  # no assignment, export or block word: nothing to tokenize
            continue
        for words, after_logic in _commands(_tokens(line)):
            while words and words[0] in ("then", "else", "do", "{", "}"):
                words = words[1:]
            if not words:
                continue
            head = words[0]
            if head in _OPENERS or head == "elif":
                block_depth += head in _OPENERS
                continue
            if head in _CLOSERS:
                block_depth = max(0, block_depth - 1)
                continue
            conditional = block_depth > 0 or after_logic
            if head in ("export", "declare", "typeset"):
                if head != "export" and "-x" not in words[1:]:
                    continue
                for word in words[1:]:
                    if word.startswith("-"):
                        continue
                    pair = _assignment(word)
                    if pair:
                        out.append(EnvAssignment(pair[0], pair[1], no, True, conditional))
                    elif _NAME_RE.match(word):
                        out.append(EnvAssignment(word, None, no, True, conditional))
                continue
            pairs = []
            for word in words:
                pair = _assignment(word)
                if not pair:
                    break
                pairs.append(pair)
            if pairs and len(pairs) == len(words):  # "A=1 cmd" only sets A for cmd
                out.extend(EnvAssignment(n, v, no, False, conditional) for n, v in pairs)
    return tuple(out)


def effective_exports(assignments: tuple[EnvAssignment, ...]) -> dict[str, str]:
    """Name -> value of exported variables, resolving ``NAME=v`` followed by ``export NAME``."""
    values: dict[str, str] = {}
    exported: dict[str, str] = {}
    for a in assignments:
        if a.value is not None:
            values[a.name] = a.value
            if a.exported or a.name in exported:
                exported[a.name] = a.value
        elif a.exported and a.name in values:
            exported[a.name] = values[a.name]
        elif a.exported:
            exported.setdefault(a.name, "")
    return exported


@never_raises(lambda: ActivateScript(None, ()))
def parse_activate(text: object) -> ActivateScript:
    assignments = parse_shell_rc.__wrapped__(text)  # type: ignore[attr-defined]
    venv = None
    for a in assignments:
        if a.name == "VIRTUAL_ENV" and a.value and not a.value.startswith("$"):
            if venv is None or not a.conditional or a.value.startswith("/"):
                venv = a.value
    exports = effective_exports(assignments)
    added: list[EnvAssignment] = []
    seen: set[str] = set()
    for a in reversed(assignments):
        if a.name in _STANDARD_ACTIVATE or a.name.startswith("_OLD_VIRTUAL_") or a.name in seen:
            continue
        if a.name in exports and a.value is not None:
            seen.add(a.name)
            added.append(EnvAssignment(a.name, exports[a.name], a.line, True, a.conditional))
    return ActivateScript(venv, tuple(reversed(added)))
