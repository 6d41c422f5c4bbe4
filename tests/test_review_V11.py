"""Review V11: the session's lock, planner, diagnosis and environment-reader changes, walked as a user, an operator and
an attacker would. Each case here failed on the code before its mend; each has a near miss that must not fire.

* ``HelperLock`` (a wizard run as root holding the user's state dir lock through ``sudo -n -u USER -H --``) started
  its helper in the wizard's own process group. A Ctrl+C on the terminal reaches the whole foreground group: the
  helper's ``sh`` died at once while the wizard, whose handler only asks the engine to stop, went on stopping the
  action it ran (SIGTERM, a grace period, a wait): the user's lock was free while the run's action still lived,
  against the rule the engine's own lock keeps (wizard.runner.signals: "the lock is never released while a child of
  the run is alive"). The actions run in their own process group for that reason (wizard.runner.shell); the helper
  now does too.
* ``HelperLock`` started with no ``sudo`` on the machine said "cannot take the lock PATH: No such file or
  directory" (the lock file seemed missing, not the program); a ``sudo`` that refused (a password required, the
  user not allowed) said only "cannot take the lock PATH", its own reason thrown away (stderr to /dev/null). The line
  now names the program that could not start, and a refusal's last line of stderr.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from runner_helpers import until

from wizard.runner.lock import HelperLock, LockUnavailable, held

pytestmark = pytest.mark.integration



# A wizard stand-in: it handles SIGINT as stop_on_signals does (a stop request, the process goes on), takes the
# user's lock through the helper as a root wizard does, says so, then lives on (its action still running)
_WIZARD = textwrap.dedent("""\
    import signal, sys, time
    from pathlib import Path
    from wizard.runner.lock import HelperLock
    signal.signal(signal.SIGINT, lambda *a: None)
    lock = HelperLock(Path(sys.argv[1]), (), command="rocm-wizard --plan pip-only --yes").acquire()
    print("locked", flush=True)
    time.sleep(60)
