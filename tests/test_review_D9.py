"""Review D9: one plan, every door (the engine's ``--plan NAME --yes``, the ``--dry-run`` script, the Ansible
role, ``resume``, the TUI). Each case here failed on the code before its mend and passes after it; each has a near
miss that must not fire.

* A done-check is read with the privilege of the action it guards: the engine probes it as the action runs
  (``Engine._check``: root for a root action) and the role gives it the action's ``become``; the script ran every
  check as the invoking user, so a check of a root-only path (the backup, the downloads under a 0700 state dir)
  failed there and the action ran again.
"""

from __future__ import annotations

import pytest
from runner_helpers import plan_of
from test_plan_golden import STATE_DIR, machines

from wizard.model import Action, StepPlan
from wizard.script import render

# --------------------------------------------------------------------------- the script's done-checks


@pytest.mark.unit
def test_the_scripts_check_of_a_root_action_runs_as_root() -> None:
    root_action = Action(("mkdir", "-p", "--", "/var/lib/x/d"), "make it", root=True,
                         check=("test", "-e", "/var/lib/x/d/manifest.json"))
    plan = plan_of(StepPlan(kind="backup", title="t", actions=(root_action,)))
    text = render(plan, machines()["seed-7900xt"])
    assert "if ! sudo -- test -e /var/lib/x/d/manifest.json; then" in text
    assert "  sudo -- mkdir -p -- /var/lib/x/d" in text


@pytest.mark.unit
def test_the_scripts_check_of_a_user_action_runs_as_the_user() -> None:
    """Near miss: a user-scope action's check (a venv's python) gets no sudo."""
    user_action = Action(("python3", "-m", "venv", "/home/u/v"), "make the venv", as_user=True,
                         check=("test", "-x", "/home/u/v/bin/python"))
    plan = plan_of(StepPlan(kind="pip_pin", title="t", actions=(user_action,)))
    text = render(plan, machines()["seed-7900xt"])
    assert "if ! test -x /home/u/v/bin/python; then" in text
    assert "sudo" not in text.split("# ---- step 1/1")[1]


@pytest.mark.unit
def test_a_shipped_plans_script_reads_its_root_downloads_as_root() -> None:
    """The amdgpu-install package in the root state dir (0700): the script looked for it as the user, never found
    it and fetched it again; the engine looks as root."""
    from wizard.planner import resolve_plan

    facts = machines()["seed-7900xt"]
    text = render(resolve_plan("upgrade-6.4", facts, state_dir=STATE_DIR, wizard_python="python3"), facts)
    assert f"if ! sudo -- test -s {STATE_DIR}/downloads/amdgpu-install_" in text
    assert f"if ! test -s {STATE_DIR}/downloads/" not in text
