from __future__ import annotations

import json
from pathlib import Path

import pytest

from wizard.parsers.amd_smi import parse_amd_smi

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data" / "parsers" / "amd_smi"


def test_static_sections() -> None:
    (gpu,) = parse_amd_smi((DATA / "static_mi350x.txt").read_text()).gpus
    assert gpu.market_name == "AMD Instinct MI350X" and gpu.gfx == "gfx950"
    assert gpu.bdf == "0000:05:00.0" and gpu.device_id == "75a0"
    assert (gpu.driver_name, gpu.driver_version) == ("amdgpu", "6.18.3")
    assert dict(gpu.fields)["IFWI.VERSION"] == "00154951"  # not mistaken for the driver's


def test_list_then_static_and_other_devices_ignored() -> None:
    r = parse_amd_smi((DATA / "list_static_mi210.txt").read_text())
    (gpu,) = r.gpus
    assert gpu.bdf == "0000:23:00.0" and gpu.kfd_id == 63484 and gpu.node_id == 2
    assert gpu.market_name == "AMD Instinct MI210" and gpu.device_id == "740f"
    assert "PERMANENT_ADDRESS" not in dict(gpu.fields)


def test_vram_and_version_line() -> None:
    text = (
        "AMDSMI Tool: 24.6.3+9578815 | AMDSMI Library version: 24.6.3.0 | ROCm version: 6.2.4\n"
        "GPU: 1\n    VRAM:\n        TYPE: GDDR6\n        SIZE: 24560 MB\n"
    )
    r = parse_amd_smi(text)
    assert (r.tool_version, r.library_version, r.rocm_version) == ("24.6.3+9578815", "24.6.3.0", "6.2.4")
    (gpu,) = r.gpus
    assert gpu.index == 1 and gpu.vram_size_mb == 24560 and gpu.vram_bytes == 24560 * 2**20


def test_json_forms() -> None:
    item = {
        "gpu": 0,
        "asic": {"market_name": "Radeon RX 7900 XTX", "target_graphics_version": "gfx1100", "device_id": "0x744c"},
        "bus": {"bdf": "0000:03:00.0"},
        "driver": {"name": "amdgpu", "version": "6.8.5"},
        "vram": {"size": {"value": 24560, "unit": "MB"}},
    }
    for doc in ([item], {"gpu_data": [item]}):
        (gpu,) = parse_amd_smi(json.dumps(doc)).gpus
        assert (gpu.gfx, gpu.bdf, gpu.device_id, gpu.vram_size_mb, gpu.driver_version) == (
            "gfx1100", "0000:03:00.0", "744c", 24560, "6.8.5",
        )
