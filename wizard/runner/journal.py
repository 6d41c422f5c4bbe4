"""The run journal: append-only JSON lines, one fsync per record, and a replay of it.

Crash consistency rests on three rules: (1) a record is one ``write()`` of one complete line to a
file opened with O_APPEND, followed by ``fsync``; (2) the engine writes ``action-start`` before it
spawns anything and ``action-end`` after the process is gone; (3) a reader ignores a torn last line
(a power cut mid-write) and a writer cuts it off before appending. Replaying the records gives the
run's state (:class:`RunView`) without trusting anything else on disk.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from wizard.record import field, record
from wizard.runner.records import (ActionEnd, ActionSkip, ActionOutcome, ActionStart, Phase, PreflightSkip, RebootPending,
                                   Rebooted, Record, Resume, Retry, RollbackStart, RunEnd, RunStart, RunState,
                                   StepDrift, StepEnd, StepOutcome, StepSkip, StepStart, decode, encode)


class JournalError(Exception):
    """The journal cannot be read (a corrupt record that is not the last one)."""


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, text: str) -> None:
    """Write a small file so that a crash leaves either the old or the new content."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


@record
class Entry:
    """One journal line: its sequence number, time, and typed record."""

    seq: int
    t: float
    record: Record


class Journal:
    """One run's journal file."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._seq: int | None = None

    # -- reading -----------------------------------------------------------------------
    def records(self) -> list[dict[str, Any]]:
        """The raw records (JSON objects), a torn last line left out."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise JournalError(f"{self.path}: cannot be read ({exc.strerror})") from None
        lines = data.split(b"\n")
        out: list[dict[str, Any]] = []
        for i, raw in enumerate(lines):
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw)
            except ValueError:
                if i == len(lines) - 1:  # torn tail: never completed, never acted on
                    break
                raise JournalError(f"{self.path}: record {i + 1} is not valid JSON") from None
            if not isinstance(rec, dict):
                raise JournalError(f"{self.path}: record {i + 1} is not a JSON object")
            out.append(rec)
        return out

    def entries(self) -> list[Entry]:
        """The typed records (unknown kinds skipped; a record that does not fit its kind is an error)."""
        out: list[Entry] = []
        for n, obj in enumerate(self.records(), 1):
            try:
                rec = decode(obj)
            except (ValueError, TypeError) as exc:
                raise JournalError(f"{self.path}: record {n}: {exc}") from None
            if rec is not None:
                t, seq = obj.get("t"), obj.get("seq")
                out.append(Entry(seq if isinstance(seq, int) else n, float(t) if isinstance(t, (int, float)) else 0.0,
                                 rec))
        return out

    # -- writing -----------------------------------------------------------------------
    def _repair_tail(self) -> None:
        """Cut a torn last line so the next record starts on a line of its own."""
        try:
            with open(self.path, "rb+") as fh:
                fh.seek(0, os.SEEK_END)
                size = fh.tell()
                if size == 0:
                    return
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) == b"\n":
                    return
                data = self.path.read_bytes()
                keep = data.rfind(b"\n") + 1
                fh.truncate(keep)
                fh.flush()
                os.fsync(fh.fileno())
        except FileNotFoundError:
            return

    def append(self, record: Record) -> dict[str, Any]:
        """Write one record (JournalError, one line, when it cannot be: a full disk, a read-only fs)."""
        try:
            return self._append(record)
        except OSError as exc:
            self._seq = None  # counted again from the file by the next append
            raise JournalError(f"cannot write the journal {self.path}: {exc.strerror or exc}") from None

    def _append(self, record: Record) -> dict[str, Any]:
        if self._seq is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            new = not self.path.exists()
            self._repair_tail()
            self._seq = len(self.records())
            if new:
                fsync_dir(self.path.parent)
        self._seq += 1
        rec: dict[str, Any] = {"seq": self._seq, "t": round(time.time(), 3)}
        rec.update(encode(record))
        line = (json.dumps(rec, sort_keys=False, default=str) + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            if os.write(fd, line) != len(line):  # a short write (a full disk) is a torn tail: cut on the next append
                raise OSError(28, "No space left on device (short write)")
            os.fsync(fd)
        finally:
            os.close(fd)
        _crash_point(self._seq)
        return rec


def _crash_point(seq: int) -> None:
    """Fault injection for the crash tests: ROCM_WIZARD_CRASH_AFTER=N kills this process (SIGKILL)
    right after record N is on disk. Never set outside tests."""
    at = os.environ.get("ROCM_WIZARD_CRASH_AFTER")
    if at and at.isdigit() and int(at) == seq:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


# ----------------------------------------------------------------------------- replay


@record(frozen=False)
class RunView:
    """What the journal says about a run (the replay of its records)."""

    run_id: str | None = None
    plan: str | None = None
    plan_file: str | None = None
    plan_digest: str | None = None
    user: str | None = None  # the run-start's user (None: none recorded)
    total_steps: int = 0
    step_kinds: list[str] = field(default_factory=list)
    step_titles: list[str] = field(default_factory=list)
    state: RunState = RunState.NOT_STARTED
    current_step: int | None = None
    done_steps: set[int] = field(default_factory=set)
    skipped_steps: dict[int, str] = field(default_factory=dict)
    done_actions: set[tuple[int, int]] = field(default_factory=set)
    ran_actions: list[tuple[int, int]] = field(default_factory=list)  # ended ok by running (not by a check)
    open_actions: set[tuple[int, int]] = field(default_factory=set)  # started, never ended
    step_outcomes: dict[int, str] = field(default_factory=dict)
    step_logs: dict[int, str] = field(default_factory=dict)
    step_durations: dict[int, float] = field(default_factory=dict)  # step-end time - its last step-start time
    reboot_step: int | None = None
    reboot_boot_id: str | None = None
    rebooted_steps: set[int] = field(default_factory=set)
    last_failure: ActionEnd | RunEnd | None = None
    preflight_skipped: tuple[str, ...] = ()
    rollback: RollbackStart | None = None  # the rollback as it started, when one did
    rolled_back: set[int] = field(default_factory=set)  # rollback actions done
    rollback_open: set[int] = field(default_factory=set)
    # (step, action) -> (paths absent, paths present) when the action first started (see ActionStart)
    claimed: dict[tuple[int, int], tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)
    reboot_needed: bool = False
    drifted: dict[int, str] = field(default_factory=dict)  # step -> the done-check that failed (StepDrift)
    message: str = ""
    yes: bool = False
    records: int = 0

    @property
    def next_step(self) -> int | None:
        for i in range(self.total_steps):
            if i not in self.done_steps and i not in self.skipped_steps:
                return i
        return None

    @property
    def finished(self) -> bool:
        return self.state.finished

    @property
    def failed_step(self) -> int | None:
        f = self.last_failure
        return None if f is None else f.step


def replay(entries: list[Entry]) -> RunView:
    v = RunView(records=len(entries))
    ended = False
    in_rollback = False
    started: dict[int, float] = {}
    for e in entries:
        r = e.record
        if isinstance(r, RunStart):
            v.run_id, v.plan, v.plan_file, v.plan_digest = r.run, r.plan, r.plan_file, r.plan_digest
            v.total_steps = r.steps
            v.step_kinds, v.step_titles = list(r.kinds), list(r.titles)
            v.yes = r.yes
            v.user = r.user
            v.state = RunState.RUNNING
        elif isinstance(r, (Resume, Retry)):
            v.state = RunState.RUNNING
            ended = False
            v.last_failure = None
        elif isinstance(r, PreflightSkip):
            v.preflight_skipped = tuple(dict.fromkeys((*v.preflight_skipped, *r.names)))
        elif isinstance(r, StepStart):
            v.current_step = r.step
            started[r.step] = e.t
            v.step_logs[r.step] = r.log
        elif isinstance(r, StepSkip):
            v.skipped_steps[r.step] = r.reason
            v.step_outcomes[r.step] = StepOutcome.SKIPPED.value
        elif isinstance(r, StepEnd):
            v.step_outcomes[r.step] = r.outcome.value
            if r.step in started:
                v.step_durations[r.step] = max(0.0, e.t - started[r.step])
            if r.outcome in (StepOutcome.OK, StepOutcome.UNCHANGED):
                v.done_steps.add(r.step)
        elif isinstance(r, StepDrift):  # done no more: every action of the step runs again
            v.drifted[r.step] = r.check
            v.done_steps.discard(r.step)
            v.done_actions = {(s, a) for s, a in v.done_actions if s != r.step}
        elif isinstance(r, ActionStart):
            if r.phase is Phase.ROLLBACK:
                v.rollback_open.add(r.action)
            else:
                v.open_actions.add((r.step, r.action))
                v.claimed.setdefault((r.step, r.action), (r.absent, r.existed))  # the first start says it
        elif isinstance(r, ActionSkip):
            if r.phase is Phase.ROLLBACK:
                v.rollback_open.discard(r.action)
                v.rolled_back.add(r.action)
            else:
                v.open_actions.discard((r.step, r.action))
                v.done_actions.add((r.step, r.action))
        elif isinstance(r, ActionEnd):
            if r.phase is Phase.ROLLBACK:
                v.rollback_open.discard(r.action)
                if r.outcome is ActionOutcome.OK:
                    v.rolled_back.add(r.action)
                continue
            v.open_actions.discard((r.step, r.action))
            if r.outcome is ActionOutcome.OK:
                v.done_actions.add((r.step, r.action))
                if r.action >= 0 and (r.step, r.action) not in v.ran_actions:
                    v.ran_actions.append((r.step, r.action))
            else:
                v.last_failure = r
        elif isinstance(r, RebootPending):
            v.reboot_step = r.step
            v.reboot_boot_id = r.boot_id
        elif isinstance(r, Rebooted):
            v.rebooted_steps.add(r.step)
            v.reboot_step = None
            v.reboot_boot_id = None
            v.reboot_needed = False
        elif isinstance(r, RollbackStart):
            if v.rollback is None:
                v.rollback = r
            in_rollback = True
            ended = False
            v.state = RunState.ROLLING_BACK
        elif isinstance(r, RunEnd):
            v.state = r.state
            v.message = r.message
            v.reboot_needed = r.reboot_needed
            if r.state is RunState.FAILED and r.step is not None:
                v.last_failure = r if not isinstance(v.last_failure, ActionEnd) else v.last_failure
            ended = True
            in_rollback = False
    if not ended and entries:
        if in_rollback:
            v.state = RunState.ROLLING_BACK
        elif v.state is RunState.RUNNING:
            v.state = RunState.INTERRUPTED
    return v
