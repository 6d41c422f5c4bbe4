"""What the engine reports while it runs: plain frozen dataclasses, delivered through one callback.

Views (the rich CLI, the Textual app) subscribe with ``on_event``; the engine never imports them.
Output arrives in batches (:class:`OutputLines`, one per chunk read), never one call per line.
"""

from __future__ import annotations

from dataclasses import dataclass

from wizard.runner.records import ActionOutcome, Phase, RunState, StepOutcome


@dataclass(frozen=True)
class RunStarted:
    run_id: str
    plan: str
    total_steps: int
    resumed: bool
    journal: str
    log_dir: str


@dataclass(frozen=True)
class StepStarted:
    index: int
    total: int
    kind: str
    title: str
    log_path: str


@dataclass(frozen=True)
class StepSkipped:
    index: int
    kind: str
    title: str
    reason: str


@dataclass(frozen=True)
class StepDoneEarlier:
    """A resumed run's step that an earlier session finished (as its journal says); not run again."""

    index: int
    kind: str
    title: str
    outcome: StepOutcome
    duration: float | None  # from the journal's step-start and step-end times
    log_path: str | None


@dataclass(frozen=True)
class StepFinished:
    index: int
    kind: str
    outcome: StepOutcome
    duration: float


@dataclass(frozen=True)
class ActionStarted:
    step: int
    action: int
    shown: str  # the command as shown (redacted), exactly as it runs
    description: str
    phase: Phase = Phase.RUN


@dataclass(frozen=True)
class ActionSkipped:
    step: int
    action: int
    shown: str
    reason: str
    phase: Phase = Phase.RUN


@dataclass(frozen=True)
class OutputLines:
    step: int
    action: int
    lines: tuple[str, ...]


@dataclass(frozen=True)
class ActionFinished:
    step: int
    action: int
    exit_code: int | None
    duration: float
    outcome: ActionOutcome
    phase: Phase = Phase.RUN


@dataclass(frozen=True)
class Finding:
    """A known issue matched against the failed action's output (from wizard.diagnose)."""

    id: str
    title: str
    fix: str
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class RebootPending:
    step: int
    boot_id: str | None
    unit_installed: bool
    message: str


@dataclass(frozen=True)
class RollbackStarted:
    run_id: str
    total: int  # rollback actions
    cannot: tuple[str, ...]  # what the backup cannot restore


@dataclass(frozen=True)
class RunFinished:
    state: RunState  # DONE, FAILED, REBOOT_PENDING, STOPPED, ROLLED_BACK, ROLLBACK_FAILED
    run_id: str
    skipped: tuple[str, ...] = ()  # steps reported as skipped (e.g. verify in a sandbox)
    reboot_needed: bool = False  # the kernel driver changed: reboot to load it
    message: str = ""


Event = (
    RunStarted | StepStarted | StepSkipped | StepDoneEarlier | StepFinished | ActionStarted | ActionSkipped | OutputLines
    | ActionFinished | RunFailed | RebootPending | RollbackStarted | RunFinished
)
