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
import os
from typing import Any, Sequence

from wizard.host import Host
from wizard.model import Action, ResolvedPlan
from wizard.record import field, record, replace
from wizard.runner.journal import RunView


@record(frozen=False)
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


def removed_paths(argv: Sequence[str]) -> list[str] | None:
    """The paths an ``rm`` command line deletes (None: it is not one)."""
    if not argv or os.path.basename(argv[0]) != "rm":
        return None
    out, opts = [], True
    for a in argv[1:]:
        if opts and a == "--":
            opts = False
        elif opts and a.startswith("-") and a != "-":
            continue
        else:
            out.append(a)
    return out


def _norm(path: str) -> str:
    return os.path.normpath("/" + path.lstrip("/")) if path.startswith("/") else path


def claimed_paths(action: Action) -> tuple[str, ...]:
    """The machine paths an action may create: the absolute paths among its ``changes`` (``venv:PATH``
    included) and what its ``undo`` would delete. Normalised (``/home/../x`` is ``/x``)."""
    out: list[str] = []
    for c in action.changes:
        c = c[len("venv:"):] if c.startswith("venv:") else c
        if c.startswith("/"):
            out.append(_norm(c))
    out += [_norm(p) for p in removed_paths(action.undo or ()) or () if p.startswith("/")]
    return tuple(dict.fromkeys(out))


def _only_created(why: str, act: Action, created: set[str], existed: set[str],
                  rb: RollbackPlan) -> tuple[str, Action] | None:
    """An undo that deletes paths keeps only those the journal says this run created."""
    targets = removed_paths(act.argv)
    if targets is None:
        return why, act
    keep = [t for t in targets if _norm(t) in created]
    for t in targets:
        if _norm(t) not in created:
            said = ("it existed before the run" if _norm(t) in existed
                    else "the journal does not say the run created it")
            rb.cannot.append(f"{t} is kept: {said}, so a rollback never deletes it ({why})")
    if not keep:
        return None
    opts = [a for a in act.argv[1:] if a.startswith("-") and a != "--" and a not in targets]
    return why, replace(act, argv=(act.argv[0], *opts, "--", *keep))


def build(host: Host, plan: ResolvedPlan, view: RunView) -> RollbackPlan:
    from wizard.mirror.apply import plan_mirrors, through
    from wizard.steps import registry
    from wizard.steps._common import UndoContext, undo_each_action

    kinds = registry()
    ran: dict[int, list[int]] = {}
    for s, a in view.ran_actions:
        if 0 <= s < len(plan.steps) and 0 <= a < len(plan.steps[s].actions):
            ran.setdefault(s, []).append(a)
    man = manifest(host, plan) if ran else None
    kb = _kb()
    mirrors = plan_mirrors(plan)  # an undo fetches where the run fetched (a fleet host's own config names none)
    rb = RollbackPlan()
    for s in sorted(ran, reverse=True):
        step = plan.steps[s]
        undo_fn = kinds[step.kind].undo if step.kind in kinds else undo_each_action
        u = UndoContext(step=step, index=s, ran=tuple(ran[s]), manifest=man, read_text=host.read_text,
                        glob=host.glob, kb=kb)
        undo = undo_fn(u)
        created = {p for a in ran[s] for p in view.claimed.get((s, a), ((), ()))[0]}
        existed = {p for a in ran[s] for p in view.claimed.get((s, a), ((), ()))[1]}
        rb.cannot.extend(undo.cannot)
        for why, act in undo.actions:
            kept = _only_created(why, through(act, mirrors), created, existed, rb)
            if kept is not None:
                rb.actions.append(kept)
    return rb


def _kb() -> Any:
    try:
        from wizard.kb import load_kb

        return load_kb()
    except Exception:  # noqa: BLE001 - without the knowledge base, what needs it says so
        return None
