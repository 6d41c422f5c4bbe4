""""Done" is read from the machine, and a plan runs only on the machine it was made for (issue 20).

In sandboxes: a finished run whose new venv was deleted is reported as drift (``status``) and repaired
(``resume``) by the engine, and by the dry-run script run again by hand; a progress file that exists but
cannot be read, or does not parse, stops the script before any change, naming the file; the resolved plan
of seed-7900xt replayed on an rx9070xt-noble machine stops the engine and the script before the first
change, naming each difference; ``--replan`` resolves it again there."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from runner_helpers import end_state, wizard
from test_script_resume import machine_state, run_script

pytestmark = pytest.mark.integration

VENV = "home/user/pytorch_venv-pip-only"
PROGRESS = "home/user/.local/state/rocm-wizard/script/pip-only.progress"  # a user-only plan keeps its progress in the user state dir


def _torch(root: Path) -> list[str]:
    return sorted(p.name for p in root.glob(f"{VENV}/lib/python*/site-packages/torch-*.dist-info"))


def _changes(root: Path) -> list[dict]:
    """The calls that change the machine (everything but reads) since the sandbox was built."""
    out = []
    log = root / ".sandbox/calls.log"
    for line in log.read_text().splitlines() if log.exists() else []:
        rec = json.loads(line)
        tool = rec["tool"].rsplit("/", 1)[-1]
        reads_a_record = any("cannot read the record" in a for a in rec["argv"])
        if tool in ("apt-get", "dpkg", "pip", "pip3", "amdgpu-install", "usermod", "systemctl", "reboot") \
                or (tool == "sudo" and not reads_a_record) or rec["argv"][:2] in (["-m", "venv"], ["-m", "pip"]):
            out.append(rec)
    return out


def test_engine_reports_drift_and_resume_repairs_it(tmp_path: Path) -> None:
    root = tmp_path / "m"
    r = wizard(["--sandbox", str(root), "--profile", "seed-7900xt", "--plan", "pip-only", "--yes"])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    torch = _torch(root)
    assert torch
    st = json.loads(wizard(["--sandbox", str(root), "status", "--json"]).stdout)
    assert st["state"] == "done" and st["drift"] == {}
    shutil.rmtree(root / VENV)  # the machine no longer has what the run made

    st = json.loads(wizard(["--sandbox", str(root), "status", "--json"]).stdout)
    assert set(st["drift"]) == {"4", "5"}, st  # pip_pin and env: recorded done, the machine says otherwise
    assert "pinned torch" in st["drift"]["4"] and "resume" in st["next"]
    text = wizard(["--sandbox", str(root), "status"]).stdout
    assert "step 4 DRIFT: recorded as done, but the machine says otherwise" in text

    r = wizard(["--sandbox", str(root), "resume", "--yes"])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "DRIFT: recorded as done, but the machine says otherwise" in r.stdout
    assert _torch(root) == torch  # recreated, the same pinned build
    assert "rocm-wizard" in (root / VENV / "bin/activate").read_text()
    journal = next((root / "var/lib/rocm-wizard/runs").glob("*/journal.jsonl")).read_text()
    assert [json.loads(x)["step"] for x in journal.splitlines() if '"step-drift"' in x] == [3, 4]
    st = json.loads(wizard(["--sandbox", str(root), "status", "--json"]).stdout)
    assert st["state"] == "done" and st["drift"] == {}
    r = wizard(["--sandbox", str(root), "resume", "--yes"])  # nothing drifted: nothing runs
    assert r.returncode == 0 and "every step's check passes on the machine" in r.stdout + r.stderr


def _script(root: Path, *extra: str) -> str:
    r = wizard(["--sandbox", str(root), "--profile", "seed-7900xt", "--plan", "pip-only", "--dry-run", *extra])
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_script_reports_drift_and_repairs_it(tmp_path: Path, torch_python: str) -> None:
    root = tmp_path / "m"
    script = _script(root)
    first = run_script(root, script, torch_python)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
    done = machine_state(root)
    assert _torch(root)
    again = run_script(root, script, torch_python)  # nothing drifted: nothing is installed again
    assert again.returncode == 0 and "drift" not in again.stderr
    n_changes = len(_changes(root))
    shutil.rmtree(root / VENV)

    third = run_script(root, script, torch_python)
    assert third.returncode == 0, third.stdout[-2000:] + third.stderr[-3000:]
    assert "drift: step 4 is recorded as done, but the machine says otherwise" in third.stderr
    assert "drift: step 5 is recorded as done" in third.stderr
    assert any(c["argv"][:3] == ["-m", "pip", "install"] for c in _changes(root)[n_changes:])  # installed again
    assert machine_state(root) == done


@pytest.mark.parametrize("damage", ["corrupt", "unreadable"])
def test_script_stops_on_a_progress_it_cannot_read(tmp_path: Path, torch_python: str, damage: str) -> None:
    root = tmp_path / "m"
    script = _script(root)
    first = run_script(root, script, torch_python)
    assert first.returncode == 0, first.stderr[-3000:]
    progress = root / PROGRESS
    if damage == "corrupt":
        progress.write_text("1\n2\n<<<<<<< merge\n")
        said = "does not parse"
    else:  # a path that exists and cannot be read (as root: a 0700 directory read by the user is the same)
        progress.unlink()
        progress.mkdir()
        said = "cannot read the record"
    before = _changes(root)
    shutil.rmtree(root / VENV)
    r = run_script(root, script, torch_python)
    assert r.returncode == 1
    assert said in r.stderr and str(progress) in r.stderr  # names the file
    assert _changes(root) == before and not (root / VENV).exists()  # nothing changed, nothing "redone"


def test_a_plan_replayed_on_another_machine_stops_before_the_first_change(tmp_path: Path, torch_python: str) -> None:
    seed, other = tmp_path / "seed", tmp_path / "other"
    r = wizard(["--sandbox", str(seed), "--profile", "seed-7900xt", "--plan", "pip-only", "--yes"])
    assert r.returncode == 0, r.stdout[-3000:]
    plan_json = str(next((seed / "var/lib/rocm-wizard/runs").glob("*/plan.json")))
    wizard(["--sandbox", str(other), "--profile", "rx9070xt-noble", "detect"])  # builds the machine
    before = end_state(other)
    differences = ("os: the plan was made for ubuntu 22.04, this machine has ubuntu 24.04",
                   "pci: the plan was made for 1002:744c,1002:744c, this machine has 1002:7550",
                   "gfx: the plan was made for gfx1100,gfx1100, this machine has gfx1201",
                   "rocm: the plan was made for 6.2.0, this machine has none")

    r = wizard(["--sandbox", str(other), "--plan", plan_json, "--yes"])  # the engine: refused before a run exists
    assert r.returncode == 5, r.stdout[-3000:] + r.stderr
    for d in differences:
        assert d in r.stderr, r.stderr[-3000:]
    assert not _changes(other) and end_state(other) == before
    assert not (other / "var/lib/rocm-wizard/current").exists()  # no failed run left to block the --replan

    r = wizard(["--sandbox", str(other), "--plan", plan_json, "--dry-run"])  # the script, run there by hand
    assert r.returncode == 0, r.stderr
    s = run_script(other, r.stdout, torch_python)
    assert s.returncode == 5  # as the engine: refused for this machine (README exit codes)
    for d in differences:
        assert d in s.stderr, s.stderr[-3000:]
    assert not _changes(other) and end_state(other) == before

    r = wizard(["--sandbox", str(other), "--plan", plan_json, "--replan", "--dry-run"])  # resolved again there
    assert r.returncode == 0, r.stderr
    assert "gfx1201" in r.stdout and "ubuntu 24.04" in r.stdout and "gfx1100" not in r.stdout
