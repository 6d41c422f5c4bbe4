"""The journal's records: one frozen record per kind, and the run states the journal replays to.

On disk a record is one JSON object per line with ``seq``, ``t`` and ``event`` (the record kind) plus
its fields; in code it is a record. ``decode`` turns a line's object back into its record
(``None`` for a kind this version does not know: a newer wizard's record is ignored, never guessed).
"""

from __future__ import annotations

import typing
from enum import Enum
from typing import Any, ClassVar

from wizard.record import MISSING, field_types, fields, record



class RunState(str, Enum):
    """Where a run stands, as the journal says (plus NONE: there is no run)."""

    NONE = "none"
    NOT_STARTED = "not-started"  # created, nothing journalled yet
    RUNNING = "running"  # only while its wizard holds the lock
    INTERRUPTED = "interrupted"  # the wizard died mid-run (crash, kill, power cut)
    FAILED = "failed"
    STOPPED = "stopped"  # the user stopped it (Ctrl+C)
    REBOOT_PENDING = "reboot-pending"
    DONE = "done"
    ROLLING_BACK = "rolling-back"  # a rollback was interrupted
    ROLLBACK_FAILED = "rollback-failed"
    ROLLED_BACK = "rolled-back"
    ABANDONED = "abandoned"  # the user said to forget it; nothing was changed by that

    @property
    def blocks_new_run(self) -> bool:
        """A new plan may not start while this run is unfinished: resume, roll back or abandon it first."""
        return self not in (RunState.NONE, RunState.DONE, RunState.ROLLED_BACK, RunState.ABANDONED)

    @property
    def resumable(self) -> bool:
        return self in (RunState.NOT_STARTED, RunState.INTERRUPTED, RunState.FAILED, RunState.STOPPED,
                        RunState.REBOOT_PENDING)

    @property
    def can_roll_back(self) -> bool:
        return self in (RunState.INTERRUPTED, RunState.FAILED, RunState.STOPPED, RunState.REBOOT_PENDING,
                        RunState.DONE, RunState.ROLLING_BACK, RunState.ROLLBACK_FAILED)

    @property
    def finished(self) -> bool:
        return self in (RunState.DONE, RunState.ROLLED_BACK, RunState.ABANDONED)


class Phase(str, Enum):
    RUN = "run"
    ROLLBACK = "rollback"


class ActionOutcome(str, Enum):
    """How an action ended."""

    OK = "ok"
    FAILED = "failed"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"


class StepOutcome(str, Enum):
    OK = "ok"  # it changed something
    UNCHANGED = "unchanged"  # every action was already done
    SKIPPED = "skipped"


@record
class Record:
    EVENT: ClassVar[str] = ""


@record
class RunStart(Record):
    EVENT: ClassVar[str] = "run-start"
    run: str
    plan: str
    plan_file: str
    steps: int
    kinds: tuple[str, ...] = ()
    titles: tuple[str, ...] = ()
    yes: bool = False
    boot_id: str | None = None
    host: str = ""
    plan_digest: str | None = None  # sha256 of plan.json: a plan changed after the start is refused
    user: str | None = None  # whose venvs the plan touches: as_user actions run as this user, resumed too


@record
class Resume(Record):
    EVENT: ClassVar[str] = "resume"
    run: str
    boot_id: str | None = None
    yes: bool = False


@record
class Retry(Record):
    EVENT: ClassVar[str] = "retry"
    run: str
    boot_id: str | None = None
    yes: bool = False


@record
class PreflightSkip(Record):
    """The user skipped these preflight checks (``--skip-preflight NAME``)."""

    EVENT: ClassVar[str] = "preflight-skip"
    names: tuple[str, ...] = ()


@record
class StepStart(Record):
    EVENT: ClassVar[str] = "step-start"
    step: int
    kind: str
    title: str
    log: str


@record
class StepSkip(Record):
    EVENT: ClassVar[str] = "step-skip"
    step: int
    kind: str
    reason: str


@record
class StepEnd(Record):
    EVENT: ClassVar[str] = "step-end"
    step: int
    kind: str
    outcome: StepOutcome


@record
class StepDrift(Record):
    """A step the journal records as done whose done-check (``StepPlan.check``) now fails: the machine no
    longer has what the step made. The step is no longer done; it runs again."""

    EVENT: ClassVar[str] = "step-drift"
    step: int
    kind: str
    check: str  # the check that failed, as shown


@record
class ActionStart(Record):
    EVENT: ClassVar[str] = "action-start"
    step: int
    action: int
    argv: str
    log: str = ""
    boot_id: str | None = None
    phase: Phase = Phase.RUN
    # the paths this action may create (its changes, what its undo deletes) that did not exist when it
    # first started: a rollback deletes only these (a directory that was there before is never removed)
    absent: tuple[str, ...] = ()
    existed: tuple[str, ...] = ()  # those that did exist then


