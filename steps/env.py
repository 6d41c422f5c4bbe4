"""env: the venv's own environment, written into its activate script (never global shell files).

* ``HSA_OVERRIDE_GFX_VERSION`` only when the wheel lacks the GPU's exact target and the knowledge
  base documents a compatible value for it (never empty, never on a natively supported card); an
  override set elsewhere that is wrong for this stack is unset inside the venv instead.
* ``HIP_VISIBLE_DEVICES`` to hide an iGPU the stack cannot use, when the HIP ordinals are known.
* ``PIP_CONSTRAINT`` pointing at pip_pin's constraints file.
The block sits between marker lines, so re-running replaces it and rollback can remove it.
"""

from __future__ import annotations

from wizard.inputs import shell_export
from wizard.model import Action, StepPlan

from ._common import NoParams, StepContext, StepKind, skipped

BEGIN = "# >>> rocm-wizard >>>"
END = "# <<< rocm-wizard <<<"
# python -c EDIT FILE BLOCK: replace (or append) the marked block in FILE; an empty BLOCK removes it
EDIT = f"""\
import sys
path, block = sys.argv[1], sys.argv[2]
text = open(path).read()
begin, end = {BEGIN!r}, {END!r}
if begin in text and end in text:
    head, rest = text.split(begin, 1)
    text = head.rstrip("\\n") + "\\n" + rest.split(end, 1)[1].lstrip("\\n")
if block:
    text = text.rstrip("\\n") + "\\n" + block
open(path + ".rocm-wizard.tmp", "w").write(text)
import os
os.replace(path + ".rocm-wizard.tmp", path)"""
HAS = "import sys; sys.exit(0 if sys.argv[2] in open(sys.argv[1]).read() else 1)"


def hip_visible(ctx: StepContext) -> str | None:
    """Comma list of the HIP ordinals of the GPUs to keep, when every AMD GPU's ordinal is known."""
    if not ctx.hidden:
        return None
    if any(g.hip_index is None for g in ctx.facts.gpus):
        return None
    keep = sorted(g.hip_index for g in ctx.gpus if g.hip_index is not None)
    return ",".join(str(i) for i in keep) if keep else None


def settings(ctx: StepContext) -> tuple[list[tuple[str, str | None]], list[str]]:
    """[(name, value or None for unset)], notes"""
    out: list[tuple[str, str | None]] = []
    notes: list[str] = []
    current = ctx.facts.env_values.get("HSA_OVERRIDE_GFX_VERSION")
    if ctx.override:
        out.append(("HSA_OVERRIDE_GFX_VERSION", ctx.override))
        notes.append(f"HSA_OVERRIDE_GFX_VERSION={ctx.override}: the wheel lacks {', '.join(ctx.gfx)} and the "
                     "knowledge base documents this compatible target; validate results")
    elif current is not None:
        out.append(("HSA_OVERRIDE_GFX_VERSION", None))
        notes.append(f"HSA_OVERRIDE_GFX_VERSION={current!r} is set elsewhere but this stack carries "
                     f"{', '.join(ctx.gfx)} natively (or has no safe override): unset inside the venv")
    if ctx.hidden:
        vis = hip_visible(ctx)
        labels = ", ".join(f"{g.name or g.pci_id} ({g.gfx})" for g in ctx.hidden)
        if vis is not None:
            out.append(("HIP_VISIBLE_DEVICES", vis))
            notes.append(f"HIP_VISIBLE_DEVICES={vis} hides {labels}")
        else:
            notes.append(f"{labels} should be hidden but the HIP ordinals are unknown: set HIP_VISIBLE_DEVICES "
                         "by hand after checking `rocminfo`, or disable the iGPU in the BIOS")
    return out, notes


def block(ctx: StepContext, values: list[tuple[str, str | None]]) -> str:
    """The marked block; every value is shell-quoted (a venv path with ``;``, ``$(...)`` or a space is
    a word in the activate script, never a command)."""
    lines = [BEGIN]
    for name, value in values:
        lines.append(f"unset {name}" if value is None else shell_export(name, value))
    if "pip_pin" in ctx.earlier and ctx.venv:
        lines.append(shell_export("PIP_CONSTRAINT", f"{ctx.venv}/rocm-wizard-constraints.txt"))
    lines.append(END)
    return "\n".join(lines) + "\n"


def plan(ctx: StepContext) -> StepPlan:
    title = ctx.title("Set the venv's environment (activate script)")
    if not ctx.venv:
        return skipped("env", title, "no venv in this plan")
    values, notes = settings(ctx)
    text = block(ctx, values)
    if text.count("\n") == 2:
        return skipped("env", title, "nothing to set", tuple(notes))
    activate = f"{ctx.venv}/bin/activate"
    act = Action(argv=(ctx.venv_python, "-c", EDIT, activate, text),
                 description=f"write the rocm-wizard block into {activate}", as_user=True,
                 check=(ctx.venv_python, "-c", HAS, activate, text), changes=(activate,),
                 undo=(ctx.venv_python, "-c", EDIT, activate, ""), destructive=True)
    return StepPlan(kind="env", title=title, actions=(act,),
                    params=tuple((n, v if v is not None else "") for n, v in values), notes=tuple(notes),
                    destructive=True)


KIND = StepKind(name="env", summary="the venv's own environment, in its activate script", params=NoParams, plan=plan,
                destructive=True)
