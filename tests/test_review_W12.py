"""Helper W12: root never opens a path in a user's state dir, in the two shell executors (the dry-run script's lock
helper, wizard.script.HOLD_LOCK; the roles' lock script, wizard.fleet.lock.LOCKED), as the engine never does
(wizard.runner.lock.HelperLock: a user's lock taken by a helper run as that user).

V12 found: run as root (the script under ``sudo --``, a role's become task), they opened a user's lock file by path,
wrote the holder into it and emptied it, all inside a folder the user owns (a user who swaps that folder for a link
between the checks and the open has root make or overwrite a ``lock`` of their choosing), and read the user's
unfinished run as root (a FIFO planted as journal.jsonl hung root's grep forever while the system's lock was held; a
link to a root-only file leaked whether its last line ends a run).

Now root takes a root-owned state dir's lock itself and, for a user's, starts a child as the dir's owner (setpriv)
that runs the single-lock helper and holds the lock until root lets go; the unfinished-run read of a user's dir runs
as its owner, bounded by ``timeout``. The race is simulated deterministically: the file root would reach through the
swapped folder is a root-owned one already in place in the user's dir (root's open succeeds, the user's does not),
and which uid holds the lock's descriptor is read from /proc.

Near misses: a system-only plan takes root's lock as before and needs no setpriv; a user's own helper (not root)
takes their own lock directly; a refusal of a later lock lets go of a user's lock taken earlier; the keyboard's
signals still free nothing while the helper's input lives."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from runner_helpers import until
from test_locks_J12 import _facts, _system_plan

from wizard.fleet.lock import AGAIN, LOCKED, REFUSED
from wizard.record import replace
from wizard.runner.lock import Lock, held
from wizard.script import HOLD_LOCK, render, unfinished_line

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="a state dir another user owns needs root")]

NOBODY = 65534
ENGINE = "rocm-wizard --plan pip-only --yes"
TIMEOUT = "limit=60;"  # the unfinished-run read's bound in both scripts (a test shortens it)


@pytest.fixture
def base() -> Iterator[Path]:
    """A folder every user can reach (pytest's tmp_path is root's 0700), with a stand-in sudo in bin/."""
    path = Path(tempfile.mkdtemp(prefix="w12-", dir="/tmp"))
    path.chmod(0o755)
    (path / "bin").mkdir()
    (path / "bin" / "sudo").write_text('#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done; shift; exec "$@"\n')
    (path / "bin" / "sudo").chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path)


def _env(base: Path, path: str | None = None) -> dict[str, str]:
    return {**os.environ, "PATH": f"{base / 'bin'}:{path or os.environ['PATH']}"}


def _as_nobody(*argv: str) -> None:
    subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", *argv], check=True)


def _user_state(base: Path) -> Path:
    """nobody's state dir (~/.local/state/rocm-wizard, 0700), made by nobody in a home of theirs."""
    home = base / "home"
    home.mkdir(mode=0o755)
    os.chown(home, NOBODY, NOBODY)
    state = home / ".local" / "state" / "rocm-wizard"
    _as_nobody("mkdir", "-p", str(state.parent))
    _as_nobody("mkdir", "-m", "700", str(state))
    return state


def _script(base: Path, state: Path, wait: Path | None = None, *, limit: int | None = None) -> Path:
    """The dry-run script of a system plan that changes nobody's venv (root's state dir: base/system)."""
    plan = replace(_system_plan("/home/alice/venv", wait=wait), state_dir=str(base / "system"))
    text = render(plan, _facts(), user_state=str(state))
    if limit is not None:
        assert TIMEOUT in text, "the unfinished-run read has no bound"
        text = text.replace(TIMEOUT, f"limit={limit};")
    path = base / "plan.sh"
    path.write_text(text)
    return path


def _run_script(path: Path, base: Path, path_var: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(path)], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                          env=_env(base, path_var))


def _role(base: Path, state: Path, *argv: str, limit: int | None = None,
          path_var: str | None = None) -> subprocess.CompletedProcess[str]:
    """LOCKED as a root task of that plan takes it: root's state dir, then nobody's."""
    script = LOCKED
    if limit is not None:
        assert TIMEOUT in script, "the unfinished-run read has no bound"
        script = script.replace(TIMEOUT, f"limit={limit};")
    return subprocess.run(["sh", "-c", script, "rocm-wizard-lock", f"{base / 'system' / 'lock'}\n{state / 'lock'}",
                           '"Ansible role r (plan upgrade-6.4)"', "change", *argv], capture_output=True, text=True,
                          timeout=60, env=_env(base, path_var))


