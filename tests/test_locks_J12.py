"""Helper J12: the dry-run script takes the locks the engine takes (wizard.steps.plan_locks, the one rule). Each case
failed on the code before its mend; each has a near miss that must not fire.

Where the script and the engine differed (the engine: RunService._locks_for, J11):

* a system plan that changes a user's things (upgrade-6.4's pip step into /home/U/venv, its activate block): the
  engine takes the system state dir's lock and that user's; the script took only its state dir's, so
  `bash upgrade-6.4.sh` ran at once with U's own pip-only run of that venv (U's lock), and U's run with the script;
* a system plan whose state dir is a user's (made by U's own wizard, not root: `rocm-wizard --plan X --dry-run`): the
  engine takes the system state dir's lock too (two users with sudo never run system plans at once); the script took
  only U's.

Near misses: a user-only plan's script needs no root and takes only the user's lock; two users' own user-only runs
never block each other; a run after a finished one is not refused.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runner_helpers import plan_of, until, wizard

from wizard import exit_codes
from wizard.host import LiveHost
from wizard.model import Action, ResolvedPlan, StepPlan
from wizard.record import replace
from wizard.runner.executor import LiveExecutor
from wizard.runner.lock import Lock, LockHeld, held
from wizard.runner.privilege import Privilege
from wizard.runner.service import Machine, RunError, RunService
from wizard.script import lock_paths, render
from wizard.steps import PlanLock, executor_locks, home_user_state, plan_locks

USER_STATE = "home/user/.local/state/rocm-wizard"  # the sandbox user's state dir, under the sandbox root
SYSTEM = "/var/lib/rocm-wizard"


def _system_plan(venv: str = "/home/alice/venv", *, state_dir: str | None = SYSTEM, user_level: bool = True,
                 wait: Path | None = None) -> ResolvedPlan:
    """A root step, and (``user_level``) a pip step that changes ``venv`` as its user (``wait``: it waits for that file)."""
    steps = [StepPlan("groups", "groups", (Action(("true",), "add the user to render", root=True,
                                                  changes=("/etc/group",)),))]
    if user_level:
        argv = ("sh", "-c", f"touch {wait}.started; while [ ! -e {wait} ]; do sleep 0.05; done") if wait else ("true",)
        steps.append(StepPlan("pip_pin", "pin", (Action(argv, "pip", as_user=True, changes=(f"venv:{venv}",)),),
                              params=(("venv", venv),)))
    return replace(plan_of(*steps, name="upgrade-6.4"), state_dir=state_dir)


def _user_only_plan(venv: str, state_dir: str) -> ResolvedPlan:
    step = StepPlan("pip_pin", "pin", (Action(("true",), "pip", as_user=True, changes=(f"venv:{venv}",)),),
                    params=(("venv", venv),))
    return replace(plan_of(step, name="pip-only"), state_dir=state_dir)


# --------------------------------------------------------------------------- the rule, pure


@pytest.mark.unit
def test_the_rule_a_system_plan_changing_a_users_venv_takes_the_system_then_the_users_lock() -> None:
    plan = _system_plan()
    assert plan_locks(plan, system_state=None, user_state="/home/alice/.local/state/rocm-wizard") == (
        PlanLock(SYSTEM, True), PlanLock("/home/alice/.local/state/rocm-wizard", False))
    # the executors find the user's state dir from the venv's home, as the engine run as root does
    assert home_user_state(plan) == "/home/alice/.local/state/rocm-wizard"
    assert executor_locks(plan) == plan_locks(plan, system_state=None, user_state=home_user_state(plan))
    # a user's own system plan (state in their home): the system state dir first, then theirs
    own = _system_plan(state_dir="/home/alice/.local/state/rocm-wizard")
    assert [lk.path for lk in executor_locks(own)] == [f"{SYSTEM}/lock", "/home/alice/.local/state/rocm-wizard/lock"]


@pytest.mark.unit
def test_near_miss_the_rule_takes_no_users_lock_where_no_users_things_change_and_no_system_lock_for_a_user_plan() -> None:
    assert executor_locks(_system_plan(user_level=False)) == (PlanLock(SYSTEM, True),)
    assert home_user_state(_system_plan("/root/venv")) is None  # root's own things: its state dir is the plan's
    user_only = _user_only_plan("/home/alice/venv", "/home/alice/.local/state/rocm-wizard")
    assert executor_locks(user_only) == (PlanLock("/home/alice/.local/state/rocm-wizard", False),)
    # a state dir named on the command line holds everything: no other system lock
    assert executor_locks(_system_plan(state_dir="/tmp/x", user_level=False)) == (PlanLock("/tmp/x", False),)
    # one dir spelled with a trailing slash is one lock
    assert len(plan_locks(user_only, system_state=None, user_state="/home/alice/.local/state/rocm-wizard/")) == 1


@pytest.mark.unit
def test_the_script_renders_the_rules_locks_in_its_order() -> None:
    from test_plan_golden import machines

    plan = _system_plan()
    text = render(plan, machines()["seed-7900xt"])
    assert f"locks=({SYSTEM}/lock /home/alice/.local/state/rocm-wizard/lock)" in text
    assert lock_paths(plan) == executor_locks(plan)
    user = render(_user_only_plan("/home/alice/venv", "/home/alice/.local/state/rocm-wizard"),
                  machines()["seed-7900xt"])
    assert "locks=(/home/alice/.local/state/rocm-wizard/lock)" in user
    assert "sudo" not in user.split("coproc wizard_lock", 1)[1].split("\n", 1)[0]  # the helper needs no root


# --------------------------------------------------------------------------- the script against the engine, on temp dirs


def _run(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(path)], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def _facts():  # type: ignore[no-untyped-def]
    from test_plan_golden import machines

    return machines()["seed-7900xt"]



@pytest.fixture(autouse=True)
def _sudo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in sudo on PATH (the script's root step, the engine's `sudo -n -u alice -H --`): it runs the rest."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "sudo").write_text('#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done; shift; exec "$@"\n')
    (bin_dir / "sudo").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")


@pytest.mark.integration
def test_the_script_of_a_system_plan_refuses_while_the_users_own_run_holds_the_users_lock(tmp_path: Path) -> None:
    system, alice = tmp_path / "system", tmp_path / "alice-state"
    marker = tmp_path / "ran"
    plan = replace(_system_plan(str(marker)), state_dir=str(system))
    path = tmp_path / "plan.sh"
    path.write_text(render(plan, _facts(), user_state=str(alice)))
    alice.mkdir(mode=0o700)
    with Lock(alice / "lock", command="rocm-wizard --plan pip-only --yes"):
        r = _run(path)
    assert r.returncode == exit_codes.LOCKED, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "rocm-wizard --plan pip-only --yes" in lines[0] and str(alice / "lock") in lines[0]
    assert not (system / "script").exists()  # nothing ran, no progress
    assert held(system / "lock") is None  # nothing taken is kept
    # near miss: the user's lock free, the script runs, and again at once (a run after a finished one)
    for _ in range(2):
        r = _run(path)
        assert r.returncode == 0, r.stdout + r.stderr
    assert held(system / "lock") is None and held(alice / "lock") is None


@pytest.mark.integration
def test_the_engine_refuses_while_the_script_holds_the_users_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`sudo rocm-wizard --plan pip-only` (root's journal, SUDO_USER alice) while alice's upgrade-6.4 script runs its
    pip step: refused (exit 4), naming the script."""
    system, alice, go = tmp_path / "system", tmp_path / "alice-state", tmp_path / "go"
    plan = replace(_system_plan("/home/alice/venv", wait=go), state_dir=str(system))
    path = tmp_path / "plan.sh"
    path.write_text(render(plan, _facts(), user_state=str(alice)))
    proc = subprocess.Popen(["bash", str(path)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    root_state = tmp_path / "root-state"
    host = LiveHost()
    m = Machine(host, LiveExecutor(host.environ, Privilege(is_root=True, sudo_user="alice")), root_state,
                tmp_path / "logs", str(root_state), [], user_state=str(alice), user_state_root=alice,
                user_state_owner="alice")
    try:
        assert until(Path(f"{go}.started").exists), proc.stderr
        with pytest.raises(RunError) as exc, RunService(m)._held(_user_only_plan("/home/alice/venv", str(alice))):
            pass
        assert exc.value.code == exit_codes.LOCKED and "dry-run script of plan upgrade-6.4" in exc.value.message
        with pytest.raises(LockHeld):  # and the system's (its state dir's) too
            Lock(system / "lock").acquire()
    finally:
        go.write_text("")
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    # near miss: the script ended: the engine's run goes on
    with RunService(m)._held(_user_only_plan("/home/alice/venv", str(alice))) as locks:
        assert len(locks) == 2


@pytest.mark.integration
def test_the_script_refuses_over_an_unfinished_run_in_the_users_state_dir(tmp_path: Path) -> None:
    """The user's own runs are recorded in their state dir: a failed pip-only run of theirs there is resumed, rolled
    back or abandoned before a script that changes their venv starts (what a new plan of the wizard's waits for)."""
    system, alice = tmp_path / "system", tmp_path / "alice-state"
    plan = replace(_system_plan(), state_dir=str(system))
    path = tmp_path / "plan.sh"
    path.write_text(render(plan, _facts(), user_state=str(alice)))
    (alice / "runs" / "r7").mkdir(parents=True)
    (alice / "current").write_text("r7\n")
    journal = alice / "runs" / "r7" / "journal.jsonl"
    journal.write_text('{"event": "run-start", "plan": "pip-only"}\n{"event": "run-end", "state": "failed"}\n')
    r = _run(path)
    assert r.returncode == 1 and "run r7 of the wizard is not finished" in r.stderr, r.stdout + r.stderr
    assert not (system / "script").exists()
    # near miss: that run finished
    journal.write_text(journal.read_text() + '{"event": "run-end", "state": "done"}\n')
    assert _run(path).returncode == 0


@pytest.mark.integration
def test_near_miss_two_users_own_user_only_scripts_never_block_each_other(tmp_path: Path) -> None:
    alice, bob, go = tmp_path / "alice-state", tmp_path / "bob-state", tmp_path / "go"
    step = StepPlan("pip_pin", "pin", (Action(("sh", "-c", f"touch {go}.started; while [ ! -e {go} ]; do sleep 0.05; done"),
                                              "pip", as_user=True, changes=("venv:/home/bob/venv",)),),
                    params=(("venv", "/home/bob/venv"),))
    b_plan = replace(plan_of(step, name="pip-only"), state_dir=str(bob))
    (tmp_path / "bob.sh").write_text(render(b_plan, _facts(), user_state=str(bob)))
    (tmp_path / "alice.sh").write_text(render(_user_only_plan("/home/alice/venv", str(alice)), _facts(),
                                              user_state=str(alice)))
    proc = subprocess.Popen(["bash", str(tmp_path / "bob.sh")], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert until(Path(f"{go}.started").exists)
        r = _run(tmp_path / "alice.sh")
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        go.write_text("")
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err


# --------------------------------------------------------------------------- a shipped plan on a sandbox


@pytest.mark.integration
@pytest.mark.usefixtures("isolated_state")
def test_the_upgrade_script_on_a_sandbox_refuses_while_the_user_holds_their_lock(tmp_path: Path) -> None:
    from test_script_resume import run_script

    sb = tmp_path / "sb"
    r = wizard(["--sandbox", str(sb), "--profile", "seed-7900xt", "--plan", "upgrade-6.4", "--dry-run"])
    assert r.returncode == 0, r.stderr
    user_state = sb / USER_STATE
    user_state.mkdir(parents=True, mode=0o700)
    with Lock(user_state / "lock", command="rocm-wizard --plan pip-only --yes"):
        res = run_script(sb, r.stdout, sys.executable)
    assert res.returncode == exit_codes.LOCKED, res.stdout[-2000:] + res.stderr[-2000:]
    assert "rocm-wizard --plan pip-only --yes" in res.stderr and "/home/user/.local/state/rocm-wizard/lock" in res.stderr
    assert not (sb / "var/lib/rocm-wizard/script").exists()
    assert held(sb / "var/lib/rocm-wizard/lock") is None
