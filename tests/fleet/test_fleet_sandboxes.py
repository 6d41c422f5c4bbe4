"""Real Ansible against several different machines: rocm-wizard sandboxes (seed-7900xt, rx9070xt-noble,
seed-5600xt, a twin of the first, and one without the wizard) reached through the wizard's own connection plugin
(wizard/fleet/plugins/connection/rocm_wizard_sandbox.py: real ansible-playbook, real modules, every
command answered inside the sandbox), plus a host that cannot be reached and one that answers garbage.

Slow (each run is minutes on two cores): marked ``fleet``. All of them: ``pytest -m fleet tests/fleet``.
Needs host root (the plugin binds the sandbox's /home and /opt in a private mount namespace).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.fleet.sandbox_fleet import sandbox_hosts

pytestmark = [pytest.mark.system, pytest.mark.fleet, pytest.mark.timeout(1800)]

PROFILES = {"seed-7900xt": "seed-7900xt", "twin-7900xt": "seed-7900xt", "rx9070xt-noble": "rx9070xt-noble",
            "seed-5600xt": "seed-5600xt"}
RUN_HOSTS = "seed-7900xt:rx9070xt-noble:seed-5600xt"


def wizard(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    # Ansible's temp files (~root/.ansible/tmp of the tasks delegated to localhost; inside each sandbox for
    # its own tasks) stay in the test's directory
    return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=1700, env={**os.environ, "HOME": str(cwd / "home"),
                                             "ANSIBLE_REMOTE_TEMP": str(cwd / "ansible-tmp"), **(env or {})})


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory, torch_python: str) -> dict[str, Path]:
    if os.geteuid() != 0:
        pytest.skip("the sandbox connection needs root (unshare --mount)")
    base = tmp_path_factory.mktemp("fleet")
    lines = ["[gpus]", *sandbox_hosts(base, PROFILES, torch_python, wizard)]
    # answers, but not with facts: its "wizard" is echo
    lines.append(f"garbage ansible_connection=rocm_wizard_sandbox rocm_wizard_sandbox_root={base / 'seed-5600xt'} "
                 f"ansible_python_interpreter={sys.executable} "
                 "rocm_wizard_command='[\"echo\", \"hello from a host without the wizard\"]'")
    # no wizard on it (its "wizard" fails): its evidence comes from plain commands
    lines.append(f"nowiz ansible_connection=rocm_wizard_sandbox rocm_wizard_sandbox_root={base / 'seed-5600xt'} "
                 f"ansible_python_interpreter={sys.executable} rocm_wizard_command='[\"false\"]'")
    lines.append("ghost ansible_host=127.0.0.1 ansible_port=9 ansible_connection=ssh "
                 "ansible_ssh_common_args='-o ConnectTimeout=3 -o StrictHostKeyChecking=no'")
    inv = base / "inventory.ini"
    inv.write_text("\n".join(lines) + "\n")
    return {"base": base, "inv": inv, "fleet": base / "fleet"}


@pytest.mark.smoke
def test_detect_finds_each_hosts_gpus_and_lists_the_unreadable(fleet: dict[str, Path]) -> None:
    res = wizard("fleet", "detect", "-i", str(fleet["inv"]), "--fleet-dir", str(fleet["fleet"]), "--json",
                 cwd=fleet["base"])
    assert res.returncode == 1, res.stderr[-3000:]  # two hosts could not be read; the rest went on
    rows = {r["host"]: r for r in json.loads(res.stdout)["hosts"]}
    assert rows["seed-7900xt"]["gpus"] == [{"gfx": "gfx1100", "count": 2}]
    assert rows["rx9070xt-noble"]["gpus"] == [{"gfx": "gfx1201", "count": 1}]
    assert rows["seed-5600xt"]["gpus"] == [{"gfx": "gfx1010", "count": 1}]
    assert rows["seed-7900xt"]["rocm"] == "6.2.0" and rows["rx9070xt-noble"]["rocm"] is None
    assert rows["seed-7900xt"]["torch"] == [{"env": "/home/user/pytorch_venv", "torch": "2.5.1+rocm6.2"}]
    assert rows["seed-7900xt"]["alike"] == rows["twin-7900xt"]["alike"] != rows["rx9070xt-noble"]["alike"]
    assert sum(rows["seed-5600xt"]["findings"].values()) > 0
    assert rows["ghost"]["status"] == "unreachable" and rows["ghost"]["reason"]
    assert rows["garbage"]["status"] == "garbage" and "facts" in rows["garbage"]["reason"]
    assert (fleet["fleet"] / "hosts" / "rx9070xt-noble" / "facts.json").is_file()
    assert rows["nowiz"]["status"] == "evidence" and rows["nowiz"]["gpus"] == [{"gfx": "gfx1010", "count": 1}]
    assert (fleet["fleet"] / "hosts" / "nowiz" / "bundle" / "os-release.txt").is_file()
    assert "PLAY RECAP" in res.stderr  # the operator's stdout callback (here Ansible's default) is kept


def test_detect_against_a_reference_lists_each_hosts_drift(fleet: dict[str, Path]) -> None:
    res = wizard("fleet", "detect", "-i", str(fleet["inv"]), "--fleet-dir", str(fleet["fleet"]), "--reference",
                 "twin-7900xt", "--limit", "seed-7900xt:twin-7900xt:seed-5600xt:nowiz", "--json", cwd=fleet["base"],
                 env={"ANSIBLE_STDOUT_CALLBACK": "minimal"})
    assert "seed-5600xt | SUCCESS" in res.stderr and "PLAY RECAP" not in res.stderr  # the operator's own callback
    assert res.returncode == 1, res.stderr[-3000:]  # seed-5600xt drifts
    by = {h["host"]: h for h in json.loads(res.stdout)["drift"]["hosts"]}
    assert by["seed-7900xt"]["status"] == "same" and by["twin-7900xt"]["status"] == "same"
    diffs = {d["field"]: d["host"] for d in by["seed-5600xt"]["differences"]}
    assert diffs["gpus"] == "1x gfx1010" and diffs["overrides"] == "HSA_OVERRIDE_GFX_VERSION=10.3.0"
    assert by["nowiz"]["unknown"] == ["torch", "torch_gfx", "overrides"]


def test_plan_groups_alike_hosts_and_refuses_the_one_it_cannot_fit(fleet: dict[str, Path]) -> None:
    out = fleet["base"] / "plan-export"
    res = wizard("fleet", "plan", "upgrade-6.4", "-i", str(fleet["inv"]), "--fleet-dir", str(fleet["fleet"]),
                 "--limit", "all:!ghost:!garbage:!nowiz", "--json", "--export", "ansible", str(out), cwd=fleet["base"])
    assert res.returncode == 0, res.stderr[-3000:]
    assert "reused the saved facts of 4 host(s)" in res.stderr  # those of the fleet detect above
    doc = json.loads(res.stdout)
    groups = sorted(sorted(g["hosts"]) for g in doc["groups"])
    assert groups == [["rx9070xt-noble"], ["seed-7900xt", "twin-7900xt"]]
    (refused,) = doc["refused"]
    assert refused["host"] == "seed-5600xt" and any("gfx1010" in r for r in refused["reasons"])
    syntax = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(fleet["inv"]),
                             "-e", "rocm_wizard_hosts=all", "--syntax-check", doc["export"]], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "ANSIBLE_HOME": str(fleet["base"] / ".ansible"),
                                 "HOME": str(fleet["base"] / "home")})
    assert syntax.returncode == 0, syntax.stdout + syntax.stderr




def test_run_fails_one_host_alone_then_resumes_it_and_a_rerun_changes_nothing(fleet: dict[str, Path]) -> None:
    inv, fdir, base = str(fleet["inv"]), str(fleet["fleet"]), fleet["base"]
    fail = base / "rx9070xt-noble" / ".sandbox" / "fail" / "amdgpu-install"
    fail.parent.mkdir(parents=True, exist_ok=True)
    fail.write_text("--usecase\nE: Unable to locate package rocm-hip-runtime (injected by the test)\n")
    first = wizard("fleet", "run", "upgrade-6.4", "-i", inv, "--fleet-dir", fdir, "--limit", RUN_HOSTS,
                   "--max-fail", "50", "--json", cwd=base)
    assert first.returncode == 1, first.stderr[-3000:]
    rows = {r["host"]: r for r in json.loads(first.stdout)["hosts"]}
    ok, bad = rows["seed-7900xt"], rows["rx9070xt-noble"]
    assert ok["failed"] is None and ok["steps_done"] == ok["steps"] and ok["reboot"] == "rebooted"
    assert ok["verify"]["status"] == "pass"
    assert bad["failed"]["task"].lower().startswith("step 4/") and "rocm_install" in bad["failed"]["task"]
    assert "Unable to locate package" in bad["failed"]["message"] and "--limit rx9070xt-noble" in bad["next"]
    assert bad["steps_done"] == 2  # preflight and backup
    assert rows["seed-5600xt"]["refused"]
    report = json.loads((fleet["fleet"] / "report.json").read_text())
    assert {r["host"] for r in report["hosts"]} == set(rows)
    assert "rx9070xt-noble" in (fleet["fleet"] / "report.html").read_text()

    fail.unlink()
    calls_before = (base / "rx9070xt-noble" / ".sandbox" / "calls.log").read_text().count('"tool": "tar"')
    resumed = wizard("fleet", "run", "upgrade-6.4", "-i", inv, "--fleet-dir", fdir, "--limit", RUN_HOSTS, "--json", "--progress",
                     cwd=base)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    rows = {r["host"]: r for r in json.loads(resumed.stdout)["hosts"]}
    assert rows["rx9070xt-noble"]["steps_done"] == rows["rx9070xt-noble"]["steps"]
    assert rows["rx9070xt-noble"]["verify"]["status"] == "pass"
    # continued from its own progress file: the backup (tar) did not run again
    assert (base / "rx9070xt-noble" / ".sandbox" / "calls.log").read_text().count('"tool": "tar"') == calls_before
    assert "changed" not in [line.split()[1] for line in resumed.stderr.splitlines()
                             if line.startswith("seed-7900xt ") and "controller" not in line]

    again = wizard("fleet", "run", "upgrade-6.4", "-i", inv, "--fleet-dir", fdir, "--limit", RUN_HOSTS, "--progress",
                   cwd=base)
    assert again.returncode == 0, again.stderr[-3000:]
    changed = [line for line in again.stderr.splitlines() if len(line.split()) > 1 and line.split()[1] == "changed"
               and "controller" not in line]
    assert changed == [], changed


def test_verify_runs_the_suite_everywhere_and_writes_the_report(fleet: dict[str, Path]) -> None:
    kept = fleet["base"] / "kept-results"
    res = wizard("fleet", "verify", "-i", str(fleet["inv"]), "--fleet-dir", str(fleet["fleet"]), "--limit",
                 "seed-7900xt:rx9070xt-noble", "--results", str(kept), "--json", cwd=fleet["base"])
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    rows = {r["host"]: r for r in json.loads(res.stdout)["hosts"]}
    assert set(rows) == {"seed-7900xt", "rx9070xt-noble"}
    assert all(r["verify"]["status"] == "pass" and r["verify"]["checks"] > 0 for r in rows.values())
    assert rows["seed-7900xt"]["python"] == "/home/user/pytorch_venv/bin/python"
    assert json.loads((kept / "verify" / "rx9070xt-noble" / "verify.json").read_text())["checks"]
    suite = ET.parse(kept / "junit.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("failures") == "0"
    page = (kept / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and "seed-7900xt" in page
    # the fleet directory's history (detect, the runs) and this results directory's are apart
    kept_report = wizard("fleet", "report", "--results", str(kept), "--json", cwd=fleet["base"])
    assert kept_report.returncode == 0, kept_report.stderr
    assert [(r["kind"], r["passed"]) for r in json.loads(kept_report.stdout)["runs"]] == [("verify", 2)]
    doc = json.loads(wizard("fleet", "report", "--fleet-dir", str(fleet["fleet"]), "--json", cwd=fleet["base"]).stdout)
    assert {"detect", "run"} <= {r["kind"] for r in doc["runs"]}
    # the run migrated rx9070xt-noble and seed-7900xt; a detect afterwards shows each new stack
    wizard("fleet", "detect", "-i", str(fleet["inv"]), "--fleet-dir", str(fleet["fleet"]), "--limit", RUN_HOSTS,
           cwd=fleet["base"])
    changed = {c["host"]: c for c in json.loads(wizard("fleet", "report", "--fleet-dir", str(fleet["fleet"]), "--json",
                                                         cwd=fleet["base"]).stdout)["changed"]}
    assert changed["seed-7900xt"]["state"] == "changed"
    assert {"field": "rocm", "before": "6.2.0", "now": "6.4.4"} in changed["seed-7900xt"]["differences"]
