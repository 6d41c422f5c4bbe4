"""Issue 21, knowledge from upstream records: facts a stored thread states in the records the tracker or upstream
keeps (a thread's labels, ...), read by general rules, each with the case that must not be read that way."""

from __future__ import annotations

from pathlib import Path

import pytest

from reading_helpers import detect_paste
from wizard.kb import load_kb
from wizard.parsers.mentions import read_mentions
from wizard.parsers.paste import split_paste

pytestmark = pytest.mark.unit


def _said(text: str) -> list[tuple[str, str, str | None]]:
    return [(m.kind, m.value, m.detail) for m in read_mentions(text)]


# ROCm's issue form turns the reporter's GPU and ROCm version answers into labels
LABELLED = ("ROCm/ROCm · issue #3485 · closed · Shell\n"
            "labels: AMD Radeon VII, ROCm 6.1.0, Under Investigation\n"
            "# [Issue]: torch.cuda.is_available() is False\n\n"
            "someone · description · 2024-08-02\n"
            "torch.cuda.is_available() returns False\n")


def test_a_threads_labels_name_the_gpu_and_the_rocm_version() -> None:
    labels = [s for s in split_paste(LABELLED).segments if s.lines[0].startswith("labels:")]
    assert len(labels) == 1 and labels[0].own
    assert _said("labels: AMD Radeon VII, ROCm 6.1.0, Under Investigation") == [
        ("gpu_name", "AMD Radeon VII", "label"), ("rocm", "6.1.0", "label")]
    # a label that is not wholly a product or a ROCm version says nothing ("module: rocm", a bare "6.3.1")
    assert _said("labels: module: rocm, triaged, 6.3.1, ROCm 6.2.0 docs") == []


def test_labels_read_from_a_stored_thread(tmp_path: Path) -> None:
    facts = detect_paste(tmp_path, LABELLED)
    assert [(g.gfx, g.integrated) for g in facts.gpus] == [("gfx906", False)]
    assert facts.rocm.version == "6.1.0"


def test_labels_of_a_thread_whose_opening_post_is_missing_are_not_the_commenters(tmp_path: Path) -> None:
    text = LABELLED.replace("someone · description", "other · comment")
    labels = [s for s in split_paste(text).segments if s.lines[0].startswith("labels:")]
    assert len(labels) == 1 and not labels[0].own
    facts = detect_paste(tmp_path, text)
    assert not facts.gpus and facts.rocm.version is None


# Ryzen 4000/5000 processors with Vega graphics carry a gfx90c GPU (apus.json: Renoir, Lucienne, Cezanne rows)
@pytest.mark.parametrize("cpu, pci", [
    ("Ryzen 7 4800U", "1002:1636"),
    ("AMD Ryzen 7 PRO 4750G", "1002:1636"),
    ("Ryzen 5 5500U", "1002:164c"),
    ("AMD Ryzen 5 PRO 5650U with Radeon Graphics", "1002:1638"),
    ("Ryzen 5650U", "1002:1638"),  # without the tier and PRO, as people write it
])
def test_ryzen_4000_5000_processors_carry_a_gfx90c_gpu(cpu: str, pci: str) -> None:
    kb = load_kb()
    apu = kb.apu_for_cpu(cpu)
    assert apu is not None and apu.pci_id == pci
    g = kb.gpu_for_cpu(cpu)
    assert g is not None and g.gfx == "gfx90c" and g.integrated is True


def test_a_processor_without_its_tier_is_read_where_the_gpu_is_asked() -> None:
    assert ("gpu_name", "Ryzen 5650U", "cpu") in _said("Seems like I have a Ryzen 5650U with integrated GPU..?")
    assert load_kb().apu_for_cpu("Ryzen 5000") is None  # a series is no processor