def _openers(path: Path) -> dict[int, int]:
    """pid -> real uid of every process with ``path`` open now."""
    out: dict[int, int] = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") == str(path) for fd in fds):
                status = Path(f"/proc/{pid}/status").read_text()
                out[int(pid)] = int(next(x for x in status.splitlines() if x.startswith("Uid:")).split()[1])
        except (OSError, StopIteration):
            continue
    return out


def _unfinished(state: Path) -> Path:
    """nobody's run r7 recorded as current; its journal's path (not made)."""
    _as_nobody("mkdir", "-p", str(state / "runs" / "r7"))
    _as_nobody("sh", "-c", f"echo r7 > {state / 'current'}")
    return state / "runs" / "r7" / "journal.jsonl"


# --------------------------------------------------------------------------- the lock file opened as its dir's owner


@pytest.mark.parametrize("who", ["script", "role"])
def test_root_never_opens_a_file_in_the_users_state_dir(base: Path, who: str) -> None:
    """What root reaches through a folder the user swapped for a link between the checks and the open (a root-owned
    file named ``lock``, /etc/sudoers.d/lock) stands in the user's dir: root opened it, wrote the holder into it and
    emptied it. Opened as the user, it cannot be: one line, exit 1, the file untouched."""
    state = _user_state(base)
    target = state / "lock"
    target.write_text("precious\n")
    target.chmod(0o644)  # root's, not the user's to write
    marker = base / "ran"
    if who == "script":
        res = _run_script(_script(base, state), base)
    else:
        res = _role(base, state, "touch", str(marker))
    assert res.returncode == 1 and target.read_text() == "precious\n", res
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"rocm-wizard: cannot take the wizard's lock {target}:"), res.stderr
    assert not marker.exists() and not (base / "system" / "script").exists()
    system = base / "system" / "lock"  # taken before the user's (the role's order) or not at all (the script's)
    assert held(system) is None and (not system.exists() or system.read_text() == "")


def test_the_scripts_user_lock_is_held_by_the_users_process_and_let_go_at_its_end(base: Path) -> None:
    state = _user_state(base)
    go = base / "go"
    pipes = set(Path("/tmp").glob("rocm-wizard-lock.*"))
    proc = subprocess.Popen(["bash", str(_script(base, state, go))], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(base))
    try:
        assert until(Path(f"{go}.started").exists), proc.stderr
        lock = state / "lock"
        openers = _openers(lock)
        assert openers and set(openers.values()) == {NOBODY}, openers  # root's helper never opened it
        assert (lock.stat().st_uid, oct(lock.stat().st_mode & 0o777)) == (NOBODY, "0o600")
        assert "dry-run script of plan upgrade-6.4" in lock.read_text()
        assert 0 in _openers(base / "system" / "lock").values()  # near miss: root's own lock, root's helper
    finally:
        go.write_text("")
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    assert held(state / "lock") is None and (state / "lock").read_text() == ""
    assert not _openers(state / "lock") and set(Path("/tmp").glob("rocm-wizard-lock.*")) <= pipes  # none left


def test_a_root_tasks_user_lock_is_held_by_the_users_process_and_let_go_at_its_end(base: Path) -> None:
    state = _user_state(base)
    lock = state / "lock"
    probe = ("import sys, test_review_W12 as t\nfrom pathlib import Path\n"
             "print(sorted(set(t._openers(Path(sys.argv[1])).values())))")
    res = _role(base, state, "env", f"PYTHONPATH={Path(__file__).parent}", sys.executable, "-c", probe, str(lock))
    assert (res.returncode, res.stdout, res.stderr) == (0, f"[{NOBODY}]\n", ""), res
    assert held(lock) is None and lock.read_text() == "" and lock.stat().st_uid == NOBODY


# --------------------------------------------------------------------------- the unfinished-run read