@record
class ActionSkip(Record):
    EVENT: ClassVar[str] = "action-skip"
    step: int
    action: int
    reason: str = ""
    phase: Phase = Phase.RUN


@record
class ActionEnd(Record):
    EVENT: ClassVar[str] = "action-end"
    step: int
    action: int
    argv: str = ""
    exit_code: int | None = None
    duration: float = 0.0
    log: str = ""
    boot_id: str | None = None
    outcome: ActionOutcome = ActionOutcome.OK
    phase: Phase = Phase.RUN


@record
class RebootPending(Record):
    EVENT: ClassVar[str] = "reboot-pending"
    step: int
    boot_id: str | None = None
    unit: bool = False
    now: bool = False


@record
class Rebooted(Record):
    EVENT: ClassVar[str] = "rebooted"
    step: int
    boot_id_before: str | None = None
    boot_id: str | None = None


@record
class RollbackStart(Record):
    """The rollback's actions as planned when it started (a resumed rollback runs exactly these)."""

    EVENT: ClassVar[str] = "rollback-start"
    actions: tuple[dict[str, Any], ...] = ()  # {"why": ..., "action": <Action as JSON>}
    cannot: tuple[str, ...] = ()


@record
class RunEnd(Record):
    EVENT: ClassVar[str] = "run-end"
    state: RunState
    step: int | None = None
    action: int | None = None
    exit_code: int | None = None
    message: str = ""
    reboot_needed: bool = False  # the kernel driver changed and no reboot has loaded it yet


KINDS: dict[str, type[Record]] = {c.EVENT: c for c in (RunStart, Resume, Retry, PreflightSkip, StepStart, StepSkip,
                                                      StepEnd, StepDrift, ActionStart, ActionSkip, ActionEnd,
                                                      RebootPending,
                                                      Rebooted, RollbackStart, RunEnd)}
# the rollback phase's action records are named apart, so a reader of the raw file sees what is what
PHASED = {("action-start", Phase.ROLLBACK): "rollback-action-start",
          ("action-end", Phase.ROLLBACK): "rollback-action-end",
          ("action-skip", Phase.ROLLBACK): "rollback-action-skip"}
_UNPHASED = {v: (k[0], k[1]) for k, v in PHASED.items()}


def event_name(rec: Record) -> str:
    phase = getattr(rec, "phase", Phase.RUN)
    return PHASED.get((rec.EVENT, phase), rec.EVENT)


def encode(rec: Record) -> dict[str, Any]:
    out: dict[str, Any] = {"event": event_name(rec)}
    for f in fields(rec):
        v = getattr(rec, f.name)
        if f.name == "phase":
            continue  # said by the event name
        out[f.name] = v.value if isinstance(v, Enum) else list(v) if isinstance(v, tuple) else v
    return out


@typing.no_type_check
def _convert(value: Any, hint: Any) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if value is None:
        return None
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint(value)
    if origin is tuple:
        return tuple(value)
    if origin is typing.Union or str(origin) == "types.UnionType":
        for a in args:
            if a is type(None):
                continue
            return _convert(value, a)
    if hint is float:
        return float(value)
    if hint is int:
        return int(value)
    if hint is bool:
        return bool(value)
    if hint is str:
        return str(value)
    return value


_HINTS: dict[type[Record], dict[str, Any]] = {}


def decode(obj: dict[str, Any]) -> Record | None:
    """A line's JSON object -> its record; None for an unknown kind. Raises ValueError for a known
    kind whose fields do not fit (a corrupt record)."""
    name = obj.get("event")
    if not isinstance(name, str):
        return None
    phase = Phase.RUN
    if name in _UNPHASED:
        name, phase = _UNPHASED[name]
    cls = KINDS.get(name)
    if cls is None:
        return None
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = field_types(cls)
    kw: dict[str, Any] = {}
    for f in fields(cls):
        if f.name == "phase":
            kw["phase"] = phase
        elif f.name in obj:
            try:
                kw[f.name] = _convert(obj[f.name], hints[f.name])
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{name}: field {f.name}: {exc}") from None
        elif f.default is MISSING and f.default_factory is MISSING:
            raise ValueError(f"{name}: field {f.name} is missing")
    return cls(**kw)


__all__ = ["RunState", "Phase", "ActionOutcome", "StepOutcome", "Record", "RunStart", "Resume", "Retry", "PreflightSkip",
           "StepStart", "StepSkip", "StepEnd", "ActionStart", "ActionSkip", "ActionEnd", "RebootPending", "Rebooted",
           "RollbackStart", "RunEnd", "encode", "decode", "event_name"]
