"""The dry-run script is resumable: run by hand in a sandbox to the reboot, "rebooted", run again, it
continues where it stopped, never makes the backup again, never purges twice, and ends where the
wizard's own run of the same plan ends."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from runner_helpers import calls, end_state, wizard

from wizard.sandbox.executor import SANDBOX_VERIFY_PYTHON
from wizard.script import HOLD_LOCK, READ_RECORD, READ_UNFINISHED
from wizard.sandbox.standins import SCRIPT_PATH, map_arg

pytestmark = pytest.mark.system  # a whole plan through the reboot, twice, with a CPU-torch verify


def run_script(root: Path, script: str, torch_python: str) -> subprocess.CompletedProcess[str]:
    """Run the script as a person would on that machine: its paths are the sandbox machine's (mapped
    under ROOT, as the sandbox's own sh does), its programs the sandbox's stand-ins."""
    mapped = SCRIPT_PATH.sub(lambda mo: map_arg(root, mo.group(1)), script)
    env = {"PATH": str(root / ".sandbox/bin"), "HOME": str(root / "home/user"), "LANG": "C.UTF-8",
           "ROCM_WIZARD_SANDBOX_ROOT": str(root), SANDBOX_VERIFY_PYTHON: torch_python}
    return subprocess.run(["/bin/bash", "-c", mapped], env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=900)


def machine_state(root: Path) -> dict:
    """end_state with the sandbox root taken out of file contents: running the script here maps every
    absolute path of its text under ROOT, so the activate block it writes names the mapped path."""
    state = end_state(root)
    state["venvs"] = {k: v.replace(str(root), "") if isinstance(v, str) else v for k, v in state["venvs"].items()}
    return state


def test_script_by_hand_to_the_reboot_and_again_ends_like_the_wizard(tmp_path: Path, torch_python: str) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    # the wizard's own run
    r = wizard(["--sandbox", str(a), "--profile", "seed-7900xt", "--plan", "downgrade-6.2", "--yes"])
    assert r.returncode == 3, r.stdout[-3000:]
    r = wizard(["--sandbox", str(a), "--verify-python", torch_python, "resume", "--yes"])
    assert r.returncode == 0, r.stdout[-3000:]
    # the same plan as a script, on an identical machine, run by hand
    r = wizard(["--sandbox", str(b), "--profile", "seed-7900xt", "--plan", "downgrade-6.2", "--dry-run"])
    assert r.returncode == 0, r.stderr
    script = r.stdout
    backup = b / "var/lib/rocm-wizard/backup/downgrade-6.2"
    first = run_script(b, script, torch_python)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
    assert "rebooting now: run this script again after the reboot" in first.stderr
    assert len((b / ".sandbox/reboots.log").read_text().splitlines()) == 1  # the stand-in reboot ran
    freeze = next(backup.glob("pip-freeze-*.txt"))
    made = {p.name: p.stat().st_mtime_ns for p in backup.iterdir()}
    assert "torch==2.5.1+rocm6.2" in freeze.read_text()
    assert "6.2.0" in (backup / "dpkg-selections.txt").read_text()
    purges = len([c for c in calls(b, "apt-get") if c[:2] == ["-y", "purge"]])
    assert purges == 1
    # after the reboot: the same script again
    second = run_script(b, script, torch_python)
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-3000:]
    assert "rocm-wizard plan downgrade-6.2: done" in second.stdout
    assert {p.name: p.stat().st_mtime_ns for p in backup.iterdir()} == made  # the backup is the first one
    assert len([c for c in calls(b, "apt-get") if c[:2] == ["-y", "purge"]]) == 1  # never purged twice
    assert '"status": "pass"' in second.stdout  # the verify step ran the suite (the CPU torch)
    assert machine_state(b) == end_state(a)
    # a third time runs nothing: every step is recorded as done
    n_calls = len((b / ".sandbox/calls.log").read_text().splitlines())
    third = run_script(b, script, torch_python)
    assert third.returncode == 0 and "done" in third.stdout
    assert machine_state(b) == end_state(a)
    later = (b / ".sandbox/calls.log").read_text().splitlines()[n_calls:]
    # nothing as root any more but reading its records (root's state dir: read as root, never guessed empty) and the
    # wizard's lock and runs there (the lock held, the current run read, as the wizard's own run does)
    reads = (READ_RECORD, HOLD_LOCK, READ_UNFINISHED)  # the unfinished read as the state dir's owner (W12)
    as_root = [json.loads(line)["argv"] for line in later if '"tool": "sudo"' in line]
    assert as_root and all(a[:3] == ["--", "sh", "-c"] and a[3] in reads for a in as_root), as_root[:5]