@pytest.mark.parametrize("who", ["script", "role"])
def test_a_fifo_journal_does_not_hang_root(base: Path, who: str) -> None:
    """journal.jsonl a FIFO: root's grep waited for a writer forever, the system's lock held all the while. Read as
    the user under a bound: one line, exit 1, every lock let go."""
    state = _user_state(base)
    journal = _unfinished(state)
    _as_nobody("mkfifo", str(journal))
    if who == "script":
        res = _run_script(_script(base, state, limit=2), base)
    else:
        res = _role(base, state, "touch", str(base / "ran"), limit=2)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 1 and len(lines) == 1, res
    assert lines[0].startswith(f"rocm-wizard: cannot read whether a run of the wizard in {state} is finished"), lines
    assert "timed out after 2 s" in lines[0] and not (base / "ran").exists()
    assert held(state / "lock") is None and held(base / "system" / "lock") is None
    if who == "role":
        import re

        assert re.match(REFUSED, lines[0])  # a task accepting exit 1 takes it for the refusal it is


@pytest.mark.parametrize("who", ["script", "role"])
def test_a_journal_linked_to_a_root_only_file_is_not_read_as_root(base: Path, who: str) -> None:
    """A link to a root-only file whose last line ends a run: root read it and went on (the file's last line leaked);
    the user cannot read it: the run is not known to be finished, and is refused as one that is not."""
    state = _user_state(base)
    journal = _unfinished(state)
    secret = base / "secret"
    secret.mkdir(mode=0o700)
    (secret / "root-only").write_text('{"event": "run-start"}\n{"event": "run-end", "state": "done"}\n')
    journal.symlink_to(secret / "root-only")
    os.lchown(journal, NOBODY, NOBODY)
    again = "then run this script again" if who == "script" else AGAIN
    res = _run_script(_script(base, state), base) if who == "script" else _role(base, state, "echo", "ran")
    assert (res.returncode, res.stderr) == (1, unfinished_line("r7", again) + "\n"), res
    # near miss: a journal of the user's own that ends the run: the run is finished, the work goes on
    journal.unlink()
    _as_nobody("sh", "-c", f"printf '%s\\n' '{{\"event\": \"run-end\", \"state\": \"done\"}}' > {journal}")
    res = _run_script(_script(base, state), base) if who == "script" else _role(base, state, "echo", "ran")
    assert res.returncode == 0, res


# --------------------------------------------------------------------------- setpriv, and the near misses


def _without_setpriv(base: Path) -> str:
    """A PATH of this machine's programs less setpriv."""
    out = base / "nosetpriv"
    out.mkdir()
    for d in ("/usr/local/bin", "/usr/bin", "/usr/sbin"):
        for p in Path(d).iterdir() if Path(d).is_dir() else ():
            if p.name != "setpriv" and not (out / p.name).exists():
                (out / p.name).symlink_to(p)
    return str(out)


@pytest.mark.parametrize("who", ["script", "role"])
def test_without_setpriv_a_users_lock_is_refused_in_one_line_and_a_system_only_plan_needs_none(base: Path,
                                                                                                who: str) -> None:
    state = _user_state(base)
    path_var = _without_setpriv(base)
    if who == "script":
        res = _run_script(_script(base, state), base, path_var)
    else:
        res = _role(base, state, "echo", "ran", path_var=path_var)
    assert res.returncode == 1 and res.stderr == (f"rocm-wizard: cannot take the wizard's lock {state / 'lock'}: "
                                                  "setpriv (util-linux) is not installed\n"), res
    assert held(base / "system" / "lock") is None
    # near miss: a system-only plan (root's lock alone) runs as before, with no setpriv
    if who == "script":
        plan = replace(_system_plan(user_level=False), state_dir=str(base / "system"))
        (base / "system.sh").write_text(render(plan, _facts()))
        res = _run_script(base / "system.sh", base, path_var)
    else:
        res = subprocess.run(["sh", "-c", LOCKED, "rocm-wizard-lock", str(base / "system" / "lock"), '"r"', "change",
                              "echo", "ran"], capture_output=True, text=True, timeout=60, env=_env(base, path_var))
        assert res.stdout == "ran\n"
    assert res.returncode == 0 and res.stderr == "", res


