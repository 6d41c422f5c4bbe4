"""zypper's package listings (openSUSE, SLES): ``zypper search`` / ``zypper packages`` table rows and ``zypper info``
blocks, read for the packages they say are installed.

The formats are zypper's own (openSUSE/zypper):

* ``zypper search -s`` (``se -s``, ``se -i -s``; 04f0507daeac53a043d644b9a105ea6336038ca7 src/search.cc,
  FillSearchTableSolvable): columns ``S | Name | Type | Version | Arch | Repository``, the status first ("i" or "i+"
  installed, "v" another version of it installed, empty not installed), the repository "(System Packages)" for an
  installed package no repository offers;
* ``zypper packages`` (``pa -i``; same file, list_packages): ``S | Repository | Name | Version | Arch``;
* ``zypper search`` without ``-s`` (FillSearchTableSelectable): ``S | Name | Summary | Type``, no version (read for
  the package manager only);
* ``zypper info`` (82e1a54a91a8628f6882e7073605250bb7cbcbb2 src/info.cc, printInfo / printPkgInfo): "Information for
  package NAME:" then "Name: ", "Version: " (the update candidate's), "Installed: Yes|No" and "Status: up-to-date",
  "out-of-date (version X installed)" or "not installed"; newer zypper pads the keys ("Version        : ").

Columns are separated by "|" (zypper's Table.cc, ASCII style) or "│" (its Unicode style). A version is rpm's
``[epoch:]version-release``: ``rocm-core | package | 6.2.0.60200-sles155.66 | x86_64 | rocm``.
"""

from __future__ import annotations

from wizard import lazy_re
from wizard.parsers._text import lines, never_raises
from wizard.record import record

_ARCHES = frozenset({"x86_64", "noarch", "i686", "i586", "aarch64", "ppc64le", "s390x", "armv7hl", "riscv64"})
_SPLIT = lazy_re.compile(r"\s*[|│]\s*")
_NAME = lazy_re.compile(r"^[A-Za-z0-9_+][A-Za-z0-9_+.-]*$")
_EVR = lazy_re.compile(r"^(?:\d+:)?[A-Za-z0-9_+.~^]+-[A-Za-z0-9_+.~^]+$")
_STATUS = lazy_re.compile(r"^(?:i\+?|v|!|\.)?l?$")
_INFO_HEAD = lazy_re.compile(r"^\s*Information for package ([A-Za-z0-9_+][A-Za-z0-9_+.-]*):\s*$")
_INFO_FIELD = lazy_re.compile(r"^\s*(Name|Version|Installed|Status)\s*:\s*(.*?)\s*$")
_OUT_OF_DATE = lazy_re.compile(r"^out-of-date \(version (\S+) installed\)$")
# the header rows of the layouts: the column of each field
_SEARCH_HEADER = ("S", "Name", "Type", "Version", "Arch", "Repository")
_PACKAGES_HEADER = ("S", "Repository", "Name", "Version", "Arch")


@record
class ZypperPackage:
    name: str
    version: str  # [epoch:]version-release
    line: int = 0


def _row(cells: list[str], layout: tuple[str, ...]) -> tuple[str, str] | None:
    """(name, version) of an installed package's row of a layout, else None."""
    if len(cells) != len(layout):
        return None
    col = dict(zip(layout, cells))
    status, name, version, arch = col["S"], col["Name"], col["Version"], col["Arch"]
    if not _STATUS.match(status) or not status.startswith("i") or arch not in _ARCHES:
        return None
    if "Type" in col and col["Type"] != "package":
        return None
    if not _NAME.match(name) or not _EVR.match(version):
        return None
    return name, version


@never_raises(tuple)
def parse_zypper(text: object) -> tuple[ZypperPackage, ...]:
    """The installed packages a zypper listing names, in text order."""
    out: list[ZypperPackage] = []
    info: dict[str, str] = {}
    info_line = 0

    def close_info() -> None:
        if info.get("Installed", "").startswith("Yes") and "Name" in info and "Version" in info:
            old = _OUT_OF_DATE.match(info.get("Status", ""))
            version = old.group(1) if old else info["Version"]
            if _NAME.match(info["Name"]) and _EVR.match(version):
                out.append(ZypperPackage(info["Name"], version, info_line))
        info.clear()

    in_info = False
    for no, line in lines(text):
        if _INFO_HEAD.match(line):
            close_info()
            in_info, info_line = True, no
            continue
        field = _INFO_FIELD.match(line) if in_info else None
        if field:
            info.setdefault(field.group(1), field.group(2))
            continue
        s = line.strip()
        if "|" not in s and "│" not in s:
            continue
        cells = _SPLIT.split(s)  # a row not installed starts with its empty status: never read
        for layout in (_SEARCH_HEADER, _PACKAGES_HEADER):
            row = _row(cells, layout)
            if row:
                out.append(ZypperPackage(row[0], row[1], no))
                break
    close_info()
    return tuple(out)
