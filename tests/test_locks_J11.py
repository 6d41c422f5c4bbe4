"""Helper J11: every run that can change the same thing takes the same lock. Each case failed on the code before its
mend; each has a near miss that must not fire.

* A system plan that installs into a user's venv (upgrade-6.4's pip step, its env step's activate block) kept its
  state in root's state dir and took root's lock only: it ran at once with the user's own pip-only run of that venv
  (which takes the user's lock). Its start, resume and rollback now take that user's lock too: the user its actions
  run as (SUDO_USER, the journal's, the venv's owner), taken as that user by a wizard run as root.
* A user's own run of a system plan kept its journal, and its lock, in the user's state dir: two users with sudo ran
  system plans at once. It now takes the system state dir's lock too, through ``sudo -n --``, before its own (one
  order: the system's, then the users'); where sudo cannot, one line says what to do (exit 1), and a held lock is
  exit 4.
* A set of locks naming one file twice (one dir spelled two ways) takes it once: a second flock of the file the run
  already holds refused the run with its own lock.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from runner_helpers import plan_of, wizard

from wizard import exit_codes
from wizard.host import LiveHost
from wizard.model import Action, ResolvedPlan, StepPlan
from wizard.record import replace
from wizard.runner.executor import LiveExecutor
from wizard.runner.lock import Lock, held
from wizard.runner.privilege import Privilege
from wizard.runner.service import Machine, RunError, RunService

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("isolated_state")]

USER_STATE = "home/user/.local/state/rocm-wizard"  # the sandbox user's state dir, under the sandbox root
SYSTEM_STATE = "var/lib/rocm-wizard"


def _sudo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refuse: bool = False) -> Path:
    """A stand-in sudo on PATH: it records its options, then runs the rest (or refuses as `sudo -n` does)."""
    bin_dir, log = tmp_path / "bin", tmp_path / "sudo.log"
    bin_dir.mkdir(exist_ok=True)
    body = ("echo 'sudo: a password is required' >&2; exit 1\n" if refuse
            else 'while [ "$1" != "--" ]; do shift; done; shift; exec "$@"\n')
    (bin_dir / "sudo").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\n{body}')
    (bin_dir / "sudo").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    return log


def _system_plan(venv: str, *, user_level: bool = True, state_dir: str | None = None) -> ResolvedPlan:
    """A plan with a root step and (``user_level``) a step that changes the home of ``venv``'s owner, as that user."""
    steps = [StepPlan("groups", "groups", (Action(("true",), "add the user to render", root=True, changes=("/etc/group",)),))]
    if user_level:  # a launcher written into the user's home (docker's), and the pip step's venv named
        steps.append(StepPlan("docker", "launcher", (Action(("true",), "write ~/.local/bin/launcher", as_user=True,
                                                            changes=("/home/alice/.local/bin/launcher",)),),
                              params=(("venv", venv),)))
    # the verify step runs as the user and changes nothing: never a reason for the user's lock
    steps.append(StepPlan("verify", "verify", (Action(("true",), "suite", as_user=True),)))
    return replace(plan_of(*steps, name="upgrade-6.4"), state_dir=state_dir)


def _user_only_plan(venv: str, state_dir: str) -> ResolvedPlan:
    step = StepPlan("pip_pin", "pin", (Action(("true",), "pip", as_user=True, changes=(f"venv:{venv}",)),),
                    params=(("venv", venv),))
    return replace(plan_of(step, name="pip-only"), state_dir=state_dir)


# --------------------------------------------------------------------------- 1. a system plan changing a user's venv


def _root_machine(tmp_path: Path, **kw) -> tuple[Machine, Path, Path]:  # type: ignore[no-untyped-def]
    """`sudo rocm-wizard` on a live machine: the journal in root's state dir, SUDO_USER alice (or ``kw``'s)."""
    root_state, user_state = tmp_path / "root-state", tmp_path / "alice-state"
    user_state.mkdir(mode=0o700)
    host = LiveHost()
    privilege = kw.pop("privilege", Privilege(is_root=True, sudo_user="alice"))
    m = Machine(host, LiveExecutor(host.environ, privilege), root_state, tmp_path / "logs", str(root_state), [],
                user_state=str(user_state), user_state_root=user_state, user_state_owner="alice", **kw)
    return m, root_state, user_state


