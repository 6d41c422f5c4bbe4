"""secure_boot: MOK enrolment when a DKMS kernel module must load under Secure Boot.

Only Ubuntu has a documented path the wizard plans: ``update-secureboot-policy --enroll-key`` enrols
the machine-owner key DKMS signs its modules with (it asks for a one-time password that is typed again
in the blue MokManager screen at the next boot). Elsewhere the step refuses (no MOK path known).
"""

from __future__ import annotations

from typing import Sequence

from wizard import preflight
from wizard.model import Action, StepPlan

from ._common import MOK, NoParams, StepContext, StepKind, StepRefused, skipped


def needed(ctx: StepContext) -> bool:
    return bool(ctx.facts.os.secure_boot) and ctx.kernel_driver_before


def has_mok_path(ctx: StepContext) -> bool:
    return (ctx.facts.os.id or "").lower() == "ubuntu"


def plan(ctx: StepContext) -> StepPlan:
    title = ctx.title("Enrol the DKMS signing key for Secure Boot (MOK)")
    if not needed(ctx):
        why = ("Secure Boot is off" if ctx.facts.os.secure_boot is False else
               "no earlier step of this plan installs or removes a DKMS kernel module" if not ctx.kernel_driver_before else
               "Secure Boot state unknown; check `mokutil --sb-state`" if ctx.facts.os.secure_boot is None else
               "nothing to enrol")
        return skipped("secure_boot", title, why)
    if not has_mok_path(ctx):
        raise StepRefused([f"Secure Boot is on and the plan installs the amdgpu-dkms module, but no MOK enrolment "
                           f"path is known for {ctx.facts.os.id or 'this OS'}: disable Secure Boot, or choose a plan "
                           "without DKMS (pip-only, therock-pip)"])
    return StepPlan(
        kind="secure_boot", title=title,
        actions=(Action(argv=("update-secureboot-policy", "--enroll-key"),
                        description="queue the DKMS machine-owner key for enrolment (asks for a one-time password)",
                        root=True, changes=("mok",), destructive=True),),
        reboot=True, destructive=True, effects=(MOK,),
        notes=("at the next boot MokManager (blue screen) asks for the same password: choose "
               "'Enroll MOK', then 'Continue', then 'Yes'",))


def checks(ctx: StepContext, step: StepPlan) -> Sequence[Action]:
    """A DKMS module is installed and no key is enrolled here: Secure Boot must be off at run time."""
    return (preflight.secure_boot_off(),) if ctx.kernel_driver_before and not step.actions else ()


KIND = StepKind(name="secure_boot", summary="MOK enrolment when a DKMS module must load under Secure Boot",
                params=NoParams, plan=plan, destructive=True, preflight=checks,
                record_only="the firmware enrols the queued key at the next boot; nothing can be read before it")
