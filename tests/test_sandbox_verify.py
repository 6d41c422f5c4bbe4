"""In a sandbox, the plan's verify step runs the real suite against a CPU torch when one is given."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.system

TORCH_PYTHON = os.environ.get("ROCM_WIZARD_TEST_TORCH_PYTHON")


def wizard(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, env=env,
                          timeout=600, stdin=subprocess.DEVNULL)


@pytest.mark.skipif(not TORCH_PYTHON, reason="needs ROCM_WIZARD_TEST_TORCH_PYTHON (a venv with the CPU torch)")
def test_verify_step_runs_the_suite_against_a_cpu_torch(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "ROCM_WIZARD_STATE_DIR"}
    box = str(tmp_path / "box")
    first = wizard("--sandbox", box, "--profile", "seed-7900xt", "--plan", "downgrade-6.2", "--yes", env=env)
    assert first.returncode == 3, first.stdout[-2000:] + first.stderr[-2000:]
    done = wizard("--sandbox", box, "--verify-python", str(TORCH_PYTHON), "resume", "--yes", env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    # one line per check and one summary line on the terminal, not the JSON report
    assert "  pass     import                 cpu" in done.stdout and "skipped, not passed" not in done.stdout
    assert done.stdout.count("verify: OK: ") == 1 and '"checks"' not in done.stdout
    status = json.loads(wizard("--sandbox", box, "status", "--json", env=env).stdout)
    assert status["state"] == "done"
    verify_log = next(Path(box, "var/log/rocm-wizard").glob("*/10-verify.log")).read_text()
    assert '"status": "pass"' in verify_log and '"matmul' in verify_log
    assert str(TORCH_PYTHON) in verify_log  # the CPU torch played the venv's torch