""")


def _wizard(tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    state = tmp_path / "user-state"
    state.mkdir(mode=0o700)
    proc = subprocess.Popen([sys.executable, "-c", _WIZARD, str(state / "lock")], stdout=subprocess.PIPE, text=True,
                            start_new_session=True,  # a terminal's foreground group of its own
                            cwd=Path(__file__).resolve().parents[1])
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc, state / "lock"


def test_a_ctrl_c_on_the_terminal_does_not_free_the_users_lock_while_the_wizard_lives(tmp_path: Path) -> None:
    proc, lock = _wizard(tmp_path)
    try:
        assert held(lock) is not None
        os.killpg(proc.pid, signal.SIGINT)  # what the terminal does on Ctrl+C: the whole foreground group
        time.sleep(1.0)
        assert proc.poll() is None  # the wizard goes on (stopping its action)
        assert held(lock) is not None, "the user's lock was let go while the wizard (and its action) still ran"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    # near miss: the wizard gone (kill -9, nothing it started alive), the helper sees its input end and lets go
    assert until(lambda: held(lock) is None, 20.0)


def test_near_miss_the_helper_lets_go_when_released(tmp_path: Path) -> None:
    state = tmp_path / "user-state"
    state.mkdir(mode=0o700)
    lock = HelperLock(state / "lock", (), command="rocm-wizard --plan pip-only --yes").acquire()
    assert held(state / "lock") is not None
    lock.release()
    assert held(state / "lock") is None


def test_no_sudo_names_the_program_not_the_lock_file(tmp_path: Path) -> None:
    state = tmp_path / "user-state"
    missing = str(tmp_path / "no-such-bin" / "sudo")
    with pytest.raises(LockUnavailable) as exc:
        HelperLock(state / "lock", (missing, "-n", "-u", "alice", "-H", "--")).acquire()
    text = str(exc.value)
    assert missing in text and str(state / "lock") in text and "\n" not in text


def test_a_sudo_that_refuses_says_why(tmp_path: Path) -> None:
    """sudo -n prints its reason on stderr and exits 1 without running anything (a stand-in here)."""
    sudo = tmp_path / "sudo"
    sudo.write_text("#!/bin/sh\necho 'sudo: some warning first' >&2\necho 'sudo: a password is required' >&2\n"
                    "exit 1\n")
    sudo.chmod(0o755)
    state = tmp_path / "user-state"
    with pytest.raises(LockUnavailable) as exc:
        HelperLock(state / "lock", (str(sudo), "-n", "-u", "alice", "-H", "--")).acquire()
    text = str(exc.value)
    assert text.endswith(": sudo: a password is required") and "\n" not in text
    assert str(state / "lock") in text


def test_near_miss_the_helpers_own_reason_stays_the_one_given(tmp_path: Path) -> None:
    """The helper ran and refused (a symlinked state dir): its stdout line is the reason, as before."""
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(LockUnavailable) as exc:
        HelperLock(tmp_path / "link" / "lock", ()).acquire()
    assert str(exc.value).endswith("is a symlink") and "\n" not in str(exc.value)
    assert not (real / "lock").exists()


# --------------------------------------------------------------------------- the user's lock taken by this process
# A rehearsal machine (a sandbox, a real root) has no sudo between the wizard and the user's state dir: the wizard
# takes the user's lock itself (``Lock``), where the state dir it checks (wizard.runner.state) is root's. A lock file
# planted as a symlink was followed: the wizard truncated the file it named and wrote its holder record there (a
# real root's wizard runs as root, and an absolute link in the root names a file of the host). A state dir that is
# a symlink had the lock made in the directory it names. Both are refused now, as the helper refuses them.


def _sandbox(tmp_path: Path) -> Path:
    from runner_helpers import wizard

    sb = tmp_path / "sb"
    assert wizard(["--sandbox", str(sb), "--profile", "seed-7900xt", "detect"]).returncode == 0
    return sb


USER_STATE = "home/user/.local/state/rocm-wizard"


def test_a_planted_symlink_as_the_users_lock_is_not_followed(tmp_path: Path) -> None:
    from runner_helpers import wizard

    sb = _sandbox(tmp_path)
    user_state = sb / USER_STATE
    user_state.mkdir(parents=True, mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    (user_state / "lock").symlink_to(victim)
    r = wizard(["--sandbox", str(sb), "--plan", "pip-only", "--yes"])
    assert victim.read_text() == "keep me\n"
    assert r.returncode == 1, r.stdout[-2000:] + r.stderr[-2000:]
    assert "symlink" in r.stderr and str(user_state / "lock") in r.stderr
    assert not (sb / "var/lib/rocm-wizard/current").exists()  # no run was recorded


def test_a_users_state_dir_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    from runner_helpers import wizard

    sb = _sandbox(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (sb / USER_STATE).parent.mkdir(parents=True)
    (sb / USER_STATE).symlink_to(elsewhere)
    r = wizard(["--sandbox", str(sb), "--plan", "pip-only", "--yes"])
    assert not (elsewhere / "lock").exists()
    assert r.returncode == 1 and "symlink" in r.stderr, r.stdout[-2000:] + r.stderr[-2000:]
    assert not (sb / "var/lib/rocm-wizard/current").exists()


def test_near_miss_a_users_plain_state_dir_and_lock_file_are_used(tmp_path: Path) -> None:
    """A lock file a finished run left (emptied) in a plain 0700 dir: the run takes it and lets it go."""
    from runner_helpers import wizard

    sb = _sandbox(tmp_path)
    user_state = sb / USER_STATE
    user_state.mkdir(parents=True, mode=0o700)
    (user_state / "lock").write_text("")
    r = wizard(["--sandbox", str(sb), "--plan", "pip-only", "--yes"])
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert not (user_state / "lock").is_symlink() and held(user_state / "lock") is None


def test_a_holder_line_from_a_users_lock_file_reaches_the_terminal_printable() -> None:
    """V11's leftover 6: the holder a user's lock file names is printed to root's terminal without its escapes."""
    from wizard.runner.lock import Holder, read_holder_line

    planted = read_holder_line("pid 7, started 2026-12-01T02:00:00+0000: rocm-wizard \x1b]0;owned\x07\x1b[2J x")
    assert planted is not None
    said = planted.describe()
    assert "\x1b" not in said and "\x07" not in said and said.isprintable()
    # near miss: an ordinary holder reads as it was written
    ok = Holder(7, "2026-12-01T02:00:00+0000", "rocm-wizard --plan pip-only --yes")
    assert ok.describe() == "pid 7, started 2026-12-01T02:00:00+0000: rocm-wizard --plan pip-only --yes"


def _lock_free(path: Path) -> bool:
    import fcntl

    with open(path, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        fcntl.flock(fh, fcntl.LOCK_UN)
        return True


def test_the_scripts_lock_helper_outlives_a_ctrl_c_and_lets_go_when_its_input_ends(tmp_path: Path) -> None:
    """V11's leftover 1: the dry-run script's lock helper sits in the terminal's foreground process group, so a
    Ctrl+C killed it and freed the lock while a step that outlives SIGINT still ran. It ignores the keyboard's
    signals now and lets go only when its input ends (the script and every command holding that input gone)."""
    import signal
    import subprocess

    from wizard.script import HOLD_LOCK

    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    lock = state / "lock"
    proc = subprocess.Popen(["sh", "-c", HOLD_LOCK, "sh", str(lock), '{"pid": 1, "command": "test"}'],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdin is not None
    assert proc.stdout.readline().strip() == b"locked"
    for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):
        proc.send_signal(sig)
    time.sleep(0.5)
    assert proc.poll() is None and not _lock_free(lock)
    # near miss: its input ending lets the lock go
    proc.stdin.close()
    assert proc.wait(timeout=10) == 0
    assert _lock_free(lock)
