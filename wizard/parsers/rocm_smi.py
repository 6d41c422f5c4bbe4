"""``rocm-smi`` output: the concise table and the per-GPU ``GPU[N] : key: value`` lines printed by
``--showproductname``, ``--showmeminfo vram``, ``--showbus``, ``--showid``, ``--showdriverversion``
and ``-a``; ``--csv`` (a ``device,<field>,...`` header, then ``card0,...`` rows and a ``system`` or
``cardsystem`` row for the driver); also JSON pastes (``{"card0": {...}}``)."""

from __future__ import annotations

import csv
import re

from wizard import lazy_re
from wizard.parsers._text import json_payload, lines, never_raises, none_if_na, to_text
from wizard.record import record

_GPU_KV_RE = lazy_re.compile(r"^\s*GPU\[(\d+)\]\s*:\s*(.*?)\s*:\s*(.*?)\s*$")
_DRIVER_RE = lazy_re.compile(r"^\s*Driver version\s*:\s*(\S+)", re.IGNORECASE)
_LIBRARY_STATUS_RE = lazy_re.compile(r"^\s*GPU\[\d+\]\s*:\s*(?:[\w ]+,\s*)?Not supported on the given system\s*$")
# a section's heading between rules of "=" ("===== Version of System Component =====")
_SECTION_RE = lazy_re.compile(r"^=+\s*(\S.*?)\s*=+$")
_ROW_RE = lazy_re.compile(r"^\s*(\d+)\s+(\S.*)$")
_DEVICE_ID_RE = lazy_re.compile(r"\b0x([0-9a-fA-F]{4})\b")
# not model.GFX_TARGET: the SMI tools' "GFX Version" is the runtime's version in digits, which is not always a target's
# name (rocm-smi prints gfx9010 for an MI200's gfx90a)
_GFX_RE = lazy_re.compile(r"\bgfx[0-9a-f]{3,4}\b")
_BUS_RE = lazy_re.compile(r"^(?:([0-9a-fA-F]{4,8}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$")
# rocm-smi 6.x concise rows, recognised even when the header was cut: "0  [0x0518 : 0xc0]  ..."
# ([Model : Revision], the model being the board's subsystem id) and "0  1  0x744c,  12345 ...".
_MODEL_ROW_RE = lazy_re.compile(r"^\s*(\d+)\s+(?:\d+\s+)?\[0x([0-9a-fA-F]{1,4})\s*:\s*0x([0-9a-fA-F]{1,2})\]")
_DID_ROW_RE = lazy_re.compile(r"^\s*(\d+)\s+\d+\s+0x([0-9a-fA-F]{4}),")
_HEX4_RE = lazy_re.compile(r"^[0-9a-fA-F]{4}$")
# --csv: "device,Card series,Card model,..." then one row per card ("card0,...") and the system's ("cardsystem,...")
_CSV_HEADER_RE = lazy_re.compile(r"^\s*device\s*,\s*\S", re.IGNORECASE)
_CSV_ROW_RE = lazy_re.compile(r"^\s*card(\d+|system)\s*,|^\s*(system)\s*,")
_HEADER_WORDS = ("GPU", "Device")


@record
class SmiGpu:
    index: int
    card_series: str | None = None  # "Navi 31 [Radeon RX 7900 XT/7900 XTX]"
    card_model: str | None = None
    card_vendor: str | None = None
    card_sku: str | None = None
    gfx_version: str | None = None  # "gfx1100"
    device_id: str | None = None  # "744c"
    vram_total_bytes: int | None = None
    vram_used_bytes: int | None = None
    bus: str | None = None  # "0000:03:00.0"
    unique_id: str | None = None
    vbios: str | None = None
    node_id: int | None = None
    name: str | None = None  # the concise table's (often truncated) device name column
    fields: tuple[tuple[str, str], ...] = ()  # every "key: value" for this GPU, keys lower-cased


@record
class RocmSmi:
    gpus: tuple[SmiGpu, ...] = ()
    driver_version: str | None = None
    # the "Driver version" line stood under the "Version of System Component" heading: that heading is the
    # library-based rocm-smi's (ROCm/rocm_smi_lib python_smi_tools/rocm_smi.py, from 2b90925, rocm-3.9.0), which
    # exits before any output unless amdgpu is initialised (initializeRsmi at a1295714f2f6: /sys/module/amdgpu/initstate
    # "live", from rocm-4.1.0; before that rsmi_init fails without KFD's topology). The deprecated standalone rocm-smi
    # (ROCm/ROC-smi rocm_smi.py) printed the line with no heading, falling back to the kernel release without the
    # driver, so the bare line does not say it.
    driver_component: bool = False
    # a GPU[N] line with the status text of rocm_smi_lib's library (rsmi_status_verbose_err_out: "Not supported on the
    # given system"): the library-based rocm-smi answered for that device, which it does only with amdgpu initialised
    library_answered: bool = False
    messages: tuple[str, ...] = ()  # WARNING/ERROR lines


