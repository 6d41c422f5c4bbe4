"""``pacman -Q`` output (Arch Linux and its derivatives): one ``name version`` line per installed package.

The format is pacman's own (archlinux pacman src/pacman/query.c, display(): ``"%s%s %s%s%s"``, name then
version, in colour codes when on a terminal; ``-Qu`` adds `` -> newversion``), read here from the devkitPro/pacman
fork at cf473bcfbd275044250fa6ce3703dd7059a52273. The version is ``[epoch:]pkgver-pkgrel``: ``rocm-core 6.2.4-1``.
"""

from __future__ import annotations

from wizard import lazy_re
from wizard.parsers._text import lines, never_raises
from wizard.record import record

# name: pacman's package name characters (alnum and @._+-, not starting with - or .); version: an optional epoch,
# pkgver (no hyphen) and pkgrel (a number, optionally .N)
# one package line (the paste splitter takes a block of them for pacman -Q's output too)
PACKAGE_LINE = r"^([a-z0-9@_+][a-z0-9@._+-]*) ((?:\d+:)?[A-Za-z0-9._+~]+-\d+(?:\.\d+)?)(?: -> \S+)?\s*$"
_LINE_RE = lazy_re.compile(PACKAGE_LINE)


@record
class PacmanPackage:
    name: str
    version: str  # [epoch:]pkgver-pkgrel
    line: int = 0


@never_raises(tuple)
def parse_pacman(text: object) -> tuple[PacmanPackage, ...]:
    """The installed packages a ``pacman -Q`` list names, in text order."""
    out: list[PacmanPackage] = []
    for no, line in lines(text):
        m = _LINE_RE.match(line.strip())
        if m:
            out.append(PacmanPackage(m.group(1), m.group(2), no))
    return tuple(out)
