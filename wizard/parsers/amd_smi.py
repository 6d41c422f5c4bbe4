"""``amd-smi static`` / ``amd-smi list`` / ``amd-smi version`` / bare ``amd-smi`` output, as text, JSON or CSV.

Text is indented ``KEY: value`` lines under ``GPU: N`` and section headers (``ASIC:``, ``BUS:``,
``DRIVER:``, ``VRAM:``...). Bare ``amd-smi`` (ROCm 6.4+) prints a boxed table instead: a header
``| AMD-SMI 26.2.0+...  amdgpu version: 6.16.6  ROCm version: 7.1.1 |``, then per GPU a row
``| 0000:04:00.0  AMD Radeon RX 9070 XT | ...`` and under it ``|   0       0     N/A     N/A | ...``
(GPU index, HIP index, OAM id, partition mode). VRAM ``SIZE`` is printed in MB; amd-smi computes it as bytes / 2**20,
so ``vram_bytes`` multiplies back by 2**20.
"""

from __future__ import annotations

import csv
import re

from wizard import lazy_re
from wizard.parsers._text import json_payload, lines, never_raises, none_if_na, to_text
from wizard.record import record

_GPU_RE = lazy_re.compile(r"^\s*GPU\s*:\s*(\d+)\s*$")
_OTHER_DEVICE_RE = lazy_re.compile(r"^\s*(?:CPU|CORE|AI_NIC|NIC|SWITCH)\s*:\s*\d+\s*$")
_SECTION_RE = lazy_re.compile(r"^\s*([A-Z][A-Z0-9_ ]*):\s*$")
_KV_RE = lazy_re.compile(r"^\s*([A-Z][A-Z0-9_]*)\s*:\s*(.*?)\s*$")
_VERSION_PART_RE = lazy_re.compile(r"^\s*([A-Za-z][A-Za-z \t]*):(.*)$")  # key and value stripped by _version_key
_SIZE_RE = lazy_re.compile(r"^\s*(\d+)\s*(MB|MiB|GB|KB)?\s*$", re.IGNORECASE)
# not model.GFX_TARGET: the SMI tools' "GFX Version" is the runtime's version in digits, which is not always a target's
# name (rocm-smi prints gfx9010 for an MI200's gfx90a)
_GFX_RE = lazy_re.compile(r"\bgfx[0-9a-f]{3,4}\b")
# bare `amd-smi`: the boxed header with the tool's, the driver's and ROCm's versions; a GPU's two rows
_BOX_HEADER_RE = lazy_re.compile(r"^\|\s*AMD-SMI\s+(?P<tool>\d\S*)\s+amdgpu version:\s*(?P<amdgpu>\S+)"
                                 r"\s+ROCm version:\s*(?P<rocm>\S+)")
_BOX_GPU_RE = lazy_re.compile(r"^\|\s*(?P<bdf>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(?P<name>\S[^|]*?)\s*\|")
_BOX_INDEX_RE = lazy_re.compile(r"^\|\s*(?P<gpu>\d+)\s+(?P<hip>\d+|N/A)\s")
# --csv: csv.DictWriter's header of the flattened keys, "gpu" first (no section prefix: AmdSmiLogger.flatten_dict), then
# one row per GPU (ROCm/amdsmi 0ceca28f4139dced5e9b5739a3f393780d7add48 amdsmi_cli/amdsmi_logger.py, _print_csv_output)
_CSV_HEADER_RE = lazy_re.compile(r"^gpu,[a-z0-9_,]*\b(?:market_name|target_graphics_version|bdf|device_id)\b"
                                 # `amd-smi version --csv`: the version command's keys (amdsmi_cli/amdsmi_commands.py version())
                                 r"|^tool,version,amdsmi_library_version\b")
_CSV_ROW_RE = lazy_re.compile(r"^\d+,")


def _version_key(key: str) -> str:
    """``ROCm version`` -> ``ROCm``; ``Version`` stays (in code: the pattern's ``\\s*(?:version)?\\s*`` was cubic)."""
    key = key.strip()
    if key.lower().endswith("version") and key[:-7].strip():
        return key[:-7].rstrip()
    return key


