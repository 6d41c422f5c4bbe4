"""The engine on real processes: quiet, flooding, failing, hanging past a timeout, ignoring SIGTERM."""

from __future__ import annotations

import resource
import time
from pathlib import Path

import pytest

from runner_helpers import plan_of, py_action

from wizard.host import LiveHost
from wizard.model import StepPlan
from wizard.runner import events as ev
from wizard.runner import runs
from wizard.runner.engine import Engine
from wizard.runner.journal import replay
from wizard.runner.executor import LiveExecutor
from wizard.runner.privilege import Privilege
from wizard.runner.records import RunState

pytestmark = pytest.mark.integration


def _engine(tmp_path: Path, plan, sink=None, **kw) -> tuple[Engine, runs.Run]:
    run = runs.create(tmp_path / "state", tmp_path / "logs", plan)
    host = LiveHost()
    eng = Engine(host, plan, run, executor=LiveExecutor(host.environ, Privilege(is_root=True)), on_event=sink, **kw)
    return eng, run


def test_quiet_action_runs_and_is_journalled(tmp_path: Path) -> None:
    got: list = []
    eng, run = _engine(tmp_path, plan_of(StepPlan("env", "quiet", (py_action("pass"),))), got.append)
    out = eng.execute()
    assert out.state is RunState.DONE
    recs = run.journal.records()
    kinds = [r["event"] for r in recs]
    assert kinds == ["run-start", "step-start", "action-start", "action-end", "step-end", "run-end"]
    end = recs[3]
    assert end["exit_code"] == 0 and end["outcome"] == "ok" and "duration" in end and end["log"].endswith("01-env.log")
    assert "boot_id" in end
    assert any(isinstance(e, ev.RunFinished) and e.state is RunState.DONE for e in got)


def test_flood_of_100000_lines_is_streamed_in_batches_and_logged(tmp_path: Path) -> None:
    lines = 0
    batches = 0

    def sink(e) -> None:
        nonlocal lines, batches
        if isinstance(e, ev.OutputLines):
            lines += len(e.lines)
            batches += 1

    # 100 writes of 1,000 lines each (the action runs with PYTHONUNBUFFERED=1): how many reads the runner
    # needs would otherwise depend on how the scheduler interleaves the child and the reader thread
    code = ("import sys\nfor b in range(100): "
            "sys.stdout.write(''.join(f'line {i}\\n' for i in range(b * 1000, b * 1000 + 1000)))")
    eng, run = _engine(tmp_path, plan_of(StepPlan("flood", "flood", (py_action(code),))), sink)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert eng.execute().state is RunState.DONE
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert lines == 100000
    assert batches <= 200  # chunks, not one event per line (at most one per write; 2x for a split read)
    log = (run.logs / "01-flood.log").read_text()
    assert "line 0\n" in log and "line 99999\n" in log
    assert grown_kib < 64 * 1024  # output is not accumulated in memory


def test_failing_action_stops_with_tail_and_choices(tmp_path: Path) -> None:
    got: list = []
    code = "import sys\nfor i in range(80): print('out', i)\nprint('RuntimeError: HIP error: invalid device function')\nsys.exit(3)"
    plan = plan_of(StepPlan("pip_pin", "fails", (py_action(code),)), StepPlan("env", "never", (py_action("pass"),)))
    eng, run = _engine(tmp_path, plan, got.append, diagnose=lambda text: [ev.Finding("x", "seen", "fix it")]
                       if "invalid device function" in text else [])
    out = eng.execute()
    assert out.state is RunState.FAILED
    f = out.failure
    assert f is not None and f.exit_code == 3 and len(f.tail) == 50
    assert f.tail[-1] == "RuntimeError: HIP error: invalid device function"
    assert f.choices == ("retry", "rollback", "stop")
    assert [x.id for x in f.findings] == ["x"]
    v = replay(run.journal.entries())
    assert v.state is RunState.FAILED and 1 not in v.done_steps


def test_hanging_action_is_killed_at_its_timeout(tmp_path: Path) -> None:
    act = py_action("import time; time.sleep(60)", timeout=0.5)
    eng, run = _engine(tmp_path, plan_of(StepPlan("x", "hang", (act,))))
    t0 = time.monotonic()
    out = eng.execute()
    assert out.state is RunState.FAILED and "timed out" in out.message
    assert time.monotonic() - t0 < 10
    assert run.journal.records()[-2]["outcome"] == "timeout"


