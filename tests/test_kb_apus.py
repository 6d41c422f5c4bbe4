"""apus.json: a processor named where the GPU is asked stands for its integrated GPU, and only there."""

from __future__ import annotations

import pytest

from wizard.kb import load_kb
from wizard.probes import detect

pytestmark = pytest.mark.unit


def test_every_apu_row_points_at_an_integrated_gpu_row() -> None:
    kb = load_kb()
    rows = {a.pci_id for a in kb._apus.values()}
    assert rows
    for pci in rows:
        g = kb.gpu_by_pci(pci)
        assert g is not None and g.integrated is True and g.gfx, pci


@pytest.mark.parametrize("cpu, gfx", [
    ("Ryzen 7 7700", "gfx1036"),
    ("AMD Ryzen 9 7950X3D 16-Core Processor", "gfx1036"),
    ("AMD Ryzen 7 7840HS w/ Radeon 780M Graphics", "gfx1103"),
    ("Ryzen 7 PRO 6850U", "gfx1035"),
    ("AMD Ryzen AI Max+ 395", "gfx1151"),
])
def test_processor_names_resolve(cpu: str, gfx: str) -> None:
    g = load_kb().gpu_for_cpu(cpu)
    assert g is not None and g.gfx == gfx


@pytest.mark.parametrize("cpu", ["Ryzen 5 5600X", "Ryzen 9 5950X", "Ryzen 7 1700", "Core i7-12700K"])
def test_processors_without_a_known_igpu_row_resolve_to_nothing(cpu: str) -> None:
    assert load_kb().gpu_for_cpu(cpu) is None


@pytest.mark.parametrize("text, gpus", [
    ("### GPU\n\nRyzen 7 7700\n", [("gfx1036", True)]),
    ("GPU: AMD Ryzen AI Max+ 395 (Strix Halo)\n", [("gfx1151", True)]),
    ("the iGPU of my Ryzen 7 7840HS is not detected\n", [("gfx1103", True)]),
    # the processor alone says nothing about which GPU is used
    ("CPU: AMD Ryzen 7 7840HS\n", []),
    ("### CPU\n\nAMD Ryzen 9 7950X\n\n### GPU\n\nAMD Radeon RX 7900 XTX\n", [("gfx1100", False)]),
    ("GPU: NVIDIA RTX 4090, CPU Ryzen 9 7950X\n", []),
])
def test_a_processor_stands_for_its_igpu_only_where_the_gpu_is_asked(text: str, gpus: list[tuple[str, bool]]) -> None:
    f = detect(None, paste=("paste.txt", text))
    assert [(g.gfx, g.integrated) for g in f.gpus] == gpus


@pytest.mark.parametrize("cpu, without", [
    ("AMD EPYC 7763 64-Core Processor", True),
    ("AMD EPYC 9654 96-Core Processor", True),
    ("AMD Ryzen Threadripper PRO 7965WX 24-Cores", True),
    ("AMD EPYC 4124P 4-Core Processor", False),  # an AM5 part, with the Raphael GPU: not in AMD's list as scraped
    ("AMD Ryzen 7 7700 8-Core Processor", False),
    ("Ryzen 5 5600X", False),  # AMD lists it "Discrete Graphics Card Required", but no line rule covers it
])
def test_processor_lines_amd_lists_without_graphics(cpu: str, without: bool) -> None:
    assert load_kb().cpu_without_graphics(cpu) is without


@pytest.mark.parametrize("line, key", [
    ({"key_prefixes": ["EPYC 7"], "note": "x", "sources": ["https://example.org/cpus.csv"]}, "key_prefixes"),
    ({"key_prefixes": ["epyc7"], "note": "x"}, "sources"),
])
def test_a_without_graphics_line_needs_processor_keys_and_a_source(line: dict[str, object], key: str) -> None:
    from wizard.kb.parse import Problems, parse_processors_without_graphics

    problems = Problems("apus.json")
    assert parse_processors_without_graphics({"apus": [], "without_graphics": [line]}, problems) == ()
    assert [f"'{key}'" in p for p in problems.lines] == [True]


@pytest.mark.parametrize("cpu, graphics", [("AMD Ryzen 7 8845HS w/ Radeon 780M Graphics", "AMD Radeon 780M"),
                                           ("Ryzen 5 8645HS", "AMD Radeon 760M")])
def test_hawk_point_processors_carry_the_phoenix_gpu(cpu: str, graphics: str) -> None:
    kb = load_kb()
    apu = kb.apu_for_cpu(cpu)
    assert apu is not None and apu.graphics == graphics
    assert kb.gpu_for_cpu(cpu).gfx == "gfx1103"  # type: ignore[union-attr]
