from __future__ import annotations

from pathlib import Path

import pytest

from wizard.parsers.collect_env import parse_collect_env

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data" / "parsers" / "collect_env"


def test_rocm_gfx1030() -> None:
    c = parse_collect_env((DATA / "rocm60_gfx1030.txt").read_text())
    assert c.torch_version == "2.3.0+rocm6.0" and c.rocm_build == "6.0.32830-d62f6a171"
    assert c.cuda_build is None and c.is_debug_build is False and c.cuda_available is True
    assert [(g.name, g.gfx) for g in c.gpus] == [("AMD Radeon RX 6950 XT", "gfx1030")]
    assert c.hip_runtime == "6.0.32830" and c.miopen_runtime == "3.0.0"
    assert c.python_short == "3.10.12" and c.os == "Ubuntu 22.04.4 LTS (x86_64)"
    assert c.clang is None and c.libc == "glibc-2.35"


def test_target_features() -> None:
    c = parse_collect_env((DATA / "mi300x_rocm713.txt").read_text())
    (gpu,) = c.gpus
    assert gpu.gfx == "gfx942" and gpu.features == ":sramecc+:xnack-" and gpu.name == "AMD Instinct MI300X"


def test_old_sample_with_libraries() -> None:
    c = parse_collect_env((DATA / "rocm37_sample.txt").read_text())
    assert c.gpus[0].name == "Device 66a1" and c.gpus[0].gfx is None
    assert c.library("torch") == "1.7.0a0+a9603c7" and c.library("NumPy") == "1.18.5"
    assert c.conda == (("blas", "1.0"),)
    assert c.python_short == "3.6"


def test_cpu_build_is_all_unknown() -> None:
    c = parse_collect_env((DATA / "cpu_build.txt").read_text())
    assert c.torch_version == "2.6.0+cpu" and c.rocm_build is None and c.cuda_build is None
    assert c.gpus == () and c.hip_runtime is None and c.cuda_available is False
    assert c.python_short == "3.12.9"


def test_multi_gpu_block_and_conda_columns() -> None:
    text = """PyTorch version: 2.5.1+rocm6.2
GPU models and configuration:
GPU 0: AMD Radeon RX 7900 XT (gfx1100)
GPU 1: AMD Radeon RX 7900 XT (gfx1100)
Nvidia driver version: Could not collect

Versions of relevant libraries:
[pip3] pytorch-triton-rocm==3.1.0
[pip3] torch==2.5.1+rocm6.2
[conda] torchaudio                2.5.1+rocm6.2            pypi_0    pypi
"""
    c = parse_collect_env(text)
    assert [(g.index, g.gfx) for g in c.gpus] == [(0, "gfx1100"), (1, "gfx1100")]
    assert c.library("pytorch_triton_rocm") == "3.1.0" and c.library("torchaudio") == "2.5.1+rocm6.2"


def test_banner_glued_to_first_key() -> None:
    c = parse_collect_env("Collecting environment information...          PyTorch version: 2.7.0.dev20250123+rocm6.3\n")
    assert c.torch_version == "2.7.0.dev20250123+rocm6.3"
