"""verify: the verification suite against the result (the venv's interpreter, or the Docker image)."""

from __future__ import annotations

from wizard.model import Action, StepPlan

from ._common import StepContext, skipped

KIND = "verify"


def plan(ctx: StepContext) -> StepPlan:
    title = ctx.title("Verify: matmul and convolution on the GPU")
    if ctx.image is not None:
        argv = (ctx.wizard_python, "-m", "wizard", "verify", "--image", ctx.image.tag, "--json")
        what = ctx.image.tag
    elif ctx.venv:
        argv = (ctx.wizard_python, "-m", "wizard", "verify", "--python", ctx.venv_python, "--json")
        what = ctx.venv_python
    else:
        return skipped(KIND, title, "nothing to verify in this plan")
    return StepPlan(kind=KIND, title=title,
                    actions=(Action(argv=argv, description=f"run the suite with {what}", as_user=True,
                                    timeout=1800),),
                    params=(("target", what),))
