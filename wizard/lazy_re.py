"""Regular expressions compiled when first used, not when their module is imported.

The wizard's readers declare ~300 patterns at module level and a ``detect`` uses about 20 of them; compiling
all of them costs ~13 ms of every start (``re`` compiles in pure Python). ``lazy_re.compile`` takes the
arguments of ``re.compile`` and returns a :class:`Pattern` that compiles on the first call of a method and
then hands its methods over to the compiled pattern, so later calls cost what ``re`` itself costs.

    _VERSION = lazy_re.compile(r"^(\\d+)\\.(\\d+)", re.M)
    m = _VERSION.search(text)

Every pattern in the wizard is made this way (``tests/test_layers.py`` checks it).
"""

from __future__ import annotations

import re
import sys

TYPE_CHECKING = False  # typing's, not imported at run time (wizard/record.py says why)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class Pattern:
    """A ``re.Pattern[str]`` compiled on first use (str patterns only)."""

    def __init__(self, pattern: str, flags: int | re.RegexFlag = 0) -> None:
        self.pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiling it now if no method has been called yet)."""
        if self._compiled is None:
            c = self._compiled = re.compile(self.pattern, self._flags)
            for name in _METHODS:  # instance attributes shadow the methods below from now on
                setattr(self, name, getattr(c, name))
        return self._compiled

    @property
    def flags(self) -> int:
        return self.compiled.flags

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled.findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count)

    def subn(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> tuple[str, int]:
        return self.compiled.subn(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        return self.compiled.split(string, maxsplit)

    def __repr__(self) -> str:
        return f"lazy_re.compile({self.pattern!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pattern) and (self.pattern, self._flags) == (other.pattern, other._flags)

    def __hash__(self) -> int:
        return hash((self.pattern, self._flags))


def compile(pattern: str, flags: int | re.RegexFlag = 0) -> Pattern:  # noqa: A001 - re.compile's name
    """A pattern compiled on first use; arguments as ``re.compile``."""
    return Pattern(pattern, flags)


__all__ = ["Pattern", "compile"]
