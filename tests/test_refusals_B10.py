"""Review B10: a run refused before its first change leaves nothing to clean up; the dry-run script takes the
wizard's lock. Each case here failed on the code before its mend; each has a near miss that must not fire.

* A plan file made for one machine, run on another: the machine binding (``wizard.binding``, the preflight's
  first check) refused it, but only inside a run that was then recorded ``failed``: that run blocked every new
  plan, so the ``--replan`` its own message recommends was refused ("run ... is failed"), the ``resume`` the
  engine's hint named could never pass, and a fleet's ``--replan`` met the same block. The run service now
  checks the binding before it records a run (as it checks ``plan_checks.refusals``): exit 5, one message
  naming what works, the machine's runs as they were. Every door goes through ``RunService.start``: the CLI,
  the TUI and the fleet's host engine.
* The dry-run script took no lock: it ran while an engine run was in progress, and over a stopped or failed
  run of the wizard. It now holds the engine's own flock on ``STATE/lock`` for as long as it runs (the engine,
  meanwhile, names it as the holder) and refuses over an unfinished run of the wizard; its own progress (a
  script stopped half way) never blocks it.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from runner_helpers import calls, end_state, plan_of, wizard

from wizard import exit_codes
from wizard.machine_session import MachineSession, MachineSpec
from wizard.model import Action, ResolvedPlan, StepPlan
from wizard.record import replace
from wizard.runner.journal import Journal
from wizard.runner.lock import Lock, LockHeld
from wizard.runner.records import RunEnd, RunStart, RunState
from wizard.script import render

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("isolated_state")]

STATE = "var/lib/rocm-wizard"


def _seed_plan(tmp_path: Path) -> Path:
    """pip-only resolved for a seed-7900xt sandbox, written as a replayable plan file (as runs/<id>/plan.json)."""
    from wizard.runner import planfile

    seed = MachineSession(MachineSpec(sandbox=str(tmp_path / "seed"), profile="seed-7900xt"))
    plan = seed.resolve("pip-only")
    assert dict(plan.machine)["os"] == "ubuntu 22.04"
    path = tmp_path / "seed-plan.json"
    path.write_text(planfile.dumps(plan))
    return path


def _status(root: Path) -> dict:
    r = wizard(["--sandbox", str(root), "status", "--json"])
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


# --------------------------------------------------------------------------- 1. the binding: the CLI


def test_a_plan_for_another_machine_is_refused_without_a_run_and_replan_then_runs(tmp_path: Path) -> None:
    plan_json = _seed_plan(tmp_path)
    other = tmp_path / "other"
    assert wizard(["--sandbox", str(other), "--profile", "rx9070xt-noble", "detect"]).returncode == 0
    before = end_state(other)

    r = wizard(["--sandbox", str(other), "--plan", str(plan_json), "--yes"])
    assert r.returncode == exit_codes.REFUSED, r.stdout[-3000:] + r.stderr
    assert "this is not the machine the plan was made for" in r.stderr
    assert "os: the plan was made for ubuntu 22.04, this machine has ubuntu 24.04" in r.stderr
    assert f"rocm-wizard --sandbox {other} --plan FILE --replan" in r.stderr  # what works, for this machine
    assert f"rocm-wizard --sandbox {other} --plan pip-only" in r.stderr
    assert "resume" not in r.stderr and "abandon" not in r.stderr  # nothing to resume or forget
    # the machine's runs as they were: none recorded, nothing to abandon, nothing changed
    assert not (other / STATE / "current").exists() and not list((other / STATE).glob("runs/*"))
    assert _status(other)["state"] == "none"
    assert end_state(other) == before and not calls(other, "pip")

    # the --replan the message names: resolved again for this machine, it runs (before: "run ... is failed")
    r = wizard(["--sandbox", str(other), "--plan", str(plan_json), "--replan", "--yes"])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    assert _status(other)["state"] == "done"


def test_a_refused_plan_leaves_the_last_run_current_and_undoable(tmp_path: Path) -> None:
    """The run that was current stays current: its status, its rollback, as before the refused plan."""
    plan_json = _seed_plan(tmp_path)
    other = tmp_path / "other"
    r = wizard(["--sandbox", str(other), "--profile", "rx9070xt-noble", "--plan", "pip-only", "--yes"])
    assert r.returncode == 0, r.stdout[-3000:]
    done = _status(other)
    r = wizard(["--sandbox", str(other), "--plan", str(plan_json), "--yes"])
    assert r.returncode == exit_codes.REFUSED and "not the machine the plan was made for" in r.stderr
    after = _status(other)
    assert [after[k] for k in ("run_id", "state", "plan", "journal")] == [done[k] for k in ("run_id", "state", "plan",
                                                                                               "journal")]
    r = wizard(["--sandbox", str(other), "rollback", "--yes"])  # exit 1: the groups have no undo (said, not failed)
    assert "rolled-back (run " + done["run_id"] in r.stdout, r.stdout[-3000:] + r.stderr
    assert _status(other)["state"] == "rolled-back" and _status(other)["run_id"] == done["run_id"]


def test_near_miss_a_failure_mid_run_is_still_recorded_failed_and_blocks(tmp_path: Path) -> None:
    """A plan for this machine whose step fails after changes: a failed run, kept, blocking a new plan."""
    root = tmp_path / "m"
    assert wizard(["--sandbox", str(root), "--profile", "rx9070xt-noble", "detect"]).returncode == 0
    (root / ".sandbox/fail").mkdir()
    (root / ".sandbox/fail/usermod").write_text("\nusermod: group 'render' does not exist\n")  # step 3, after the backup
    r = wizard(["--sandbox", str(root), "--plan", "pip-only", "--yes"])
    assert r.returncode == 1, r.stdout[-3000:]
    st = _status(root)
    assert st["state"] == "failed" and st["step"] > 1
    r = wizard(["--sandbox", str(root), "--plan", "pip-only", "--yes"])
    assert r.returncode == 1 and "is failed" in r.stderr and "abandon" in r.stderr


def test_near_miss_another_preflight_failure_is_still_a_failed_run_to_resume(tmp_path: Path) -> None:
    """Only the binding is decided before the run: a check the machine can be fixed for (a package URL that does
    not answer now) stays the run's step 1, failed, and `resume` tries it again (tests/test_preflight.py)."""
    sb = tmp_path / "sb"
    assert wizard(["--sandbox", str(sb), "--profile", "seed-7900xt", "detect"]).returncode == 0
    (sb / ".sandbox/fail").mkdir()
    (sb / ".sandbox/fail/wget").write_text("\nwget: unable to resolve host address 'repo.radeon.com'\n")
    r = wizard(["--sandbox", str(sb), "--plan", "downgrade-6.2", "--yes"])
    assert r.returncode == 1 and "FAILED preflight check package-url" in r.stdout
    assert f"rocm-wizard --sandbox {sb} resume" in r.stdout
    st = _status(sb)
    assert st["state"] == "failed" and st["step"] == 1


