"""verify: the verification suite against the result (the venv's interpreter, or the Docker image).

Its command line exists here only: a rehearsal machine runs the same command through its executor,
which says when it cannot provide what the suite needs (a GPU torch) instead of faking a pass.
"""

from __future__ import annotations

from wizard.model import NEEDS_GPU, Action, StepPlan

from ._common import NoParams, StepContext, StepKind, StepRefused, no_undo, skipped


def plan(ctx: StepContext) -> StepPlan:
    title = ctx.title("Verify: matmul and convolution on the GPU")
    if ctx.image is not None:
        argv = (ctx.wizard_python, "-m", "wizard", "verify", "--image", ctx.image.tag, "--json")
        what = ctx.image.tag
    elif ctx.target.image is not None:
        raise StepRefused([])  # the planner has said why no image fits
    elif ctx.venv:
        argv = (ctx.wizard_python, "-m", "wizard", "verify", "--python", ctx.venv_python, "--json")
        what = ctx.venv_python
    else:
        return skipped("verify", title, "nothing to verify in this plan")
    return StepPlan(kind="verify", title=title,
                    actions=(Action(argv=argv, description=f"run the suite with {what}", as_user=True,
                                    timeout=1800, requires=(NEEDS_GPU,)),),
                    params=(("target", what),))


KIND = StepKind(name="verify", summary="the matmul + conv verification suite against the result", params=NoParams,
                plan=plan, undo=no_undo, record_only="it changes nothing; its answer is the run's result")
