"""Helper S11: one lock for one machine, whoever runs it. Each case failed on the code before its mend; each has a
near miss that must not fire.

* The engine's actions inherit its lock (``wizard.runner.lock.held_fds``): a wizard killed with ``kill -9`` keeps
  the machine locked until the action it started ends. A process an action leaves behind (a daemon a postinst
  starts, ``cmd &``) inherits it too, and kept the machine locked after the run had ended: the engine let go only
  by closing its own descriptor. It now lets go explicitly (``LOCK_UN``): what its actions left behind holds
  nothing once the run is over, and while the wizard lives or is killed mid-action nothing changes.
* The dry-run script held the lock in a helper its actions did not share: ``kill -9`` of the script freed the lock
  while its action (an apt-get, a pip) still ran. Its actions now inherit the helper's input as the engine's
  inherit its lock, and the script lets go explicitly at its end: one rule for both (held while the run or an
  action it started lives; let go at the run's end whatever its actions left behind).
* A run takes the lock of the state dir its journal is in, and the plan's state dir's (its backup, the script's
  progress) where that is another: a plan that changes nothing system-wide keeps its state in the user's state dir
  whoever runs it, so a run of it through sudo (whose journal is root's) and the user's own run or script of it
  locked two different files and ran at once over the same venv and backup.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runner_helpers import plan_of, until, wizard

from wizard import exit_codes
from wizard.model import Action, ResolvedPlan, StepPlan
from wizard.record import replace
from wizard.runner import shell
from wizard.runner.lock import Lock, LockHeld, held
from wizard.script import render

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("isolated_state")]

USER_STATE = "home/user/.local/state/rocm-wizard"  # the sandbox user's state dir, under the sandbox root



def _kill(pidfile: Path) -> None:
    try:
        os.kill(int(pidfile.read_text().split()[0]), signal.SIGKILL)
    except (OSError, ValueError, IndexError):
        pass


def _facts():  # type: ignore[no-untyped-def]
    from test_plan_golden import machines

    return machines()["seed-7900xt"]


def _script(tmp_path: Path, *steps: StepPlan) -> tuple[Path, Path]:
    state = tmp_path / "state"
    plan: ResolvedPlan = replace(plan_of(*steps, name="scripted"), state_dir=str(state))
    path = tmp_path / "plan.sh"
    path.write_text(render(plan, _facts()))
    return path, state


# --------------------------------------------------------------------------- 1. the engine: a process left behind


def test_a_process_an_action_left_behind_does_not_keep_the_engines_lock(tmp_path: Path) -> None:
    lock_path, pidfile = tmp_path / "state" / "lock", tmp_path / "daemon.pid"
    lock = Lock(lock_path, command="rocm-wizard --plan x --yes").acquire()
    try:
        r = shell.run(["sh", "-c", f"sleep 60 >/dev/null 2>&1 & echo $! > {pidfile}"], env=dict(os.environ),
                      on_output=lambda b: None)
        assert r.ok and pidfile.read_text().strip()
        # near miss: while the run goes on, it holds the lock
        assert held(lock_path) is not None
    finally:
        lock.release()
    try:
        os.kill(int(pidfile.read_text()), 0)  # the daemon lives on (it holds an inherited copy of the lock's fd)
        assert held(lock_path) is None  # held by the daemon before: every later run refused
        Lock(lock_path).acquire().release()
    finally:
        _kill(pidfile)


def test_near_miss_an_engine_killed_mid_action_keeps_the_lock_until_the_action_ends(tmp_path: Path) -> None:
    """What the explicit let-go must not undo: the action of a wizard killed with SIGKILL still holds the lock."""
    lock_path, go, mark = tmp_path / "state" / "lock", tmp_path / "go", tmp_path / "started"
    code = ("import os, sys\n"
            "from pathlib import Path\n"
            "from wizard.runner import shell\n"
            "from wizard.runner.lock import Lock\n"
            f"Lock(Path({str(lock_path)!r}), 'rocm-wizard --plan x --yes').acquire()\n"
            f"shell.run(['sh', '-c', 'touch {mark}; while [ ! -e {go} ]; do sleep 0.05; done'], env=dict(os.environ),"
            " on_output=lambda b: None)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1])
    try:
        assert until(mark.exists)
        proc.kill()
        proc.wait(10)
        with pytest.raises(LockHeld) as exc:
            Lock(lock_path).acquire()
        assert "that wizard is gone, an action it ran is not" in str(exc.value)
    finally:
        go.write_text("")
    assert until(lambda: held(lock_path) is None, 10)


# --------------------------------------------------------------------------- 1. the script: kill -9 mid-action


def test_the_script_killed_mid_action_keeps_the_lock_until_the_action_ends(tmp_path: Path) -> None:
    mark, go, ended = tmp_path / "started", tmp_path / "go", tmp_path / "ended"
    step = StepPlan("pip_pin", "wait", (Action(
        ("sh", "-c", f"touch {mark}; while [ ! -e {go} ]; do sleep 0.05; done; touch {ended}"), "wait"),))
    path, state = _script(tmp_path, step)
    proc = subprocess.Popen(["bash", str(path)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        assert until(mark.exists)
        proc.kill()  # kill -9: no trap runs
        proc.wait(10)
        time.sleep(0.3)  # the helper saw its input end before the mend, and let go
        assert held(state / "lock") is not None, "the lock was let go while the script's action still ran"
        with pytest.raises(LockHeld) as exc:
            Lock(state / "lock").acquire()
        assert f"pid {proc.pid}" in str(exc.value) and "dry-run script of plan scripted" in str(exc.value)
        assert "that wizard is gone, an action it ran is not" in str(exc.value)  # the engine's own words
    finally:
        go.write_text("")
    assert until(ended.exists, 10)
    assert until(lambda: held(state / "lock") is None, 10)  # the action ended: the lock is free
    Lock(state / "lock").acquire().release()


def test_near_miss_a_process_an_action_left_behind_neither_holds_the_script_nor_its_lock(tmp_path: Path) -> None:
    pidfile = tmp_path / "daemon.pid"
    step = StepPlan("pip_pin", "start a daemon", (Action(
        ("sh", "-c", f"sleep 60 >/dev/null 2>&1 & echo $! > {pidfile}"), "daemon"),))
    path, state = _script(tmp_path, step)
    try:
        t0 = time.monotonic()
        r = subprocess.run(["bash", str(path)], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, r.stdout + r.stderr
        assert time.monotonic() - t0 < 20  # the script did not wait for the daemon
        os.kill(int(pidfile.read_text()), 0)  # the daemon lives on
        assert held(state / "lock") is None
        Lock(state / "lock").acquire().release()
        # and a run after the finished one is not refused
        r = subprocess.run(["bash", str(path)], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        _kill(pidfile)
# --------------------------------------------------------------------------- 2. which locks a run takes




def _sandbox(tmp_path: Path) -> Path:
    sb = tmp_path / "sb"
    assert wizard(["--sandbox", str(sb), "--profile", "seed-7900xt", "detect"]).returncode == 0
    return sb


def test_a_run_of_a_user_only_plan_takes_the_users_lock_too(tmp_path: Path) -> None:
    """pip-only changes nothing system-wide: its backup and its script's progress are in the user's state dir, while
    the machine's wizard keeps its journal in root's (the sandbox's /var/lib/rocm-wizard, as `sudo rocm-wizard`
    does on a live machine). The user's own run of it (their script, their wizard) holds the user's lock."""
    sb = _sandbox(tmp_path)
    user_state = sb / USER_STATE
    user_state.mkdir(parents=True, mode=0o700)
    lock = Lock(user_state / "lock", command="dry-run script of plan pip-only").acquire()
    try:
        r = wizard(["--sandbox", str(sb), "--plan", "pip-only", "--yes"])
    finally:
        lock.release()
    assert r.returncode == exit_codes.LOCKED, r.stdout[-3000:] + r.stderr[-3000:]
    assert "dry-run script of plan pip-only" in r.stderr and str(user_state / "lock") in r.stderr
    assert not (sb / "var/lib/rocm-wizard/current").exists()  # no run was recorded
    assert not (user_state / "backup").exists()


def test_near_miss_another_users_lock_and_a_finished_run_do_not_stop_a_user_only_run(tmp_path: Path) -> None:
    sb = _sandbox(tmp_path)
    other = sb / "home/other/.local/state/rocm-wizard"
    other.mkdir(parents=True, mode=0o700)
    lock = Lock(other / "lock", command="rocm-wizard --plan pip-only --yes").acquire()  # another user's run
    try:
        r = wizard(["--sandbox", str(sb), "--plan", "pip-only", "--yes"])
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        # a run after the finished one: both locks were let go
        r = wizard(["--sandbox", str(sb), "--plan", "pip-only", "--yes"])
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    finally:
        lock.release()
    assert held(sb / USER_STATE / "lock") is None and held(sb / "var/lib/rocm-wizard/lock") is None



def test_a_wizard_run_as_root_takes_the_users_lock_as_that_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Live, `sudo rocm-wizard`: root never opens a file in the user's state dir; the lock is held by the script's
    helper run through `sudo -n -u USER -H --` (a stand-in sudo here, which records its options and runs the rest)."""
    from wizard.host import LiveHost
    from wizard.runner.executor import LiveExecutor
    from wizard.runner.privilege import Privilege
    from wizard.runner.service import Machine, RunError, RunService

    bin_dir, log = tmp_path / "bin", tmp_path / "sudo.log"
    bin_dir.mkdir()
    (bin_dir / "sudo").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\n'
                                  'while [ "$1" != "--" ]; do shift; done; shift; exec "$@"\n')
    (bin_dir / "sudo").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    root_state, user_state = tmp_path / "root-state", tmp_path / "user-state"
    user_state.mkdir(mode=0o700)
    host = LiveHost()
    m = Machine(host, LiveExecutor(host.environ, Privilege(is_root=True, sudo_user="alice")), root_state,
                tmp_path / "logs", str(root_state), [], user_state=str(user_state), user_state_root=user_state,
                user_state_owner="alice")
    svc = RunService(m)
    plan = replace(plan_of(name="pip-only"), state_dir=str(user_state))
    with svc._held() as locks:
        svc._lock_plan_state(locks, plan)
        assert len(locks) == 2 and held(user_state / "lock") is not None
        assert log.read_text().split()[:5] == ["-n", "-u", "alice", "-H", "--"]
        with pytest.raises(LockHeld):
            Lock(user_state / "lock").acquire()
    assert held(user_state / "lock") is None and held(root_state / "lock") is None
    # the user's own run holds it: the root run is refused, naming it
    lock = Lock(user_state / "lock", command="rocm-wizard --plan pip-only --yes").acquire()
    try:
        with svc._held() as locks, pytest.raises(RunError) as exc:
            svc._lock_plan_state(locks, plan)
    finally:
        lock.release()
    assert exc.value.code == exit_codes.LOCKED and "rocm-wizard --plan pip-only --yes" in exc.value.message
    # near miss: a plan that keeps its state in root's state dir takes no user's lock
    with svc._held() as locks:
        svc._lock_plan_state(locks, replace(plan, state_dir=str(root_state)))
        assert len(locks) == 1
