"""``fleet plan``: the plan resolved per host from its own facts; hosts that resolve to the same actions
form a group (one play of the export), the others are refused with their reasons."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from wizard import paths
from wizard.fleet.detect import HostFacts
from wizard.fleet.export import PlanGroup
from wizard.mirror.config import MirrorConfig
from wizard.model import ResolvedPlan
from wizard.planner import PlanError, PlanRefused, resolve_plan
from wizard.record import record
from wizard.script import machine_summary

WIZARD_PYTHON = "python3"  # the wizard on a fleet host: `python3 -m wizard` (fleet detect ran it so)


@record
class FleetPlan:
    name: str
    groups: tuple[PlanGroup, ...]
    refused: tuple[tuple[str, tuple[str, ...]], ...]  # (host, reasons)
    unknown: tuple[HostFacts, ...]  # hosts without facts (unreachable, garbage)

    def group_of(self, host: str) -> PlanGroup | None:
        return next((g for g in self.groups if host in g.hosts), None)


def signature(plan: ResolvedPlan) -> tuple[Any, ...]:
    return tuple((s.kind, s.skipped_reason, s.reboot,
                  tuple((a.argv, a.root, a.as_user, a.check, a.env, a.ok_codes, a.timeout) for a in s.actions), s.check)
                 for s in plan.steps)


def plan_fleet(spec: str, hosts: Sequence[HostFacts], mirrors: Mapping[str, MirrorConfig] | None = None, *,
               wizard_python: str = WIZARD_PYTHON) -> FleetPlan:
    """Raises PlanError for an unknown plan or a malformed plan file (the same for every host).
    ``mirrors``: host -> the mirror configuration its plan is resolved with (a real root's rehearsal mirror).
    ``wizard_python``: the interpreter the plan's own wizard steps (verify, downloads) run with on the host."""
    by_sig: dict[tuple[Any, ...], tuple[ResolvedPlan, list[str], tuple[str, ...]]] = {}
    refused: list[tuple[str, tuple[str, ...]]] = []
    for h in hosts:
        if h.facts is None:
            continue
        try:
            rp = resolve_plan(spec, h.facts, state_dir=paths.ROOT_STATE, wizard_python=wizard_python,
                              mirrors=(mirrors or {}).get(h.host))
        except PlanRefused as exc:
            refused.append((h.host, tuple(exc.reasons)))
            continue
        entry = by_sig.setdefault(signature(rp), (rp, [], tuple(machine_summary(h.facts))))
        entry[1].append(h.host)
    groups = tuple(PlanGroup(rp, tuple(names), machine) for rp, names, machine in by_sig.values())
    name = groups[0].plan.name if groups else spec
    return FleetPlan(name, groups, tuple(refused), tuple(h for h in hosts if h.facts is None))


__all__ = ["FleetPlan", "PlanError", "plan_fleet", "signature"]
