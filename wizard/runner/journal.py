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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


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


class Journal:
    """One run's journal file."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._seq: int | None = None

    # -- reading -----------------------------------------------------------------------
    def records(self) -> list[dict[str, Any]]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
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
            if isinstance(rec, dict):
                out.append(rec)
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

    def append(self, event: str, **fields: Any) -> dict[str, Any]:
        if self._seq is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            new = not self.path.exists()
            self._repair_tail()
            self._seq = len(self.records())
            if new:
                fsync_dir(self.path.parent)
        self._seq += 1
        rec: dict[str, Any] = {"seq": self._seq, "t": round(time.time(), 3), "event": event}
        rec.update(fields)
        line = (json.dumps(rec, sort_keys=False, default=str) + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
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


@dataclass
class RunView:
    """What the journal says about a run (the replay of its records)."""

    run_id: str | None = None
    plan: str | None = None
    plan_file: str | None = None
    total_steps: int = 0
    step_kinds: list[str] = field(default_factory=list)
    step_titles: list[str] = field(default_factory=list)
    state: str = "unknown"  # running | failed | reboot-pending | done | stopped | rolled-back | interrupted
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
    last_failure: dict[str, Any] | None = None
    rolled_back: set[tuple[int, int]] = field(default_factory=set)
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
        return self.state in ("done", "rolled-back")


def replay(records: list[dict[str, Any]]) -> RunView:
    v = RunView(records=len(records))
    ended = False
    started: dict[int, float] = {}
    for r in records:
        ev = r.get("event")
        s, a = r.get("step"), r.get("action")
        if ev == "run-start":
            v.run_id = r.get("run")
            v.plan = r.get("plan")
            v.plan_file = r.get("plan_file")
            v.total_steps = int(r.get("steps") or 0)
            v.step_kinds = list(r.get("kinds") or [])
            v.step_titles = list(r.get("titles") or [])
            v.yes = bool(r.get("yes"))
            v.state = "running"
        elif ev in ("resume", "retry"):
            v.state = "running"
            ended = False
            v.last_failure = None
        elif ev == "step-start":
            v.current_step = s
            if isinstance(s, int) and isinstance(r.get("t"), (int, float)):
                started[s] = float(r["t"])
            if isinstance(s, int) and "log" in r:
                v.step_logs[s] = r["log"]
        elif ev == "step-skip" and isinstance(s, int):
            v.skipped_steps[s] = str(r.get("reason") or "")
            v.step_outcomes[s] = "skipped"
        elif ev == "step-end" and isinstance(s, int):
            v.step_outcomes[s] = str(r.get("outcome"))
            if s in started and isinstance(r.get("t"), (int, float)):
                v.step_durations[s] = max(0.0, float(r["t"]) - started[s])
            if r.get("outcome") in ("ok", "changed", "unchanged"):
                v.done_steps.add(s)
        elif ev == "action-start":
            v.open_actions.add((s, a))
        elif ev == "action-skip":
            v.open_actions.discard((s, a))
            v.done_actions.add((s, a))
        elif ev == "action-end":
            v.open_actions.discard((s, a))
            if r.get("outcome") == "ok":
                v.done_actions.add((s, a))
                if isinstance(s, int) and isinstance(a, int) and a >= 0 and (s, a) not in v.ran_actions:
                    v.ran_actions.append((s, a))
            else:
                v.last_failure = dict(r)
        elif ev == "reboot-pending":
            v.reboot_step = s
            v.reboot_boot_id = r.get("boot_id")
        elif ev == "rebooted":
            v.reboot_step = None
            v.reboot_boot_id = None
        elif ev == "rollback-action-end" and r.get("outcome") == "ok":
            v.rolled_back.add((s, a))
        elif ev == "run-end":
            v.state = str(r.get("state"))
            ended = True
    if v.state == "running" and not ended and records:
        v.state = "interrupted"
    return v
