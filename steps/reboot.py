"""reboot: only when an earlier step requires one (a new kernel module, a MOK enrolment)."""

from __future__ import annotations

from wizard.model import KERNEL_DRIVER, Action, StepPlan

from ._common import MOK, NoParams, StepContext, StepKind, no_undo, skipped


def plan(ctx: StepContext) -> StepPlan:
    title = ctx.title("Reboot")
    if not ctx.effects_before & {KERNEL_DRIVER, MOK}:
        return skipped("reboot", title, "no earlier step needs a reboot")
    return StepPlan(kind="reboot", title=title,
                    actions=(Action(argv=("systemctl", "reboot"), description="reboot to load the new kernel "
                                    "module (and enrol the MOK)", root=True, idempotent=False),),
                    reboot=True, notes=("the run continues after the reboot (rocm-wizard resume)",))


KIND = StepKind(name="reboot", summary="a reboot, only when an earlier step needs one", params=NoParams, plan=plan,
                undo=no_undo, record_only="the new boot id: every executor compares the machine's boot id with the "
                                          "one it recorded before the reboot")
