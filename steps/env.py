"""env: the venv's own environment, written into its activate script.

* ``HSA_OVERRIDE_GFX_VERSION`` only when the wheel lacks the GPU's exact target and the knowledge
  base documents a compatible value for it (never empty, never on a natively supported card); an
  override set elsewhere that is wrong for this stack is unset inside the venv instead.
* ``HIP_VISIBLE_DEVICES`` to hide an iGPU the stack cannot use, when the HIP ordinals are known.
* ``PIP_CONSTRAINT`` pointing at pip_pin's constraints file.
The block sits between marker lines, so re-running replaces it and rollback can remove it.

Where the detector found the variable set in a file (``~/.bashrc:3``, ``/etc/environment:1``), the step
also comments that line out (:func:`comment_out_actions`): anything that starts ``venv/bin/python``
directly (Jupyter, an IDE, a service) never reads the activate script. A copy of the file is kept as
``FILE.rocm-wizard-bak`` and the rollback uncomments the line.
"""

from __future__ import annotations

from wizard import lazy_re
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
# python -c HAS FILE BLOCK: exit 0 when FILE's marked block is BLOCK. An ``unset`` of a variable BLOCK neither sets
# nor unsets changes nothing, so it is no difference: the variable this step unset where it was set elsewhere, and
# whose line there it commented out, is set nowhere when the plan is asked again; the block wanted then lacks the
# unset, and rewriting the block for it made the plan's second run the one a rollback undoes.
HAS = f"""\
import sys
text, want = open(sys.argv[1]).read(), sys.argv[2]
begin, end = {BEGIN!r}, {END!r}
def inner(t):
    return t.split(begin, 1)[1].split(end, 1)[0].splitlines() if begin in t and end in t else None
got, wanted = inner(text), inner(want) or []
named = {{w.split("=", 1)[0].split()[-1] for w in wanted if w.strip()}}
if got is not None:
    got = [g for g in got if not (g.startswith("unset ") and g.split()[-1] not in named)]
sys.exit(0 if got == wanted else 1)"""


# python -c COMMENT FILE LINE NAME: comment out LINE of FILE when it still sets NAME (a copy kept first)
COMMENT = r"""import os, re, shutil, sys
path, n, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = open(path).read().split("\n")
line = lines[n - 1] if 0 < n <= len(lines) else ""
if line.lstrip().startswith("#") or not re.search(r"\b" + re.escape(name) + r"\s*=", line):
    sys.exit(f"{path}:{n} does not set {name} (changed since it was detected?): nothing was changed")
if not os.path.exists(path + ".rocm-wizard-bak"):
    shutil.copy2(path, path + ".rocm-wizard-bak")
lines[n - 1] = "# rocm-wizard: " + line
tmp = path + ".rocm-wizard.tmp"
open(tmp, "w").write("\n".join(lines))
shutil.copymode(path, tmp)
os.replace(tmp, path)
print(f"{path}:{n}: commented out; the file as it was: {path}.rocm-wizard-bak")"""
# python -c UNCOMMENT FILE LINE: put back a line COMMENT commented out
UNCOMMENT = r"""import os, shutil, sys
path, n = sys.argv[1], int(sys.argv[2])
lines = open(path).read().split("\n")
if 0 < n <= len(lines) and lines[n - 1].startswith("# rocm-wizard: "):
    lines[n - 1] = lines[n - 1][len("# rocm-wizard: "):]
    tmp = path + ".rocm-wizard.tmp"
    open(tmp, "w").write("\n".join(lines))
    shutil.copymode(path, tmp)
    os.replace(tmp, path)"""
# python -c COMMENTED FILE LINE: exit 0 when the line is already commented out by rocm-wizard
COMMENTED = ("import sys; p, n = sys.argv[1], int(sys.argv[2]); ls = open(p).read().split(chr(10)); "
             "sys.exit(0 if 0 < n <= len(ls) and ls[n - 1].startswith('# rocm-wizard: ') else 1)")
_WHERE = lazy_re.compile(r"^((?:/|~/)[^:]+):(\d+)$")


def comment_out_actions(ctx: StepContext, values: list[tuple[str, str | None]]) -> list[Action]:
    """For each variable the venv unsets or sets to another value, comment out the lines of files that set
    it (where the detector found them), with a copy kept and an undo. A venv's own activate script is left
    to that venv."""
    out: list[Action] = []
    want = dict(values)
    for s in ctx.facts.env:
        if s.name not in want or (want[s.name] is not None and s.value == want[s.name]):
            continue
        m = _WHERE.match(s.where)
        if m is None or m.group(1).endswith("/bin/activate"):
            continue
        path, line = m.group(1), m.group(2)
        if path.startswith("~/"):
            if ctx.home is None:
                continue
            path = f"{ctx.home.rstrip('/')}/{path[2:]}"
        root = not (ctx.home is not None and path.startswith(ctx.home.rstrip("/") + "/"))
        py = "python3" if root else ctx.venv_python  # root never starts the user's interpreter (its .pth files run)
        pre = ("-I",) if root else ()
        out.append(Action(argv=(py, *pre, "-c", COMMENT, path, line, s.name),
                          description=f"comment out {s.name}={s.value} in {path}:{line}, where it is set (a copy "
                                      f"stays as {path}.rocm-wizard-bak)",
                          root=root, as_user=not root, check=(py, *pre, "-c", COMMENTED, path, line),
                          changes=(path,), undo=(py, *pre, "-c", UNCOMMENT, path, line), destructive=True))
    return out


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
    return StepPlan(kind="env", title=title, actions=(act, *comment_out_actions(ctx, values)),
                    params=tuple((n, v if v is not None else "") for n, v in values), notes=tuple(notes),
                    destructive=True, check=Action(act.check or (), f"the rocm-wizard block is in {activate}",
                                                   as_user=True))


KIND = StepKind(name="env", summary="the venv's own environment, in its activate script", params=NoParams, plan=plan,
                destructive=True)
