"""Issue 21 point 4: facts the corpus holds that the reader had left unread, read by general rules (a number of
one product, rocm-smi's GPU numbers, a template's CPU field and its integrated GPU, one model on every GPU a
tool listed without a name), each with the case that must not be read that way."""

from __future__ import annotations

from pathlib import Path

import pytest

from wizard.host import open_recorded
from wizard.kb import load_kb
from wizard.parsers.mentions import read_mentions
from wizard.probes import detect

pytestmark = pytest.mark.integration


def _said(text: str) -> list[tuple[str, str, str | None]]:
    return [(m.kind, m.value, m.detail) for m in read_mentions(text)]


def test_a_number_of_one_product_is_a_count() -> None:
    assert ("gpu_count", "2", None) in _said("GPU: radeon FirePro f9300x2 (equivalent as 2 radeon Nano)")
    assert ("gpu_count", "8", None) in _said("8 x AMD Instinct MI300X")
    assert not [k for k, _, _ in _said("step 2 Radeon RX 7900 XTX") if k == "gpu_count"]
    assert not [k for k, _, _ in _said("I have 2 Radeon drivers installed") if k == "gpu_count"]
    assert _said("open it with nano and save") == []


def test_rocm_smi_numbers_every_gpu_it_complains_about() -> None:
    assert ("gpu_count", "2", "smi") in _said("ERROR: GPU[1]   : sclk clock is unsupported")
    assert ("gpu_count", "1", "smi") in _said("GPU[0]          : get_power_avg, Unexpected data received")


def test_a_template_cpu_field_names_the_processor_and_a_tierless_name_finds_it() -> None:
    assert ("cpu", "AMD Ryzen 7900", "label") in _said("### CPU\n\nAMD Ryzen 7900\n")
    assert _said("### CPU\n\nIntel Core i9-13900K\n") == []
    kb = load_kb()
    assert kb.apu_for_cpu("AMD Ryzen 7900") == kb.apu_for_cpu("Ryzen 9 7900") is not None
    assert kb.apu_for_cpu("Ryzen 9999") is None


def _gpus(tmp_path: Path, text: str) -> list[tuple[str | None, bool | None]]:
    (tmp_path / "paste.txt").write_text(text, encoding="utf-8")
    return [(g.gfx, g.integrated) for g in detect(open_recorded(str(tmp_path))).gpus]


SMI = ("ERROR: GPU[1]   : sclk clock is unsupported\nGPU[0]          : get_power_cap, Unexpected data received\n")


def test_a_discrete_gpu_and_one_more_beside_a_processor_with_an_igpu(tmp_path: Path) -> None:
    text = "### CPU\n\nAMD Ryzen 7900\n\n### GPU\n\nAMD Radeon Pro W7900\n\n### Output\n\n" + SMI
    assert _gpus(tmp_path, text) == [("gfx1100", False), ("gfx1036", True)]


def test_without_a_processor_the_second_gpu_stays_the_named_model_count_only(tmp_path: Path) -> None:
    text = "### GPU\n\nAMD Radeon Pro W7900\n\n### Output\n\n" + SMI
    gpus = _gpus(tmp_path, text)
    assert len(gpus) == 2 and gpus[0] == ("gfx1100", False) and gpus[1][1] is not True


CONCISE = ("# rocm-smi\n"
           "================================= Concise Info =================================\n"
           "GPU  Temp (DieEdge)  AvgPwr  SCLK    MCLK     Fan  Perf  PwrCap  VRAM%  GPU%\n"
           "0    37.0c           38.0W   300Mhz  1200Mhz  0%   auto  290.0W    0%   0%\n"
           "1    40.0c           39.0W   300Mhz  1200Mhz  0%   auto  290.0W    0%   0%\n"
           "2    41.0c           42.0W   300Mhz  1200Mhz  0%   auto  290.0W    0%   0%\n"
           "================================================================================\n")


def test_one_discrete_model_named_fills_the_gpus_a_tool_listed_blank(tmp_path: Path) -> None:
    text = "```\n" + CONCISE + "```\n\n```\n# rocminfo | grep MI100\n  Marketing Name:          AMD Instinct MI100\n```\n"
    assert _gpus(tmp_path, text) == [("gfx908", False)] * 3


def test_not_filled_where_a_processor_with_an_igpu_is_named(tmp_path: Path) -> None:
    text = ("### CPU\n\nAMD Ryzen 7 7700\n\n### Output\n\n```\n" + CONCISE + "```\n\n```\n# rocminfo | grep W7900\n"
            "  Marketing Name:          AMD Radeon Pro W7900\n```\n")
    gpus = _gpus(tmp_path, text)
    assert gpus.count(("gfx1100", False)) == 1 and len(gpus) == 3