def test_near_miss_skipping_the_machine_check_runs_the_plan_as_before(tmp_path: Path) -> None:
    """`--skip-preflight machine`: the user says the binding is wrong; it is not checked before the run either."""
    plan_json = _seed_plan(tmp_path)
    other = tmp_path / "other"
    assert wizard(["--sandbox", str(other), "--profile", "rx9070xt-noble", "detect"]).returncode == 0
    r = wizard(["--sandbox", str(other), "--plan", str(plan_json), "--yes", "--skip-preflight", "machine"])
    assert "not the machine the plan was made for" not in r.stdout + r.stderr
    assert (other / STATE / "current").exists()  # a run was recorded: it went past the binding


# --------------------------------------------------------------------------- 1. the binding: the fleet's host side


def test_the_fleet_host_engine_refuses_a_foreign_plan_and_takes_the_replanned_one(tmp_path: Path) -> None:
    """`fleet run --engine` copies each host its plan and runs `fleet engine PLAN.json` there; `--replan` resolves
    again and copies a new plan: the host's wizard must take it (before: its failed run of the old plan blocked)."""
    plan_json = _seed_plan(tmp_path)
    other = tmp_path / "other"
    assert wizard(["--sandbox", str(other), "--profile", "rx9070xt-noble", "detect"]).returncode == 0
    r = wizard(["--sandbox", str(other), "fleet", "engine", str(plan_json)])
    assert r.returncode == exit_codes.REFUSED, r.stdout + r.stderr[-3000:]
    doc = json.loads(r.stdout)
    assert doc["state"] == "none" and doc["changed"] is False and doc["steps_done"] == 0
    # what the controller's row reads (its last line): the row then says `fleet run --replan`
    from wizard.fleet.run import _last_line

    assert "not the machine the plan was made for" in _last_line(doc["message"]) and "--replan" in doc["message"]
    # what --replan copies: the plan resolved for this host
    from wizard.runner import planfile

    here = MachineSession(MachineSpec(sandbox=str(other))).resolve("pip-only")
    replanned = tmp_path / "replanned.json"
    replanned.write_text(planfile.dumps(here))
    r = wizard(["--sandbox", str(other), "fleet", "engine", str(replanned)])
    doc = json.loads(r.stdout)
    assert doc["action"] == "start" and doc["changed"] is True, doc  # started, not blocked by a failed run
    # every step but the verify (no CPU torch given to this rehearsal host) ran
    assert doc["steps_done"] >= doc["steps"] - 1 and doc["status"]["run_id"], doc