@record
class AmdSmiGpu:
    index: int
    bdf: str | None = None
    market_name: str | None = None
    gfx: str | None = None  # TARGET_GRAPHICS_VERSION
    device_id: str | None = None  # "744c"
    vram_size_mb: int | None = None
    driver_name: str | None = None
    driver_version: str | None = None
    uuid: str | None = None
    kfd_id: int | None = None
    node_id: int | None = None
    fields: tuple[tuple[str, str], ...] = ()  # "SECTION.KEY" (or "KEY") -> value

    @property
    def vram_bytes(self) -> int | None:
        return self.vram_size_mb * 2**20 if self.vram_size_mb is not None else None


@record
class AmdSmi:
    gpus: tuple[AmdSmiGpu, ...] = ()
    tool_version: str | None = None
    library_version: str | None = None
    rocm_version: str | None = None
    amdgpu_version: str | None = None  # "amdgpu version" in newer `amd-smi version`


def _int(value: str | None, base: int = 10) -> int | None:
    try:
        return int(str(value).strip(), base) if value is not None else None
    except ValueError:
        return None


def _build(index: int, fields: list[tuple[str, str]]) -> AmdSmiGpu:
    d: dict[str, str] = {}
    for k, v in fields:
        d.setdefault(k.upper(), v)

    def get(*keys: str) -> str | None:
        for k in keys:
            v = none_if_na(d.get(k))
            if v is not None:
                return v
        return None

    gm = _GFX_RE.search(get("ASIC.TARGET_GRAPHICS_VERSION", "TARGET_GRAPHICS_VERSION") or "")
    dev = get("ASIC.DEVICE_ID", "DEVICE_ID")
    dev_id = None
    if dev and re.fullmatch(r"0x[0-9a-fA-F]{1,4}", dev):
        dev_id = f"{int(dev, 16):04x}"
    size = get("VRAM.SIZE", "VRAM.VRAM_SIZE")
    sm = _SIZE_RE.match(size or "")
    mb = None
    if sm:
        n, unit = int(sm.group(1)), (sm.group(2) or "MB").upper()
        mb = n * 1024 if unit == "GB" else n // 1024 if unit == "KB" else n
    return AmdSmiGpu(
        index=index,
        bdf=(get("BUS.BDF", "BDF") or "").lower() or None,
        market_name=get("ASIC.MARKET_NAME", "MARKET_NAME"),
        gfx=gm.group(0) if gm else None,
        device_id=dev_id,
        vram_size_mb=mb,
        driver_name=get("DRIVER.NAME"),
        driver_version=get("DRIVER.VERSION", "DRIVER.DRIVER_VERSION"),
        uuid=get("UUID"),
        kfd_id=_int(get("KFD_ID")),
        node_id=_int(get("NODE_ID")),
        fields=tuple(fields),
    )


def _flatten(prefix: str, value: object, out: list[tuple[str, str]]) -> None:
    if isinstance(value, dict):
        if set(value) >= {"value", "unit"}:
            out.append((prefix, f"{value['value']} {value['unit']}"))
            return
        for k, v in value.items():
            _flatten(f"{prefix}.{k}".upper() if prefix else str(k).upper(), v, out)
    elif not isinstance(value, list):
        out.append((prefix, "" if value is None else str(value)))


