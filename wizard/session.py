"""The wizard's stages as a pure state machine, and the Session both front ends read.

No Textual, no rich, no I/O: ``advance(stage, move, read_only=...)`` is a table lookup over typed
moves, and ``RunProgress.apply(event)`` folds the runner's event records into what a view shows
(step states, durations, the failure, the reboot message, verify results) and returns the move the
event implies. Runs themselves go through the run service (``wizard.runner.service``), which the CLI
uses too; the app holds no business logic of its own.

    DETECT -> DIAGNOSE -> CHOOSE -> REVIEW -> CONFIRM -> RUN -> [VERIFY] -> REPORT
                                                         |-> FAILED -> retry (RUN) | rollback (RUN) | stop (REPORT)
                                                         |-> REBOOT (the app ends; the next start offers RESUME)
    RESUME -> RUN (continue, or roll back) | DETECT (later: the run stays pending; DETECT, DIAGNOSE and
              CHOOSE offer it again: PENDING)
"""

from __future__ import annotations

import json
from enum import Enum
from typing import TYPE_CHECKING, Any

from wizard.model import ResolvedPlan
from wizard.record import field, record, replace
from wizard.runner import events as ev
from wizard.runner.records import RunState

if TYPE_CHECKING:
    from wizard.planner import PlanChoice
    from wizard.runner.service import PendingRun


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


class Move(str, Enum):
    """What moves the wizard from one stage to the next: the user's choices and the run's outcomes."""

    NEXT = "next"
    BACK = "back"
    CHOOSE = "choose"
    CONFIRM = "confirm"
    YES = "yes"
    NO = "no"
    FAILED = "failed"
    REBOOT = "reboot"
    VERIFY = "verify"
    DONE = "done"
    STOPPED = "stopped"
    RETRY = "retry"
    ROLLBACK = "rollback"
    STOP = "stop"
    RESUME = "resume"
    LATER = "later"
    PENDING = "pending"  # back to the resume offer of the run left pending ("later")
    RESTART = "restart"


class IllegalTransition(Exception):
    def __init__(self, stage: Stage, move: Move) -> None:
        super().__init__(f"no transition from {stage.value} on {move.value!r}")
        self.stage, self.move = stage, move


# (stage, move) -> next stage
_TABLE: dict[tuple[Stage, Move], Stage] = {
    (Stage.DETECT, Move.NEXT): Stage.DIAGNOSE,
    (Stage.DIAGNOSE, Move.NEXT): Stage.CHOOSE,
    (Stage.DIAGNOSE, Move.BACK): Stage.DETECT,
    (Stage.CHOOSE, Move.CHOOSE): Stage.REVIEW,
    (Stage.CHOOSE, Move.BACK): Stage.DIAGNOSE,
    (Stage.REVIEW, Move.BACK): Stage.CHOOSE,
    (Stage.REVIEW, Move.CONFIRM): Stage.CONFIRM,
    (Stage.CONFIRM, Move.YES): Stage.RUN,
    (Stage.CONFIRM, Move.NO): Stage.REVIEW,
    (Stage.RUN, Move.FAILED): Stage.FAILED,
    (Stage.RUN, Move.REBOOT): Stage.REBOOT,
    (Stage.RUN, Move.VERIFY): Stage.VERIFY,
    (Stage.RUN, Move.DONE): Stage.REPORT,
    (Stage.RUN, Move.STOPPED): Stage.REPORT,
    (Stage.VERIFY, Move.FAILED): Stage.FAILED,
    (Stage.VERIFY, Move.DONE): Stage.REPORT,
    (Stage.VERIFY, Move.REBOOT): Stage.REBOOT,
    (Stage.VERIFY, Move.STOPPED): Stage.REPORT,
    (Stage.FAILED, Move.RETRY): Stage.RUN,
    (Stage.FAILED, Move.ROLLBACK): Stage.RUN,
    (Stage.FAILED, Move.STOP): Stage.REPORT,
    (Stage.RESUME, Move.RESUME): Stage.RUN,
    (Stage.RESUME, Move.LATER): Stage.DETECT,
    (Stage.RESUME, Move.ROLLBACK): Stage.RUN,  # undo what the pending run did, after the confirmation
    (Stage.DETECT, Move.PENDING): Stage.RESUME,
    (Stage.DIAGNOSE, Move.PENDING): Stage.RESUME,
    (Stage.CHOOSE, Move.PENDING): Stage.RESUME,
    (Stage.REPORT, Move.RESTART): Stage.DETECT,
    (Stage.REPORT, Move.ROLLBACK): Stage.RUN,  # undo a finished run, after the confirmation
}
# a recorded machine (--from) can be reviewed and exported, never changed
_READ_ONLY_BLOCKED = {(Stage.REVIEW, Move.CONFIRM), (Stage.RESUME, Move.RESUME), (Stage.RESUME, Move.ROLLBACK),
                      (Stage.FAILED, Move.RETRY),
                      (Stage.FAILED, Move.ROLLBACK), (Stage.REPORT, Move.ROLLBACK)}


