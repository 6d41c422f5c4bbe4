"""Helper V12: an adversarial review of this session's lock changes (J12's one rule and HOLD_LOCK's making, F12's
LOCKED list, U12's refusal over an unfinished run in another state dir). Each case failed on the merged code; each
has a near miss that must not fire."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from runner_helpers import plan_of
from test_locks_J11 import _system_plan, _user_machine

from wizard.model import Action, ResolvedPlan, StepPlan
from wizard.record import replace
from wizard.runner.lock import held
from wizard.runner.service import RunBlocked, RunService
from wizard.script import HOLD_LOCK, render

NOBODY = 65534  # the user whose home root makes the state dir in
OTHER = 65533  # another user


def _pip_plan(state_dir: str | None) -> ResolvedPlan:
    step = StepPlan("pip_pin", "pin", (Action(("true",), "pip", as_user=True, changes=("venv:/home/alice/venv",)),),
                    params=(("venv", "/home/alice/venv"),))
    return replace(plan_of(step, name="pip-only"), state_dir=state_dir)


def _bash_array(text: str, name: str) -> list[str]:
    """The values bash gives the script's ``name=...`` line (the line alone is evaluated, nothing else runs)."""
    line = next(x for x in text.splitlines() if x.startswith(f"{name}="))
    out = subprocess.run(["bash", "-c", f'HOME=/home/alice; unset XDG_STATE_HOME; {line}; printf "%s\\n" "${{{name}[@]}}"'],
                         capture_output=True, text=True, timeout=30, check=True)
    return out.stdout.splitlines()


# --------------------------------------------------------------------------- a state dir with a `$` in the script


@pytest.mark.unit
def test_a_state_dir_with_a_dollar_is_one_literal_path_in_the_scripts_locks() -> None:
    """`--state-dir '/srv/rw$HOME'` (or one with `$(...)`): the lock list put the path in double quotes, so bash
    expanded it (a command substitution ran) and the lock was taken in another dir than the progress file's."""
    from test_plan_golden import machines

    text = render(_pip_plan("/srv/rw$HOME/$(id)"), machines()["seed-7900xt"], user_state="/srv/rw$HOME/$(id)")
    assert _bash_array(text, "locks") == ["/srv/rw$HOME/$(id)/lock"]
    assert _bash_array(text, "wizard_states") == ["/srv/rw$HOME/$(id)"]
    assert _bash_array(text, "progress") == ["/srv/rw$HOME/$(id)/script/pip-only.progress"]


@pytest.mark.unit
def test_near_miss_the_users_xdg_state_dir_is_still_expanded_by_the_shell() -> None:
    from test_plan_golden import machines

    text = render(_pip_plan(None), machines()["seed-7900xt"], user_state="/home/alice/.local/state/rocm-wizard")
    assert _bash_array(text, "locks")[0] == "/home/alice/.local/state/rocm-wizard/lock"


# --------------------------------------------------------------------------- root making a user's state dir