def test_a_system_plan_that_changes_the_users_venv_takes_the_users_lock(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    log = _sudo(tmp_path, monkeypatch)
    m, root_state, user_state = _root_machine(tmp_path)
    svc = RunService(m)
    plan = _system_plan("/home/alice/venv", state_dir=str(root_state))
    with svc._held() as locks:
        svc._lock_plan_state(locks, plan)
        assert len(locks) == 2 and held(user_state / "lock") is not None and held(root_state / "lock") is not None
        assert log.read_text().split()[:5] == ["-n", "-u", "alice", "-H", "--"]  # taken as alice
    assert held(user_state / "lock") is None and held(root_state / "lock") is None
    # alice's own pip-only run of that venv holds her lock: the root run is refused (exit 4), naming it
    lock = Lock(user_state / "lock", command="rocm-wizard --plan pip-only --yes").acquire()
    try:
        with pytest.raises(RunError) as exc, svc._held(plan):
            pass
    finally:
        lock.release()
    assert exc.value.code == exit_codes.LOCKED and "rocm-wizard --plan pip-only --yes" in exc.value.message
    assert held(root_state / "lock") is None  # the lock taken before the refusal was let go


def test_near_miss_a_system_plan_that_changes_nothing_of_a_user_takes_no_users_lock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only root's changes (and a verify run as the user, which changes nothing): the user's lock stays free, so the
    user's own pip-only run goes on meanwhile."""
    log = _sudo(tmp_path, monkeypatch)
    m, root_state, user_state = _root_machine(tmp_path)
    svc = RunService(m)
    lock = Lock(user_state / "lock", command="rocm-wizard --plan pip-only --yes").acquire()
    try:
        with svc._held(_system_plan("/home/alice/venv", user_level=False, state_dir=str(root_state))) as locks:
            assert len(locks) == 1 and held(root_state / "lock") is not None
    finally:
        lock.release()
    assert not log.exists()


def test_root_without_sudo_user_takes_the_lock_of_the_venvs_owner(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Root logged in as root (no SUDO_USER): the run's actions run as the venv's owner (``LiveExecutor.user_for``),
    whose state dir is in their home; the boot-time resume (root) has the user the journal names."""
    import pwd

    log = _sudo(tmp_path, monkeypatch)
    owner = pwd.getpwuid(65534).pw_name  # nobody: a user of every machine, owning the venv here
    venv = tmp_path / "venv"
    venv.mkdir()
    os.chown(venv, 65534, -1)
    theirs = tmp_path / "owner-state"
    theirs.mkdir(mode=0o700)  # (root's here: the stand-in sudo runs the helper as root)
    asked: list[str] = []

    def state_of(user: str) -> str:
        asked.append(user)
        return str(theirs)

    root_state = tmp_path / "root-state"
    host = LiveHost()
    m = Machine(host, LiveExecutor(host.environ, Privilege(is_root=True)), root_state, tmp_path / "logs",
                str(root_state), [], user_state_for=state_of)
    svc = RunService(m)
    plan = _system_plan(str(venv), state_dir=str(root_state))
    with svc._held(plan) as locks:
        assert len(locks) == 2 and held(theirs / "lock") is not None
    assert asked == [owner] and log.read_text().split()[:5] == ["-n", "-u", owner, "-H", "--"]
    # the journal's user (a resume): that user's state dir
    with svc._held(plan, "bob"):
        pass
    assert asked[-1] == "bob"
    # near miss: root's own venv is root's own things: no user's lock
    os.chown(venv, 0, -1)
    with svc._held(plan) as locks:
        assert len(locks) == 1
    assert asked == [owner, "bob"]


def _sandbox(tmp_path: Path) -> Path:
    sb = tmp_path / "sb"
    assert wizard(["--sandbox", str(sb), "--profile", "seed-7900xt", "detect"]).returncode == 0
    return sb


def test_start_resume_and_rollback_of_a_system_plan_take_the_users_lock(tmp_path: Path) -> None:
    """upgrade-6.4 on a sandbox (its journal in the machine's /var/lib/rocm-wizard) pins torch in the user's venv:
    while the user's own run or script holds the user's lock, it neither starts, resumes nor rolls back."""
    sb = _sandbox(tmp_path)
    user_state = sb / USER_STATE
    user_state.mkdir(parents=True, mode=0o700)
    holder = "dry-run script of plan pip-only"

    def locked(args: list[str]):  # type: ignore[no-untyped-def]
        lock = Lock(user_state / "lock", command=holder).acquire()
        try:
            return wizard(["--sandbox", str(sb), *args])
        finally:
            lock.release()

    r = locked(["--plan", "upgrade-6.4", "--yes"])
    assert r.returncode == exit_codes.LOCKED, r.stdout[-3000:] + r.stderr[-3000:]
    assert holder in r.stderr and str(user_state / "lock") in r.stderr
    assert not (sb / SYSTEM_STATE / "current").exists()  # no run was recorded
    # near miss: the user's lock free, the run goes on (to its reboot)
    r = wizard(["--sandbox", str(sb), "--plan", "upgrade-6.4", "--yes"])
    assert r.returncode == exit_codes.REBOOT_PENDING, r.stdout[-3000:] + r.stderr[-3000:]
    r = locked(["resume", "--yes"])
    assert r.returncode == exit_codes.LOCKED and holder in r.stderr, r.stdout[-3000:] + r.stderr[-3000:]
    r = locked(["rollback", "--yes"])
    assert r.returncode == exit_codes.LOCKED and holder in r.stderr, r.stdout[-3000:] + r.stderr[-3000:]
    assert "reboot-pending" in wizard(["--sandbox", str(sb), "status"]).stdout
    # and both locks were let go each time: the resume goes on
    r = wizard(["--sandbox", str(sb), "resume", "--yes"])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert held(user_state / "lock") is None and held(sb / SYSTEM_STATE / "lock") is None


# --------------------------------------------------------------------------- 2. a user's own run of a system plan


def _user_machine(tmp_path: Path, name: str = "alice") -> tuple[Machine, Path, Path]:
    """A user's own `rocm-wizard` on a live machine: the journal in their state dir, the system's elsewhere."""
    own, system = tmp_path / f"{name}-state", tmp_path / "system-state"
    host = LiveHost()
    m = Machine(host, LiveExecutor(host.environ, Privilege(is_root=False)), own, own / "logs", str(own), [],
                user_state=str(own), user_state_root=own, system_state_root=system, system_state_owner="root")
    return m, own, system


def test_a_users_run_of_a_system_plan_takes_the_system_lock_first_through_sudo(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _sudo(tmp_path, monkeypatch)
    m, own, system = _user_machine(tmp_path)
    svc = RunService(m)
    plan = _system_plan("/home/alice/venv", state_dir=str(own))
    asked: list[str] = []
    with svc._held(plan, authorize=lambda: asked.append("root")) as locks:
        assert [str(lk.path) for lk in locks] == [str(system / "lock"), str(own / "lock")]  # the system's first
        assert held(system / "lock") is not None and held(own / "lock") is not None
        assert log.read_text().split()[:2] == ["-n", "--"] and asked == ["root"]  # root asked for before sudo -n
    assert held(system / "lock") is None and held(own / "lock") is None
    # another user's run of a system plan holds it: this one is refused (exit 4), naming it, and takes nothing
    lock = Lock(system / "lock", command="rocm-wizard --plan upgrade-7.2 --yes").acquire()
    try:
        with pytest.raises(RunError) as exc, svc._held(plan):
            pass
        assert held(own / "lock") is None
    finally:
        lock.release()
    assert exc.value.code == exit_codes.LOCKED and "rocm-wizard --plan upgrade-7.2 --yes" in exc.value.message


def test_a_sudo_that_cannot_refuses_with_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _sudo(tmp_path, monkeypatch, refuse=True)
    m, own, system = _user_machine(tmp_path)
    with pytest.raises(RunError) as exc, RunService(m)._held(_system_plan("/home/alice/venv", state_dir=str(own))):
        pass
    text = exc.value.message
    assert exc.value.code == exit_codes.FAILURE and "\n" not in text
    assert str(system / "lock") in text and "sudo: a password is required" in text and "sudo -v" in text
    assert held(own / "lock") is None


def test_a_users_start_of_a_system_plan_asks_for_root_before_the_system_lock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through start(): the run's own authentication (asked once) comes before `sudo -n` takes the system's lock."""
    log = _sudo(tmp_path, monkeypatch)
    m, own, system = _user_machine(tmp_path)
    asked: list[bool] = []

    def authenticate() -> None:
        assert not log.exists(), "sudo -n ran before root was asked for"
        asked.append(True)

    out = RunService(m).start(_system_plan("/home/alice/venv", state_dir=str(own)), yes=True,
                              authenticate=authenticate)
    assert out.state.value == "done", out
    assert asked == [True]  # once
    assert held(system / "lock") is None and held(own / "lock") is None


def test_near_miss_user_only_runs_need_no_root_and_never_block_each_other(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _sudo(tmp_path, monkeypatch)
    alice, a_own, system = _user_machine(tmp_path, "alice")
    bob, b_own, _ = _user_machine(tmp_path, "bob")
    a_plan = _user_only_plan("/home/alice/venv", str(a_own))
    with RunService(bob)._held(_user_only_plan("/home/bob/venv", str(b_own))):
        with RunService(alice)._held(a_plan) as locks:
            assert len(locks) == 1 and held(system / "lock") is None
    # a run after a finished one is not refused
    with RunService(alice)._held(a_plan) as locks:
        assert len(locks) == 1
    assert not log.exists()  # no sudo at all


# --------------------------------------------------------------------------- one file, spelled two ways


def test_a_lock_named_twice_is_taken_once(tmp_path: Path) -> None:
    """The user's state dir named through a symlinked parent and `..`: it is the journal's own; the run goes on."""
    state = tmp_path / "state"
    (tmp_path / "via").symlink_to(tmp_path)
    other = tmp_path / "via" / "x" / ".." / "state"
    (tmp_path / "x").mkdir()
    host = LiveHost()
    m = Machine(host, LiveExecutor(host.environ, Privilege(is_root=False)), state, state / "logs", str(state), [],
                user_state=str(other), user_state_root=other)
    plan = _user_only_plan("/home/alice/venv", str(other))
    with RunService(m)._held(plan) as locks:
        assert len(locks) == 1 and held(state / "lock") is not None
    # near miss: another dir is another lock
    m.user_state_root = tmp_path / "user"
    m.user_state = str(m.user_state_root)
    with RunService(m)._held(replace(plan, state_dir=m.user_state)) as locks:
        assert len(locks) == 2


def test_a_users_lock_taken_by_root_in_a_root_leaves_the_users_home_the_users(tmp_path: Path) -> None:
    """A wizard run as root that takes a user's lock with a plain Lock (a sandbox, a real root's /home/user) made
    ~/.local, ~/.local/state and the state dir root's: the user's own programs then cannot write under ~/.local.
    What it makes is owned as the folder it is made in is; near miss: a lock under root's own folder stays root's."""
    from wizard.runner.lock import Lock

    home = tmp_path / "home" / "user"
    home.mkdir(parents=True)
    os.chown(home, 1000, 1000)
    lock = Lock(home / ".local" / "state" / "rocm-wizard" / "lock").acquire()
    try:
        for p in (home / ".local", home / ".local/state", home / ".local/state/rocm-wizard", lock.path):
            st = p.stat()
            assert (st.st_uid, st.st_gid) == (1000, 1000), p
        assert (home / ".local/state/rocm-wizard").stat().st_mode & 0o777 == 0o700
    finally:
        lock.release()
    system = Lock(tmp_path / "var" / "lib" / "rocm-wizard" / "lock").acquire()
    try:
        assert system.path.stat().st_uid == 0 and system.path.parent.stat().st_uid == 0
    finally:
        system.release()
