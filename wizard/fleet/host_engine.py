"""The host side of ``fleet run --engine``: what this machine's wizard does with the resolved plan the
controller copied to it (``rocm-wizard fleet engine PLAN.json``, run by the play with become).

The plan runs through the machine's own run service, so its journal, lock, preflight (the machine binding
first: a plan made for another machine stops there, before any change) and rollback are this host's. A
reboot step is left to the caller (Ansible's ``reboot``): the run stops reboot-pending without rebooting and
without arming the boot-time resume unit, and the next call resumes it. Called again, it continues this
plan's run where it stopped, and a run of this plan that is done changes nothing.
"""

from __future__ import annotations

import hashlib
from enum import Enum
from typing import Any

from wizard.model import ResolvedPlan
from wizard.record import record, replace
from wizard.runner import planfile
from wizard.runner.executor import LiveExecutor
from wizard.runner.journal import JournalError
from wizard.runner.records import RunState
from wizard.runner.service import RunService


ENGINE_DIR = "/opt/rocm-wizard"  # where fleet run --engine installs the wizard on a host
VENV = f"{ENGINE_DIR}/venv"  # root-owned: the plan's root actions may run its python
PYTHON = f"{VENV}/bin/python"


class Move(str, Enum):
    START = "start"  # no run of this plan: a new one
    RESUME = "resume"  # this plan's run stopped (reboot, failure, interruption): continue it
    NONE = "none"  # this plan's run is done: nothing to do


@record
class Decision:
    move: Move
    run_id: str | None
    state: RunState  # the current run's state before anything happens (NONE: no run)


def digest(plan: ResolvedPlan) -> str:
    return hashlib.sha256(planfile.dumps(plan).encode()).hexdigest()


def decide(service: RunService, plan: ResolvedPlan) -> Decision:
    """What to do with ``plan`` given this machine's current run. A run of another plan that is unfinished is
    left to ``start``, which refuses with the run service's own message (resume, roll back or abandon it)."""
    run = service.current()
    if run is None:
        return Decision(Move.START, None, RunState.NONE)
    try:
        view = run.view()
    except JournalError:  # start() refuses with the run service's own words (abandon forgets it)
        return Decision(Move.START, run.id, RunState.NONE)
    try:
        same = digest(run.plan()) == digest(plan)
    except (planfile.PlanFileError, OSError):
        same = False
    if same and view.state is RunState.DONE:
        return Decision(Move.NONE, run.id, view.state)
    if same and view.state.resumable:
        return Decision(Move.RESUME, run.id, view.state)
    return Decision(Move.START, run.id, view.state)


def adopt(executor: object, *, user: str | None, unavailable: dict[str, str]) -> None:
    """This host's live executor as the play needs it: user actions as ``user`` (None: the owner of the plan's venv),
    not as ``SUDO_USER`` (Ansible's become sets it to the account it connects as, an admin, not the GPU user), and
    what the controller knows this host cannot provide declared unavailable. Other executors (a rehearsal's) keep
    their own answers."""
    if isinstance(executor, LiveExecutor):
        executor.privilege = replace(executor.privilege, sudo_user=user)
        executor.declared_unavailable = tuple(sorted(unavailable.items()))


def steps_done(service: RunService) -> tuple[int, int]:
    """(steps done, steps that run) of the current run: skipped steps are neither."""
    run = service.current()
    if run is None:
        return 0, 0
    try:
        view = run.view()
    except JournalError:
        return 0, 0
    runs = [i for i in range(view.total_steps) if i not in view.skipped_steps]
    return len([i for i in runs if i in view.done_steps]), len(runs)


def report(decision: Decision, ran: bool, state: RunState, message: str, service: RunService,
           status: dict[str, Any]) -> dict[str, Any]:
    """The JSON the host prints (the play brings it back as the host's run report). ``ran``: a run was started
    or resumed (not refused before it began)."""
    done, total = steps_done(service)
    return {"action": decision.move.value, "changed": ran, "state": state.value,
            "message": message, "steps_done": done, "steps": total, "status": status}


__all__ = ["ENGINE_DIR", "PYTHON", "VENV", "Decision", "Move", "adopt", "decide", "digest", "report", "steps_done"]
