"""Journal: fsync'd JSON lines, a torn tail ignored and repaired, replay, the lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from wizard.runner.journal import Journal, JournalError, replay
from wizard.runner.lock import Lock, LockHeld


def test_records_round_trip_and_torn_tail(tmp_path: Path) -> None:
    j = Journal(tmp_path / "j.jsonl")
    j.append("run-start", run="r", plan="p", steps=2)
    j.append("step-start", step=0)
    with open(j.path, "ab") as fh:
        fh.write(b'{"seq": 3, "event": "action-st')  # a power cut mid-write
    assert [r["event"] for r in j.records()] == ["run-start", "step-start"]
    j2 = Journal(j.path)
    j2.append("action-start", step=0, action=0)
    recs = j2.records()
    assert [r["seq"] for r in recs] == [1, 2, 3]
    assert all(line.startswith("{") for line in j.path.read_text().splitlines())


def test_corrupt_middle_record_is_an_error(tmp_path: Path) -> None:
    p = tmp_path / "j.jsonl"
    p.write_text('{"event": "run-start"}\nnot json\n{"event": "run-end"}\n')
    with pytest.raises(JournalError):
        Journal(p).records()


def test_replay_states() -> None:
    base = [{"event": "run-start", "run": "r", "plan": "p", "steps": 3}]
    assert replay(base).state == "interrupted"
    v = replay(base + [{"event": "step-start", "step": 0}, {"event": "action-start", "step": 0, "action": 0}])
    assert v.open_actions == {(0, 0)}
    v = replay(base + [{"event": "action-start", "step": 0, "action": 0},
                       {"event": "action-end", "step": 0, "action": 0, "outcome": "ok"},
                       {"event": "step-end", "step": 0, "outcome": "ok"},
                       {"event": "reboot-pending", "step": 1, "boot_id": "b1"},
                       {"event": "run-end", "state": "reboot-pending"}])
    assert v.state == "reboot-pending" and v.done_steps == {0} and v.reboot_boot_id == "b1" and v.next_step == 1
    assert v.ran_actions == [(0, 0)]


def test_lock_names_holder_and_recognises_stale(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\nsys.path.insert(0, %r)\nfrom wizard.runner.lock import Lock\n"
        "Lock(__import__('pathlib').Path(%r), 'rocm-wizard --plan x --yes').acquire()\nprint('held', flush=True)\n"
        "time.sleep(60)") % (str(Path(__file__).resolve().parents[1]), str(path))], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LockHeld) as exc:
            Lock(path).acquire()
        assert f"pid {holder.pid}" in str(exc.value) and "rocm-wizard --plan x --yes" in str(exc.value)
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
    lk = Lock(path).acquire()  # the dead holder's lock is stale: taken over, and it says whose it was
    assert lk.stale is not None and lk.stale.pid == holder.pid
    lk.release()
    assert path.read_text() == ""  # a clean release leaves no holder behind


def test_replay_step_durations_come_from_the_last_start() -> None:
    recs = [{"event": "run-start", "run": "r", "plan": "p", "steps": 2, "t": 100.0},
            {"event": "step-start", "step": 0, "t": 100.5},
            {"event": "run-end", "state": "failed", "t": 101.0},
            {"event": "retry", "t": 200.0},
            {"event": "step-start", "step": 0, "t": 200.25},
            {"event": "step-end", "step": 0, "outcome": "ok", "t": 203.75},
            {"event": "step-start", "step": 1},  # no time: no duration, no error
            {"event": "step-end", "step": 1, "outcome": "ok"}]
    v = replay(recs)
    assert v.step_durations == {0: 3.5}
    assert v.done_steps == {0, 1}
