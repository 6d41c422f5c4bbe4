"""``fleet run --engine`` and ``fleet rollback`` through real Ansible on two sandbox machines (seed-7900xt and
rx9070xt-noble, reached through the wizard's own connection plugin): the controller's wizard is installed from its
wheels into each host's /opt/rocm-wizard/venv, each host's own wizard runs its plan (journal, lock, preflight and
rollback on the host), Ansible reboots it and the run resumes; a second run changes nothing; ``fleet rollback``
restores each host as the single-machine rollback does; a plan resolved for one host is refused on another.

Slow (minutes on two cores): marked ``fleet`` (``pytest -m fleet tests/fleet``). Needs host root (the plugin binds the
sandbox's /home and /opt in a private mount namespace).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fleet.sandbox_fleet import sandbox_hosts
from runner_helpers import end_state

from wizard.runner.journal import Journal, replay
from wizard.runner.records import RunState

pytestmark = [pytest.mark.system, pytest.mark.fleet, pytest.mark.timeout(2400)]

PROFILES = {"seed-7900xt": "seed-7900xt", "rx9070xt-noble": "rx9070xt-noble"}
PLAN = "upgrade-6.4"
RESTORED = ("dpkg", "apt", "venvs", "rocm", "opt_rocm_link")


def wizard(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # Ansible's own temp files: the controller's under the test's HOME, each sandbox's under its user's home
    env = {k: v for k, v in os.environ.items() if k != "ANSIBLE_REMOTE_TEMP"}
    return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=2000, env={**env, "HOME": str(cwd / "home")}, stdin=subprocess.DEVNULL)


def site(root: Path) -> Path:
    (found,) = (root / "opt/rocm-wizard/venv/lib").glob("python*/site-packages")
    return found


def canary_first(progress: str) -> bool:
    """In the wizard's progress lines of the play (``HOST STATUS TASK``), every line of the canary (the inventory's first host)
    comes before the first line of the other host: a batch of one, then the rest."""
    hosts = [line.split()[0] for line in progress.splitlines()
             if line.split() and line.split()[0] in PROFILES and "Wizard:" in line]  # not fleet detect's lines
    return hosts[:1] == ["seed-7900xt"] and hosts == sorted(hosts, key=list(PROFILES).index)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory, torch_python: str) -> dict[str, Path]:
    if os.geteuid() != 0:
        pytest.skip("the sandbox connection needs root (unshare --mount)")
    base = tmp_path_factory.mktemp("engine")
    lines = ["[gpus]", *sandbox_hosts(base, PROFILES, torch_python, wizard)]
    inv = base / "inventory.ini"
    inv.write_text("\n".join(lines) + "\n")
    return {"base": base, "inv": inv, "fleet": base / "fleet"}


def test_engine_run_installs_the_wizard_runs_each_hosts_plan_then_a_rerun_changes_nothing(
        fleet: dict[str, Path]) -> None:
    base, inv, fdir = fleet["base"], str(fleet["inv"]), str(fleet["fleet"])
    before = {h: end_state(base / h) for h in PROFILES}
    first = wizard("fleet", "run", PLAN, "-i", inv, "--fleet-dir", fdir, "--engine", "--json", "--progress", cwd=base)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-5000:]
    rows = {r["host"]: r for r in json.loads(first.stdout)["hosts"]}
    assert set(rows) == set(PROFILES)
    assert canary_first(first.stderr)
    for host, row in rows.items():
        root = base / host
        assert row["failed"] is None and row["state"] == "done" and row["steps_done"] == row["steps"] > 3, row
        assert row["verify"]["status"] == "pass", row
        assert row["reboot"] == ("rebooted" if host == "seed-7900xt" else "not needed"), row
        # the host's own wizard ran it: its journal, in the host's state dir, ends done after the reboot
        cur = (root / "var/lib/rocm-wizard/current").read_text().strip()
        view = replay(Journal(root / "var/lib/rocm-wizard/runs" / cur / "journal.jsonl").entries())
        assert view.state is RunState.DONE and bool(view.rebooted_steps) == (host == "seed-7900xt"), view
        assert not view.yes  # started by the host's wizard for the play: no resume unit of its own at boot
        # the controller's wizard, installed from its wheels into the root-owned venv, with its dependencies
        dists = {p.name.split("-")[0].lower() for p in site(root).glob("*.dist-info")}
        assert {"rocm_wizard", "textual", "rich", "packaging", "sh"} <= dists
        assert (site(root) / "wizard" / "fleet" / "engine.py").is_file()
        build = (root / "opt/rocm-wizard/venv/rocm-wizard.build").read_text().strip()
        wheels = json.loads(next((fleet["fleet"] / "wheels").glob(f"{build}/wheels.json")).read_text())
        assert any(f.startswith("rocm_wizard-") for f in wheels["files"])
        assert oct((root / "opt/rocm-wizard/plans").stat().st_mode & 0o777) == "0o700"
        report = json.loads((fleet["fleet"] / "runs" / PLAN / "engine" / "results" / host / "run.json").read_text())
        assert report["state"] == "done" and report["status"]["verify"]["state"] == "passed"
        assert end_state(root)["dpkg"] != before[host]["dpkg"]  # migrated
    # the wizard's own journal and rollback are the host's: its status says so
    st = wizard("--sandbox", str(base / "seed-7900xt"), "status", "--json", cwd=base)
    assert json.loads(st.stdout)["state"] == "done"

    calls = {h: (base / h / ".sandbox/calls.log").read_text().count("\n") for h in PROFILES}
    again = wizard("fleet", "run", PLAN, "-i", inv, "--fleet-dir", fdir, "--engine", "--json", "--progress", cwd=base)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-5000:]
    changed = [line for line in again.stderr.splitlines() if len(line.split()) > 1 and line.split()[1] == "changed"]
    assert changed == [], changed
    rows = {r["host"]: r for r in json.loads(again.stdout)["hosts"]}
    assert all(r["state"] == "done" and not r["changed"] for r in rows.values()), rows
    assert rows["seed-7900xt"]["reboot"] == "earlier"
    for h in PROFILES:  # no install, no step ran again: only read-only calls (the version, the status)
        new = (base / h / ".sandbox/calls.log").read_text().splitlines()[calls[h]:]
        assert not any('"tool": "apt-get"' in c or '"tool": "tar"' in c or "pip" in json.loads(c)["tool"] for c in new), new
    fleet["before"] = base / "before.json"
    fleet["before"].write_text(json.dumps(before))


def test_fleet_rollback_restores_each_host_as_the_single_machine_rollback_does(fleet: dict[str, Path]) -> None:
    base, inv, fdir = fleet["base"], str(fleet["inv"]), str(fleet["fleet"])
    if "before" not in fleet:
        pytest.skip("needs the engine run above")
    before = json.loads(fleet["before"].read_text())
    res = wizard("fleet", "rollback", "-i", inv, "--fleet-dir", fdir, "--json", "--progress", cwd=base)
    # exit 1, as the single machine's rollback: rx9070xt-noble's user stays in render and video (no undo)
    assert res.returncode == 1, res.stdout[-3000:] + res.stderr[-5000:]
    rows = {r["host"]: r for r in json.loads(res.stdout)["hosts"]}
    assert set(rows) == set(PROFILES) and canary_first(res.stderr)
    for host, row in rows.items():
        assert row["state"] == "rolled-back" and row["failed"] is None and row["changed"], row
        after = end_state(base / host)
        for key in RESTORED:
            assert after[key] == before[host][key], (host, key)
    assert rows["seed-7900xt"]["cannot"] == []
    assert [c for c in rows["rx9070xt-noble"]["cannot"] if "render and video" in c], rows["rx9070xt-noble"]
    page = (fleet["fleet"] / "report.json").read_text()
    assert json.loads(page)["kind"] == "rollback"
    again = wizard("fleet", "rollback", "-i", inv, "--fleet-dir", fdir, "--json", cwd=base)
    assert again.returncode == 0, again.stderr[-3000:]
    assert not any(r["changed"] or r["cannot"] for r in json.loads(again.stdout)["hosts"])


def test_a_plan_resolved_for_one_host_is_refused_on_another(fleet: dict[str, Path], tmp_path: Path) -> None:
    plans = fleet["fleet"] / "runs" / PLAN / "engine" / "plans"
    if not (plans / "seed-7900xt.json").is_file():
        pytest.skip("needs the engine run above")
    other = tmp_path / "other"
    assert wizard("--sandbox", str(other), "--profile", "rx9070xt-noble", "detect", cwd=tmp_path).returncode == 0
    state = end_state(other)
    res = wizard("--sandbox", str(other), "fleet", "engine", str(plans / "seed-7900xt.json"), cwd=tmp_path)
    assert res.returncode == 5, res.stdout + res.stderr[-3000:]  # refused before a run is recorded
    doc = json.loads(res.stdout)
    assert doc["state"] == "none" and doc["steps_done"] == 0 and not doc["changed"]
    assert "not the machine the plan was made for" in doc["message"]
    assert end_state(other) == state  # the preflight stopped it before any change


def test_a_failure_on_the_canary_stops_the_rest_and_a_rerun_continues_the_hosts_own_run(fleet: dict[str, Path]) -> None:
    base, inv, fdir = fleet["base"], str(fleet["inv"]), str(fleet["fleet"])
    if "before" not in fleet:
        pytest.skip("needs the engine run and the rollback above")
    fail = base / "seed-7900xt" / ".sandbox" / "fail" / "amdgpu-install"
    fail.parent.mkdir(parents=True, exist_ok=True)
    fail.write_text("--usecase\nE: Unable to locate package rocm-hip-runtime (injected by the test)\n")
    rest = (base / "rx9070xt-noble" / ".sandbox/calls.log").read_text()
    first = wizard("fleet", "run", PLAN, "-i", inv, "--fleet-dir", fdir, "--engine", "--json", cwd=base)
    assert first.returncode == 1, first.stdout[-3000:] + first.stderr[-5000:]
    rows = {r["host"]: r for r in json.loads(first.stdout)["hosts"]}
    canary = rows["seed-7900xt"]
    assert canary["state"] == "failed" and canary["failed"]["task"] == "Wizard: run the plan on this host", canary
    assert canary["failed"]["message"] == "step 4 (Install ROCm 6.4.4 with amdgpu-install) failed: exited with 100"
    assert "fleet rollback" in canary["next"] and "--limit seed-7900xt" in canary["next"]
    # the batch after the canary never started: nothing ran on the other host
    assert (base / "rx9070xt-noble" / ".sandbox/calls.log").read_text() == rest
    assert rows["rx9070xt-noble"]["state"] is None and rows["rx9070xt-noble"]["steps_done"] == 0
    failed_run = json.loads(wizard("--sandbox", str(base / "seed-7900xt"), "status", "--json", cwd=base).stdout)
    assert failed_run["state"] == "failed"

    fail.unlink()
    again = wizard("fleet", "run", PLAN, "-i", inv, "--fleet-dir", fdir, "--engine", "--json", cwd=base)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-5000:]
    rows = {r["host"]: r for r in json.loads(again.stdout)["hosts"]}
    assert all(r["state"] == "done" and r["failed"] is None for r in rows.values()), rows
    # the canary's own run went on (the same run id), as rocm-wizard resume continues it
    assert rows["seed-7900xt"]["run_id"] == failed_run["run_id"]
    assert json.loads((fleet["fleet"] / "runs" / PLAN / "engine" / "results" / "seed-7900xt" / "run.json")
                      .read_text())["action"] == "resume"
