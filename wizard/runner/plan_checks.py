"""What a resolved plan must satisfy on this machine before it may run (or be shown as a script).

The same rules hold for a plan resolved from a name and for a resolved-plan JSON file given to
``--plan`` (which is not resolved again): every step kind is known, nothing destructive comes before a
backup step that really backs up, and a venv the plan creates is not poured into a directory that
exists and is not a venv (a rollback could not tell its files from what was there). Each refusal is
one line.
"""

from __future__ import annotations

from wizard.host import Host
from wizard.model import ResolvedPlan, StepPlan


def _destructive(step: StepPlan) -> bool:
    from wizard.steps import registry

    kinds = registry()
    return step.destructive or any(a.destructive for a in step.actions) or (
        step.kind in kinds and kinds[step.kind].destructive and bool(step.actions))


def structure(plan: ResolvedPlan) -> list[str]:
    """Refusals a plan earns by its shape alone (a resolved-plan file is checked with these)."""
    from wizard.steps import registry

    kinds = registry()
    out: list[str] = []
    backed_up = False
    for i, step in enumerate(plan.steps):
        if step.kind not in kinds and step.kind != "preflight":
            out.append(f"step {i + 1}: unknown step kind {step.kind!r}")
        if step.kind == "backup" and step.skipped_reason is None and step.actions:
            backed_up = True
        elif _destructive(step) and step.skipped_reason is None and not backed_up:
            out.append(f"step {i + 1} ({step.title}) is destructive and comes before any backup step: "
                       "a plan never changes the machine before its backup")
            break
    return out


def new_venvs(plan: ResolvedPlan) -> list[str]:
    """The venvs the plan creates (a pip_pin step with ``new_venv``)."""
    out = []
    for step in plan.steps:
        if step.kind == "pip_pin" and step.param("new_venv") and step.param("venv"):
            out.append(str(step.param("venv")))
    return out


def refusals(host: Host, plan: ResolvedPlan) -> list[str]:
    """Every reason ``plan`` may not run on ``host``'s machine (empty: it may)."""
    out = structure(plan)
    for venv in new_venvs(plan):
        if host.exists(venv) and not host.exists(venv.rstrip("/") + "/pyvenv.cfg"):
            out.append(f"{venv} exists and is not a Python venv (no pyvenv.cfg): choose another venv path "
                       "(a venv made inside it could not be told apart from what is there, nor undone)")
    return out