def test_near_miss_a_users_own_helper_takes_their_lock_directly(base: Path) -> None:
    """Not root: no child, no setpriv (the user's own script; the engine's HelperLock under `sudo -u USER`)."""
    state = _user_state(base)
    path_var = _without_setpriv(base)
    proc = subprocess.Popen(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", "env",
                             f"PATH={path_var}", "sh", "-c", HOLD_LOCK, "sh", str(state / "lock"),
                             '{"pid": 1, "start_time": "T", "command": "mine", "proc_start": null}'],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdin is not None
    assert proc.stdout.readline() == "locked\n"
    assert set(_openers(state / "lock")) == {proc.pid}  # the helper itself holds it
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0 and held(state / "lock") is None


def _hold(*locks: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(["sh", "-c", HOLD_LOCK, "sh", str(locks[0]),
                             '{"pid": 1, "start_time": "T", "command": "script", "proc_start": null}',
                             *map(str, locks[1:])], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            start_new_session=True)


def test_the_keyboards_signals_free_nothing_while_the_helpers_input_lives(base: Path) -> None:
    """The user's lock is held by root's helper's child: a Ctrl+C (the whole group) ends neither; the input's end
    lets both go."""
    state = _user_state(base)
    proc = _hold(base / "own" / "lock", state / "lock")
    assert proc.stdout is not None and proc.stdin is not None
    assert proc.stdout.readline() == "locked\n"
    for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):
        os.killpg(proc.pid, sig)
    time.sleep(0.5)
    assert proc.poll() is None and held(state / "lock") is not None and held(base / "own" / "lock") is not None
    assert set(_openers(state / "lock").values()) == {NOBODY}
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    assert held(state / "lock") is None and (state / "lock").read_text() == "" and not _openers(state / "lock")


def test_all_or_nothing_a_later_held_lock_lets_go_of_the_users_lock_taken_before(base: Path) -> None:
    state = _user_state(base)
    other = base / "other"
    other.mkdir(mode=0o700)
    with Lock(other / "lock", ENGINE):
        proc = _hold(state / "lock", other / "lock")
        assert proc.stdout is not None and proc.stdin is not None
        first = proc.stdout.readline()
        assert first.startswith("held pid ") and first.rstrip().endswith(ENGINE), first
        assert proc.stdout.readline() == f"{other / 'lock'}\n"
        assert held(state / "lock") is None and (state / "lock").read_text() == ""  # the user's let go, emptied
        assert not _openers(state / "lock")
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0


def test_near_miss_a_users_lock_held_by_their_own_run_is_named(base: Path) -> None:
    """The child's answer passes through: the user's own run holding it is exit-4 material, its holder named."""
    state = _user_state(base)
    # the user's own run (the engine's HelperLock runs this helper as the user) holds it
    proc = subprocess.Popen(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", "sh", "-c",
                             HOLD_LOCK, "sh", str(state / "lock"),
                             f'{{"pid": 1, "start_time": "T", "command": "{ENGINE}", "proc_start": null}}'],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdin is not None
    try:
        assert proc.stdout.readline() == "locked\n"
        hold = _hold(base / "own" / "lock", state / "lock")
        assert hold.stdout is not None and hold.stdin is not None
        first = hold.stdout.readline()
        assert first.startswith("held pid ") and first.rstrip().endswith(ENGINE), first
        assert hold.stdout.readline() == f"{state / 'lock'}\n"
        assert held(base / "own" / "lock") is None and (base / "own" / "lock").read_text() == ""
        hold.stdin.close()
        assert hold.wait(timeout=30) == 0
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


def test_a_root_task_refuses_with_exit_4_naming_the_user_run_that_holds_the_users_lock(base: Path) -> None:
    """The child's "held" passes through LOCKED as the engine's line, exit 4, root's own lock let go."""
    from wizard.script import held_line

    state = _user_state(base)
    proc = subprocess.Popen(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", "sh", "-c",
                             HOLD_LOCK, "sh", str(state / "lock"),
                             f'{{"pid": 1, "start_time": "T", "command": "{ENGINE}", "proc_start": null}}'],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdin is not None
    try:
        assert proc.stdout.readline() == "locked\n"
        res = _role(base, state, "touch", str(base / "ran"))
        assert (res.returncode, res.stderr) == (4, held_line(f"pid 1, started T: {ENGINE}", str(state / "lock"),
                                                             AGAIN) + "\n"), res
        assert not (base / "ran").exists() and held(base / "system" / "lock") is None
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