def test_the_processor_a_threads_title_names_stands_for_its_igpu_when_no_gpu_is_named(tmp_path: Path) -> None:
    title = "owner/repo · issue #1 · closed\n# hipErrorNoBinaryForGpu on Ryzen 7 4800U\n\nme · description · 2021-01-08\n"
    facts = detect_paste(tmp_path, title + "Trying to run PyTorch in Docker fails.\n")
    assert [(g.gfx, g.integrated) for g in facts.gpus] == [("gfx90c", True)]
    # a GPU named anywhere is the GPU; the processor says nothing more
    facts = detect_paste(tmp_path, title + "My Radeon RX 6800 XT is not found.\n")
    assert [(g.gfx, g.integrated) for g in facts.gpus] == [("gfx1030", False)]
    # a processor in the body alone is not the GPU
    facts = detect_paste(tmp_path, "# torch is slow\n\nme · description · 2021-01-08\nCPU: Ryzen 7 4800U\n")
    assert not facts.gpus


def test_an_instinct_series_named_without_its_variant_letter_is_its_accelerators(tmp_path: Path) -> None:
    # AMD's MI300 series (ROCm docs, conceptual/gpu-arch/mi300.md): MI300A (an APU) and MI300X, both gfx942
    rows = load_kb().gpus_by_name("mi300")
    assert {g.gfx for g in rows} == {"gfx942"} and {g.integrated for g in rows} == {True, False}
    assert not load_kb().gpus_by_name("MI999")
    facts = detect_paste(tmp_path, "# rocrtst fails\n\nme · description · 2026-01-07\nTo reproduce on a mi300 machine:\n")
    assert [g.gfx for g in facts.gpus] == ["gfx942"]
    # the exact model still wins: "MI300X" is the discrete one
    assert {g.integrated for g in load_kb().gpus_by_name("MI300X")} == {False}


def test_a_radeon_model_number_written_without_its_suffix_is_its_variants_where_they_agree(tmp_path: Path) -> None:
    # "RX 6650" is no product: the RX 6650 XT, RX 6650M and RX 6650M XT are, all Navi 23 (gfx1032)
    assert {(g.gfx, g.integrated) for g in load_kb().gpus_by_name("RX 6650")} == {("gfx1032", False)}
    facts = detect_paste(tmp_path, "# Ollama container crashing on RX 6650\n\nme · description · 2024-03-01\nIt aborts.\n")
    assert [(g.gfx, g.integrated) for g in facts.gpus] == [("gfx1032", False)]
    # a number that is a product itself stays that product (the RX 7700 is gfx1101; the RX 7700S is gfx1102)
    assert {g.gfx for g in load_kb().gpus_by_name("RX 7700")} == {"gfx1101"}
    # variants that disagree (RX 5600 XT gfx1010, RX 5600M gfx1011) name no GPU; an unknown number names none
    facts = detect_paste(tmp_path, "# torch crashes on RX 5600\n\nme · description · 2024-03-01\nIt aborts.\n")
    assert not facts.gpus
    assert not load_kb().gpus_by_name("RX 1234")


def test_a_torch_version_an_install_should_show_is_not_the_machines_and_you_have_is() -> None:
    line = ("Afterward, `python3 -m torch.utils.collect_env` should show `PyTorch version: 2.1.2+rocm6.1.3` "
            "(you have `2.5.0.dev20240802+rocm6.1` here)")
    assert [v for k, v, _ in _said(line) if k == "torch"] == ["2.5.0.dev20240802+rocm6.1"]
    assert ("torch", "2.1.2+rocm6.1.3", None) in _said("PyTorch version: 2.1.2+rocm6.1.3")
    assert [v for k, v, _ in _said("You are using 0.20.0+rocm6.1 of torchvision")] == []


def test_the_rx_vega_56_and_64_are_named_as_pci_ids_names_them(tmp_path: Path) -> None:
    # pci.ids: "687f  Vega 10 XL/XT [Radeon RX Vega 56/64]"; amdgpu.ids calls the id "AMD Radeon RX Vega"
    for name in ("Radeon RX Vega 64", "RX Vega 56", "Vega 64"):
        assert {(g.gfx, g.integrated) for g in load_kb().gpus_by_name(name)} == {("gfx900", False)}, name
    facts = detect_paste(tmp_path, "# rocminfo fails\n\nme · description · 2019-01-07\nMy GPU is a Vega 64.\n")
    assert [(g.gfx, g.integrated) for g in facts.gpus] == [("gfx900", False)]
    # an integrated Vega is named by its compute units and "Graphics"
    assert {g.integrated for g in load_kb().gpus_by_name("Radeon Vega 8 Graphics")} == {True}
