"""Issue 13's plans run end to end in the stand-in sandbox: driver on a fresh RX 9070 XT without a loaded
driver (install, reboot, resume, /dev/kfd appears, pip-only then fits), core-sdk on the notes' machine
(legacy purged first, AMD's repository and key, the per-gfx package, AMD's torch with its device extra,
reboot for the removed DKMS module, resume, verify on a CPU torch when one is given)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from runner_helpers import calls, end_state, wizard

from wizard.kb import load_kb

TORCH_PYTHON = os.environ.get("ROCM_WIZARD_TEST_TORCH_PYTHON")


def _plans(box: str) -> dict[str, dict]:  # type: ignore[type-arg]
    res = wizard(["--sandbox", box, "plans", "--json"])
    assert res.returncode == 0, res.stderr
    return {p["name"]: p for p in json.loads(res.stdout)["plans"]}


@pytest.mark.integration
def test_driver_plan_end_to_end_on_a_fresh_machine(tmp_path: Path) -> None:
    box = str(tmp_path / "box")
    before = wizard(["--sandbox", box, "--profile", "rx9070xt-noble-nodriver", "plans", "--json"])
    plans = {p["name"]: p for p in json.loads(before.stdout)["plans"]}
    assert plans["driver"]["recommended"] and not plans["pip-only"]["applicable"]
    first = wizard(["--sandbox", box, "--plan", "driver", "--yes"])
    assert first.returncode == 3, first.stdout[-3000:] + first.stderr[-2000:]  # stopped for the reboot
    rel = load_kb().release("10.1.0")  # the newest Core SDK release with every driver fact (31.60)
    assert rel is not None and rel.driver_version == "31.60"
    root = Path(box)
    assert not calls(root, "amdgpu-install")  # the driver only: no usecase line (no ROCm, no graphics stack)
    assert any(a[:1] == ["install"] and "amdgpu-dkms" in a for a in calls(root, "apt-get"))
    assert any(rel.amdgpu_install["noble"] in argv for argv in calls(root, "wget"))
    done = wizard(["--sandbox", box, "resume", "--yes"])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    state = end_state(root)
    assert "amdgpu-dkms" in state["dpkg"] and "amdgpu-install" in state["dpkg"]
    assert "repo.radeon.com/amdgpu/31.60/ubuntu noble" in state["apt"]["amdgpu.list"]
    assert (root / "dev/kfd").exists()
    status = json.loads(wizard(["--sandbox", box, "status", "--json"]).stdout)
    assert status["state"] == "done"
    after = _plans(box)
    assert after["pip-only"]["recommended"]
    assert after["driver"]["applicable"] and after["driver"]["reasons"][0].startswith("nothing to do:")
    # the nothing-to-do plan runs and changes nothing
    again = wizard(["--sandbox", box, "--plan", "driver", "--yes"])
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-1000:]
    assert end_state(root) == state


@pytest.mark.system  # two whole plans in a row: about a minute on 2 cores
def test_core_sdk_plan_end_to_end_after_the_legacy_line(tmp_path: Path) -> None:
    box = str(tmp_path / "box")
    root = Path(box)
    first = wizard(["--sandbox", box, "--profile", "seed-7900xt", "--plan", "core-sdk", "--yes"])
    assert first.returncode == 3, first.stdout[-3000:] + first.stderr[-2000:]  # purge removed amdgpu-dkms
    kb = load_kb()
    rel = kb.release("10.0.0")
    assert rel is not None and rel.routes is not None and rel.routes.apt is not None
    state = end_state(root)
    assert not [p for p in state["dpkg"] if p.startswith(("rocm", "hip")) or p == "amdgpu-install"]
    assert state["dpkg"].get("amdrocm10.0-gfx1100") == "10.0.0-sandbox"
    assert f"URIs: {rel.routes.apt.repos['ubuntu2204']}" in state["apt"]["amdrocm.sources"]
    assert (root / rel.routes.apt.keyring.lstrip("/")).is_file()
    assert any(rel.routes.apt.key_url in argv for argv in calls(root, "wget"))
    # the plan's venv (a new one beside the notes' venv, which keeps its torch 2.5.1)
    sites = [k for k, names in state["venvs"].items() if k.endswith("site-packages")
             and "torch-2.13.0+rocm10.0.0.dist-info" in names]
    assert len(sites) == 1, state["venvs"].keys()
    assert "amd_torch_device_gfx1100-2.13.0+rocm10.0.0.dist-info" in state["venvs"][sites[0]]
    apt_calls = calls(root, "apt-get")
    purge_at = next(i for i, a in enumerate(apt_calls) if a[:2] == ["-y", "purge"])
    install_at = next(i for i, a in enumerate(apt_calls) if a == ["install", "-y", "amdrocm10.0-gfx1100"])
    assert purge_at < install_at  # AMD: the legacy line goes first
    resume = ["--sandbox", box, *(["--verify-python", TORCH_PYTHON] if TORCH_PYTHON else []), "resume", "--yes"]
    done = wizard(resume)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    status = json.loads(wizard(["--sandbox", box, "status", "--json"]).stdout)
    assert status["state"] == "done"
    detected = json.loads(wizard(["--sandbox", box, "detect", "--json"]).stdout)
    assert any(i["stream"] == "core-sdk" and i["version"] == "10.0.0" for i in detected["rocm"]["installs"])


@pytest.mark.system  # a whole plan and the verify suite on the CPU torch
@pytest.mark.skipif(not TORCH_PYTHON, reason="needs ROCM_WIZARD_TEST_TORCH_PYTHON (a venv with the CPU torch)")
def test_core_sdk_verify_runs_the_suite_on_the_cpu_torch(tmp_path: Path) -> None:
    box = str(tmp_path / "box")
    first = wizard(["--sandbox", box, "--profile", "rx9070xt-noble", "--plan", "core-sdk", "--yes",
                    "--verify-python", str(TORCH_PYTHON)])
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]  # nothing needs a reboot here
    assert "skipped, not passed" not in first.stdout
    assert "verify: OK:" in first.stdout
    verify_log = next(Path(box, "var/log/rocm-wizard").glob("*/*-verify.log")).read_text()
    assert '"status": "pass"' in verify_log and '"matmul' in verify_log and '"device": "cpu"' in verify_log
