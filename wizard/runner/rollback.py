"""Rollback: undo exactly the steps the journal says ran, newest first, each through its own kind.

Every step kind says how it is undone (``KIND.undo`` in its module: the pip step restores the venv
from the backup's freeze or removes a venv it created, the install step removes what it installed,
the purge step reinstalls the release the backup recorded, other steps revert each action that has an
``undo``); this module only finds which actions really ran (an action a done-check skipped did not),
reads the backup manifest, and collects the answers. What cannot be restored is listed before
anything starts. Executing a rollback is the engine's (``Engine.rollback``): the same action loop
as a run, journalled as its rollback phase.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from wizard.host import Host
from wizard.model import Action, ResolvedPlan
from wizard.runner.journal import RunView


@dataclass
class RollbackPlan:
    actions: list[tuple[str, Action]] = field(default_factory=list)  # (why, action)
    cannot: list[str] = field(default_factory=list)


def manifest(host: Host, plan: ResolvedPlan) -> dict[str, Any] | None:
    """The backup step's manifest.json, as the backup wrote it (None: none was written)."""
    for step in plan.steps:
        if step.kind != "backup":
            continue
        for a in step.actions:
            for c in a.changes:
                if c.endswith("/manifest.json"):
                    text = host.read_text(c)
                    if text:
                        try:
                            data = json.loads(text)
                        except ValueError:
                            return None
                        return data if isinstance(data, dict) else None
    return None


def build(host: Host, plan: ResolvedPlan, view: RunView) -> RollbackPlan:
    from wizard.steps import registry
    from wizard.steps._common import UndoContext, undo_each_action

    kinds = registry()
    ran: dict[int, list[int]] = {}
    for s, a in view.ran_actions:
        if 0 <= s < len(plan.steps) and 0 <= a < len(plan.steps[s].actions):
            ran.setdefault(s, []).append(a)
    man = manifest(host, plan) if ran else None
    kb = _kb()
    rb = RollbackPlan()
    for s in sorted(ran, reverse=True):
        step = plan.steps[s]
        undo_fn = kinds[step.kind].undo if step.kind in kinds else undo_each_action
        u = UndoContext(step=step, index=s, ran=tuple(ran[s]), manifest=man, read_text=host.read_text,
                        glob=host.glob, kb=kb)
        undo = undo_fn(u)
        rb.actions.extend(undo.actions)
        rb.cannot.extend(undo.cannot)
    return rb


def _kb() -> Any:
    try:
        from wizard.kb import load_kb

        return load_kb()
    except Exception:  # noqa: BLE001 - without the knowledge base, what needs it says so
        return None