# --------------------------------------------------------------------------- 1. the binding: the TUI


def _screen_text(app) -> str:  # type: ignore[no-untyped-def]
    """The text of every Static on the current screen (as tests/tui/test_pilot.py reads it)."""
    from rich.console import Console
    from textual.widgets import Static

    console = Console(width=200, record=True, file=open(os.devnull, "w"), color_system=None)
    for w in app.screen.query(Static):
        console.print(w.content, markup=False)
    return console.export_text()


def test_the_tui_run_of_a_foreign_plan_is_refused_and_offers_no_rollback_or_resume(tmp_path: Path) -> None:
    import asyncio

    from tests.tui.helpers import choose, sandbox_services, settle, wait_for
    from wizard.runner import planfile
    from wizard.session import Move, Stage

    foreign = planfile.load(_seed_plan(tmp_path))
    other = tmp_path / "other"
    assert wizard(["--sandbox", str(other), "--profile", "rx9070xt-noble", "--plan", "pip-only", "--yes"]).returncode == 0
    svc = sandbox_services(other, "rx9070xt-noble", plans={"foreign": foreign})
    runs = svc.runs
    assert runs is not None
    done = runs.current()
    assert done is not None

    async def drive() -> None:
        from wizard.tui.app import make_app

        app = make_app(svc)
        async with app.run_test(size=(100, 32)) as pilot:
            await choose(app, pilot, "foreign")
            await pilot.press("c", "y")
            await wait_for(pilot, lambda: app.session.stage == Stage.FAILED)
            await settle(pilot)
            text = _screen_text(app)
            assert "not the machine the plan was made for" in text and "--replan" in text
            assert "Nothing was changed" in text
            # no run was started: nothing to roll back, and r never resumes the machine's last (done) run
            assert not app.session.can(Move.ROLLBACK) or app.screen.check_action("rollback", ()) is not True
            await pilot.press("r")
            await wait_for(pilot, lambda: not app.running)
            await settle(pilot)
            assert app.session.stage == Stage.FAILED

    asyncio.run(drive())
    after = runs.current()
    assert after is not None and after.id == done.id
    assert [r["event"] for r in after.journal.records()].count("resume") == 0
    assert runs.status().state is RunState.DONE


# --------------------------------------------------------------------------- 2. the script and the lock


def _script_plan(tmp_path: Path, *steps: StepPlan) -> tuple[ResolvedPlan, Path]:
    state = tmp_path / "state"
    plan = replace(plan_of(*steps, name="scripted"), state_dir=str(state))
    return plan, state


