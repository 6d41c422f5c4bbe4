"""X11: the docker plan rehearsed to its very end, its suite included: a CPU torch (--verify-python) plays the image's
torch. The sandbox's docker ran no container at all, so ``verify --image`` read "the suite stopped before its
summary"; now its docker stand-in runs the wizard's own suite (the file ``verify --image`` mounts) with that torch,
on the CPU, through the engine and through the dry-run script, and asked again the script redoes nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from runner_helpers import calls, wizard

from wizard.sandbox import machine as m
from wizard.sandbox.executor import SANDBOX_VERIFY_PYTHON
from wizard.sandbox.standins import SCRIPT_PATH, map_arg

pytestmark = [pytest.mark.system, pytest.mark.usefixtures("isolated_state")]  # the suite on a CPU torch, twice: over 20 s on 2 cores

LAUNCHER = "home/user/rocm-wizard-docker.sh"


def _run_script(root: Path, script: str, torch_python: str) -> subprocess.CompletedProcess[str]:
    """tests/test_script_resume.py's run_script."""
    mapped = SCRIPT_PATH.sub(lambda mo: map_arg(root, mo.group(1)), script)
    env = {"PATH": str(root / ".sandbox/bin"), "HOME": str(root / "home/user"), "LANG": "C.UTF-8",
           "ROCM_WIZARD_SANDBOX_ROOT": str(root), SANDBOX_VERIFY_PYTHON: torch_python}
    return subprocess.run(["/bin/bash", "-c", mapped], env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=900)


def _pulls(root: Path) -> int:
    return len([a for a in calls(root, "docker") if a[:1] == ["pull"]])


def _suite_runs(root: Path) -> int:
    return len([a for a in calls(root, "docker") if a[:1] == ["run"]])


def test_the_docker_plan_verifies_with_a_cpu_torch_playing_the_image(tmp_path: Path, torch_python: str) -> None:
    root = tmp_path / "box"
    r = wizard(["--sandbox", str(root), "--profile", "seed-7900xt", "--verify-python", torch_python,
                "--plan", "docker", "--yes"], timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "skipped, not passed" not in r.stdout
    assert _suite_runs(root) == 1
    run = next((root / "var/log/rocm-wizard").glob("*-docker-*"))
    log = "".join(p.read_text(errors="replace") for p in sorted(run.glob("*verify*.log")))
    assert '"status": "pass"' in log, log[-3000:]
    docker_run = next(a for a in calls(root, "docker") if a[:1] == ["run"])
    assert "--device=/dev/kfd" in docker_run and "cpu" in docker_run
    # near miss: the same machine without its GPU's nodes is refused by docker as a real one would be
    for node in (root / "dev/dri").iterdir():
        node.unlink()
    (root / "dev/dri").rmdir()
    v = wizard(["--sandbox", str(root), "--verify-python", torch_python, "verify", "--image", _image(root),
                "--json"], timeout=600)
    assert v.returncode != 0
    problem = json.loads(v.stdout)["summary"]["problem"]
    assert 'adding custom device "/dev/dri": no such file or directory' in problem, problem


def _image(root: Path) -> str:
    images = json.loads((root / "var/lib/docker/sandbox-images.json").read_text())
    assert len(images) == 1
    return str(images[0])


def test_the_docker_plans_script_ends_with_the_suite_passed_and_asked_again_redoes_nothing(
        tmp_path: Path, torch_python: str) -> None:
    root = tmp_path / "box"
    r = wizard(["--sandbox", str(root), "--profile", "seed-7900xt", "--plan", "docker", "--dry-run"])
    assert r.returncode == 0, r.stderr
    script = r.stdout
    first = _run_script(root, script, torch_python)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
    assert "rocm-wizard plan docker: done" in first.stdout
    assert '"status": "pass"' in first.stdout  # the suite ran, on the CPU torch
    assert _pulls(root) == 1 and _suite_runs(root) == 1
    mtime = (root / LAUNCHER).stat().st_mtime_ns
    n_calls = len((root / m.SANDBOX_DIR / "calls.log").read_text().splitlines())
    again = _run_script(root, script, torch_python)
    assert again.returncode == 0 and "done" in again.stdout, again.stderr[-3000:]
    assert _pulls(root) == 1 and _suite_runs(root) == 1 and (root / LAUNCHER).stat().st_mtime_ns == mtime
    later = [json.loads(line) for line in (root / m.SANDBOX_DIR / "calls.log").read_text().splitlines()[n_calls:]]
    assert all(c["argv"][:2] == ["image", "inspect"] for c in later if c["tool"] == "docker")  # its check only
