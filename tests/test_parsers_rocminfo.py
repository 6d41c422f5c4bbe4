from __future__ import annotations

from pathlib import Path

import pytest

from wizard.parsers.rocminfo import parse_rocminfo

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data" / "parsers" / "rocminfo"


def test_header_and_cpu_agent_cut_mid_agent() -> None:
    info = parse_rocminfo((DATA / "ryzen7800x3d_head.txt").read_text())
    assert info.rock_loaded is True and info.rock_version is None
    assert info.runtime_version == "1.15" and info.runtime_ext_version == "1.7"
    (cpu,) = info.agents
    assert cpu.index == 1 and cpu.device_type == "CPU" and not cpu.is_gpu
    assert cpu.name == "AMD Ryzen 7 7800X3D 8-Core Processor"
    assert cpu.compute_units == 16 and cpu.pci_device_id is None and cpu.bus_devfn is None
    assert cpu.gfx is None and info.gpus == () and not info.done


def test_gpu_agent_after_isa_tail() -> None:
    info = parse_rocminfo((DATA / "two_7900xtx_agent3.txt").read_text())
    (gpu,) = info.agents
    assert gpu.index == 3 and gpu.is_gpu
    assert gpu.gfx == "gfx1100" and gpu.marketing_name == "Radeon RX 7900 XTX"
    assert gpu.uuid == "GPU-398a3f843a146602" and gpu.node == 2
    assert gpu.chip_id == 29772 and gpu.pci_device_id == "744c"
    assert gpu.bdfid == 2304 and gpu.bus_devfn == "09:00.0"
    assert gpu.compute_units == 96


def test_padded_agent_without_header() -> None:
    info = parse_rocminfo((DATA / "7900xtx_padded.txt").read_text())
    (gpu,) = info.agents
    assert gpu.index is None and gpu.gfx == "gfx1100" and gpu.node == 1
    assert gpu.bus_devfn == "23:00.0" and gpu.vendor_name == "AMD"


def test_pools() -> None:
    (agent,) = parse_rocminfo((DATA / "gfx1030_pools.txt").read_text()).agents
    assert [p.segment for p in agent.pools] == [
        "GLOBAL; FLAGS: COARSE GRAINED",
        "GLOBAL; FLAGS: EXTENDED FINE GRAINED",
        "GROUP",
    ]
    assert [p.size_kb for p in agent.pools] == [16123648, 16123648, None]


def test_rock_version_line() -> None:
    info = parse_rocminfo((DATA / "rock_version.txt").read_text())
    assert info.rock_loaded is True and info.rock_version == "6.8.5" and info.runtime_version == "1.14"


FULL = """ROCk module is loaded
Runtime Version:         1.1
*******
Agent 1
*******
  Name:                    AMD Ryzen 7 3700X 8-Core Processor
  Device Type:             CPU
  Chip ID:                 0(0x0)
*******
Agent 2
*******
  Name:                    gfx1030
  Marketing Name:          AMD Radeon RX 6800 XT
  Device Type:             GPU
  Chip ID:                 29631(0x73bf)
  BDFID:                   768
  Pool Info:
    Pool 1
      Segment:                 GLOBAL; FLAGS: COARSE GRAINED
      Size:                    16760832(0xffc000) KB
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--gfx1030
      Machine Models:          HSA_MACHINE_MODEL_LARGE
*** Done ***
"""


def test_agents_pools_isas_in_order() -> None:
    info = parse_rocminfo(FULL)
    assert [a.index for a in info.agents] == [1, 2] and info.done
    gpu = info.gpus[0]
    assert gpu.name == "gfx1030" and gpu.isa_names == ("amdgcn-amd-amdhsa--gfx1030",)
    assert gpu.vram_kb == 16760832 and gpu.pci_device_id == "73bf" and gpu.bus_devfn == "03:00.0"


def test_isa_gives_gfx_when_name_is_not_a_target() -> None:
    text = "Agent 2\n  Name: something\n  Device Type: GPU\n  ISA Info:\n    ISA 1\n      Name: amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-\n"
    assert parse_rocminfo(text).agents[0].gfx == "gfx90a"


def test_errors_are_kept() -> None:
    text = (
        "ROCk module is NOT loaded, possibly no GPU devices\n"
        "hsa api call failure at: /long_pathname_so_that_rpms_can_package_the_debug_info/src/rocminfo/rocminfo.cc:1306\n"
        "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources.\n"
    )
    info = parse_rocminfo(text)
    assert info.rock_loaded is False and len(info.errors) == 3 and info.agents == ()


def test_grep_paste_without_device_type() -> None:
    text = (
        "  λ rocminfo | grep -i gfx\n"
        "  Name:                    gfx1102\n"
        "      Name:                    amdgcn-amd-amdhsa--gfx1102\n"
        "  Name:                    gfx1036\n"
        "      Name:                    amdgcn-amd-amdhsa--gfx1036\n"
    )
    info = parse_rocminfo(text)
    assert [(a.gfx, a.isa_names) for a in info.gpus] == [
        ("gfx1102", ("amdgcn-amd-amdhsa--gfx1102",)),
        ("gfx1036", ("amdgcn-amd-amdhsa--gfx1036",)),
    ]
