"""Environment assignments from three kinds of text:

- ``parse_env_file``: ``NAME=value`` lines (``env`` output, env.txt, /etc/environment); an optional
  ``export`` / ``declare -x`` prefix and one pair of surrounding quotes are removed, nothing is
  expanded.
- ``parse_shell_rc``: shell startup files (~/.bashrc, ~/.profile). Assignments and ``export``
  lines at any point; function bodies and here-documents are skipped; assignments inside
  ``if``/``case``/loops or after ``&&``/``||`` are kept but marked ``conditional``.
- ``parse_activate``: a venv's ``bin/activate``: its VIRTUAL_ENV and the exports a person added
  beyond the standard template.
"""

from __future__ import annotations

import shlex

from wizard import lazy_re
from wizard.parsers._text import lines, never_raises
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
    for no, line in lines(text):
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
