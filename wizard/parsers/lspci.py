"""``lspci`` output (plain, ``-nn``, ``-D``, ``-k``, ``-v``/``-vv`` blocks): display-class devices.

Returns only display controllers (PCI class 03xx: VGA compatible, Display, 3D) plus AMD
"Processing accelerators" (class 12xx); every other device is left out. BDFs are normalised to
``0000:03:00.0`` (domain 0000 when the line has none, which is what ``lspci`` omits).
"""

from __future__ import annotations

import re

from wizard import lazy_re
from wizard.parsers._text import lines, never_raises
from wizard.record import record

_DEVICE_RE = lazy_re.compile(
    r"^\s*(?P<bdf>(?:(?P<dom>[0-9a-fA-F]{4,8}):)?(?P<bus>[0-9a-fA-F]{2}):(?P<dev>[0-9a-fA-F]{2})\.(?P<fn>[0-7]))"
    r"\s+(?P<cls>[A-Za-z0-9][^:\[\]]*?)(?:\s*\[(?P<code>[0-9a-fA-F]{4})\])?\s*:\s*(?P<rest>.*?)\s*$"
)
_REV_RE = lazy_re.compile(r"\s*\(rev\s+([0-9a-fA-F]{1,2})\)")
_PROGIF_RE = lazy_re.compile(r"\s*\(prog-if\s+[0-9a-fA-F]{2}(?:\s*\[[^\]]*\])?\)")
_IDS_RE = lazy_re.compile(r"\s*\[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]\s*$")
_DETAIL_RE = lazy_re.compile(r"^\s+(Subsystem|Kernel driver in use|Kernel modules|DeviceName)\s*:\s*(.*?)\s*$")
_DISPLAY_CLASSES = ("vga compatible controller", "display controller", "3d controller")
_AMD_VENDOR_RE = lazy_re.compile(r"Advanced Micro Devices|\bAMD\b|\bATI\b", re.IGNORECASE)


@record
class PciDevice:
    bdf: str  # "0000:03:00.0"
    class_name: str  # "VGA compatible controller"
    class_code: str | None  # "0300" with -nn
    name: str  # "Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 [Radeon RX 7900 XT/7900 XTX]"
    vendor_id: str | None = None  # "1002" with -nn
    device_id: str | None = None  # "744c" with -nn
    revision: str | None = None  # "c8"
    subsystem: str | None = None
    driver: str | None = None  # "Kernel driver in use"
    modules: tuple[str, ...] = ()
    line: int = 0

    @property
    def pci_id(self) -> str | None:
        if self.vendor_id and self.device_id:
            return f"{self.vendor_id}:{self.device_id}"
        return None

    @property
    def is_amd(self) -> bool:
        if self.vendor_id:
            return self.vendor_id == "1002"
        return bool(_AMD_VENDOR_RE.search(self.name))


def _is_wanted(cls: str, code: str | None, name: str, vendor: str | None) -> bool:
    c = cls.strip().lower()
    if (code and code.startswith("03")) or c in _DISPLAY_CLASSES:
        return True
    if (code and code.startswith("12")) or c.startswith("processing accelerator"):
        return vendor == "1002" if vendor else bool(_AMD_VENDOR_RE.search(name))
    return False


@never_raises(tuple)
def parse_lspci(text: object) -> tuple[PciDevice, ...]:
    """Display-class devices in text order, deduplicated by BDF (later details fill gaps)."""
    found: list[dict[str, object]] = []
    cur: dict[str, object] | None = None
    for no, line in lines(text):
        m = _DEVICE_RE.match(line)
        if m:
            rest = m.group("rest")
            rev = None
            rm = _REV_RE.search(rest)
            if rm:
                rev = rm.group(1).lower()
                rest = rest[: rm.start()] + rest[rm.end() :]
            rest = _PROGIF_RE.sub("", rest).strip()
            vendor = device = None
            im = _IDS_RE.search(rest)
            if im:
                vendor, device = im.group(1).lower(), im.group(2).lower()
                rest = rest[: im.start()].strip()
            code = m.group("code")
            if not _is_wanted(m.group("cls"), code, rest, vendor):
                cur = None
                continue
            dom = (m.group("dom") or "0000").lower()
            dom = dom[-4:] if len(dom) > 4 and set(dom[:-4]) <= {"0"} else dom
            bdf = f"{dom}:{m.group('bus').lower()}:{m.group('dev').lower()}.{m.group('fn')}"
            cur = {
                "bdf": bdf,
                "class_name": m.group("cls").strip(),
                "class_code": code.lower() if code else None,
                "name": rest,
                "vendor_id": vendor,
                "device_id": device,
                "revision": rev,
                "subsystem": None,
                "driver": None,
                "modules": (),
                "line": no,
            }
            found.append(cur)
            continue
        if cur is None:
            continue
        dm = _DETAIL_RE.match(line)
        if dm:
            key, value = dm.group(1), dm.group(2)
            if key == "Subsystem":
                cur["subsystem"] = value or None
            elif key == "Kernel driver in use":
                cur["driver"] = value or None
            elif key == "Kernel modules":
                cur["modules"] = tuple(v.strip() for v in value.split(",") if v.strip())
        elif line.strip() and not line[:1].isspace():
            cur = None  # an unindented non-device line ends the block
    merged: dict[str, dict[str, object]] = {}
    for dev in found:
        prev = merged.get(str(dev["bdf"]))
        if prev is None:
            merged[str(dev["bdf"])] = dev
        else:
            for k, v in dev.items():
                if v and not prev.get(k):
                    prev[k] = v
    return tuple(PciDevice(**d) for d in merged.values())  # type: ignore[arg-type]
