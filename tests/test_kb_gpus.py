"""wizard/kb/gpus.json: schema, internal consistency, and spot checks against the cited sources.

The spot checks are facts read from the tables the entries cite (kernel pciidlist + kfd_device.c,
AMD's rocm_agent_enumerator and GPUOpen device_info, pci.ids, libdrm amdgpu.ids, ROCm GPU specs).
A wrong or shuffled table fails them.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

import wizard

pytestmark = pytest.mark.unit

GPUS_JSON = Path(wizard.__file__).resolve().parent / "kb" / "gpus.json"

ENTRY_KEYS = {"pci_id", "name", "codename", "gfx", "family", "integrated", "sources", "peak_tflops", "note"}
REQUIRED_KEYS = {"pci_id", "name", "gfx", "family", "integrated", "sources"}
FAMILIES = {"GCN5", "RDNA1", "RDNA2", "RDNA3", "RDNA3.5", "RDNA4", "CDNA1", "CDNA2", "CDNA3", "CDNA4"}

# gfx -> family (LLVM AMDGPUUsage processor table; docs/contracts.md family names).
GFX_FAMILY = {
    "gfx900": "GCN5", "gfx902": "GCN5", "gfx904": "GCN5", "gfx906": "GCN5", "gfx90c": "GCN5",
    "gfx908": "CDNA1", "gfx90a": "CDNA2", "gfx942": "CDNA3", "gfx950": "CDNA4",
    "gfx1010": "RDNA1", "gfx1011": "RDNA1", "gfx1012": "RDNA1", "gfx1013": "RDNA1",
    "gfx1030": "RDNA2", "gfx1031": "RDNA2", "gfx1032": "RDNA2", "gfx1033": "RDNA2",
    "gfx1034": "RDNA2", "gfx1035": "RDNA2", "gfx1036": "RDNA2",
    "gfx1100": "RDNA3", "gfx1101": "RDNA3", "gfx1102": "RDNA3", "gfx1103": "RDNA3",
    "gfx1150": "RDNA3.5", "gfx1151": "RDNA3.5", "gfx1152": "RDNA3.5", "gfx1153": "RDNA3.5",
    "gfx1200": "RDNA4", "gfx1201": "RDNA4",
}
# Targets that only exist as APUs (LLVM lists them as "APU").
APU_GFX = {"gfx902", "gfx90c", "gfx1013", "gfx1033", "gfx1035", "gfx1036", "gfx1103",
           "gfx1150", "gfx1151", "gfx1152", "gfx1153"}
# A source that gives a gfx target for a PCI id (directly, or via the CHIP / product name).
GFX_SOURCE_MARKERS = ("DeviceInfo.cpp", "kfd_device.c", "rocm_agent_enumerator", "gpu-arch-specs", "gpu-specs")

PCI_RE = re.compile(r"^1002:[0-9a-f]{4}$")
GFX_RE = re.compile(r"^gfx[0-9a-f]+$")


@lru_cache(maxsize=1)
def _doc() -> dict[str, Any]:
    with GPUS_JSON.open(encoding="utf-8") as f:
        return json.load(f)


def _gpus() -> list[dict[str, Any]]:
    return _doc()["gpus"]


def _by_id() -> dict[str, dict[str, Any]]:
    return {g["pci_id"]: g for g in _gpus()}


def _is_https(s: Any) -> bool:
    return isinstance(s, str) and s.startswith("https://") and " " not in s and len(s) > 12


# --------------------------------------------------------------------------- schema


def test_top_level_shape() -> None:
    doc = _doc()
    assert set(doc) == {"_meta", "gpus"}
    meta = doc["_meta"]
    assert isinstance(meta.get("description"), str) and meta["description"].strip()
    assert meta.get("sources") and all(_is_https(s) for s in meta["sources"])
    assert isinstance(doc["gpus"], list) and len(doc["gpus"]) >= 150


def test_every_entry_matches_the_schema() -> None:
    problems: list[str] = []
    for i, g in enumerate(_gpus()):
        where = f"gpus[{i}] {g.get('pci_id')!r}"
        if not isinstance(g, dict):
            problems.append(f"{where}: not an object")
            continue
        if set(g) - ENTRY_KEYS:
            problems.append(f"{where}: unknown keys {sorted(set(g) - ENTRY_KEYS)}")
        if REQUIRED_KEYS - set(g):
            problems.append(f"{where}: missing keys {sorted(REQUIRED_KEYS - set(g))}")
            continue
        if not isinstance(g["pci_id"], str) or not PCI_RE.match(g["pci_id"]):
            problems.append(f"{where}: pci_id must be lowercase 1002:xxxx")
        if not isinstance(g["name"], str) or not g["name"].strip():
            problems.append(f"{where}: empty name")
        if g.get("codename") is not None and (not isinstance(g["codename"], str) or not g["codename"].strip()):
            problems.append(f"{where}: codename must be a non-empty string or null")
        if g["gfx"] is not None and (not isinstance(g["gfx"], str) or not GFX_RE.match(g["gfx"])):
            problems.append(f"{where}: bad gfx {g['gfx']!r}")
        if g["family"] is not None and g["family"] not in FAMILIES:
            problems.append(f"{where}: unknown family {g['family']!r}")
        if not isinstance(g["integrated"], bool):
            problems.append(f"{where}: integrated must be true/false")
        srcs = g["sources"]
        if not isinstance(srcs, list) or not srcs or not all(_is_https(s) for s in srcs):
            problems.append(f"{where}: sources must be a non-empty list of https URLs")
        elif len(set(srcs)) != len(srcs):
            problems.append(f"{where}: duplicate source URLs")
        if "note" in g and (not isinstance(g["note"], str) or not g["note"].strip()):
            problems.append(f"{where}: note must be a non-empty string")
        peak = g.get("peak_tflops")
        sourced = _doc()["_meta"].get("peak_tflops_sourced", {}).get(g["pci_id"])
        if peak is not None:
            if sourced is None or peak != sourced["fp16"]:
                problems.append(f"{where}: peak_tflops must equal the fp16 figure in _meta.peak_tflops_sourced")
            elif sourced["source"] not in srcs:
                problems.append(f"{where}: peak_tflops source {sourced['source']} missing from sources")
    assert not problems, "\n".join(problems)


def test_pci_ids_are_unique_and_sorted() -> None:
    ids = [g["pci_id"] for g in _gpus()]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    assert not dupes, f"duplicate pci_id: {dupes}"
    assert ids == sorted(ids)


# --------------------------------------------------------------------------- consistency


def test_family_follows_gfx() -> None:
    wrong = [(g["pci_id"], g["gfx"], g["family"]) for g in _gpus()
             if g["gfx"] is not None and GFX_FAMILY.get(g["gfx"]) != g["family"]]
    assert not wrong, wrong


def test_unknown_gfx_is_explained() -> None:
    for g in _gpus():
        if g["gfx"] is None:
            assert g["family"] is None, g["pci_id"]
            assert g.get("note", "").startswith("UNCERTAIN"), g["pci_id"]


def test_integrated_matches_the_target_kind() -> None:
    wrong = []
    for g in _gpus():
        if g["gfx"] is None:
            continue
        expected = g["gfx"] in APU_GFX
        if g["pci_id"] == "1002:74a0":  # MI300A: data-centre APU on the (dGPU) gfx942 target
            expected = True
        if g["integrated"] != expected:
            wrong.append((g["pci_id"], g["gfx"], g["integrated"]))
    assert not wrong, wrong


def test_every_known_gfx_cites_a_table_that_gives_it() -> None:
    missing = [g["pci_id"] for g in _gpus()
               if g["gfx"] is not None and not any(m in s for s in g["sources"] for m in GFX_SOURCE_MARKERS)]
    assert not missing, missing


def test_every_target_and_family_is_covered() -> None:
    present = {g["gfx"] for g in _gpus()}
    assert set(GFX_FAMILY) <= present, sorted(set(GFX_FAMILY) - present)
    assert {g["family"] for g in _gpus()} - {None} == FAMILIES


def test_sourced_peaks_point_at_listed_gpus() -> None:
    peaks = _doc()["_meta"].get("peak_tflops_sourced", {})
    by_id = _by_id()
    for key, value in peaks.items():
        if key == "note":
            continue
        assert key in by_id, key
        assert value["fp16"] > value["fp32"] > 0, key
        assert _is_https(value["source"]), key


# --------------------------------------------------------------------------- spot checks

SPOT = [
    # pci_id, gfx, family, integrated, a word of the name (None: not checked)
    ("1002:744c", "gfx1100", "RDNA3", False, "7900 XTX"),
    ("1002:7448", "gfx1100", "RDNA3", False, "W7900"),
    ("1002:747e", "gfx1101", "RDNA3", False, "7800 XT"),
    ("1002:7460", "gfx1101", "RDNA3", False, "V710"),
    ("1002:7480", "gfx1102", "RDNA3", False, "7600"),
    ("1002:731f", "gfx1010", "RDNA1", False, "5700 XT"),
    ("1002:7340", "gfx1012", "RDNA1", False, "5500"),
    ("1002:7360", "gfx1011", "RDNA1", False, "V520"),
    ("1002:73bf", "gfx1030", "RDNA2", False, "6800 XT"),
    ("1002:73a3", "gfx1030", "RDNA2", False, "W6800"),
    ("1002:73df", "gfx1031", "RDNA2", False, "6700 XT"),
    ("1002:73ff", "gfx1032", "RDNA2", False, "6600"),
    ("1002:743f", "gfx1034", "RDNA2", False, "6500 XT"),
    ("1002:7550", "gfx1201", "RDNA4", False, "9070 XT"),
    ("1002:7551", "gfx1201", "RDNA4", False, "R9700"),
    ("1002:7590", "gfx1200", "RDNA4", False, "9060"),
    ("1002:74a1", "gfx942", "CDNA3", False, "MI300X"),
    ("1002:74a0", "gfx942", "CDNA3", True, "MI300A"),
    ("1002:74a5", "gfx942", "CDNA3", False, "MI325X"),
    ("1002:75a3", "gfx950", "CDNA4", False, "MI355X"),
    ("1002:740c", "gfx90a", "CDNA2", False, "MI250"),
    ("1002:740f", "gfx90a", "CDNA2", False, "MI210"),
    ("1002:738c", "gfx908", "CDNA1", False, "MI100"),
    ("1002:66a1", "gfx906", "GCN5", False, "MI50"),
    ("1002:66af", "gfx906", "GCN5", False, "Radeon VII"),
    ("1002:687f", "gfx900", "GCN5", False, "Vega"),
    ("1002:69af", "gfx904", "GCN5", False, None),
    ("1002:15dd", "gfx902", "GCN5", True, None),
    ("1002:15d8", "gfx902", "GCN5", True, None),  # Picasso: KFD reports gfx902, not gfx909
    ("1002:1636", "gfx90c", "GCN5", True, None),
    ("1002:1638", "gfx90c", "GCN5", True, None),
    ("1002:163f", "gfx1033", "RDNA2", True, None),
    ("1002:1681", "gfx1035", "RDNA2", True, "680M"),
    ("1002:164e", "gfx1036", "RDNA2", True, None),
    ("1002:13c0", "gfx1036", "RDNA2", True, None),
    ("1002:1506", "gfx1036", "RDNA2", True, "610M"),  # Mendocino: KFD reports gfx1036, not gfx1037
    ("1002:13fe", "gfx1013", "RDNA1", True, None),
    ("1002:15bf", "gfx1103", "RDNA3", True, "780M"),
    ("1002:1900", "gfx1103", "RDNA3", True, None),
    ("1002:150e", "gfx1150", "RDNA3.5", True, "890M"),
    ("1002:1586", "gfx1151", "RDNA3.5", True, "8060S"),
    ("1002:1114", "gfx1152", "RDNA3.5", True, "860M"),
    ("1002:1902", "gfx1153", "RDNA3.5", True, None),
]


@pytest.mark.parametrize(("pci_id", "gfx", "family", "integrated", "word"), SPOT, ids=[s[0] for s in SPOT])
def test_spot_check(pci_id: str, gfx: str, family: str, integrated: bool, word: str | None) -> None:
    g = _by_id().get(pci_id)
    assert g is not None, f"{pci_id} missing"
    assert (g["gfx"], g["family"], g["integrated"]) == (gfx, family, integrated)
    if word is not None:
        assert word in g["name"], g["name"]


def test_ids_that_are_not_gpus_are_absent() -> None:
    by_id = _by_id()
    # 0x73c4 is the Navi 22 USB controller in pci.ids; 0x1478/0x1479 are Navi 10 PCIe switch ports.
    for pci_id in ("1002:73c4", "1002:1478", "1002:1479", "1002:15de", "1002:1637"):
        assert pci_id not in by_id
