"""The benchmarks the README quotes still run against the code: a small run of each that needs no GPU, no tmux
and no real root (benchmarks/tui_flood.py had drifted from the TUI's services and died before measuring)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("argv", [
    ["benchmarks/tui_flood.py", "--repeat", "1", "--lines", "2000"],
    ["benchmarks/runner_overhead.py", "--repeat", "1", "--lines", "2000"],
])
def test_a_benchmark_runs_to_its_ratio(argv: list[str]) -> None:
    r = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    assert "ratio" in r.stdout and "Traceback" not in r.stderr