def advance(stage: Stage, move: Move, *, read_only: bool = False) -> Stage:
    """The next stage, or :class:`IllegalTransition`."""
    if read_only and (stage, move) in _READ_ONLY_BLOCKED:
        raise IllegalTransition(stage, move)
    try:
        return _TABLE[(stage, move)]
    except KeyError:
        raise IllegalTransition(stage, move) from None


def moves_from(stage: Stage, *, read_only: bool = False) -> list[Move]:
    """The moves a stage accepts (what a view may offer)."""
    return [mv for (s, mv) in _TABLE if s == stage and not (read_only and (s, mv) in _READ_ONLY_BLOCKED)]


# ----------------------------------------------------------------------------- plans on offer


@record
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
    notes: tuple[str, ...] = ()  # the planner's notes: neither for nor against it (the machine is at its end state)

    @classmethod
    def of(cls, c: PlanChoice) -> PlanOption:
        """A planner's choice as Choose shows it: a recommended plan says why instead of its reasons."""
        if c.recommended:
            why = "; ".join(r.removeprefix("recommended: ") for r in c.reasons)
            return cls(c.plan.name, c.plan.title, c.plan.why, c.applicable, (), True, why, tuple(c.target.items()),
                       tuple(c.notes))
        return cls(c.plan.name, c.plan.title, c.plan.why, c.applicable, tuple(c.reasons), False, None,
                   tuple(c.target.items()), tuple(c.notes))


def order_options(options: list[PlanOption]) -> list[PlanOption]:
    """Recommended first, then applicable plans, then refused ones; by name within each group."""
    return sorted(options, key=lambda o: (not o.recommended, not o.applicable, o.name))


# ----------------------------------------------------------------------------- a run as a view sees it

STEP_STATES = ("planned", "running", "ok", "unchanged", "skipped", "failed", "reboot", "stopped")


@record
class StepRow:
    index: int
    kind: str
    title: str
    state: str = "planned"
    duration: float | None = None
    log_path: str | None = None
    note: str | None = None  # skip reason, failure message


@record
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


