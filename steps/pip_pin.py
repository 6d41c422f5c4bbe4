"""pip_pin: the torch stack pinned in a venv, from the one index the plan names.

Create (or reuse) the venv, uninstall every torch-stack distribution, install exact versions from the
right index (``--index-url``, so no PyPI CUDA/CPU build can win), write a constraints file from what
got installed (the env step exports it as PIP_CONSTRAINT in the venv's activate script, so a later
``pip install -r requirements.txt`` cannot swap the build), then assert in the target interpreter,
without importing torch, that the wheel is a ROCm build carrying the GPU's gfx (or the override's).
"""

from __future__ import annotations

from wizard.model import Action, StepPlan

from ._common import StepContext

KIND = "pip_pin"
CONSTRAINTS = "rocm-wizard-constraints.txt"
STACK = ("torch", "torchvision", "torchaudio", "pytorch-triton-rocm", "triton")
THEROCK_STACK = ("rocm", "rocm-sdk-core", "rocm-sdk-libraries")

# python -c WRITE_CONSTRAINTS OUT: pin every installed torch-stack / ROCm-SDK distribution exactly
WRITE_CONSTRAINTS = """\
import re, sys
from importlib import metadata as md
keep = re.compile(r"^(torch|torchvision|torchaudio|pytorch-triton-rocm|triton|rocm|rocm-sdk-.*|amd-torch-device-.*)$")
pins = sorted({f"{d.metadata['Name']}=={d.version}" for d in md.distributions()
               if d.metadata['Name'] and keep.match(d.metadata['Name'].lower().replace('_', '-'))})
if not any(p.lower().startswith("torch==") for p in pins):
    sys.exit("torch is not installed: no constraints written")
with open(sys.argv[1], "w") as f:
    f.write("# written by rocm-wizard: keeps this venv's ROCm torch build\\n" + "\\n".join(pins) + "\\n")
print("\\n".join(pins))"""

# python -c ASSERT_ROCM WANT GFX...: torch installed is WANT (or "any"), a ROCm build, carrying every GFX
ASSERT_ROCM = """\
import os, re, sys
from importlib import metadata as md
want, targets = sys.argv[1], sys.argv[2:]
try:
    v = md.version("torch")
except md.PackageNotFoundError:
    sys.exit("torch is not installed")
if want != "any" and v.split("+")[0] != want:
    sys.exit(f"torch {v} is installed, {want} was expected")
names = {(d.metadata["Name"] or "").lower().replace("_", "-") for d in md.distributions()}
therock = any(n.startswith(("rocm-sdk-", "amd-torch-device-")) for n in names)
if "+rocm" not in v and not therock:
    sys.exit(f"torch {v} is not a ROCm build (CUDA or CPU wheel installed)")
if therock:
    missing = [t for t in targets if f"amd-torch-device-{t}" not in names and f"rocm-sdk-device-{t}" not in names]
else:
    lib = os.path.join(os.path.dirname(str(md.distribution("torch").locate_file("torch/__init__.py"))), "lib")
    found = set()
    for root, dirs, files in os.walk(lib):
        for name in files:
            found.update(re.findall(r"gfx[0-9]+[a-z]?", name))
    if not found:
        print(f"torch {v}: no per-arch files under {lib}; the verify step checks the GPU")
        sys.exit(0)
    missing = [t for t in targets if t not in found]
if missing:
    sys.exit(f"torch {v} lacks {', '.join(missing)}")
print(f"torch {v}: ROCm build carrying {', '.join(targets) or 'the requested targets'}")"""


def override_gfx(value: str) -> str:
    """HSA_OVERRIDE_GFX_VERSION "10.3.0" -> "gfx1030", "9.0.10" -> "gfx90a"."""
    major, minor, step = (int(x) for x in value.split("."))
    return f"gfx{major}{minor}{step:x}"