def _key(raw: object) -> str:
    """A field's key as the reader names it: lower-cased, except that rocm-smi's "Card Model" (capital M) is the PCI
    device id. ROCm/rocm_smi_lib python_smi_tools/rocm_smi.py showProduct prints 'Card Model' from getDRMDeviceId
    ("0x744c") since 4b5ccb5 (2024-01-31, "Align all device identifier details"), as --showid's 'Device ID'; before
    it, 'Card model' (small m, 8f9f943) was rsmi_dev_subsystem_name_get's, the board's subsystem ("0x0e3a")."""
    key = str(raw).strip().rstrip(":")
    return "device id" if key == "Card Model" else key.lower()


# Keys only the library-based rocm-smi prints, in these cases: rocm_smi_lib 4b5ccb5 (2024-01-31) gave showProduct
# 'Card Series', 'Card Model', 'Card Vendor', 'Node ID', 'GUID', 'GFX Version'. That rocm-smi prints nothing for a GPU
# unless amdgpu is initialised (initializeRsmi at a1295714f2f6: "Driver not initialized (amdgpu not found in
# modules)" and exit otherwise), so a GPU's line keyed so says the driver is loaded.
_LIBRARY_KEYS = frozenset({"Card Series", "Card Model", "Card Vendor", "Node ID", "GUID", "GFX Version"})


def _library_key(raw: object) -> bool:
    return str(raw).strip().rstrip(":").strip() in _LIBRARY_KEYS


def _int(value: str | None) -> int | None:
    try:
        return int(str(value).strip()) if value is not None else None
    except ValueError:
        return None


def _bus(value: str | None) -> str | None:
    m = _BUS_RE.match((value or "").strip())
    if not m:
        return None
    dom = (m.group(1) or "0000").lower()
    return f"{dom}:{m.group(2).lower()}:{m.group(3).lower()}.{m.group(4)}"


def _build(index: int, fields: list[tuple[str, str]], table_id: str | None) -> SmiGpu:
    d: dict[str, str] = {}
    for k, v in fields:
        d.setdefault(k, v)

    def get(*keys: str) -> str | None:
        for k in keys:
            v = none_if_na(d.get(k))
            if v is not None:
                return v
        return None

    gfx = get("gfx version")
    gm = _GFX_RE.search(gfx or "")
    dev = get("gpu id", "device id")
    dm = _DEVICE_ID_RE.search(dev or "")
    return SmiGpu(
        index=index,
        card_series=get("card series"),
        card_model=get("card model"),
        card_vendor=get("card vendor"),
        card_sku=get("card sku"),
        gfx_version=gm.group(0) if gm else None,
        device_id=dm.group(1).lower() if dm else table_id,
        vram_total_bytes=_int(get("vram total memory (b)")),
        vram_used_bytes=_int(get("vram total used memory (b)")),
        bus=_bus(get("pci bus")),
        unique_id=get("unique id"),
        vbios=get("vbios version"),
        node_id=_int(get("node id")),
        name=get("device name", "name"),
        fields=tuple(fields),
    )


def _from_json(text: str) -> RocmSmi | None:
    data = json_payload(text)
    if not isinstance(data, dict):
        return None
    gpus: list[SmiGpu] = []
    driver = None
    library = False
    for key, value in data.items():
        if not isinstance(value, dict):
            continue
        m = re.fullmatch(r"card(\d+)", str(key))
        if m:
            library = library or any(_library_key(k) for k in value)
            fields = [(_key(k), str(v)) for k, v in value.items()]
            gpus.append(_build(int(m.group(1)), fields, None))
        elif str(key).lower() == "system":
            driver = none_if_na(str(value.get("Driver version", ""))) or driver
    return RocmSmi(tuple(gpus), driver, library_answered=library, messages=())


def _csv_cells(line: str) -> list[str]:
    return next(csv.reader([line]), [])