@record(frozen=False)
class RunProgress:
    """The fold of the engine's events: what the Run, Failed, Reboot, Verify and Report stages show."""

    run_id: str | None = None
    plan: str | None = None
    journal: str | None = None
    log_dir: str | None = None
    resumed: bool = False
    steps: list[StepRow] = field(default_factory=list)
    current: int | None = None
    current_action: str | None = None
    state: RunState | None = None  # None: nothing ran in this session yet
    failure: ev.RunFailed | None = None
    reboot_message: str | None = None
    reboot_unit: bool = False
    reboot_needed: bool = False  # the kernel driver changed and no reboot has loaded it yet
    message: str = ""
    skipped: tuple[str, ...] = ()
    verify: list[VerifyRow] = field(default_factory=list)
    verify_step: int | None = None
    lines: int = 0
    error: str | None = None  # the run could not start or go on (lock held, no run)
    _verify_buf: list[str] = field(default_factory=list)

    @classmethod
    def for_plan(cls, plan: ResolvedPlan) -> RunProgress:
        """Rows for a ResolvedPlan's steps, all planned."""
        rs = cls(plan=plan.name)
        rs.steps = [StepRow(i, s.kind, s.title, "skipped" if s.skipped_reason else "planned",
                            note=s.skipped_reason) for i, s in enumerate(plan.steps)]
        return rs

    @property
    def verify_skipped(self) -> str | None:
        """Why the plan's verify step did not run (None: it ran, or there is none)."""
        return next((r.note or "" for r in self.steps if r.kind == "verify" and r.state == "skipped"), None)

    def _set(self, index: int, **changes: Any) -> None:
        if 0 <= index < len(self.steps):
            self.steps[index] = replace(self.steps[index], **changes)

    def apply(self, event: ev.Event) -> Move | None:
        """Fold one engine event in. Returns the move it implies (FAILED, REBOOT, VERIFY, DONE,
        STOPPED), or None."""
        if isinstance(event, ev.RunStarted):
            self.run_id, self.plan, self.journal, self.log_dir = event.run_id, event.plan, event.journal, event.log_dir
            self.resumed = event.resumed
            self.state = RunState.RUNNING
            self.failure = None
            if len(self.steps) < event.total_steps:
                self.steps += [StepRow(i, "?", f"step {i + 1}") for i in range(len(self.steps), event.total_steps)]
            for r in self.steps:  # a retried step starts again
                if r.state in ("failed", "stopped", "running"):
                    self._set(r.index, state="planned", note=None)
        elif isinstance(event, ev.StepStarted):
            self.current = event.index
            self._set(event.index, state="running", log_path=event.log_path, kind=event.kind, title=event.title)
            if event.kind == "verify":
                self.verify_step = event.index
                self.verify, self._verify_buf = [], []
                return Move.VERIFY
        elif isinstance(event, ev.StepSkipped):
            self._set(event.index, state="skipped", note=event.reason, kind=event.kind)
        elif isinstance(event, ev.StepDrift):
            self._set(event.index, state="planned", note=f"drift: {event.check} fails; runs again")
        elif isinstance(event, ev.StepDoneEarlier):
            self._set(event.index, state=event.outcome.value, duration=event.duration, log_path=event.log_path,
                      note="done before this session")
        elif isinstance(event, ev.StepFinished):
            self._set(event.index, state=event.outcome.value, duration=event.duration)
            if event.index == self.verify_step:
                self._parse_verify_whole()
        elif isinstance(event, ev.ActionStarted):
            self.current_action = event.shown
        elif isinstance(event, ev.OutputLines):
            self.lines += len(event.lines)
            if event.step == self.verify_step and event.step is not None:
                self._verify_lines(event.lines)
        elif isinstance(event, ev.RunFailed):
            self.state = RunState.FAILED
            self.failure = event
            self._set(event.step, state="failed", note=event.message)
            return Move.FAILED
        elif isinstance(event, ev.RebootPending):
            self.state = RunState.REBOOT_PENDING
            self.reboot_message, self.reboot_unit = event.message, event.unit_installed
            self._set(event.step, state="reboot", note=event.message)
            return Move.REBOOT
        elif isinstance(event, ev.RollbackStarted):
            self.state = RunState.ROLLING_BACK
            self.failure = None
        elif isinstance(event, ev.RunFinished):
            self.message = event.message
            self.reboot_needed = event.reboot_needed
            if event.state is RunState.DONE:
                self.state = RunState.DONE
                self.skipped = tuple(event.skipped)
                return Move.DONE
            if event.state is RunState.STOPPED:
                self.state = RunState.STOPPED
                if self.current is not None and self.steps and self.steps[self.current].state == "running":
                    self._set(self.current, state="stopped")
                return Move.STOPPED
            if event.state in (RunState.ROLLED_BACK, RunState.ROLLBACK_FAILED, RunState.ROLLING_BACK):
                self.state = event.state  # ROLLING_BACK: the rollback was stopped; `rollback` continues it
                self.skipped = tuple(f"not restorable: {c}" for c in event.skipped)
                return Move.STOPPED
        return None

    # -- verify results: JSON lines of the suite, or one JSON report at the end ----------------
    def _verify_lines(self, lines: tuple[str, ...]) -> None:
        from wizard.verify.view import parse_check_line

        for line in lines:
            self._verify_buf.append(line)
            d = parse_check_line(line)
            if d is not None:
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


@record(frozen=False)
class Session:
    """Everything a view needs: the machine, its findings, the plans, the run. Views read it;
    changes go through ``advance`` and ``RunState.apply``."""

    machine: str  # "live", "bundle:<path>", "sandbox:<path>"
    read_only: bool
    facts: Any = None  # wizard.model.Facts
    findings: list[Any] | None = None  # wizard.diagnose.Finding; None: not diagnosed yet (Diagnose not shown yet)
    options: list[PlanOption] = field(default_factory=list)
    chosen: str | None = None
    resolved: ResolvedPlan | None = None
    resolve_error: tuple[str, ...] = ()  # why the plan last opened (``refused``) was refused or could not be opened
    refused: str | None = None
    run: RunProgress = field(default_factory=RunProgress)
    pending: PendingRun | None = None
    blocked: str | None = None  # why a new plan cannot start now (an unfinished run), from the run service
    stage: Stage = Stage.DETECT
    exported: str | None = None  # path of the exported dry-run script
    venv: str | None = None  # the venv the user chose on Review (None: the planner's default)
    error_text: str | None = None  # the error text pasted on Diagnose, with the machine's own
    history: list[tuple[Stage, Move, Stage]] = field(default_factory=list)

    @property
    def sandbox(self) -> bool:
        return self.machine.startswith("sandbox:")

    @property
    def has_amd_gpu(self) -> bool:
        return bool(self.facts is not None and self.facts.gpus)

    def fire(self, move: Move) -> Stage:
        """Apply a move; returns (and records) the new stage."""
        new = advance(self.stage, move, read_only=self.read_only)
        self.history.append((self.stage, move, new))
        self.stage = new
        return new

    def can(self, move: Move) -> bool:
        try:
            advance(self.stage, move, read_only=self.read_only)
        except IllegalTransition:
            return False
        return True
