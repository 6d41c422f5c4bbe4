"""A task whose command may exit 1 or 4 itself (an accepted answer) does not take the lock wrapper's refusal for that
answer (C11's finding: `systemctl disable` of the resume unit accepts 0 and 1, so a play refused over an unfinished
wizard run, exit 1, went on as if the unit had been disabled, and its step could be marked done)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from wizard.fleet.lock import REFUSED, refused
from wizard.script import held_line, unfinished_line

pytestmark = pytest.mark.unit


def _cond(expr: str, rc: int, stderr: str) -> bool:
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar, trust_as_template

    t = Templar(loader=DataLoader(), variables={"r": {"rc": rc, "stderr": stderr}})
    return bool(t.evaluate_conditional(trust_as_template(expr)))


def test_every_refusal_line_of_the_wrapper_is_recognised() -> None:
    for line in (held_line("pid 7, started T: rocm-wizard --plan x", "/var/lib/rocm-wizard/lock", "again"),
                 unfinished_line("20261201-000000-abcd", "again"),
                 "rocm-wizard: cannot take the wizard's lock /var/lib/rocm-wizard/lock: refusing it: x is a symlink"):
        assert re.match(REFUSED, line), line
        assert _cond(f"r.rc not in [0, 1] or {refused('r')}", 1, line + "\n")


def test_near_miss_the_commands_own_accepted_answer_is_not_a_refusal() -> None:
    for stderr in ("", "Removed /etc/systemd/system/multi-user.target.wants/rocm-wizard-resume.service.\n",
                   "Failed to disable unit: Unit file rocm-wizard-resume.service does not exist.\n",
                   "note: rocm-wizard: another rocm-wizard run holds the lock\n"):  # not at the start: the command's
        assert not _cond(f"r.rc not in [0, 1] or {refused('r')}", 1, stderr), stderr
    assert _cond(f"r.rc not in [0, 1] or {refused('r')}", 5, "")


def _accepting_1(tasks: Any) -> list[dict[str, Any]]:
    out = []
    for t in tasks if isinstance(tasks, list) else []:
        if isinstance(t, dict):
            out += _accepting_1(t.get("block"))
            if "not in [0, 1]" in str(t.get("failed_when", "")):
                out.append(t)
    return out


def test_the_exported_role_fails_a_refused_task_that_accepts_1(tmp_path: Path) -> None:
    """On a dnf machine downgrade-6.2's removal simulation accepts exit 1 (dnf answers no); with the plan's state dir
    outside /var it runs under the lock wrapper: its rendered task fails on the wrapper's refusal and passes on dnf's
    own exit 1."""
    from tests.fleet.test_role_lock_F11 import yaml_load
    from tests.test_plan_golden import machines
    from wizard.fleet.export import PlanGroup, export
    from wizard.planner import resolve_plan

    rp = resolve_plan("downgrade-6.2", machines()["rhel9-mi300x"], state_dir=str(tmp_path / "state"),
                      wizard_python="python3")
    export([PlanGroup(rp)], tmp_path / "export")
    role = next((tmp_path / "export" / "roles").iterdir())
    tasks = [t for f in sorted((role / "tasks").glob("*.yml")) for t in _accepting_1(yaml_load(f))]
    assert tasks, "no task of downgrade-6.2 on rhel9-mi300x accepts exit 1"
    for t in tasks:
        reg = t["register"]
        assert "rocm-wizard-lock" in t["ansible.builtin.command"]["argv"], t["name"]  # it runs under the wrapper
        expr = t["failed_when"].replace(reg, "r")
        assert _cond(expr, 1, unfinished_line("20261201-000000-abcd", "again") + "\n"), t["name"]
        assert _cond(expr, 4, held_line("pid 7, started T: x", "/s/lock", "again") + "\n"), t["name"]
        assert not _cond(expr, 1, "Error: Operation aborted.\n"), t["name"]
        assert _cond(expr, 2, ""), t["name"]


def test_the_collection_fails_a_refused_action_that_accepts_1() -> None:
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar, trust_as_template

    from wizard.fleet.collection import action_tasks

    run = next(t for t in action_tasks() if t["name"] == "Run the action")

    def fails(rc: int, stderr: str) -> bool:
        t = Templar(loader=DataLoader(), variables={
            "rocm_wizard_result": {"rc": rc, "stderr": stderr}, "rocm_wizard_step": {"verify": False},
            "rocm_wizard_action": {"ok_codes": [0, 1]}})
        return bool(t.evaluate_conditional(trust_as_template(run["failed_when"])))

    assert fails(1, held_line("pid 7, started T: rocm-wizard --plan x", "/var/lib/rocm-wizard/lock", "again") + "\n")
    assert not fails(1, "Failed to disable unit: Unit file rocm-wizard-resume.service does not exist.\n")
    assert not fails(0, "")
    assert fails(5, "")