@never_raises(RocmSmi)
def parse_rocm_smi(text: object) -> RocmSmi:
    raw = to_text(text)
    parsed = _from_json(raw)
    if parsed is not None:
        return parsed
    per_gpu: dict[int, list[tuple[str, str]]] = {}
    table_ids: dict[int, str] = {}
    driver: str | None = None
    driver_component = False
    library_answered = False
    section: str | None = None
    messages: list[str] = []
    in_table = False
    did_col: int | None = None
    columns: dict[str, int] = {}
    last_row: int | None = None
    csv_columns: list[str] | None = None
    for _no, line in lines(raw):
        s = line.strip()
        if not s:
            continue
        if set(s) <= {"=", "-", " "} or "End of ROCm SMI Log" in s:
            in_table = False if "End of" in s else in_table
            section = None if "=" in s else section
            continue
        sm = _SECTION_RE.match(s)
        if sm:
            section = sm.group(1).lower()
        if "WARNING" in s or "ERROR" in s:
            messages.append(s)
        if _CSV_HEADER_RE.match(s):
            csv_columns = [_key(c) for c in _csv_cells(s)[1:]]
            library_answered = library_answered or any(_library_key(c) for c in _csv_cells(s)[1:])
            continue
        csv_row = _CSV_ROW_RE.match(s) if csv_columns is not None else None
        if csv_row and csv_columns is not None:
            row_fields = list(zip(csv_columns, (c.strip() for c in _csv_cells(s)[1:])))
            card = csv_row.group(1) or csv_row.group(2)
            if card.isdigit():
                per_gpu.setdefault(int(card), []).extend(row_fields)
            else:
                driver = driver or next((none_if_na(v) for k, v in row_fields if k == "driver version"), None)
            continue
        if _LIBRARY_STATUS_RE.match(line):
            library_answered = True
            continue
        m = _GPU_KV_RE.match(line)
        if m:
            library_answered = library_answered or _library_key(m.group(2))
            key = _key(m.group(2))
            value = m.group(3)
            if key == "driver version" and not driver:
                driver = none_if_na(value)
            per_gpu.setdefault(int(m.group(1)), []).append((key, value))
            continue
        m = _DRIVER_RE.match(s)
        if m:
            if not driver and none_if_na(m.group(1)):
                driver = none_if_na(m.group(1))
                driver_component = section == "version of system component"
            continue
        mm = _MODEL_ROW_RE.match(line) or _DID_ROW_RE.match(line)
        if mm:
            idx = int(mm.group(1))
            row = per_gpu.setdefault(idx, [])
            if mm.re is _MODEL_ROW_RE.compiled:
                row += [("model", "0x" + mm.group(2).lower()), ("device rev", "0x" + mm.group(3).lower())]
            else:
                table_ids.setdefault(idx, mm.group(2).lower())
            last_row = idx
            continue
        if last_row is not None and line[:1].isspace() and not _ROW_RE.match(s) and ":" not in s:
            per_gpu[last_row].append(("name", s))  # the wrapped name column under a row
            last_row = None
            continue
        last_row = None
        if s.split(None, 1)[0] in _HEADER_WORDS and any(w in s.split() for w in ("Temp", "SCLK", "Node", "DID", "BUS")):
            in_table = True
            header = s.split()
            did_col = header.index("DID") if "DID" in header else None
            # character offsets of the columns a row can fill by position
            columns = {name: m.start() for name in ("VBIOS", "BUS") for m in [re.search(rf"\b{name}\b", line)] if m}
            continue
        if in_table:
            rm = _ROW_RE.match(s)
            if rm:
                idx = int(rm.group(1))
                per_gpu.setdefault(idx, [])
                dm = _DEVICE_ID_RE.search(rm.group(2))
                cells = s.split()
                if dm:
                    table_ids.setdefault(idx, dm.group(1).lower())
                elif did_col is not None and did_col < len(cells) and _HEX4_RE.match(cells[did_col]):
                    table_ids.setdefault(idx, cells[did_col].lower())
                for name, offset in columns.items():
                    cm = lazy_re.compile(r"\S+").match(line, offset) if offset < len(line) else None
                    if cm and (offset == 0 or line[offset - 1].isspace()):
                        per_gpu[idx].append(("pci bus" if name == "BUS" else "vbios version", cm.group(0)))
    gpus = tuple(_build(i, per_gpu[i], table_ids.get(i)) for i in sorted(per_gpu))
    return RocmSmi(gpus, driver, driver_component, library_answered, tuple(messages))
