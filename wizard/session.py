"""The wizard's stages as a pure state machine, and the Session both front ends read.

No Textual, no rich, no I/O: ``advance(stage, event, read_only=...)`` is a table lookup, and
``RunState.apply(event)`` folds the runner's plain event dataclasses into what a view shows (step
states, durations, the failure, the reboot message, verify results). The Textual app and the
unattended CLI both drive these; neither holds business logic of its own.

    DETECT -> DIAGNOSE -> CHOOSE -> REVIEW -> CONFIRM -> RUN -> [VERIFY] -> REPORT
                                                         |-> FAILED -> retry (RUN) | rollback (RUN) | stop (REPORT)
                                                         |-> REBOOT (the app ends; the next start offers RESUME)
    RESUME -> RUN (continue) | DETECT (later: the run stays pending)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any


class Stage(str, Enum):
    DETECT = "detect"
    DIAGNOSE = "diagnose"
    CHOOSE = "choose"
    REVIEW = "review"
    CONFIRM = "confirm"
    RUN = "run"
    FAILED = "failed"
    REBOOT = "reboot"
    RESUME = "resume"
    VERIFY = "verify"
    REPORT = "report"


class IllegalTransition(Exception):
    def __init__(self, stage: Stage, event: str) -> None:
        super().__init__(f"no transition from {stage.value} on {event!r}")
        self.stage, self.event = stage, event


# (stage, event) -> next stage
_TABLE: dict[tuple[Stage, str], Stage] = {
    (Stage.DETECT, "next"): Stage.DIAGNOSE,
    (Stage.DIAGNOSE, "next"): Stage.CHOOSE,
    (Stage.DIAGNOSE, "back"): Stage.DETECT,
    (Stage.CHOOSE, "choose"): Stage.REVIEW,
    (Stage.CHOOSE, "back"): Stage.DIAGNOSE,
    (Stage.REVIEW, "back"): Stage.CHOOSE,
    (Stage.REVIEW, "confirm"): Stage.CONFIRM,
    (Stage.CONFIRM, "yes"): Stage.RUN,
    (Stage.CONFIRM, "no"): Stage.REVIEW,
    (Stage.RUN, "failed"): Stage.FAILED,
    (Stage.RUN, "reboot"): Stage.REBOOT,
    (Stage.RUN, "verify"): Stage.VERIFY,
    (Stage.RUN, "done"): Stage.REPORT,
    (Stage.RUN, "stopped"): Stage.REPORT,
    (Stage.VERIFY, "failed"): Stage.FAILED,
    (Stage.VERIFY, "done"): Stage.REPORT,
    (Stage.VERIFY, "reboot"): Stage.REBOOT,
    (Stage.VERIFY, "stopped"): Stage.REPORT,
    (Stage.FAILED, "retry"): Stage.RUN,
    (Stage.FAILED, "rollback"): Stage.RUN,
    (Stage.FAILED, "stop"): Stage.REPORT,
    (Stage.RESUME, "resume"): Stage.RUN,
    (Stage.RESUME, "later"): Stage.DETECT,
    (Stage.REPORT, "restart"): Stage.DETECT,
}
# a recorded machine (--from) can be reviewed and exported, never changed
_READ_ONLY_BLOCKED = {(Stage.REVIEW, "confirm"), (Stage.RESUME, "resume"), (Stage.FAILED, "retry"),
                      (Stage.FAILED, "rollback")}


def advance(stage: Stage, event: str, *, read_only: bool = False) -> Stage:
    """The next stage, or :class:`IllegalTransition`."""
    if read_only and (stage, event) in _READ_ONLY_BLOCKED:
        raise IllegalTransition(stage, event)
    try:
        return _TABLE[(stage, event)]
    except KeyError:
        raise IllegalTransition(stage, event) from None


def events_from(stage: Stage, *, read_only: bool = False) -> list[str]:
    """The events a stage accepts (what a view may offer)."""
    return [e for (s, e) in _TABLE if s == stage and not (read_only and (s, e) in _READ_ONLY_BLOCKED)]


# ----------------------------------------------------------------------------- plans on offer


@dataclass(frozen=True)
class PlanOption:
    """One plan as the Choose stage shows it."""

    name: str
    title: str
    why: str
    applicable: bool
    reasons: tuple[str, ...] = ()  # why it is refused (or the planner's error)
    recommended: bool = False
    recommended_why: str | None = None
    target: tuple[tuple[str, Any], ...] = ()


def order_options(options: list[PlanOption]) -> list[PlanOption]:
    """Recommended first, then applicable plans, then refused ones; by name within each group."""
    return sorted(options, key=lambda o: (not o.recommended, not o.applicable, o.name))


# ----------------------------------------------------------------------------- a run as a view sees it

STEP_STATES = ("planned", "running", "ok", "unchanged", "skipped", "failed", "reboot", "stopped")


@dataclass(frozen=True)
class StepRow:
    index: int
    kind: str
    title: str
    state: str = "planned"
    duration: float | None = None
    log_path: str | None = None
    note: str | None = None  # skip reason, failure message


@dataclass(frozen=True)
class VerifyRow:
    name: str
    device: str
    status: str
    seconds: float
    error: str | None = None
    metrics: tuple[tuple[str, Any], ...] = ()

    @property
    def throughput(self) -> str:
        """The metrics a table shows: throughput figures first (TFLOP/s, img/s), else nothing."""
        parts = [f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                 for k, v in self.metrics if any(w in k.lower() for w in ("tflop", "gflop", "per_s", "/s", "img", "throughput"))]
        return ", ".join(parts)


@dataclass
class RunState:
    """The fold of the engine's events: what the Run, Failed, Reboot, Verify and Report stages show."""

    run_id: str | None = None
    plan: str | None = None
    journal: str | None = None
    log_dir: str | None = None
    resumed: bool = False
    steps: list[StepRow] = field(default_factory=list)
    current: int | None = None
    current_action: str | None = None
    state: str = "idle"  # idle | running | failed | reboot-pending | done | stopped | rolled-back
    failure: Any = None  # wizard.runner.events.RunFailed
    reboot_message: str | None = None
    reboot_unit: bool = False
    skipped: tuple[str, ...] = ()
    verify: list[VerifyRow] = field(default_factory=list)
    verify_step: int | None = None
    lines: int = 0
    error: str | None = None  # the run could not start or go on (lock held, no run)
    _verify_buf: list[str] = field(default_factory=list)

    @classmethod
    def for_plan(cls, plan: Any) -> RunState:
        """Rows for a ResolvedPlan's steps, all planned."""
        rs = cls(plan=plan.name)
        rs.steps = [StepRow(i, s.kind, s.title, "skipped" if s.skipped_reason else "planned",
                            note=s.skipped_reason) for i, s in enumerate(plan.steps)]
        return rs

    def _set(self, index: int, **changes: Any) -> None:
        if 0 <= index < len(self.steps):
            self.steps[index] = replace(self.steps[index], **changes)

    def apply(self, event: Any) -> str | None:
        """Fold one engine event in. Returns the machine event it implies ("failed", "reboot",
        "verify", "done", "stopped"), or None."""
        name = type(event).__name__
        if name == "RunStarted":
            self.run_id, self.plan, self.journal, self.log_dir = event.run_id, event.plan, event.journal, event.log_dir
            self.resumed = event.resumed
            self.state = "running"
            self.failure = None
            if len(self.steps) < event.total_steps:
                self.steps += [StepRow(i, "?", f"step {i + 1}") for i in range(len(self.steps), event.total_steps)]
            for r in self.steps:  # a retried step starts again
                if r.state in ("failed", "stopped", "running"):
                    self._set(r.index, state="planned", note=None)
        elif name == "StepStarted":
            self.current = event.index
            self._set(event.index, state="running", log_path=event.log_path, kind=event.kind, title=event.title)
            if event.kind == "verify":
                self.verify_step = event.index
                self.verify, self._verify_buf = [], []
                return "verify"
        elif name == "StepSkipped":
            self._set(event.index, state="skipped", note=event.reason)
        elif name == "StepDoneEarlier":
            self._set(event.index, state=event.outcome, duration=event.duration, log_path=event.log_path,
                      note="done before this session")
        elif name == "StepFinished":
            self._set(event.index, state=event.outcome, duration=event.duration)
            if event.index == self.verify_step:
                self._parse_verify_whole()
        elif name == "ActionStarted":
            self.current_action = event.shown
        elif name == "OutputLines":
            self.lines += len(event.lines)
            if event.step == self.verify_step and event.step is not None:
                self._verify_lines(event.lines)
        elif name == "RunFailed":
            self.state = "failed"
            self.failure = event
            self._set(event.step, state="failed", note=event.message)
            return "failed"
        elif name == "RebootPending":
            self.state = "reboot-pending"
            self.reboot_message, self.reboot_unit = event.message, event.unit_installed
            self._set(event.step, state="reboot", note=event.message)
            return "reboot"
        elif name == "RunFinished":
            if event.state == "done":
                self.state = "done"
                self.skipped = tuple(event.skipped)
                return "done"
            if event.state == "stopped":
                self.state = "stopped"
                if self.current is not None and self.steps and self.steps[self.current].state == "running":
                    self._set(self.current, state="stopped")
                return "stopped"
        return None

    # -- verify results: JSON lines of the suite, or one JSON report at the end ----------------
    def _verify_lines(self, lines: tuple[str, ...]) -> None:
        for line in lines:
            self._verify_buf.append(line)
            s = line.strip()
            if s.startswith("{") and s.endswith("}"):
                try:
                    d = json.loads(s)
                except ValueError:
                    continue
                if isinstance(d, dict) and d.get("type") == "check":
                    self.verify.append(_verify_row(d))

    def _parse_verify_whole(self) -> None:
        if self.verify:
            return
        text = "\n".join(self._verify_buf)
        start = text.find("{")
        if start < 0:
            return
        try:
            d = json.loads(text[start:])
        except ValueError:
            return
        if isinstance(d, dict) and isinstance(d.get("checks"), list):
            self.verify = [_verify_row(c) for c in d["checks"] if isinstance(c, dict)]

    @property
    def total_duration(self) -> float:
        return sum(r.duration or 0.0 for r in self.steps)


