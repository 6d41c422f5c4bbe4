"""A run's files: ``<state>/runs/<id>/{plan.json,journal.jsonl}``, ``<logs>/<id>/NN-kind.log``,
and ``<state>/current`` naming the run that ``resume``, ``status`` and ``rollback`` act on."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from wizard.model import ResolvedPlan
from wizard.record import record
from wizard.runner import planfile
from wizard.runner.journal import Journal, RunView, atomic_write, replay
from wizard.runner.records import RunState

RESUME_MARKER = "resume-pending"


@record(frozen=False)
class Run:
    id: str
    dir: Path
    logs: Path
    state_root: Path

    @property
    def journal(self) -> Journal:
        return Journal(self.dir / "journal.jsonl")

    @property
    def plan_path(self) -> Path:
        return self.dir / "plan.json"

    def plan(self) -> ResolvedPlan:
        return planfile.load(self.plan_path)

    def plan_digest(self) -> str | None:
        """sha256 of plan.json as it is now (the run-start record keeps the one the run began with)."""
        try:
            return hashlib.sha256(self.plan_path.read_bytes()).hexdigest()
        except OSError:
            return None

    def view(self) -> RunView:
        v = replay(self.journal.entries())
        if v.run_id is None:
            v.run_id = self.id
            v.state = RunState.NOT_STARTED
            try:
                p = self.plan()
                v.plan, v.total_steps = p.name, len(p.steps)
                v.step_kinds = [s.kind for s in p.steps]
                v.step_titles = [s.title for s in p.steps]
            except planfile.PlanFileError:
                pass
        return v

    def step_log(self, index: int, kind: str) -> Path:
        return self.logs / f"{index + 1:02d}-{kind}.log"


def new_run_id(plan_name: str) -> str:
    return time.strftime("%Y%m%d-%H%M%S") + f"-{plan_name}-{os.getpid()}"


def create(state_root: Path, log_root: Path, plan: ResolvedPlan) -> Run:
    rid = new_run_id(plan.name)
    run = Run(rid, state_root / "runs" / rid, log_root / rid, state_root)
    run.dir.mkdir(parents=True, exist_ok=False)
    run.logs.mkdir(parents=True, exist_ok=True)
    atomic_write(run.plan_path, planfile.dumps(plan))
    atomic_write(state_root / "current", rid + "\n")
    return run


def current(state_root: Path, log_root: Path) -> Run | None:
    try:
        rid = (state_root / "current").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    d = state_root / "runs" / rid
    if not rid or not d.is_dir():
        return None
    return Run(rid, d, log_root / rid, state_root)
