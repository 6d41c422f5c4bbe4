"""``lspci`` output (plain, ``-nn``, ``-D``, ``-k``, ``-v``/``-vv`` blocks, the machine-readable ``-mm`` lines and
``-vmm`` blocks): display-class devices.

Returns only display controllers (PCI class 03xx: VGA compatible, Display, 3D) plus AMD
"Processing accelerators" (class 12xx); every other device is left out. BDFs are normalised to
``0000:03:00.0`` (domain 0000 when the line has none, which is what ``lspci`` omits).
"""

from __future__ import annotations

import re

from wizard import lazy_re
from wizard.parsers._text import lines, never_raises
from wizard.record import record

# a device's slot at the start of its line: [domain:]bus:device.function
_SLOT = r"^\s*(?P<bdf>(?:(?P<dom>[0-9a-fA-F]{4,8}):)?(?P<bus>[0-9a-fA-F]{2}):(?P<dev>[0-9a-fA-F]{2})\.(?P<fn>[0-7]))"
_DEVICE_RE = lazy_re.compile(
    _SLOT +
    r"\s+(?P<cls>[A-Za-z0-9][^:\[\]]*?)(?:\s*\[(?P<code>[0-9a-fA-F]{4})\])?\s*:\s*(?P<rest>.*?)\s*$"
)
_REV_RE = lazy_re.compile(r"\s*\(rev\s+([0-9a-fA-F]{1,2})\)")
_PROGIF_RE = lazy_re.compile(r"\s*\(prog-if\s+[0-9a-fA-F]{2}(?:\s*\[[^\]]*\])?\)")
_IDS_RE = lazy_re.compile(r"\s*\[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]\s*$")
_DETAIL_RE = lazy_re.compile(r"^\s+(Subsystem|Kernel driver in use|Kernel modules|DeviceName)\s*:\s*(.*?)\s*$")
# The machine-readable layouts (pciutils/pciutils 0f5b941aa5cf8b1b126ff3e4176b1c32b2158289 lspci.c show_machine()):
# -mm prints the slot, then the class, vendor and device names each in double quotes (print_shell_escaped: a quote or
# backslash escaped), " -rXX" for the revision, " -pXX", and the subsystem's two quoted names; with -nn each name ends
# in its "[id]". -vmm prints one "Key:\tvalue" line per field, "Slot:" (-vm: "Device:") first, a blank line between
# devices; -k adds "Driver:" and "Module:" (ls-kernel.c show_kernel_machine()).
_QUOTED = r'"((?:[^"\\]|\\.)*)"'
_MM_RE = lazy_re.compile(
    _SLOT +
    rf"\s+{_QUOTED}\s+{_QUOTED}\s+{_QUOTED}(?:\s+-r([0-9a-fA-F]{{2}}))?(?:\s+-p[0-9a-fA-F]{{2}})?(?:\s+{_QUOTED}\s+{_QUOTED})?\s*$"
)
_VMM_RE = lazy_re.compile(r"^(Slot|Device|Class|Vendor|SVendor|SDevice|Rev|Driver|Module):[ \t]+(\S.*?)\s*$")
_VMM_SLOT_RE = lazy_re.compile(r"^(?:([0-9a-fA-F]{4,8}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$")
_NAME_ID_RE = lazy_re.compile(r"^(.*?)\s*\[([0-9a-fA-F]{4})\]$")
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


def _bdf(dom: str | None, bus: str, dev: str, fn: str) -> str:
    d = (dom or "0000").lower()
    d = d[-4:] if len(d) > 4 and set(d[:-4]) <= {"0"} else d
    return f"{d}:{bus.lower()}:{dev.lower()}.{fn}"


def _name_id(value: str) -> tuple[str, str | None]:
    """"Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M] [744c]" -> (the name, "744c"): -nn's id ends the name."""
    value = value.replace('\\"', '"').replace("\\\\", "\\")
    m = _NAME_ID_RE.match(value)
    return (m.group(1), m.group(2).lower()) if m else (value, None)


def _machine_device(fields: dict[str, str], line: int) -> dict[str, object] | None:
    """One device of the -mm / -vmm layouts, when it is display-class (as _is_wanted says)."""
    slot = _VMM_SLOT_RE.match(fields.get("Slot", ""))
    if slot is None:
        return None
    cls, code = _name_id(fields.get("Class", ""))
    vname, vendor = _name_id(fields.get("Vendor", ""))
    dname, device = _name_id(fields.get("Device", ""))
    name = f"{vname} {dname}".strip()
    if not _is_wanted(cls, code, name, vendor):
        return None
    sv, sd = _name_id(fields.get("SVendor", ""))[0], _name_id(fields.get("SDevice", ""))[0]
    module = fields.get("Module")
    return {"bdf": _bdf(*slot.groups()), "class_name": cls, "class_code": code.lower() if code else None, "name": name,
            "vendor_id": vendor, "device_id": device, "revision": (fields.get("Rev") or "").lower() or None,
            "subsystem": f"{sv} {sd}".strip() or None, "driver": fields.get("Driver"),
            "modules": (module,) if module else (), "line": line}


@never_raises(tuple)
def parse_lspci(text: object) -> tuple[PciDevice, ...]:
    """Display-class devices in text order, deduplicated by BDF (later details fill gaps)."""
    found: list[dict[str, object]] = []
    cur: dict[str, object] | None = None
    block: dict[str, str] = {}  # the -vmm block being read
    block_line = 0
    for no, line in lines(text):
        vm = _VMM_RE.match(line)
        if vm:
            key = "Slot" if vm.group(1) == "Device" and _VMM_SLOT_RE.match(vm.group(2)) else vm.group(1)
            if key == "Slot":
                if block and (dev_ := _machine_device(block, block_line)):
                    found.append(dev_)
                block, block_line = {}, no
            block.setdefault(key, vm.group(2))
            cur = None
            continue
        mm = _MM_RE.match(line)
        if mm:
            g = mm.groups()
            fields = {"Slot": mm.group("bdf"), "Class": g[5], "Vendor": g[6], "Device": g[7], "Rev": g[8] or "",
                      "SVendor": g[9] or "", "SDevice": g[10] or ""}
            if (dev_ := _machine_device(fields, no)):
                found.append(dev_)
            cur = None
            continue
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
    if block and (dev_ := _machine_device(block, block_line)):
        found.append(dev_)
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
