from __future__ import annotations

from pathlib import Path

import pytest

from wizard.parsers.rocm_smi import parse_rocm_smi

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data" / "parsers" / "rocm_smi"


def test_concise_table_gives_indices() -> None:
    r = parse_rocm_smi((DATA / "concise_7900xt_old.txt").read_text())
    assert [g.index for g in r.gpus] == [0] and r.gpus[0].device_id is None


def test_did_column() -> None:
    r = parse_rocm_smi((DATA / "six_rx580_did.txt").read_text())
    assert [g.device_id for g in r.gpus] == ["0402"] + ["67df"] * 6


def test_all_output_driver_and_ids() -> None:
    r = parse_rocm_smi((DATA / "all_raphael.txt").read_text())
    assert r.driver_version == "6.1.0-18-amd64"
    (gpu,) = r.gpus
    assert gpu.device_id == "164e" and gpu.unique_id is None and gpu.vbios == "102-RAPHAEL-008"


def test_productname_text() -> None:
    (gpu,) = parse_rocm_smi((DATA / "productname_mi100.txt").read_text()).gpus
    assert gpu.card_series == "0x738c" and gpu.card_model == "0xc34" and gpu.card_sku == "D34314"
    assert gpu.card_vendor == "Advanced Micro Devices, Inc. [AMD/ATI]"


def test_productname_json() -> None:
    (gpu,) = parse_rocm_smi((DATA / "productname_json_mi250x.txt").read_text()).gpus
    assert gpu.card_series == "AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2"
    assert gpu.gfx_version == "gfx9010" and gpu.node_id == 7


def test_new_concise_meminfo_bus_and_gfx() -> None:
    text = """============================================ ROCm System Management Interface ============================================
====================================================== Concise Info ======================================================
Device  Node  IDs              Temp    Power  Partitions          SCLK  MCLK    Fan  Perf  PwrCap  VRAM%  GPU%
              (DID,     GUID)  (Edge)  (Avg)  (Mem, Compute, ID)
==========================================================================================================================
0       1     0x744c,   12345  35.0°C  20.0W  N/A, N/A, 0         0Mhz  96Mhz   0%   auto  291.0W  0%     0%
1       2     0x744c,   54321  33.0°C  18.0W  N/A, N/A, 0         0Mhz  96Mhz   0%   auto  291.0W  0%     0%
==========================================================================================================================
GPU[0]\t\t: VRAM Total Memory (B): 21458059264
GPU[0]\t\t: VRAM Total Used Memory (B): 28672000
GPU[0]\t\t: PCI Bus: 0000:03:00.0
GPU[1]\t\t: PCI Bus: 0000:0A:00.0
GPU[0]\t\t: GFX Version: \t\tgfx1100
"""
    r = parse_rocm_smi(text)
    assert [g.device_id for g in r.gpus] == ["744c", "744c"]
    assert r.gpus[0].vram_total_bytes == 21458059264 and r.gpus[0].vram_used_bytes == 28672000
    assert [g.bus for g in r.gpus] == ["0000:03:00.0", "0000:0a:00.0"]
    assert r.gpus[0].gfx_version == "gfx1100" and r.gpus[1].gfx_version is None


def test_concise_rows_without_header() -> None:
    text = (
        "0       [0x0518 : 0xc0]       N/A     N/A    N/A, N/A        None  None  0%   unknown  Unsupported    0%   0%    \n"
        "        Navi 33 [Radeon RX 7                                                                                     \n"
    )
    (gpu,) = parse_rocm_smi(text).gpus
    assert gpu.index == 0 and gpu.name == "Navi 33 [Radeon RX 7" and gpu.device_id is None
    assert dict(gpu.fields)["model"] == "0x0518"


def test_column_table_with_did_vbios_bus() -> None:
    text = (
        "GPU  DID   GFX RAS  SDMA RAS  UMC RAS  VBIOS            BUS           \n"
        "0    164e  N/A      N/A       N/A      102-RAPHAEL-008  0000:12:00.0  \n"
        "1    744c  N/A      N/A       N/A      115-D702BS0-101  0000:03:00.0  \n"
    )
    gpus = parse_rocm_smi(text).gpus
    assert [(g.device_id, g.vbios, g.bus) for g in gpus] == [
        ("164e", "102-RAPHAEL-008", "0000:12:00.0"),
        ("744c", "115-D702BS0-101", "0000:03:00.0"),
    ]


def test_csv_rows_and_the_system_row() -> None:
    """`rocm-smi --showproductname --csv` / `--showdriverversion --csv`: a `device,...` header, one row per card,
    and the driver in the `cardsystem` row."""
    text = ("device,Driver version\n"
            "cardsystem,4.18.0-348.12.2.el8_5.x86_64\n"
            "device,Card series,Card model,Card vendor,Card SKU\n"
            "card0,Arcturus GL-XL [AMD Instinct MI100],0x0c34,Advanced Micro Devices Inc. [AMD/ATI],D34316\n"
            "card1,Arcturus GL-XL [AMD Instinct MI100],0x0c34,Advanced Micro Devices Inc. [AMD/ATI],D34316\n")
    r = parse_rocm_smi(text)
    assert r.driver_version == "4.18.0-348.12.2.el8_5.x86_64"
    assert [g.index for g in r.gpus] == [0, 1]
    assert r.gpus[1].card_series == "Arcturus GL-XL [AMD Instinct MI100]" and r.gpus[1].card_sku == "D34316"
