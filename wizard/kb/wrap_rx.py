"""A known-issue pattern that also matches its text hard-wrapped: each literal space of the pattern (a run of them
counts as one) matches a run of blanks, or a line break with the blanks around it, so "invalid device function"
still matches "invalid\\n    device function" (a terminal's copy, an e-mail or a forum that wraps long lines at a
space near column 80).

The rewrite keeps the pattern linear: the replacement's two branches start with different characters, and a space
is left as written where it could meet another whitespace-matching part (next to ``\\s``, ``.``, ``\\W``, a class
that holds a blank or is negated, a group that ends in one), where a quantifier follows it (``a +``), inside a
class and inside a lookbehind (which must keep a fixed width). Groups it adds capture nothing, so group numbers stay.
"""

from __future__ import annotations

from wizard import lazy_re

# a run of blanks (then, maybe, a line break and the next line's indent), or a line break and the indent
WRAPPED_SPACE = r"(?:[ \t]+(?:\n[ \t]*)?|\n[ \t]*)"
_QUANTIFIERS = "*+?{"
_BLANK_ESCAPES = frozenset("sWtnrfvxuUN")  # escapes that may match a blank (a code such as \x20 among them)
_CODE = lazy_re.compile(r"x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}]*\}")
_GROUP_HEAD = lazy_re.compile(r"\((?:\?(?::|P<\w+>|[=!]|<[=!]))?")
_COUNT = lazy_re.compile(r"\{\d*(?:,\d*)?\}")  # a counted quantifier ("{" alone is a literal)


def _class_end(pattern: str, i: int) -> int:
    """The index after the character class that opens at ``pattern[i]`` (``[``)."""
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return min(j + 1, len(pattern))


def _class_blank(body: str) -> bool:
    """Whether the class ``body`` (with its brackets) may match a blank."""
    if body.startswith("[^"):
        return True
    return " " in body or any(f"\\{c}" in body for c in _BLANK_ESCAPES)


def _token_blank(pattern: str, i: int) -> tuple[int, bool]:
    """The atom at ``pattern[i]`` (not a group, not a space): its end and whether it may match a blank."""
    c = pattern[i]
    if c == "\\":
        code = _CODE.match(pattern, i + 1)
        return (code.end() if code else i + 2), pattern[i + 1: i + 2] in _BLANK_ESCAPES
    if c == "[":
        end = _class_end(pattern, i)
        return end, _class_blank(pattern[i:end])
    return i + 1, c in ".\t\n"


def _starts_blank(pattern: str, j: int) -> bool:
    """Whether what starts at ``pattern[j]`` (after a space) may match a blank or quantifies the space."""
    if j >= len(pattern):
        return True
    c = pattern[j]
    if c in "*+?|)^$" or _COUNT.match(pattern, j):
        return True
    if c == "(":  # the group's first part decides (a branch after it is not looked at)
        head = _GROUP_HEAD.match(pattern, j)
        k = head.end() if head else j + 1
        return k >= len(pattern) or pattern[k] in " (" or _starts_blank(pattern, k)
    return c == " " or _token_blank(pattern, j)[1]


def wrap_tolerant(pattern: str) -> str:
    """``pattern`` with its literal spaces matching a hard wrap too (see the module's note)."""
    if " " not in pattern:
        return pattern
    out: list[str] = []
    groups: list[tuple[bool, bool]] = []  # open groups: (a lookbehind, some branch so far ended in a blank-matcher)
    behind = 0  # lookbehinds we are in
    last_blank = True  # the part before may match a blank (the start counts as one: nothing to rewrite against)
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == " ":
            j = i
            while j < n and pattern[j] == " ":
                j += 1
            nxt = pattern[j] if j < n else ""
            next_blank = _starts_blank(pattern, j)
            if behind or last_blank or next_blank:
                out.append(pattern[i:j])
            else:
                out.append(WRAPPED_SPACE)
            last_blank = True  # a space (rewritten or not) matches a blank
            i = j
            continue
        if c == "(":
            look_behind = pattern.startswith(("(?<=", "(?<!"), i)
            groups.append((look_behind, False))
            behind += look_behind
            end = i + 1
            if pattern.startswith("(?", i):  # the group's head: "(?:", "(?P<name>", "(?<!", "(?=" ...
                end = pattern.index(":", i) + 1 if pattern.startswith("(?:", i) else i + 2
                if pattern.startswith("(?P<", i):
                    end = pattern.index(">", i) + 1
                elif pattern.startswith(("(?<=", "(?<!"), i):
                    end = i + 4
                elif pattern.startswith(("(?=", "(?!"), i):
                    end = i + 3
            out.append(pattern[i:end])
            last_blank = True  # a branch's start: what comes before it is unknown here
            i = end
            continue
        if c == "|":
            if groups:
                lb, any_blank = groups[-1]
                groups[-1] = (lb, any_blank or last_blank)
            out.append(c)
            last_blank = True
            i += 1
            continue
        if c == ")":
            lb, any_blank = groups.pop() if groups else (False, True)
            behind -= lb
            out.append(c)
            last_blank = any_blank or last_blank
            i += 1
            continue
        count = _COUNT.match(pattern, i) if c == "{" else None
        if c in "*+?" or count:
            end = count.end() if count else i + 1
            out.append(pattern[i:end])
            # a quantifier keeps what its atom may match; one that lets it match nothing lets the part before it meet
            # what follows (counted as a blank-matcher: nothing is rewritten against it)
            last_blank = last_blank or c in "*?" or pattern.startswith(("{0", "{,"), i)
            i = end
            continue
        if c in "^$":
            out.append(c)
            i += 1
            continue  # an anchor matches nothing: the part before it stays the one before
        end, blank = _token_blank(pattern, i)
        out.append(pattern[i:end])
        last_blank = blank
        i = end
    return "".join(out)
