"""reboot: only when an earlier step requires one (a new kernel module, a MOK enrolment)."""

from __future__ import annotations

from wizard.model import Action, StepPlan

from ._common import StepContext, skipped

KIND = "reboot"


def plan(ctx: StepContext) -> StepPlan:
    title = ctx.title("Reboot")
    if not ctx.reboot_needed:
        return skipped(KIND, title, "no earlier step needs a reboot")
    return StepPlan(kind=KIND, title=title,
                    actions=(Action(argv=("systemctl", "reboot"), description="reboot to load the new kernel "
                                    "module (and enrol the MOK)", root=True, idempotent=False),),
                    reboot=True, notes=("the run continues after the reboot (rocm-wizard resume)",))
