"""What the engine reports while it runs: plain frozen records, delivered through one callback.

Views (the rich CLI, the Textual app) subscribe with ``on_event``; the engine never imports them.
Output arrives in batches (:class:`OutputLines`, one per chunk read), never one call per line.
"""

from __future__ import annotations

from wizard.record import record
from wizard.runner.records import ActionOutcome, Phase, RunState, StepOutcome


@record
class RunStarted:
    run_id: str
    plan: str
    total_steps: int
    resumed: bool
    journal: str
    log_dir: str


@record
class StepStarted:
    index: int
    total: int
    kind: str
    title: str
    log_path: str


@record
class StepSkipped:
    index: int
    kind: str
    title: str
    reason: str


@record
class StepDoneEarlier:
    """A resumed run's step that an earlier session finished (as its journal says); not run again."""

    index: int
    kind: str
    title: str
    outcome: StepOutcome
    duration: float | None  # from the journal's step-start and step-end times
    log_path: str | None


@record
class StepDrift:
    """A step recorded as done whose done-check now fails on the machine: it runs again."""

    index: int
    kind: str
    title: str
    check: str  # the check that failed, as shown


@record
class StepFinished:
    index: int
    kind: str
    outcome: StepOutcome
    duration: float


@record
class ActionStarted:
    step: int
    action: int
    shown: str  # the command as shown (redacted), exactly as it runs
    description: str
    phase: Phase = Phase.RUN
    note: str | None = None  # a line to show as it starts, with or without -v (pip on AMD's indexes: not a hang)


@record
class ActionSkipped:
    step: int
    action: int
    shown: str
    reason: str
    phase: Phase = Phase.RUN


@record
class OutputLines:
    step: int
    action: int
    lines: tuple[str, ...]


@record
class ActionFinished:
    step: int
    action: int
    exit_code: int | None
    duration: float
    outcome: ActionOutcome
    phase: Phase = Phase.RUN


@record
class Finding:
    """A known issue matched against the failed action's output (from wizard.diagnose)."""

    id: str
    title: str
    fix: str
    sources: tuple[str, ...] = ()


@record
class RunFailed:
    step: int
    action: int | None
    kind: str
    shown: str
    exit_code: int | None
    message: str
    tail: tuple[str, ...]  # the last 50 lines of output
    log_path: str
    findings: tuple[Finding, ...] = ()
    choices: tuple[str, ...] = ("retry", "rollback", "stop")
    check: str | None = None  # a preflight check's name (what --skip-preflight takes)
    description: str = ""  # what the failed action does, in words


@record
class RebootPending:
    step: int
    boot_id: str | None
    unit_installed: bool
    message: str


@record
class RollbackStarted:
    run_id: str
    total: int  # rollback actions
    cannot: tuple[str, ...]  # what the backup cannot restore


@record
class RunFinished:
    state: RunState  # DONE, FAILED, REBOOT_PENDING, STOPPED, ROLLED_BACK, ROLLBACK_FAILED
    run_id: str
    skipped: tuple[str, ...] = ()  # steps reported as skipped (e.g. verify in a sandbox)
    reboot_needed: bool = False  # the kernel driver changed: reboot to load it
    message: str = ""


Event = (
    RunStarted | StepStarted | StepSkipped | StepDoneEarlier | StepDrift | StepFinished | ActionStarted | ActionSkipped
    | OutputLines | ActionFinished | RunFailed | RebootPending | RollbackStarted | RunFinished
)
