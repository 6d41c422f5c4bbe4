"""Shared fixtures: a CPU torch interpreter for the suites that verify for real."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

TORCH_PIN = "torch==2.13.0"  # the CPU build on this machine's disk; never let pip pull a CUDA build


@pytest.fixture(scope="session")
def torch_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    given = os.environ.get("ROCM_WIZARD_TEST_TORCH_PYTHON")
    if given:
        return given
    venv = tmp_path_factory.mktemp("torch-venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
    py = str(venv / "bin" / "python")
    out = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", TORCH_PIN],
                         capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        pytest.fail(f"pip install {TORCH_PIN} failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    probe = subprocess.run([py, "-c", "import torch; print(torch.version.cuda, torch.version.hip)"],
                           capture_output=True, text=True, timeout=120)
    assert probe.stdout.split() == ["None", "None"], f"not a CPU torch: {probe.stdout} {probe.stderr[-500:]}"
    return py
