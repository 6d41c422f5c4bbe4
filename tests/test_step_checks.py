"""One definition per done-check (issue 20): each step kind states the check that reads the machine, or why
its record is the answer; the engine, the dry-run script and the Ansible role render that same check. The
plan's machine binding is one program too: the first preflight check of the script and the engine, an
assert per host in the role ahead of every destructive task; the role reads its progress as root and fails
the host when it cannot."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from wizard import binding
from wizard.fleet.export import CHECKED, role_tasks
from wizard.model import PREFLIGHT, Facts, ResolvedPlan
from wizard.plan_file import builtin_plan_names
from wizard.planner import PlanRefused, resolve_plan
from wizard.runner import planfile
from wizard.script import READ_RECORD, command, render
from wizard.steps import registry

pytestmark = pytest.mark.unit

MACHINES = ("seed-7900xt", "rx9070xt-noble-fresh", "rx9070xt-noble-no-kfd")


@functools.lru_cache(maxsize=None)
def _facts() -> dict[str, Facts]:
    from test_plan_golden import machines

    return machines()


@functools.lru_cache(maxsize=None)
def plans() -> tuple[ResolvedPlan, ...]:
    out = []
    for m in MACHINES:
        for name in builtin_plan_names():
            try:
                out.append(resolve_plan(name, _facts()[m], state_dir="/var/lib/rocm-wizard", wizard_python="python3"))
            except PlanRefused:
                pass
    return tuple(out)


def _tasks(plan: ResolvedPlan) -> list[dict[str, Any]]:
    """Every task of the role, blocks flattened."""
    out: list[dict[str, Any]] = []
    for t in role_tasks(plan, "r"):
        out.append(t)
        out += t.get("block", [])
    return out


def _argv(task: dict[str, Any]) -> list[str] | None:
    """The task's command, without the wizard's lock around it (``sh -c {{ ROLE_lock }} rocm-wizard-lock MODE``)."""
    cmd = task.get("ansible.builtin.command")
    argv = [str(a) for a in cmd["argv"]] if cmd else None
    return argv[5:] if argv and argv[3:4] == ["rocm-wizard-lock"] else argv


def test_every_kind_states_its_check_or_why_the_record_is_the_answer() -> None:
    with_check = {s.kind for p in plans() for s in p.steps if s.check is not None}
    for name, kind in registry().items():
        assert kind.record_only or name in with_check, f"{name}: no done-check and no record_only reason"
    assert {"pip_pin", "env", "rocm_install", "core_sdk_install", "docker"} <= with_check
    assert registry()["backup"].record_only and registry()["reboot"].record_only


def test_the_engine_script_and_role_run_the_same_check() -> None:
    seen = 0
    for plan in plans():
        script = render(plan, _facts()["seed-7900xt"])
        tasks = _tasks(plan)
        for k, step in enumerate(plan.steps, 1):
            if step.check is None or step.skipped_reason or step.reboot:
                continue
            seen += 1
            # the script: checked when the progress says done; the drift function runs it again
            assert f"if step_done {k} && ! {command(step.check)}" in script
            # the role: the same argv, checked by the progress read when the progress says done (a system state dir:
            # one root task, a user check as the GPU user), the step run again when it fails
            read = _argv(tasks[0]) or []
            assert read[:4] == ["python3", "-c", CHECKED, READ_RECORD]
            assert [k, "root" if step.check.root else "user", list(step.check.command())] in json.loads(read[-1])
            assert tasks[0]["become"] is True
            block = next(t for t in tasks if "block" in t and f"step-{k}" in t["tags"])
            assert block["when"] == f"'{k}' not in r_progress.stdout_lines"
            # the engine: the plan file (what a run replays) carries the check itself
            again = planfile.loads(planfile.dumps(plan)).steps[k - 1].check
            assert again == step.check
    assert seen > 20


def test_the_plan_carries_its_machine_and_checks_it_first() -> None:
    plan = next(p for p in plans() if p.name == "downgrade-6.2")
    m = dict(plan.machine)
    assert m["os"] == "ubuntu 22.04" and m["pci"] == "1002:744c,1002:744c" and m["gfx"] == "gfx1100,gfx1100"
    assert m["rocm"] == "6.2.0" and m["venv"].endswith("pytorch_venv-downgrade-6.2") and m["venv_python"] == "absent"
    bind = plan.steps[0].actions[0]
    assert plan.steps[0].kind == PREFLIGHT and bind.name == binding.NAME and bind == binding.check(plan.machine)
    assert json.loads(bind.argv[3]) == {k: v for k, v in plan.machine if k != "venv"}
    # the script's preflight runs it before anything else
    script = render(plan, _facts()["seed-7900xt"])
    assert script.index(command(bind)) < script.index("mark_done 1")
    # the role: read (in check mode too), then an assert per host, ahead of every destructive task
    tasks = _tasks(plan)
    read = next(i for i, t in enumerate(tasks) if _argv(t) == list(bind.argv))
    assert tasks[read]["check_mode"] is False and tasks[read]["failed_when"] is False
    check = tasks[read + 1]["ansible.builtin.assert"]
    assert check["that"] == [f"{tasks[read]['register']}.rc == 0"] and "stderr" in check["fail_msg"]
    destructive = {a.argv for s in plan.steps for a in s.actions if a.destructive}
    first_destructive = min(i for i, t in enumerate(tasks) if _argv(t) and tuple(_argv(t) or ()) in destructive)
    assert read + 1 < first_destructive
    assert plan.machine == planfile.loads(planfile.dumps(plan)).machine


def test_a_bundle_binds_only_what_it_knows() -> None:
    from wizard.model import Gpu, OsInfo

    facts = Facts(os=OsInfo(id="ubuntu", version="24.04"), gpus=(Gpu(gfx="gfx1100"),), origin="bundle:x")
    assert binding.bound_facts(facts) == (("os", "ubuntu 24.04"),)  # no PCI id, no KFD, no /opt: not bound


def test_the_role_reads_its_progress_as_root_and_fails_the_host_when_it_cannot() -> None:
    plan = next(p for p in plans() if p.name == "downgrade-6.2")
    read = role_tasks(plan, "r")[0]
    assert read["ansible.builtin.command"]["argv"][3:5] == ["rocm-wizard-lock", "read"]  # under the wizard's lock
    assert (_argv(read) or [])[:4] == ["python3", "-c", CHECKED, READ_RECORD]
    assert read["become"] is True and "failed_when" not in read and read["check_mode"] is False


@pytest.mark.parametrize("content, code, said", [
    (None, 0, ""), ("", 0, ""), ("1\n2\n", 0, "1\n2\n"), ("1\nx\n", 1, "does not parse"), ("dir", 1, "cannot read"),
])
def test_reading_a_record(tmp_path: Path, content: str | None, code: int, said: str) -> None:
    import subprocess

    p = tmp_path / "progress"
    if content == "dir":
        p.mkdir()
    elif content is not None:
        p.write_text(content)
    r = subprocess.run(["sh", "-c", READ_RECORD, "sh", str(p), "[0-9]+"], capture_output=True, text=True)
    assert r.returncode == code
    assert said in (r.stdout if code == 0 else r.stderr)
    if code:
        assert str(p) in r.stderr
