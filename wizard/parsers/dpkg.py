"""Debian package lists: ``dpkg -l`` rows, ``/var/lib/dpkg/status`` stanzas, and
``apt list --installed`` lines."""

from __future__ import annotations

import re

from wizard import lazy_re
from wizard.parsers._text import lines, never_raises
from wizard.record import record

_ROW_RE = lazy_re.compile(r"^([uihrpn][ncHUFWtiR])R?\s+(\S+)\s+(\S+)\s+(\S+)(?:\s+(.*?))?\s*$")
_APT_RE = lazy_re.compile(r"^([a-z0-9][a-z0-9+.-]+)/(\S+)\s+(\S+)\s+(\S+)\s+\[([^\]]*)\]\s*$")
_FIELD_RE = lazy_re.compile(r"^([A-Za-z][A-Za-z0-9-]*):\s*(.*?)\s*$")


@record
class DebPackage:
    name: str  # without ":arch"
    version: str
    arch: str | None
    status: str  # "ii", "rc", ... or the Status field "install ok installed"
    installed: bool
    description: str | None = None
    line: int = 0


def _row(no: int, m: re.Match[str]) -> DebPackage:
    status, name, version, arch, desc = m.groups()
    name = name.split(":", 1)[0]
    return DebPackage(name, version, arch, status, status[1] == "i", desc or None, no)


def _stanza(fields: dict[str, str], no: int) -> DebPackage | None:
    name, version = fields.get("package"), fields.get("version")
    if not name or not version:
        return None
    status = fields.get("status", "")
    installed = status.split()[-1:] == ["installed"] if status else False
    return DebPackage(name, version, fields.get("architecture") or None, status, installed, fields.get("description"), no)


@never_raises(tuple)
def parse_dpkg(text: object) -> tuple[DebPackage, ...]:
    """Packages in text order (any status; filter on ``installed``)."""
    out: list[DebPackage] = []
    stanza: dict[str, str] = {}
    stanza_line = 0
    for no, line in lines(text):
        if not line.strip():
            pkg = _stanza(stanza, stanza_line) if stanza else None
            if pkg:
                out.append(pkg)
            stanza = {}
            continue
        m = _ROW_RE.match(line)
        if m:
            out.append(_row(no, m))
            continue
        m = _APT_RE.match(line.strip())
        if m and "installed" in m.group(5):
            name, _suites, version, arch, flags = m.groups()
            out.append(DebPackage(name, version, arch, flags, True, None, no))
            continue
        if line[:1].isspace():
            continue  # stanza continuation (Description body, Conffiles)
        m = _FIELD_RE.match(line)
        if m:
            key = m.group(1).lower()
            if key == "package" and stanza.get("package"):
                pkg = _stanza(stanza, stanza_line)
                if pkg:
                    out.append(pkg)
                stanza = {}
            if key == "package":
                stanza_line = no
            stanza.setdefault(key, m.group(2))
    if stanza:
        pkg = _stanza(stanza, stanza_line)
        if pkg:
            out.append(pkg)
    return tuple(out)