def _versions(pairs: dict[str, str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for key, value in pairs.items():
        k = key.lower().replace("_", " ").strip()
        if k in ("amdsmi tool", "tool"):
            out["tool"] = value
        elif k in ("amdsmi library", "amdsmi library version", "library", "amdsmi lib"):
            out["library"] = value
        elif k in ("rocm", "rocm version"):
            out["rocm"] = value
        elif k in ("amdgpu", "amdgpu version"):
            out["amdgpu"] = value
    return out


def _from_json(text: str) -> AmdSmi | None:
    data = json_payload(text)
    if data is None:
        return None
    items: list[object] = []
    versions: dict[str, str | None] = {}
    if isinstance(data, dict):
        for key in ("gpu_data", "gpus", "data"):
            if isinstance(data.get(key), list):
                items = data[key]
                break
        else:
            items = [data] if "gpu" in data else []
        versions = _versions({str(k): str(v) for k, v in data.items() if not isinstance(v, (dict, list))})
    elif isinstance(data, list):
        items = data
        for entry in data:
            if isinstance(entry, dict) and "gpu" not in entry:
                versions.update(_versions({str(k): str(v) for k, v in entry.items()}))
    gpus = []
    for item in items:
        if not isinstance(item, dict) or "gpu" not in item:
            continue
        idx = _int(str(item.get("gpu")))
        if idx is None:
            continue
        fields: list[tuple[str, str]] = []
        _flatten("", {k: v for k, v in item.items() if k != "gpu"}, fields)
        gpus.append(_build(idx, fields))
    return AmdSmi(tuple(gpus), versions.get("tool"), versions.get("library"), versions.get("rocm"), versions.get("amdgpu"))


@never_raises(AmdSmi)
def parse_amd_smi(text: object) -> AmdSmi:
    raw = to_text(text)
    parsed = _from_json(raw)
    if parsed is not None:
        return parsed
    gpus: dict[int, list[tuple[str, str]]] = {}
    cur: int | None = None
    section = ""
    versions: dict[str, str | None] = {}
    box: list[tuple[str, str]] = []  # bare `amd-smi`: (bdf, name) in the order listed
    box_index: dict[int, int] = {}  # row of `box` -> its GPU index
    csv_columns: list[str] = []
    for _no, line in lines(raw):
        s = line.strip()
        if not s:
            continue
        if _CSV_HEADER_RE.match(s):
            csv_columns = [c.strip().upper() for c in next(csv.reader([s]), [])]
            continue
        if csv_columns[:1] == ["TOOL"]:
            cells = next(csv.reader([s]), [])
            if len(cells) == len(csv_columns):
                pairs = {k.lower(): v for k, v in zip(csv_columns, cells)}
                found = {"tool": pairs.get("version"), "library": pairs.get("amdsmi_library_version"),
                         "rocm": pairs.get("rocm_version"), "amdgpu": pairs.get("amdgpu_version")}
                versions.update({k: v for k, v in found.items() if none_if_na(v)})
            csv_columns = []
            continue
        if csv_columns and _CSV_ROW_RE.match(s):
            cells = next(csv.reader([s]), [])
            if len(cells) == len(csv_columns):
                gpus.setdefault(int(cells[0]), []).extend(zip(csv_columns[1:], cells[1:]))
            continue
        bm = _BOX_HEADER_RE.match(s)
        if bm:
            versions.update(tool=bm.group("tool"), amdgpu=none_if_na(bm.group("amdgpu")), rocm=none_if_na(bm.group("rocm")))
            continue
        bm = _BOX_GPU_RE.match(s)
        if bm:
            box.append((bm.group("bdf").lower(), bm.group("name")))
            continue
        bm = _BOX_INDEX_RE.match(s)
        if bm and box and len(box) - 1 not in box_index:
            box_index[len(box) - 1] = int(bm.group("gpu"))
            continue
        if "|" in s and ":" in s and ("ROCm" in s or "AMDSMI" in s.upper()):
            pairs = {}
            for part in s.split("|"):
                pm = _VERSION_PART_RE.match(part)
                if pm:
                    pairs[_version_key(pm.group(1))] = pm.group(2).strip()
            versions.update({k: v for k, v in _versions(pairs).items() if v})
            continue
        m = _GPU_RE.match(s)
        if m:
            cur, section = int(m.group(1)), ""
            gpus.setdefault(cur, [])
            continue
        if _OTHER_DEVICE_RE.match(s):
            cur = None
            continue
        if cur is None:
            continue
        m = _SECTION_RE.match(line)
        if m and line[:1].isspace():
            section = m.group(1).strip().replace(" ", "_")
            continue
        m = _KV_RE.match(line)
        if m:
            key = m.group(1)
            indent = len(line) - len(line.lstrip())
            if section and indent <= 4 and key in ("BDF", "UUID", "KFD_ID", "NODE_ID", "PARTITION_ID"):
                section = ""  # `amd-smi list` keys sit directly under GPU
            gpus[cur].append((f"{section}.{key}" if section else key, m.group(2)))
    for row, (bdf, name) in enumerate(box):
        index = box_index.get(row, row)
        if index not in gpus:
            gpus[index] = [("BDF", bdf), ("MARKET_NAME", name)]
    return AmdSmi(
        tuple(_build(i, gpus[i]) for i in sorted(gpus)),
        versions.get("tool"),
        versions.get("library"),
        versions.get("rocm"),
        versions.get("amdgpu"),
    )
