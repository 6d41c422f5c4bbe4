"""Issue 16, the runner's state and signals: real signals to a running sandbox plan, umask 000, a
state dir made by another uid (setpriv), the resume unit's code and environment, a full disk (a
tmpfs in a private mount namespace), a corrupt journal, the backup's modes and its freeze, quoted
activate-script values."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from runner_helpers import PY, REPO, calls, default_signals, plan_of, wizard

from wizard.model import Action, StepPlan
from wizard.runner import planfile
from wizard.sandbox import open_sandbox

pytestmark = pytest.mark.integration

# the sleep of the slow action: a mark to find its process by, this test process's own. The tests look for it in all
# of /proc: with one fixed mark, a second pytest run on the same machine at the same time (another checkout's suite)
# had its sleeping action taken for this one's (signalled, waited for, or "left over")
MARK = f"41.{os.getpid()}"


def one_line(r: subprocess.CompletedProcess[str]) -> str:
    err = r.stderr.strip()
    assert err and err.count("\n") == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr and "internal error" not in r.stdout + r.stderr
    return err


def journal(state: Path) -> list[dict]:
    cur = (state / "current").read_text().strip()
    return [json.loads(line) for line in (state / "runs" / cur / "journal.jsonl").read_text().splitlines() if line]


def slow_plan(tmp_path: Path) -> Path:
    """A plan whose one step appends to /home/user/starts, then sleeps unless /home/user/fast exists."""
    script = f'echo start >> /home/user/starts; if [ ! -e /home/user/fast ]; then sleep {MARK}; fi'
    plan = plan_of(StepPlan("preflight", "checks"),
                   StepPlan("groups", "slow", actions=(Action(("sh", "-c", script), "a slow action"),)), name="slow")
    p = tmp_path / "slow.json"
    p.write_text(planfile.dumps(plan))
    return p


def marked_processes() -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if MARK.encode() in argv and any(a.endswith(b"sleep") for a in argv):
            out.append(int(d.name))
    return out


# ------------------------------------------------------------------ item 7: signals


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_stops_the_action_group_journals_it_and_resume_runs_it_once_more(tmp_path: Path, sig: int) -> None:
    root = tmp_path / "m"
    open_sandbox(root, "rx9070xt-noble")
    plan = slow_plan(tmp_path)
    env = dict(os.environ)
    env.pop("ROCM_WIZARD_STATE_DIR", None)
    p = subprocess.Popen([PY, "-m", "wizard", "--sandbox", str(root), "--plan", str(plan), "--yes"], cwd=REPO, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                         preexec_fn=default_signals)
    try:
        deadline = time.monotonic() + 60
        while not marked_processes():
            assert time.monotonic() < deadline and p.poll() is None, "the slow action never started"
            time.sleep(0.05)
        p.send_signal(sig)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 1, out + err
    assert marked_processes() == []  # the action's whole group is gone before the wizard exits
    state = root / "var/lib/rocm-wizard"
    recs = journal(state)
    name = signal.Signals(sig).name
    end = [r for r in recs if r["event"] == "action-end" and r["step"] == 1]
    assert [r["outcome"] for r in end] == ["cancelled"]
    assert recs[-1]["event"] == "run-end" and recs[-1]["state"] == "stopped" and name in recs[-1]["message"]
    assert (state / "lock").read_text() == ""  # released (emptied), and free:
    (root / "home/user/fast").write_text("")
    r = wizard(["resume", "--yes", "--sandbox", str(root)])
    assert r.returncode == 0, r.stdout + r.stderr
    assert (root / "home/user/starts").read_text() == "start\nstart\n"
    seq = [(r["event"], r["step"]) for r in journal(state) if r["event"] in ("action-start", "action-end")]
    assert seq == [("action-start", 1), ("action-end", 1), ("action-start", 1), ("action-end", 1)]


def _as_nohup() -> None:
    default_signals()
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


def test_under_nohup_a_hangup_is_not_a_stop(tmp_path: Path) -> None:
    """`nohup rocm-wizard --plan X --yes &`: the run outlives its terminal (SIGHUP ignored at the start stays
    ignored); a SIGTERM still stops it."""
    root = tmp_path / "m"
    open_sandbox(root, "rx9070xt-noble")
    env = dict(os.environ)
    env.pop("ROCM_WIZARD_STATE_DIR", None)
    p = subprocess.Popen([PY, "-m", "wizard", "--sandbox", str(root), "--plan", str(slow_plan(tmp_path)), "--yes"],
                         cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         stdin=subprocess.DEVNULL, preexec_fn=_as_nohup)
    try:
        deadline = time.monotonic() + 60
        while not marked_processes():
            assert time.monotonic() < deadline and p.poll() is None, "the slow action never started"
            time.sleep(0.05)
        p.send_signal(signal.SIGHUP)
        time.sleep(1.5)
        assert p.poll() is None and marked_processes(), "a hangup under nohup stopped the run"
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 1, out + err
    recs = journal(root / "var/lib/rocm-wizard")
    assert recs[-1]["event"] == "run-end" and "SIGTERM" in recs[-1]["message"] and "SIGHUP" not in recs[-1]["message"]


def test_sigterm_mid_rollback_leaves_it_rolling_back_and_rollback_continues(tmp_path: Path) -> None:
    root = tmp_path / "m"
    open_sandbox(root, "rx9070xt-noble")
    undo = f'echo undo >> /home/user/undos; if [ ! -e /home/user/fast ]; then sleep {MARK}; fi'
    plan = plan_of(StepPlan("preflight", "checks"),
                   StepPlan("groups", "g", actions=(Action(("sh", "-c", "echo did >> /home/user/did"), "do",
                                                           changes=("/home/user/did",), undo=("sh", "-c", undo)),)))
    pf = tmp_path / "undo.json"
    pf.write_text(planfile.dumps(plan))
    assert wizard(["--sandbox", str(root), "--plan", str(pf), "--yes"]).returncode == 0
    env = dict(os.environ)
    env.pop("ROCM_WIZARD_STATE_DIR", None)
    p = subprocess.Popen([PY, "-m", "wizard", "rollback", "--yes", "--sandbox", str(root)], cwd=REPO, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not marked_processes():
            assert time.monotonic() < deadline and p.poll() is None
            time.sleep(0.05)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 1 and marked_processes() == [], out + err
    st = json.loads(wizard(["status", "--sandbox", str(root), "--json"]).stdout)
    assert st["state"] == "rolling-back" and "rollback" in st["next"]
    r = wizard(["resume", "--yes", "--sandbox", str(root)])
    assert r.returncode == 1 and "rollback" in r.stderr
    (root / "home/user/fast").write_text("")
    r = wizard(["rollback", "--yes", "--sandbox", str(root)])
    assert r.returncode == 0, r.stdout + r.stderr
    assert (root / "home/user/undos").read_text() == "undo\nundo\n"
    assert json.loads(wizard(["status", "--sandbox", str(root), "--json"]).stdout)["state"] == "rolled-back"


def test_the_lock_is_held_until_an_action_that_ignores_sigterm_is_gone(tmp_path: Path) -> None:
    from wizard.runner.lock import Lock, LockHeld

    root = tmp_path / "m"
    open_sandbox(root, "rx9070xt-noble")
    script = f"trap '' TERM; echo start >> /home/user/starts; sleep {MARK}"  # SIG_IGN is inherited by sleep
    plan = plan_of(StepPlan("preflight", "checks"),
                   StepPlan("groups", "stubborn", actions=(Action(("sh", "-c", script), "ignores SIGTERM"),)))
    pf = tmp_path / "stubborn.json"
    pf.write_text(planfile.dumps(plan))
    env = dict(os.environ)
    env.pop("ROCM_WIZARD_STATE_DIR", None)
    p = subprocess.Popen([PY, "-m", "wizard", "--sandbox", str(root), "--plan", str(pf), "--yes"], cwd=REPO, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    lock = root / "var/lib/rocm-wizard/lock"
    try:
        deadline = time.monotonic() + 60
        while not marked_processes():
            assert time.monotonic() < deadline and p.poll() is None
            time.sleep(0.05)
        p.send_signal(signal.SIGTERM)
        time.sleep(1.0)  # the group ignores SIGTERM: it lives until the SIGKILL after the grace period
        assert marked_processes(), "the action should still be alive inside the grace period"
        with pytest.raises(LockHeld):
            Lock(lock).acquire()
        assert p.wait(timeout=30) == 1
    finally:
        if p.poll() is None:
            p.kill()
    assert marked_processes() == []
    Lock(lock).acquire().release()


# ------------------------------------------------------------------ item 6b: umask and ownership


def test_under_umask_000_state_logs_and_backup_are_private(tmp_path: Path) -> None:
    root = tmp_path / "m"
    open_sandbox(root, "seed-7900xt")
    env = dict(os.environ)
    env.pop("ROCM_WIZARD_STATE_DIR", None)
    r = subprocess.run([PY, "-m", "wizard", "--sandbox", str(root), "--plan", "pip-only", "--yes"], cwd=REPO, env=env,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, preexec_fn=lambda: os.umask(0))
    assert r.returncode == 0, r.stdout[-2000:]
    state, logs = root / "var/lib/rocm-wizard", root / "var/log/rocm-wizard"
    own = [state / "lock", state / "current", *state.glob("runs/*/*"), *logs.rglob("*.log")]
    assert own and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in own), own
    dirs = [state, logs, *state.glob("runs/*"), *logs.glob("*")]
    assert all(stat.S_IMODE(d.stat().st_mode) == 0o700 for d in dirs)
    backup = next((root / "home/user/.local/state/rocm-wizard").glob("backup/*"))  # a user-only plan (issue 25)
    assert stat.S_IMODE(backup.stat().st_mode) == 0o700
    files = list(backup.iterdir())
    assert files and all(stat.S_IMODE(f.stat().st_mode) & 0o077 == 0 for f in files), files
    # the actions themselves ran under umask 022, as the package managers expect
    activate = root / "home/user/pytorch_venv/bin/activate"
    assert stat.S_IMODE(activate.stat().st_mode) & 0o044 == 0o044


def test_a_state_dir_made_by_another_uid_is_refused(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if shutil.which("setpriv") is None or os.geteuid() != 0:
        pytest.skip("needs root and setpriv (util-linux)")
    root = tmp_path / "m"
    open_sandbox(root, "seed-7900xt")
    shared = Path(tempfile.mkdtemp(prefix="rocm-wizard-shared-", dir="/tmp"))  # nobody can reach it (tmp_path: 0700)
    request.addfinalizer(lambda: shutil.rmtree(shared, ignore_errors=True))
    shared.chmod(0o777)
    sd = shared / "state"
    subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "mkdir", "-m", "0755", str(sd)],
                   check=True)
    assert sd.stat().st_uid == 65534
    r = wizard(["--sandbox", str(root), "--state-dir", str(sd), "--plan", "pip-only", "--yes"])
    assert r.returncode == 1, r.stdout[-2000:] + r.stderr
    assert "refusing to use the state dir" in one_line(r) and "uid 65534" in r.stderr
    assert list(sd.iterdir()) == []
    assert not (root / "home/user/pytorch_venv/rocm-wizard-constraints.txt").exists()


def test_a_plan_file_others_can_write_is_never_run_by_resume(tmp_path: Path) -> None:
    root = tmp_path / "m"
    r = wizard(["--sandbox", str(root), "--profile", "seed-7900xt", "--plan", "downgrade-6.2", "--yes"])
    assert r.returncode == 3, r.stdout[-2000:]
    state = root / "var/lib/rocm-wizard"
    plan = state / "runs" / (state / "current").read_text().strip() / "plan.json"
    plan.chmod(0o666)
    n = len(journal(state))
    for cmd in ("resume", "rollback", "abandon"):
        r = wizard([cmd, "--yes", "--sandbox", str(root)] if cmd != "abandon" else [cmd, "--sandbox", str(root)])
        assert r.returncode == 1 and "writable by group or others" in one_line(r), r.stdout + r.stderr
    assert len(journal(state)) == n


# ------------------------------------------------------------------ item 6a, 10: the resume unit


def test_the_unit_never_runs_user_writable_code(tmp_path: Path) -> None:
    from wizard.runner.resume_unit import untrusted, wizard_command

    user_venv = tmp_path / "home/alice/venv/bin"
    user_venv.mkdir(parents=True)
    script = user_venv / "rocm-wizard"
    script.write_text(f"#!{PY}\nfrom wizard.cli import main\nmain()\n")
    script.chmod(0o755)
    os.chown(tmp_path / "home/alice", 65534, 65534)
    assert "owned by uid 65534" in (untrusted([str(script), "resume", "--yes"]) or "")
    os.chown(tmp_path / "home/alice", 0, 0)
    (tmp_path / "home/alice").chmod(0o777)
    assert "writable by group or others" in (untrusted([str(script), "resume", "--yes"]) or "")
    (tmp_path / "home/alice").chmod(0o755)
    script.chmod(0o775)
    assert "writable by group or others" in (untrusted([str(script), "resume", "--yes"]) or "")
    # the wizard these tests run is root's alone: every path it names is root-owned, not writable by others
    cmd = wizard_command()
    assert untrusted(cmd) is None
    for c in Path(cmd[0]).parents:
        assert c.stat().st_uid == 0 and not (c.stat().st_mode & 0o022 and not c.stat().st_mode & stat.S_ISVTX)


def test_no_unit_is_installed_for_user_writable_code_and_the_reason_is_shown(tmp_path: Path) -> None:
    from wizard import machines

    root = tmp_path / "m"
    host = open_sandbox(root, "seed-7900xt")
    evil = tmp_path / "alice/rocm-wizard"
    evil.parent.mkdir()
    evil.write_text("#!/bin/sh\necho owned > /tmp/owned\n")
    evil.chmod(0o755)
    os.chown(evil, 65534, 65534)
    machine = machines.sandbox(host, root)
    machine.resume_command = [str(evil), "resume", "--yes", "--sandbox", str(root)]
    lines: list[str] = []
    from wizard.plan_file import load_plan  # noqa: F401 - the planner reads it
    from wizard.planner import resolve_plan
    from wizard.probes import detect

    plan = resolve_plan("downgrade-6.2", detect(host), state_dir=machine.machine_state, wizard_python="python3")
    out = machines.service(machine).start(plan, yes=True,
                                          on_event=lambda e: lines.extend(getattr(e, "lines", ())))
    assert out.state.value == "reboot-pending"
    assert not (root / "etc/systemd/system/rocm-wizard-resume.service").exists()
    assert (root / "etc/profile.d/rocm-wizard.sh").is_file()  # the login notice still says what to run
    assert any("no resume unit" in line and "owned by uid 65534" in line for line in lines)


def test_the_unit_keeps_the_state_dir_and_never_takes_a_newline(tmp_path: Path) -> None:
    from wizard.runner.resume_unit import unit_text

    root = tmp_path / "m"
    sd = root / "srv/rocm-wizard-state"  # the sandbox's stand-ins install what the machine can see
    r = wizard(["--sandbox", str(root), "--profile", "seed-7900xt", "--state-dir", str(sd), "--plan", "downgrade-6.2",
                "--yes"])
    assert r.returncode == 3, r.stdout[-2000:]
    text = (root / "etc/systemd/system/rocm-wizard-resume.service").read_text()
    assert f"Environment=ROCM_WIZARD_STATE_DIR={sd}" in text
    start = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    assert f"--state-dir {sd}" in start
    with pytest.raises(ValueError):
        unit_text(["/usr/bin/rocm-wizard", "resume", "--state-dir", "/var/x\nExecStartPost=/bin/sh"], tmp_path / "t")
    r = wizard(["--sandbox", str(tmp_path / "n"), "--profile", "seed-7900xt", "--state-dir", str(tmp_path / "a\nb"),
                "--plan", "pip-only", "--yes"])
    assert r.returncode in (1, 2) and "control character" in one_line(r)
    assert not (tmp_path / "a\nb").exists()


# ------------------------------------------------------------------ item 10: a full disk, a corrupt journal


def test_a_full_disk_while_journalling_is_one_line_and_the_journal_resumes(tmp_path: Path) -> None:
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare (a private tmpfs)")
    root = tmp_path / "m"
    open_sandbox(root, "rx9070xt-noble")
    state = root / "var/lib/rocm-wizard"
    state.mkdir(parents=True, exist_ok=True)
    fill = 'head -c 4000000 /dev/zero > /var/lib/rocm-wizard/filler; exit 0'
    # a full tmpfs still takes bytes into the journal's last page: the steps after the filler write
    # records until one needs a new page
    after = [StepPlan("groups", f"after {i}", actions=(Action(("true",), f"then this ({i})"),)) for i in range(40)]
    plan = plan_of(StepPlan("preflight", "checks"),
                   StepPlan("groups", "fill the disk", actions=(Action(("sh", "-c", fill), "fill the disk"),)),
                   *after, name="full")
    pf = tmp_path / "full.json"
    pf.write_text(planfile.dumps(plan))
    w = f"{PY} -m wizard --sandbox {root}"
    script = (f"mount -t tmpfs -o size=1m,mode=0700 tmpfs {state} || exit 99; "
              f"{w} --plan {pf} --yes > {tmp_path}/run.out 2> {tmp_path}/run.err; echo $? > {tmp_path}/run.rc; "
              f"rm -f {state}/filler; "
              f"{w} status --json > {tmp_path}/status.json; "
              f"{w} resume --yes > {tmp_path}/resume.out 2>&1; echo $? > {tmp_path}/resume.rc; "
              f"{w} status --json > {tmp_path}/status2.json")
    env = dict(os.environ)
    env.pop("ROCM_WIZARD_STATE_DIR", None)
    res = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=300)
    if res.returncode == 99:
        pytest.skip("tmpfs cannot be mounted here: " + res.stderr)
    err = (tmp_path / "run.err").read_text().strip()
    assert (tmp_path / "run.rc").read_text().strip() == "1", err
    assert "No space left on device" in err and err.count("\n") == 0 and "internal error" not in err, err
    assert json.loads((tmp_path / "status.json").read_text())["state"] == "interrupted"
    assert (tmp_path / "resume.rc").read_text().strip() == "0", (tmp_path / "resume.out").read_text()[-2000:]
    assert json.loads((tmp_path / "status2.json").read_text())["state"] == "done"


def test_a_corrupt_journal_line_is_one_clear_line(tmp_path: Path) -> None:
    root = tmp_path / "m"
    r = wizard(["--sandbox", str(root), "--profile", "seed-7900xt", "--plan", "downgrade-6.2", "--yes"])
    assert r.returncode == 3
    state = root / "var/lib/rocm-wizard"
    path = state / "runs" / (state / "current").read_text().strip() / "journal.jsonl"
    lines = path.read_text().splitlines()
    for bad in ('{"seq": 5, "event": "action-end", "step": "x"', '[1, 2, 3]', '{"seq": "five", "event": "step-end", '
                '"step": 1, "kind": "backup", "outcome": "no-such-outcome"}'):
        path.write_text("\n".join([*lines[:4], bad, *lines[5:]]) + "\n")
        for cmd in (["status"], ["resume", "--yes"], ["rollback", "--yes"]):
            r = wizard([*cmd, "--sandbox", str(root)])
            assert r.returncode == 1, (bad, cmd, r.stdout + r.stderr)
            assert "record 5" in one_line(r), (bad, cmd)


# ------------------------------------------------------------------ item 10: the backup; item 9: quoting


def test_the_backup_never_runs_the_venvs_python_and_reads_its_metadata(tmp_path: Path) -> None:
    root = tmp_path / "m"
    r = wizard(["--sandbox", str(root), "--profile", "seed-7900xt", "--plan", "pip-only", "--yes"])
    assert r.returncode == 0, r.stdout[-2000:]
    venv_calls = [c for c in calls(root, "python") if c[:3] == ["-m", "pip", "freeze"]]
    assert venv_calls == []
    freeze = next((root / "home/user/.local/state/rocm-wizard/backup").glob("*/pip-freeze-*.txt"))
    assert "torch==2.5.1+rocm6.2" in freeze.read_text().splitlines()


@pytest.mark.parametrize("venv", ["/home/user/my venv", "/home/user/v;touch PWNED;x", "/home/user/$(touch PWNED)"])
def test_activate_block_values_are_quoted(tmp_path: Path, venv: str) -> None:
    from wizard.planner import resolve_plan
    from wizard.probes import detect

    host = open_sandbox(tmp_path / "m", "seed-7900xt")
    plan = resolve_plan("pip-only", detect(host), venv=venv, wizard_python="python3")
    env_step = next(s for s in plan.steps if s.kind == "env")
    block = env_step.actions[0].argv[4]
    work = tmp_path / "w"
    work.mkdir()
    r = subprocess.run(["sh", "-c", block + '\nprintf %s "$PIP_CONSTRAINT"'], cwd=work, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{venv}/rocm-wizard-constraints.txt"
    assert list(work.iterdir()) == []
