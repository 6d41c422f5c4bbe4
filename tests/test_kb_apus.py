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
