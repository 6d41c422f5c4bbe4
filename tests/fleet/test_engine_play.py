"""The play of ``fleet run --engine`` and the host side it calls, without Ansible: the drain hooks around a run that
changes the host (never around a finished one), the GPU user and what the host lacks passed to the host's wizard,
``fleet engine --decide`` (read-only), and real roots named by ``rocm_wizard_realroot`` under any connection."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wizard.fleet import engine, realroots
from wizard.fleet.detect import detect_playbook
from wizard.fleet.host_engine import adopt
from wizard.fleet.wheels import WheelSet
from wizard.model import NEEDS_GPU
from wizard.runner.executor import LiveExecutor
from wizard.runner.privilege import Privilege


def tasks_of(doc: list[dict[str, Any]]) -> list[dict[str, Any]]:
    (play,) = doc
    return list(play["tasks"])


def named(tasks: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(t for t in tasks if t["name"] == name)


@pytest.mark.unit
def test_the_engine_play_drains_before_a_run_that_changes_the_host_and_undrains_after_it(tmp_path: Path) -> None:
    rec = engine.EngineRun("upgrade-6.4", (("h1", True), ("h2", False)), (), ())
    wheels = WheelSet("0.1.0", "b" * 64, tmp_path, ("rocm_wizard-0.1.0-py3-none-any.whl",))
    tasks = tasks_of(engine.run_playbook_doc(rec, wheels, tmp_path))
    names = [t["name"] for t in tasks]
    decide, drain = names.index(engine.DECIDE_TASK), names.index(
        "Wizard: the GPU is idle and the host drained before the run changes it")
    run, undrain = names.index(engine.RUN_TASK), names.index("Undrain the host (rocm_wizard_undrain)")
    assert decide < drain < run < names.index(engine.RESUME_TASK) < undrain == len(names) - 1
    # the decision is read-only and runs in check mode; the drain only where the host's run would do something
    assert tasks[decide]["ansible.builtin.command"]["argv"][-1] == "--decide" and tasks[decide]["check_mode"] is False
    assert tasks[drain]["when"] == "(rocm_wizard_engine_run_decision.stdout | from_json).move != 'none'"
    assert tasks[drain]["ansible.builtin.include_tasks"] == "drain.yml"
    assert tasks[undrain]["when"].startswith(f"{engine.DRAINED} is defined")
    argv = [str(a) for a in tasks[run]["ansible.builtin.command"]["argv"]]
    assert argv[argv.index("--user") + 1] == "{{ rocm_wizard_gpu_user | default('') }}"
    assert "rocm_wizard_unavailable" in argv[argv.index("--unavailable") + 1]


@pytest.mark.unit
def test_the_drain_file_beside_the_play_checks_the_gpu_then_drains_and_remembers_it(tmp_path: Path) -> None:
    import yaml  # ansible-core's dependency (the fleet extra)

    engine.drain_files(tmp_path / "run.yml")
    tasks = yaml.safe_load((tmp_path / "drain.yml").read_text())
    assert [t["name"] for t in tasks] == ["Refuse while a process holds /dev/kfd or a render node",
                                          "Drain the host (rocm_wizard_drain)", "Remember the host is drained"]
    assert tasks[0]["become"] is True and tasks[2]["ansible.builtin.set_fact"] == {engine.DRAINED: True}


@pytest.mark.unit
def test_the_host_engine_runs_user_actions_as_the_gpu_user_not_the_connecting_admin() -> None:
    ex = LiveExecutor({}, Privilege(is_root=True, sudo_user="ops"))  # Ansible's become: SUDO_USER is its account
    adopt(ex, user=None, unavailable={NEEDS_GPU: "no GPU in this root"})
    assert ex.privilege.sudo_user is None  # user_for falls back to the owner of the plan's venv
    assert ex.unavailable(NEEDS_GPU) == "no GPU in this root" and ex.unavailable("other") is None
    adopt(ex, user="gpu", unavailable={})
    assert ex.privilege.sudo_user == "gpu" and ex.unavailable(NEEDS_GPU) is None


@pytest.mark.unit
def test_fleet_detect_reads_the_machine_as_the_gpu_user_when_the_play_names_one(tmp_path: Path) -> None:
    import yaml

    (play,) = yaml.safe_load(detect_playbook(tmp_path).read_text())
    for task in play["tasks"]:
        assert task["become"] == "{{ rocm_wizard_gpu_user | default('') | length > 0 }}"
        assert task["become_user"] == "{{ rocm_wizard_gpu_user | default('root', true) }}"


@pytest.mark.integration
def test_a_real_root_reached_over_ssh_is_a_real_root_of_the_fleet(tmp_path: Path) -> None:
    pytest.importorskip("ansible")
    inv = tmp_path / "inventory.ini"
    inv.write_text("[gpus]\n"
                   f"a ansible_host=127.0.0.1 ansible_port=2201 rocm_wizard_realroot={tmp_path}/a\n"
                   f"b ansible_connection=rocm_wizard_realroot rocm_wizard_realroot={tmp_path}/b\n"
                   "c ansible_host=127.0.0.1 ansible_port=2203\n")
    assert realroots.hosts(str(inv), None, tmp_path / "fleet") == {"a": tmp_path / "a", "b": tmp_path / "b"}
    inv.write_text("[gpus]\na ansible_host=127.0.0.1 rocm_wizard_realroot=''\n")
    with pytest.raises(realroots.FleetError, match="a: rocm_wizard_realroot names no directory: it needs DIR"):
        realroots.hosts(str(inv), None, tmp_path / "fleet")


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300, stdin=subprocess.DEVNULL)


@pytest.mark.integration
def test_fleet_engine_decide_says_what_the_run_would_do_and_changes_nothing(tmp_path: Path) -> None:
    from runner_helpers import end_state
    from wizard.machine_session import MachineSession, MachineSpec
    from wizard.runner import planfile

    box = tmp_path / "box"
    session = MachineSession(MachineSpec(sandbox=str(box), profile="seed-7900xt"))
    try:
        plan = session.resolve("pip-only")
    finally:
        session.close()
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(planfile.dumps(plan))
    state = end_state(box)
    res = cli("--sandbox", str(box), "fleet", "engine", str(plan_file), "--decide", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == {"move": "start", "run_id": None, "state": "none"}
    assert end_state(box) == state and not (box / "var/lib/rocm-wizard/current").exists()
    for bad in ("[1]", "{\"gpu\": 3}", "not json"):
        res = cli("--sandbox", str(box), "fleet", "engine", str(plan_file), "--unavailable", bad, cwd=tmp_path)
        assert res.returncode == 2, res.stdout + res.stderr
        assert res.stderr.startswith("rocm-wizard: error: --unavailable: not a JSON object of requirement -> reason"), \
            res.stderr
        assert len(res.stderr.strip().splitlines()) == 1 and end_state(box) == state


@pytest.mark.unit
def test_fleet_verify_runs_the_wizard_fleet_run_engine_installed_as_the_gpu_user(tmp_path: Path) -> None:
    from wizard.fleet.host_engine import PYTHON
    from wizard.fleet.run import verify_playbook_doc

    tasks = tasks_of(verify_playbook_doc({"h1": ["--python", "/home/u/venv/bin/python"]}, tmp_path))
    stat, suite = named(tasks, "verify: the wizard fleet run --engine installed on this host"), named(
        tasks, "verify: the suite")
    assert stat["ansible.builtin.stat"] == {"path": PYTHON} and stat["register"] == "rocm_wizard_engine_python"
    argv = str(suite["ansible.builtin.command"]["argv"])
    assert f"['{PYTHON}', '-m', 'wizard'] if rocm_wizard_engine_python.stat.exists else ['python3', '-m', 'wizard']" \
        in argv and argv.startswith("{{ rocm_wizard_command | default(")
    assert suite["become_user"] == "{{ rocm_wizard_gpu_user | default('root', true) }}"


@pytest.mark.unit
def test_a_copied_root_shares_its_twins_mirror_and_another_root_does_not(tmp_path: Path) -> None:
    from wizard.realroot.rehearsal import MIRROR

    for name, key in (("a", b"k1"), ("b", b"k1"), ("c", b"k2")):
        (tmp_path / name / MIRROR / "keys").mkdir(parents=True)
        (tmp_path / name / MIRROR / "manifest.json").write_text('{"debs": []}')
        (tmp_path / name / MIRROR / "keys/rehearsal.gpg").write_bytes(key)
    assert realroots.same_mirror(tmp_path / "a", tmp_path / "b")
    assert not realroots.same_mirror(tmp_path / "a", tmp_path / "c")  # another signing key
    assert not realroots.same_mirror(tmp_path / "a", tmp_path / "missing")
