"""amdgpu / kfd kernel log lines (``dmesg``, ``journalctl -k``): versions, VRAM, errors, faults.

Timestamps (``[    7.077902]``), syslog/journal prefixes (``Feb 25 19:15:03 host kernel:``) and
ISO stamps are removed first; the BDF is read from ``amdgpu 0000:03:00.0:``.
"""

from __future__ import annotations

import re

from wizard import lazy_re
from wizard.parsers._text import lines, never_raises
from wizard.record import record

# dmesg's own stamps besides "[    7.077902]" (util-linux/util-linux 39465c780eed56034ed1440068a2722fc3331343
# sys-utils/dmesg.c): -T / --ctime's "[%a %b %e %H:%M:%S %Y] " ("[Sat Nov 29 10:00:02 2025] "), --time-format=iso's
# "2025-11-29T10:00:02,123456+00:00 " (ISO_TIMESTAMP_COMMA_T)
DMESG_CTIME = r"\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\]"
DMESG_ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d,\d{6}[+-]\d\d:\d\d"
_PREFIX_RE = lazy_re.compile(
    r"^\s*(?:<\d+>)?"
    r"(?:\d{4}-\d\d-\d\dT[\d:.,+-]+\s+\S+\s+kernel:\s*|[A-Z][a-z]{2}\s+\d+\s+[\d:]+\s+\S+\s+kernel:\s*"
    rf"|{DMESG_CTIME}\s*|{DMESG_ISO}\s+)?"
    r"(?:\[\s*[\d.]+\]\s*)?(?:kernel:\s*)?"
)
_BDF_RE = lazy_re.compile(r"\b(?:amdgpu|\[drm\])\s+([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])")
_RULES: tuple[tuple[str, lazy_re.Pattern], ...] = tuple(
    (kind, lazy_re.compile(rx, re.IGNORECASE))
    for kind, rx in (
        ("amdgpu_version", r"\[drm\] amdgpu version:\s*(\S+)"),
        ("ip_discovery", r"initializing kernel modesetting \((?:IP DISCOVERY|[A-Z0-9_]+)\s+0x([0-9a-f]{4}):0x([0-9a-f]{4})"),
        ("kfd_added", r"kfd kfd: (?:amdgpu: )?added device ([0-9a-f]{4}:[0-9a-f]{4})"),
        ("kfd_skipped", r"kfd kfd: (?:amdgpu: )?skipped device ([0-9a-f]{4}:[0-9a-f]{4})(.*)"),
        ("vram", r"(?:amdgpu: (\d+)M of VRAM memory ready|Detected VRAM RAM=(\d+)M|VRAM:\s*(\d+)M)"),
        ("firmware_missing", r"(?:Direct firmware load for (\S+) failed|failed to load firmware\s*(\S*)|firmware\S* not found)"),
        ("fatal", r"Fatal error during GPU init|amdgpu: probe of \S+ failed|amdgpu_device_ip_init failed"),
        ("ring_timeout", r"ring (\S+) timeout"),
        ("page_fault", r"\[(\w+hub\d*)\] (?:retry |no-retry )?page fault"),
        ("gpu_reset", r"GPU reset begin|GPU reset succeeded|GPU reset\(\d+\) (?:succeeded|failed)|VRAM is lost"),
        ("error", r"\*ERROR\*|amdgpu: .*\bfailed\b"),
    )
)


@record
class DmesgEvent:
    kind: str  # one of the rule names above
    text: str  # the message with its timestamp/prefix removed
    line: int
    bdf: str | None = None  # "0000:03:00.0" when the line names one
    detail: str | None = None  # version, "1002:744c", ring name, VRAM MB, firmware file, hub...


@record
class Dmesg:
    events: tuple[DmesgEvent, ...] = ()

    def of(self, kind: str) -> tuple[DmesgEvent, ...]:
        return tuple(e for e in self.events if e.kind == kind)

    @property
    def amdgpu_version(self) -> str | None:
        found = self.of("amdgpu_version")
        return found[0].detail if found else None

    @property
    def kfd_devices(self) -> tuple[str, ...]:
        return tuple(e.detail for e in self.of("kfd_added") if e.detail)


@never_raises(Dmesg)
def parse_dmesg(text: object) -> Dmesg:
    events: list[DmesgEvent] = []
    for no, line in lines(text):
        if "amdgpu" not in line and "kfd" not in line and "drm" not in line.lower():
            continue
        msg = _PREFIX_RE.sub("", line, count=1).strip()
        bm = _BDF_RE.search(msg)
        bdf = bm.group(1).lower() if bm else None
        for kind, rx in _RULES:
            m = rx.search(msg)
            if not m:
                continue
            groups = [g for g in m.groups() if g]
            if kind == "ip_discovery" and len(groups) >= 2:
                detail: str | None = f"{groups[0].lower()}:{groups[1].lower()}"
            elif kind == "kfd_skipped":
                detail = groups[0].lower() if groups else None
            else:
                detail = groups[0] if groups else None
            events.append(DmesgEvent(kind, msg, no, bdf, detail))
            break
    return Dmesg(tuple(events))
