"""Step library (installed as ``wizard.steps``): one module per step kind, each declaring ``KIND``.

A module's ``KIND`` (a :class:`~wizard.steps._common.StepKind`) says everything about its kind: its
typed parameters, whether it is destructive, how it plans its actions from the facts (and what it
refuses), which preflight checks it needs, and how it is undone. Steps never execute anything.
Adding a step kind is adding one module here: the registry finds it.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from typing import Any

from wizard.model import PREFLIGHT, ResolvedPlan
from wizard.steps._common import StepKind

# The order the kinds are listed in (help texts, errors); kinds not named here follow by name.
ORDER = ("backup", "purge", "rocm_install", "core_sdk_install", "kernel_driver", "secure_boot", "groups", "pip_pin", "env", "docker", "reboot", "verify")


@lru_cache(maxsize=1)
def registry() -> dict[str, StepKind[Any]]:
    """Every step kind of this package, by name."""
    found: dict[str, StepKind[Any]] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        kind = getattr(mod, "KIND", None)
        if isinstance(kind, StepKind):
            if kind.name != info.name:
                raise RuntimeError(f"steps/{info.name}.py declares kind {kind.name!r}: the module name is the kind")
            found[kind.name] = kind
    ordered = [n for n in ORDER if n in found] + sorted(n for n in found if n not in ORDER)
    return {n: found[n] for n in ordered}


def kind_names() -> tuple[str, ...]:
    return tuple(registry())


def kind(name: str) -> StepKind[Any]:
    """The kind called ``name`` (KeyError for an unknown one)."""
    return registry()[name]


def changes_system(plan: ResolvedPlan) -> bool:
    """A step but a backup needs root, or one reboots: the plan changes something system-wide (its run takes the
    system state dir's lock; a plan that does not keeps its state in its user's state dir)."""
    return any(sp.reboot or (not kind(sp.kind).protects and any(a.root for a in sp.actions))
               for sp in plan.steps if sp.kind != PREFLIGHT)


def changes_user(plan: ResolvedPlan) -> bool:
    """An action run as the user changes something (a venv, its activate script, a file in the home such as
    ~/.bashrc, a launcher): its run takes that user's state dir lock, as the user's own runs of it do."""
    return any(a.as_user and (a.changes or a.destructive or a.undo is not None)
               for sp in plan.steps if sp.kind != PREFLIGHT for a in sp.actions)


from wizard.steps._locks import PlanLock, executor_locks, home_user_state, plan_locks, system_path  # noqa: E402  (the lock rule)

__all__ = ["ORDER", "PlanLock", "changes_system", "changes_user", "executor_locks", "home_user_state", "kind",
           "kind_names", "plan_locks", "registry", "system_path"]
