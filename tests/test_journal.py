"""Journal: fsync'd JSON lines, a torn tail ignored and repaired, replay, the lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from wizard.runner import records as r
from wizard.runner.journal import Entry, Journal, JournalError, replay
from wizard.runner.lock import Lock, LockHeld

pytestmark = pytest.mark.unit


def entries(raw: list[dict]) -> list[Entry]:
    out = []
    for n, d in enumerate(raw, 1):
        rec = r.decode(d)
        assert rec is not None, d
        out.append(Entry(n, float(d.get("t", 0.0)), rec))
    return out


def test_records_round_trip_and_torn_tail(tmp_path: Path) -> None:
    j = Journal(tmp_path / "j.jsonl")
    j.append(r.RunStart("r", "p", "/p.json", 2))
    j.append(r.StepStart(0, "backup", "Back up", "/l"))
    with open(j.path, "ab") as fh:
        fh.write(b'{"seq": 3, "event": "action-st')  # a power cut mid-write
    assert [d["event"] for d in j.records()] == ["run-start", "step-start"]
    j2 = Journal(j.path)
    j2.append(r.ActionStart(0, 0, "true"))
    recs = j2.records()
    assert [d["seq"] for d in recs] == [1, 2, 3]
    assert all(line.startswith("{") for line in j.path.read_text().splitlines())
    typed = [e.record for e in j2.entries()]
    assert typed == [r.RunStart("r", "p", "/p.json", 2), r.StepStart(0, "backup", "Back up", "/l"),
                     r.ActionStart(0, 0, "true")]
    assert oct(j.path.stat().st_mode & 0o777) == "0o600"


def test_every_record_kind_round_trips_through_json(tmp_path: Path) -> None:
    recs = [r.RunStart("r", "p", "/p", 3, ("a", "b"), ("A", "B"), True, "b1", "live", "ab12"),
            r.Resume("r", "b2"), r.Retry("r"), r.PreflightSkip(("wheel",)), r.StepSkip(1, "groups", "why"),
            r.StepEnd(0, "backup", r.StepOutcome.UNCHANGED),
            r.ActionEnd(0, 1, "x", 3, 0.5, "/l", "b1", r.ActionOutcome.TIMEOUT),
            r.ActionStart(-1, 2, "undo", phase=r.Phase.ROLLBACK), r.ActionSkip(-1, 0, "check", r.Phase.ROLLBACK),
            r.RebootPending(4, "b1", True, True), r.Rebooted(4, "b1", "b2"),
            r.RollbackStart(({"why": "w", "action": {"argv": ["true"]}},), ("c",)),
            r.RunEnd(r.RunState.ROLLED_BACK, message="m", reboot_needed=True)]
    j = Journal(tmp_path / "j.jsonl")
    for rec in recs:
        j.append(rec)
    assert [e.record for e in j.entries()] == recs
    assert [d["event"] for d in j.records()][7:9] == ["rollback-action-start", "rollback-action-skip"]


def test_a_record_that_does_not_fit_its_kind_is_an_error_and_an_unknown_kind_is_ignored(tmp_path: Path) -> None:
    p = tmp_path / "j.jsonl"
    p.write_text('{"event": "from-a-newer-wizard", "x": 1}\n{"event": "step-start", "step": 0}\n')
    with pytest.raises(JournalError, match="field kind is missing"):
        Journal(p).entries()
    p.write_text('{"event": "from-a-newer-wizard", "x": 1}\n')
    assert Journal(p).entries() == []


def test_corrupt_middle_record_is_an_error(tmp_path: Path) -> None:
    p = tmp_path / "j.jsonl"
    p.write_text('{"event": "run-start"}\nnot json\n{"event": "run-end"}\n')
    with pytest.raises(JournalError):
        Journal(p).records()


BASE = [{"event": "run-start", "run": "r", "plan": "p", "plan_file": "/p", "steps": 3}]


def test_replay_states() -> None:
    assert replay(entries(BASE)).state is r.RunState.INTERRUPTED
    v = replay(entries(BASE + [{"event": "step-start", "step": 0, "kind": "k", "title": "t", "log": "/l"},
                               {"event": "action-start", "step": 0, "action": 0, "argv": "x"}]))
    assert v.open_actions == {(0, 0)}
    v = replay(entries(BASE + [{"event": "action-start", "step": 0, "action": 0, "argv": "x"},
                               {"event": "action-end", "step": 0, "action": 0, "outcome": "ok"},
                               {"event": "step-end", "step": 0, "kind": "k", "outcome": "ok"},
                               {"event": "reboot-pending", "step": 1, "boot_id": "b1"},
                               {"event": "run-end", "state": "reboot-pending"}]))
    assert v.state is r.RunState.REBOOT_PENDING and v.done_steps == {0} and v.reboot_boot_id == "b1"
    assert v.next_step == 1 and v.ran_actions == [(0, 0)]


def test_replay_of_a_rollback_interrupted_failed_and_finished() -> None:
    failed = BASE + [{"event": "action-end", "step": 1, "action": 0, "outcome": "failed", "exit_code": 7},
                     {"event": "run-end", "state": "failed", "step": 1}]
    v = replay(entries(failed))
    assert v.state is r.RunState.FAILED and v.failed_step == 1 and v.state.resumable
    started = failed + [{"event": "rollback-start", "actions": [{"why": "w", "action": {"argv": ["true"]}}] * 2},
                        {"event": "rollback-action-start", "step": -1, "action": 0, "argv": "true"},
                        {"event": "rollback-action-end", "step": -1, "action": 0, "outcome": "ok"},
                        {"event": "rollback-action-start", "step": -1, "action": 1, "argv": "true"}]
    v = replay(entries(started))  # kill -9 inside the second undo action
    assert v.state is r.RunState.ROLLING_BACK and not v.state.resumable and v.state.can_roll_back
    assert v.rolled_back == {0} and v.rollback_open == {1} and v.rollback is not None
    assert v.state.blocks_new_run
    v = replay(entries(started + [{"event": "rollback-action-end", "step": -1, "action": 1, "outcome": "failed"},
                                  {"event": "run-end", "state": "rollback-failed"}]))
    assert v.state is r.RunState.ROLLBACK_FAILED and not v.state.resumable and v.state.can_roll_back
    v = replay(entries(started + [{"event": "rollback-action-end", "step": -1, "action": 1, "outcome": "ok"},
                                  {"event": "run-end", "state": "rolled-back", "reboot_needed": True}]))
    assert v.state is r.RunState.ROLLED_BACK and v.finished and not v.state.blocks_new_run and v.reboot_needed


@pytest.mark.parametrize("state,blocks,resumable", [
    ("done", False, False), ("abandoned", False, False), ("rolled-back", False, False), ("failed", True, True),
    ("interrupted", True, True), ("reboot-pending", True, True), ("stopped", True, True),
    ("rolling-back", True, False), ("rollback-failed", True, False), ("not-started", True, True)])
def test_run_states_know_what_blocks_and_what_resumes(state: str, blocks: bool, resumable: bool) -> None:
    s = r.RunState(state)
    assert s.blocks_new_run is blocks and s.resumable is resumable


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
    step = {"kind": "k", "title": "t", "log": "/l"}
    recs = [{"event": "run-start", "run": "r", "plan": "p", "plan_file": "/p", "steps": 2, "t": 100.0},
            {"event": "step-start", "step": 0, "t": 100.5, **step},
            {"event": "run-end", "state": "failed", "t": 101.0},
            {"event": "retry", "run": "r", "t": 200.0},
            {"event": "step-start", "step": 0, "t": 200.25, **step},
            {"event": "step-end", "step": 0, "kind": "k", "outcome": "ok", "t": 203.75}]
    v = replay(entries(recs))
    assert v.step_durations == {0: 3.5}
    assert v.done_steps == {0}