def wheel_targets(ctx: StepContext) -> list[str]:
    if ctx.override:
        return [override_gfx(ctx.override)]
    return list(ctx.gfx)


def requirements(ctx: StepContext) -> tuple[str, list[str], list[str]]:
    """(index_url, requirement strings, notes)"""
    notes: list[str] = []
    if ctx.therock_index:
        extras = ",".join(f"device-{g}" for g in ctx.gfx)
        reqs = [f"rocm[libraries,{extras}]", f"torch[{extras}]", f"torchvision[{extras}]", "torchaudio"]
        notes.append("TheRock index: versions are the newest the index serves; the constraints file pins "
                     "what got installed")
        return ctx.therock_index, reqs, notes
    w = ctx.wheel
    assert w is not None
    reqs = [f"torch=={w.torch}"]
    if w.torchvision:
        reqs.append(f"torchvision=={w.torchvision}")
    if w.torchaudio:
        reqs.append(f"torchaudio=={w.torchaudio}")
    else:
        notes.append(f"no torchaudio is known for torch {w.torch} on {w.index}: torchaudio is not installed")
    if w.triton:
        reqs.append(f"pytorch-triton-rocm=={w.triton}")
    else:
        notes.append(f"pytorch-triton-rocm comes from {w.index} as torch's own pinned dependency "
                     "(the knowledge base does not record its version)")
    if w.uncertain:
        notes.append(f"knowledge base: {w.uncertain}")
    return w.index_url, reqs, notes


def plan(ctx: StepContext) -> StepPlan:
    assert ctx.venv is not None
    venv, py = ctx.venv, ctx.venv_python
    index_url, reqs, notes = requirements(ctx)
    want = "any" if ctx.therock_index else (ctx.wheel.torch if ctx.wheel else "any")
    targets = wheel_targets(ctx)
    assert_argv = (py, "-c", ASSERT_ROCM, want, *targets)
    actions: list[Action] = []
    if not ctx.venv_exists:
        actions.append(Action(argv=("python3", "-m", "venv", venv), description=f"create the venv {venv}",
                              as_user=True, check=("test", "-x", py), changes=(f"venv:{venv}",),
                              undo=("rm", "-rf", "--", venv)))
        notes.insert(0, f"new venv {venv}")
    else:
        notes.insert(0, f"reusing the venv {venv}")
    uninstall = [*STACK]
    for e in ctx.facts.python_envs:
        if e.path == venv:
            for t in e.rocm_sdk_targets:
                uninstall += [f"rocm-sdk-device-{t}", f"amd-torch-device-{t}"]
            if e.rocm_sdk:
                uninstall += list(THEROCK_STACK)
    if ctx.therock_index:
        uninstall += [p for p in THEROCK_STACK if p not in uninstall]
    actions += [
        Action(argv=(py, "-m", "pip", "uninstall", "-y", *uninstall),
               description="remove every torch-stack distribution from the venv", as_user=True,
               check=assert_argv, changes=(f"venv:{venv}",), destructive=True, timeout=1800),
        Action(argv=(py, "-m", "pip", "install", "--index-url", index_url, *reqs),
               description=f"install the pinned stack from {index_url}", as_user=True, check=assert_argv,
               changes=(f"venv:{venv}",), timeout=7200),
        Action(argv=(py, "-c", WRITE_CONSTRAINTS, f"{venv}/{CONSTRAINTS}"),
               description="constraints file pinning the installed build", as_user=True,
               changes=(f"{venv}/{CONSTRAINTS}",)),
        Action(argv=assert_argv, description="assert: a ROCm build carrying " + (", ".join(targets) or "the GPU"),
               as_user=True),
    ]
    return StepPlan(kind=KIND, title=ctx.title(f"Pin the torch stack in {venv}"), actions=tuple(actions),
                    params=(("venv", venv), ("index_url", index_url), ("requirements", tuple(reqs))),
                    destructive=True, notes=tuple(notes))