def _bash(text: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "plan.sh"
    path.write_text(text)
    return subprocess.run(["bash", str(path)], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def _facts():  # type: ignore[no-untyped-def]
    from test_plan_golden import machines

    return machines()["seed-7900xt"]


def _counting(tmp_path: Path) -> tuple[StepPlan, StepPlan, Path, Path]:
    count, flag = tmp_path / "count", tmp_path / "flag"
    one = StepPlan("backup", "count", (Action(("sh", "-c", f"echo x >> {count}"), "count"),))
    two = StepPlan("pip_pin", "needs the flag", (Action(("test", "-e", str(flag)), "the flag"),))
    return one, two, count, flag


def test_the_script_refuses_while_the_wizard_holds_its_lock(tmp_path: Path) -> None:
    one, two, count, flag = _counting(tmp_path)
    flag.write_text("")
    plan, state = _script_plan(tmp_path, one, two)
    text = render(plan, _facts())
    state.mkdir(mode=0o700)
    lock = Lock(state / "lock", command="rocm-wizard --plan other --yes").acquire()
    try:
        r = _bash(text, tmp_path)
    finally:
        lock.release()
    assert r.returncode == exit_codes.LOCKED, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "holds the lock" in lines[0] and str(state / "lock") in lines[0]
    assert "rocm-wizard --plan other --yes" in lines[0]  # the holder, as the engine's lock names it
    assert not count.exists() and not (state / "script").exists()  # nothing ran, no progress
    # near miss: the lock free, the same script runs to its end, and again at once (the lock was let go)
    for _ in range(2):
        r = _bash(text, tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
    assert count.read_text() == "x\n"


def test_the_wizard_names_the_script_while_the_script_holds_the_lock(tmp_path: Path) -> None:
    mark = tmp_path / "started"
    step = StepPlan("pip_pin", "wait", (Action(("sh", "-c", f"touch {mark}; sleep 5"), "wait"),))
    plan, state = _script_plan(tmp_path, step)
    (tmp_path / "plan.sh").write_text(render(plan, _facts()))
    proc = subprocess.Popen(["bash", str(tmp_path / "plan.sh")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)
    try:
        t0 = time.monotonic()
        while not mark.exists() and time.monotonic() - t0 < 30:
            time.sleep(0.05)
        assert mark.exists(), proc.communicate()
        with pytest.raises(LockHeld) as held:
            Lock(state / "lock").acquire()
        assert f"pid {proc.pid}" in str(held.value) and "dry-run script of plan scripted" in str(held.value)
        assert "that wizard is gone" not in str(held.value)
    finally:
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    Lock(state / "lock").acquire().release()  # let go when the script ended
    mode = (state / "lock").stat().st_mode & 0o777
    assert mode & 0o022 == 0, oct(mode)  # a lock file the engine's state check accepts


def test_the_script_names_the_run_services_lock_file() -> None:
    from wizard.runner.service import LOCK_NAME
    from wizard.script import LOCK_FILE

    assert LOCK_FILE == LOCK_NAME


def _record_run(state: Path, end: RunState | None) -> str:
    rid = "20261130-120000-other-1"
    d = state / "runs" / rid
    d.mkdir(parents=True)
    j = Journal(d / "journal.jsonl")
    j.append(RunStart(rid, "other", str(d / "plan.json"), 3))
    if end is not None:
        j.append(RunEnd(end, step=2, message="the message says \"state\": \"done\" in its text"))
    (state / "current").write_text(rid + "\n")
    return rid


@pytest.mark.parametrize("end", [RunState.FAILED, RunState.STOPPED, RunState.REBOOT_PENDING, None])
def test_the_script_refuses_over_an_unfinished_run_of_the_wizard(tmp_path: Path, end: RunState | None) -> None:
    one, two, count, flag = _counting(tmp_path)
    flag.write_text("")
    plan, state = _script_plan(tmp_path, one, two)
    rid = _record_run(state, end)
    r = _bash(render(plan, _facts()), tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and rid in lines[0], lines
    assert "resume" in lines[0] and "rollback" in lines[0] and "abandon" in lines[0]
    assert not count.exists()


@pytest.mark.parametrize("end", [RunState.DONE, RunState.ROLLED_BACK, RunState.ABANDONED])
def test_near_miss_a_finished_run_of_the_wizard_does_not_stop_the_script(tmp_path: Path, end: RunState) -> None:
    one, two, count, flag = _counting(tmp_path)
    flag.write_text("")
    plan, state = _script_plan(tmp_path, one, two)
    _record_run(state, end)
    r = _bash(render(plan, _facts()), tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert count.read_text() == "x\n"


def test_near_miss_the_scripts_own_stopped_run_resumes(tmp_path: Path) -> None:
    """The script's progress is its own record, never a run of the wizard: stopped at step 2, it goes on there."""
    one, two, count, flag = _counting(tmp_path)
    plan, state = _script_plan(tmp_path, one, two)
    text = render(plan, _facts())
    r = _bash(text, tmp_path)
    assert r.returncode == 1 and count.read_text() == "x\n"  # step 2 failed: no flag
    flag.write_text("")
    r = _bash(text, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert count.read_text() == "x\n"  # step 1 was not run again
    assert (state / "script/scripted.progress").read_text().split() == ["1", "2"]


def test_a_script_run_in_a_sandbox_takes_the_sandbox_machines_lock(tmp_path: Path) -> None:
    """flock is one of the sandbox's mapped tools: the script run there (its paths mapped under the root, as the
    sandbox's own sh maps them) takes the sandbox machine's lock, the one that machine's wizard takes."""
    import sys

    from test_script_resume import run_script

    root = tmp_path / "sb"
    r = wizard(["--sandbox", str(root), "--profile", "rx9070xt-noble", "--plan", "pip-only", "--dry-run"])
    assert r.returncode == 0, r.stderr
    (root / STATE).mkdir(parents=True, exist_ok=True, mode=0o700)
    lock = Lock(root / STATE / "lock", command="rocm-wizard --sandbox x resume").acquire()
    try:
        r = run_script(root, r.stdout, sys.executable)
    finally:
        lock.release()
    assert r.returncode == exit_codes.LOCKED, r.stdout[-2000:] + r.stderr[-2000:]
    assert "holds the lock" in r.stderr and "rocm-wizard --sandbox x resume" in r.stderr
    assert not calls(root, "pip") and not (root / STATE / "script").exists()