def test_child_ignoring_sigterm_is_killed(tmp_path: Path) -> None:
    code = ("import signal, subprocess, sys, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "subprocess.Popen([sys.executable, '-c', 'import signal,time; signal.signal(signal.SIGTERM, "
            "signal.SIG_IGN); time.sleep(120)'])\nprint('started', flush=True)\ntime.sleep(120)")
    act = py_action(code, timeout=1.0)
    eng, run = _engine(tmp_path, plan_of(StepPlan("x", "stubborn", (act,))))
    t0 = time.monotonic()
    out = eng.execute()
    assert out.state is RunState.FAILED
    assert time.monotonic() - t0 < 15
    end = [r for r in run.journal.records() if r["event"] == "action-end"][0]
    assert end["outcome"] == "timeout" and end["exit_code"] == -9


def test_done_check_skips_action_and_missing_program_fails_cleanly(tmp_path: Path) -> None:
    marker = tmp_path / "done"
    marker.write_text("")
    from wizard.model import Action

    acts = (Action(("false",), check=("test", "-e", str(marker))), Action(("no-such-program-xyz",)))
    eng, run = _engine(tmp_path, plan_of(StepPlan("x", "checks", acts)))
    out = eng.execute()
    assert out.state is RunState.FAILED and out.failure is not None and out.failure.exit_code == 127
    assert [r["event"] for r in run.journal.records()][2] == "action-skip"


def test_stdin_is_closed_so_nothing_waits_for_input(tmp_path: Path) -> None:
    act = py_action("import sys; print(repr(sys.stdin.read()))", timeout=20)
    eng, run = _engine(tmp_path, plan_of(StepPlan("x", "stdin", (act,))))
    assert eng.execute().state is RunState.DONE
    assert "''" in (run.logs / "01-x.log").read_text()


def test_privilege_wrapping() -> None:
    from wizard.model import Action

    user = Privilege(is_root=False)
    assert user.wrap(Action(("apt-get", "update"), root=True)) == ["sudo", "-n", "--", "apt-get", "update"]
    assert user.wrap(Action(("pip", "list"), as_user=True)) == ["pip", "list"]
    # the environment is part of the command whoever runs it (the dry-run script shows the same)
    assert user.wrap(Action(("pip", "list"), as_user=True, env=(("A", "1"),))) == ["env", "A=1", "pip", "list"]
    under_sudo = Privilege(is_root=True, sudo_user="alice")
    assert under_sudo.wrap(Action(("pip", "list"), as_user=True)) == ["sudo", "-n", "-u", "alice", "-H", "--", "pip", "list"]
    assert under_sudo.wrap(Action(("apt-get", "update"), root=True)) == ["apt-get", "update"]
    assert user.wrap(Action(("x",), root=True, env=(("A", "1"),))) == ["sudo", "-n", "--", "env", "A=1", "x"]


def test_child_that_closes_its_output_early_is_still_waited_for(tmp_path: Path) -> None:
    # the end of the output makes the runner poll closely; it must still wait for the real exit
    code = "import os, sys, time\nprint('bye', flush=True)\nos.close(1); os.close(2)\ntime.sleep(0.6)\nsys.exit(3)"
    eng, run = _engine(tmp_path, plan_of(StepPlan("x", "early eof", (py_action(code, timeout=30),))))
    t0 = time.monotonic()
    out = eng.execute()
    assert time.monotonic() - t0 >= 0.6
    assert out.state is RunState.FAILED and out.failure is not None and out.failure.exit_code == 3
    assert "bye" in (run.logs / "01-x.log").read_text()


def test_grandchild_holding_the_output_open_does_not_stall_the_step(tmp_path: Path) -> None:
    # a daemon left behind keeps the pipe open: the step ends with its own process, not the daemon
    code = ("import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(5)'], "
            "start_new_session=True)\nprint('parent done', flush=True)")
    eng, run = _engine(tmp_path, plan_of(StepPlan("x", "daemon", (py_action(code, timeout=60),))))
    t0 = time.monotonic()
    assert eng.execute().state is RunState.DONE
    assert time.monotonic() - t0 < 15
    assert "parent done" in (run.logs / "01-x.log").read_text()


def test_output_pipe_is_widened_where_the_kernel_allows() -> None:
    import fcntl
    import os

    from wizard.runner import shell

    r, w = os.pipe()
    try:
        shell._widen(r)
        size = fcntl.fcntl(r, fcntl.F_GETPIPE_SZ)
        limit = int(Path("/proc/sys/fs/pipe-max-size").read_text())
        assert size == min(shell.PIPE_BYTES, limit) or size >= shell.PIPE_BYTES
    finally:
        os.close(r)
        os.close(w)


def test_sudo_ticket_is_kept_alive_while_a_run_goes_on(tmp_path: Path) -> None:
    # a stand-in sudo that records its arguments; Privilege runs it by path
    log = tmp_path / "sudo.calls"
    fake = tmp_path / "sudo"
    fake.write_text(f"#!/bin/sh\necho \"$*\" >> {log}\n")
    fake.chmod(0o755)
    priv = Privilege(is_root=False, sudo=str(fake))
    with priv.kept_alive({"PATH": "/usr/bin:/bin"}, every=0.05):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (not log.exists() or len(log.read_text().splitlines()) < 3):
            time.sleep(0.05)
    calls = log.read_text().splitlines()
    assert len(calls) >= 3 and set(calls) == {"-n -v"}  # never a prompting call
    n = len(calls)
    time.sleep(0.3)
    assert len(log.read_text().splitlines()) == n  # stopped with the block
    assert priv.refresh({"PATH": "/usr/bin:/bin"}) is True
    assert Privilege(is_root=False, sudo=str(tmp_path / "missing")).refresh({}) is False