@pytest.fixture
def base() -> Iterator[Path]:
    """A folder every user can reach (pytest's own tmp_path is root's 0700): the homes of the cases below."""
    path = Path(tempfile.mkdtemp(prefix="v12-", dir="/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path)


def _hold(lock: Path) -> subprocess.CompletedProcess[str]:
    """HOLD_LOCK as root (the dry-run script's helper under sudo, as for a system plan that changes a user's venv)."""
    return subprocess.run(["sh", "-c", HOLD_LOCK, "sh", str(lock), '{"pid": 1}'], input="", capture_output=True,
                          text=True, timeout=60)


def _locked(lock: Path) -> subprocess.CompletedProcess[str]:
    """The roles' LOCKED as root (a root task of such a plan), its command saying "locked" once it runs."""
    from wizard.fleet.lock import LOCKED

    return subprocess.run(["sh", "-c", LOCKED, "rocm-wizard-lock", str(lock), '"role"', "change", "echo", "locked"],
                          capture_output=True, text=True, timeout=60)


TAKERS = [pytest.param(_hold, id="script"), pytest.param(_locked, id="role")]


def _owned_by(top: Path, uid: int) -> list[Path]:
    return [p for p in [top, *top.rglob("*")] if p.lstat().st_uid == uid]


@pytest.mark.integration
@pytest.mark.skipif(os.geteuid() != 0, reason="a folder another user owns needs root")
@pytest.mark.parametrize("take", TAKERS)
def test_root_never_gives_the_user_a_folder_it_made_through_the_users_symlink(base: Path, take: Callable[[Path], subprocess.CompletedProcess[str]]) -> None:
    """The user links ~/.local to a folder of root's (/etc, /usr/lib/python3/dist-packages): root made
    ``state/rocm-wizard`` there and chowned both to the user (the chown loop named them through the link), so the
    user came to own a new folder inside root's."""
    home, etc = base / "home", base / "etc"
    home.mkdir()
    etc.mkdir(mode=0o755)
    os.chown(home, NOBODY, NOBODY)
    (home / ".local").symlink_to(etc)
    os.lchown(home / ".local", NOBODY, NOBODY)
    res = take(home / ".local" / "state" / "rocm-wizard" / "lock")
    assert not res.stdout.startswith("locked"), res
    assert _owned_by(etc, NOBODY) == [] and list(etc.iterdir()) == []


@pytest.mark.integration
@pytest.mark.skipif(os.geteuid() != 0, reason="a folder another user owns needs root")
@pytest.mark.parametrize("take", TAKERS)
def test_near_miss_root_makes_the_users_state_dir_through_the_users_own_symlink(base: Path, take: Callable[[Path], subprocess.CompletedProcess[str]]) -> None:
    """~/.local a link to a folder of the user's own (a dotfiles checkout): made there, the user's, and taken."""
    home, dots = base / "home", base / "dots"
    for d in (home, dots):
        d.mkdir()
        os.chown(d, NOBODY, NOBODY)
    (home / ".local").symlink_to(dots)
    os.lchown(home / ".local", NOBODY, NOBODY)
    res = take(home / ".local" / "state" / "rocm-wizard" / "lock")
    assert res.stdout.startswith("locked"), res
    for p in (dots / "state", dots / "state" / "rocm-wizard", dots / "state" / "rocm-wizard" / "lock"):
        assert (p.stat().st_uid, p.stat().st_gid) == (NOBODY, NOBODY), p
    assert oct((dots / "state" / "rocm-wizard").stat().st_mode & 0o777) == "0o700"


# --------------------------------------------------------------------------- the relaxed owner check is root's


def _hold_as(uid: int, lock: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--", "sh", "-c",
                           HOLD_LOCK, "sh", str(lock), '{"pid": 1}'], input="", capture_output=True, text=True,
                          timeout=60)


@pytest.mark.integration
@pytest.mark.skipif(os.geteuid() != 0, reason="folders of two users need root")
def test_a_user_refuses_a_state_dir_another_user_owns_in_their_own_folder(base: Path) -> None:
    """J12 accepted a dir owned by its parent's owner for root (a user's state dir whose lock root takes); a user's
    own helper accepted so another user's dir (bob's 0755 state dir, its lock open to all): bob's records then steer
    the user's script (its progress marks steps done). Before J12: refused, as the engine's state check refuses."""
    bob = base / "bob"
    state = bob / "state"
    state.mkdir(parents=True, mode=0o755)
    state.chmod(0o755)
    (state / "lock").touch()
    (state / "lock").chmod(0o666)
    for p in (bob, state, state / "lock"):
        os.chown(p, OTHER, OTHER)
    res = _hold_as(NOBODY, state / "lock")
    assert res.stdout.startswith("refusing it: ") and "owned by neither root nor the user" in res.stdout, res
    # near miss: root takes it (a user's state dir whose lock root's run takes), and the user their own
    assert _hold(state / "lock").stdout.startswith("locked")
    assert _hold_as(OTHER, state / "lock").stdout.startswith("locked")


# --------------------------------------------------------------------------- U12: sudo refused on the read


def _sudo_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in sudo that runs its first command (the lock's helper) and refuses every later one, as `sudo -n` does
    when its cached credentials ran out between two calls."""
    bin_dir, count = tmp_path / "bin", tmp_path / "sudo.count"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "sudo").write_text(
        f'#!/bin/sh\nif [ -e {count} ]; then echo "sudo: a password is required" >&2; exit 1; fi\n: >{count}\n'
        'while [ "$1" != "--" ]; do shift; done; shift; exec "$@"\n')
    (bin_dir / "sudo").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    return count


@pytest.mark.integration
@pytest.mark.usefixtures("isolated_state")
def test_a_refused_read_of_the_other_state_dir_blocks_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`sudo -n sh -c UNFINISHED_RUN` refused (exit 1, nothing on stdout) read as "no run unfinished there": the
    user's system plan went on without knowing whether root's run in /var/lib/rocm-wizard was finished."""
    _sudo_once(tmp_path, monkeypatch)
    m, own, system = _user_machine(tmp_path)
    system.mkdir(mode=0o700)
    with pytest.raises(RunBlocked) as exc:
        RunService(m).start(_system_plan("/home/alice/venv", state_dir=str(own)), yes=True, authenticate=lambda: None)
    assert f"cannot read whether a run in {system} is finished" in exc.value.message, exc.value.message
    assert "a password is required" in exc.value.message
    assert not (own / "current").exists() and held(system / "lock") is None


@pytest.mark.integration
@pytest.mark.usefixtures("isolated_state")
def test_near_miss_a_read_that_finds_no_run_lets_the_plan_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_locks_J11 import _sudo

    _sudo(tmp_path, monkeypatch)
    m, own, system = _user_machine(tmp_path)
    system.mkdir(mode=0o700)
    out = RunService(m).start(_system_plan("/home/alice/venv", state_dir=str(own)), yes=True,
                              authenticate=lambda: None)
    assert out.state.value == "done", out