def _verify_row(d: dict[str, Any]) -> VerifyRow:
    m = d.get("metrics")
    metrics = tuple(sorted(m.items())) if isinstance(m, dict) else ()
    try:
        secs = float(d.get("seconds") or 0.0)
    except (TypeError, ValueError):
        secs = 0.0
    return VerifyRow(str(d.get("name", "?")), str(d.get("device", "?")), str(d.get("status", "?")), secs,
                     None if d.get("error") is None else str(d.get("error")), metrics)


# ----------------------------------------------------------------------------- the session


@dataclass(frozen=True)
class PendingRun:
    """A run the journal says is not finished: offered at start."""

    run_id: str
    plan: str | None
    state: str  # reboot-pending | interrupted | failed | stopped
    next_step: int | None
    total_steps: int
    step_titles: tuple[str, ...]
    rebooted: bool  # the boot id changed since the reboot step
    journal: str


@dataclass
class Session:
    """Everything a view needs: the machine, its findings, the plans, the run. Views read it;
    changes go through ``advance`` and ``RunState.apply``."""

    machine: str  # "live", "bundle:<path>", "sandbox:<path>"
    read_only: bool
    facts: Any = None  # wizard.model.Facts
    findings: list[Any] = field(default_factory=list)  # wizard.diagnose.Finding
    options: list[PlanOption] = field(default_factory=list)
    chosen: str | None = None
    resolved: Any = None  # wizard.model.ResolvedPlan
    resolve_error: tuple[str, ...] = ()
    run: RunState = field(default_factory=RunState)
    pending: PendingRun | None = None
    stage: Stage = Stage.DETECT
    exported: str | None = None  # path of the exported dry-run script
    history: list[tuple[Stage, str, Stage]] = field(default_factory=list)

    @property
    def sandbox(self) -> bool:
        return self.machine.startswith("sandbox:")

    @property
    def has_amd_gpu(self) -> bool:
        return bool(self.facts is not None and self.facts.gpus)

    def fire(self, event: str) -> Stage:
        """Apply a machine event; returns (and records) the new stage."""
        new = advance(self.stage, event, read_only=self.read_only)
        self.history.append((self.stage, event, new))
        self.stage = new
        return new

    def can(self, event: str) -> bool:
        try:
            advance(self.stage, event, read_only=self.read_only)
        except IllegalTransition:
            return False
        return True
