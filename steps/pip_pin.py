"""pip_pin: the torch stack pinned in a venv, from the one index the plan names.

Create (or reuse) the venv, uninstall every torch-stack distribution, install exact versions from the
right index (``--index-url``, so no PyPI CUDA/CPU build can win), write a constraints file from what
got installed (the env step exports it as PIP_CONSTRAINT in the venv's activate script, so a later
``pip install -r requirements.txt`` cannot swap the build), then assert in the target interpreter,
without importing torch, that the wheel is a ROCm build carrying the GPU's gfx (or the override's).
"""

from __future__ import annotations

import re
from typing import Sequence

from wizard import lazy_re
from wizard import preflight
from wizard.model import Action, StepPlan

from ._common import AT_END, NoParams, StepContext, StepKind, StepRefused, Undo, UndoContext

GIB = 1 << 30
# what a rollback restores in a venv: the torch stack and TheRock's ROCm packages
STACK_RE = lazy_re.compile(r"^(torch|torchvision|torchaudio|pytorch-triton-rocm|triton|rocm|rocm-sdk-.*|"
                      r"amd-torch-device-.*|_rocm_sdk_.*)$", re.I)
CONSTRAINTS = "rocm-wizard-constraints.txt"
STACK = ("torch", "torchvision", "torchaudio", "pytorch-triton-rocm", "triton")
# pip reads no configuration file (PIP_CONFIG_FILE=/dev/null) and no PIP_* variable (--isolated): no
# extra-index-url or find-links of a pip.conf, at any level, can add PyPI beside the plan's index, where
# ROCm's names are empty placeholders (rocm 0.1.0, rocm-sdk-device-gfx* 0.0.1.dev0) and torch is a CUDA build
ISOLATED = ("--isolated", "--no-input")
ISOLATED_ENV = (("PIP_CONFIG_FILE", "/dev/null"),)
THEROCK_STACK = ("rocm", "rocm-sdk-core", "rocm-sdk-libraries")

# python -c WRITE_CONSTRAINTS OUT: pin every installed torch-stack / ROCm-SDK distribution exactly;
# python -c WRITE_CONSTRAINTS OUT --same: exit 0 when OUT already holds exactly what it would write (the check)
WRITE_CONSTRAINTS = """\
import re, sys
from importlib import metadata as md
keep = re.compile(r"^(torch|torchvision|torchaudio|pytorch-triton-rocm|triton|rocm|rocm-sdk-.*|amd-torch-device-.*)$")
pins = sorted({f"{d.metadata['Name']}=={d.version}" for d in md.distributions()
               if d.metadata['Name'] and keep.match(d.metadata['Name'].lower().replace('_', '-'))})
torch = any(p.lower().startswith("torch==") for p in pins)
text = "# written by rocm-wizard: keeps this venv's ROCm torch build\\n" + "\\n".join(pins) + "\\n"
if sys.argv[2:] == ["--same"]:
    try:
        with open(sys.argv[1]) as f:
            sys.exit(0 if torch and f.read() == text else 1)
    except OSError:
        sys.exit(1)
if not torch:
    sys.exit("torch is not installed: no constraints written")
with open(sys.argv[1], "w") as f:
    f.write(text)
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
fake = sorted(f"{d.metadata['Name']} {d.version}" for d in md.distributions()
              if ((d.metadata["Name"] or "").lower().replace("_", "-") in ("rocm", "rocm-sdk", "rocm-sdk-core",
                  "rocm-sdk-libraries") and d.version == "0.1.0") or ((d.metadata["Name"] or "").lower().replace(
                  "_", "-").startswith(("rocm-sdk-device-", "amd-torch-device-")) and d.version == "0.0.1.dev0"))
if fake:
    sys.exit(f"PyPI's empty placeholders are installed, not ROCm: {', '.join(fake)}")
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
# python -c ASSERT_THEROCK any GFX...: ASSERT_ROCM, and the torch is TheRock's (its rocm-sdk or amd-torch-device
# packages are installed): any other ROCm torch carrying the GPU's gfx is not what a TheRock plan installs
ASSERT_THEROCK = """\
import sys
from importlib import metadata as md
if not any((d.metadata["Name"] or "").lower().replace("_", "-").startswith(("rocm-sdk-", "amd-torch-device-"))
           for d in md.distributions()):
    sys.exit("the torch installed is not TheRock's build (no rocm-sdk or amd-torch-device packages)")
""" + ASSERT_ROCM


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
        v = ctx.vendor_wheel
        if v is None:
            reqs = [f"rocm[libraries,{extras}]", f"torch[{extras}]", f"torchvision[{extras}]", "torchaudio"]
            notes.append("versions are the newest the index serves; the constraints file pins what got installed")
            return ctx.therock_index, reqs, notes
        # AMD's torch builds need their device extra (torch[device-gfxNNNN]); exact versions, so pip cannot
        # move torch from +rocm10.x to +rocm7.x by ordering local versions (TheRock#7183)
        reqs = [ctx.rocm_requirement] if ctx.rocm_requirement else []
        reqs.append(f"torch[{extras}]=={v.torch}")
        if v.torchvision:
            reqs.append(f"torchvision[{extras}]=={v.torchvision}")
        if v.torchaudio:
            reqs.append(f"torchaudio=={v.torchaudio}")
        if not ctx.rocm_requirement:
            notes.append(f"the knowledge base has no pip requirement for ROCm Core SDK {v.sdk}: torch's own "
                         "dependency brings the ROCm packages")
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


def _base(version: str | None) -> str:
    return (version or "").split("+")[0]


def stack_there(ctx: StepContext, want: str, targets: list[str]) -> str:
    """What the facts show of the pinned stack already in the plan's venv ("torch 2.9.1+rocm6.4 in VENV"), or ""
    where they do not show all of it: the exact torch (and the wheel's torchvision and torchaudio), a ROCm build, and
    every target gfx the assert asks for (a TheRock stack: its device packages)."""
    env = next((e for e in ctx.facts.python_envs if ctx.venv_exists and e.path == ctx.venv), None)
    if env is None or want == "any" or _base(env.torch) != want or env.build != "rocm" or not targets:
        return ""
    if ctx.therock_index:
        if env.rocm_sdk is None or not set(targets) <= set(env.rocm_sdk_targets):
            return ""
    elif "+rocm" not in (env.torch or "") or not set(targets) <= set(env.gfx_targets):
        return ""
    w = ctx.wheel if not ctx.therock_index else None
    if w is not None and any(v and _base(have) != v for v, have in ((w.torchvision, env.torchvision),
                                                                     (w.torchaudio, env.torchaudio))):
        return ""
    return f"torch {env.torch} in {ctx.venv}"


def plan(ctx: StepContext) -> StepPlan:
    if ctx.venv is None or (ctx.wheel is None and ctx.therock_index is None):
        raise StepRefused([])  # the planner has said why the target cannot be resolved
    free = ctx.facts.home_free_bytes
    if free is not None and free < preflight.DISK_VENV:
        raise StepRefused([f"not enough disk: {free // GIB} GiB free for the venv, "
                           f"{preflight.DISK_VENV // GIB} GiB needed"])
    venv, py = ctx.venv, ctx.venv_python
    index_url, reqs, notes = requirements(ctx)
    notes += list(ctx.wheel_notes)
    want = (ctx.vendor_wheel.torch.split("+")[0] if ctx.vendor_wheel else "any") if ctx.therock_index else \
        (ctx.wheel.torch if ctx.wheel else "any")
    targets = wheel_targets(ctx)
    assert_argv = (py, "-c", ASSERT_THEROCK if ctx.therock_index else ASSERT_ROCM, want, *targets)
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
        Action(argv=(py, "-m", "pip", "install", *ISOLATED, "--index-url", index_url, *reqs),
               description=f"install the pinned stack from {index_url} alone", as_user=True, check=assert_argv,
               changes=(f"venv:{venv}",), timeout=7200, env=ISOLATED_ENV),
        Action(argv=(py, "-c", WRITE_CONSTRAINTS, f"{venv}/{CONSTRAINTS}"),
               description="constraints file pinning the installed build", as_user=True,
               check=(py, "-c", WRITE_CONSTRAINTS, f"{venv}/{CONSTRAINTS}", "--same"), changes=(f"{venv}/{CONSTRAINTS}",)),
        Action(argv=assert_argv, description="assert: a ROCm build carrying " + (", ".join(targets) or "the GPU"),
               as_user=True),
    ]
    want_py = ctx.wheel.python if ctx.wheel is not None else ()
    there = stack_there(ctx, want, targets)
    if there:
        notes.insert(0, f"the pinned stack is already there ({there}): each action is skipped by its check")
    return StepPlan(kind="pip_pin", title=ctx.title(f"Pin the torch stack in {venv}"), actions=tuple(actions),
                    params=(("venv", venv), ("index_url", index_url), ("requirements", tuple(reqs)),
                            ("torch", want), ("python", tuple(want_py)), ("new_venv", not ctx.venv_exists),
                            (AT_END, there)),
                    destructive=True, notes=tuple(notes),
                    check=Action(assert_argv, f"the venv {venv} has the pinned torch", as_user=True))


def checks(ctx: StepContext, step: StepPlan) -> Sequence[Action]:
    """The venv path is usable, the interpreter that fills it is a Python the wheel exists for, the
    wheel is on its index for that Python, and the venv's disk has room."""
    if step.param(AT_END):  # the pinned stack is there: nothing is installed, nothing to find on the index
        return ()
    venv = str(step.param("venv"))
    python = "python3" if step.param("new_venv") else f"{venv}/bin/python"
    out: list[Action] = []
    if step.param("new_venv"):
        out.append(preflight.venv_path(venv))
    pys = tuple(step.param("python") or ())
    if pys:
        out.append(preflight.python_version(python, pys))
    out.append(preflight.pip_config(str(step.param("index_url")), ctx.home, venv))
    out.append(preflight.wheel_on_index(python, str(step.param("index_url")), "torch", str(step.param("torch")),
                                        pure_ok=ctx.amd_index is not None))
    parent = venv.rsplit("/", 1)[0] or "/"
    out.append(preflight.disk_free("disk-venv", parent, preflight.DISK_VENV, f"the venv under {parent}"))
    return out


def undo(u: UndoContext) -> Undo:
    """A venv this run created is removed; a venv it changed gets back exactly the torch stack of the
    backup's ``pip freeze`` (packages the run added are uninstalled first). Only when the step ran."""
    ran = u.ran_actions
    venv = str(u.step.param("venv"))
    if not any(f"venv:{venv}" in a.changes for a in ran):
        return Undo()
    created = next((a for a in ran if a.undo and a.argv[1:3] == ("-m", "venv")), None)
    if created is not None:
        return Undo(actions=((f"remove the venv {venv} the run created",
                              Action(created.undo or (), as_user=True, changes=(f"venv:{venv}",))),))
    env = u.manifest_env(venv)
    if env is None:
        return Undo(cannot=(f"{venv}: the backup has no pip freeze of it; its torch stack cannot be restored",))
    d = str((u.manifest or {}).get("backup_dir", ""))
    frozen = _freeze(u.read_text(f"{d}/{env.get('freeze')}") or "")
    if not frozen:
        return Undo(cannot=(f"{venv}: its pip freeze is missing or empty in {d}",))
    py = f"{venv}/bin/python"
    names = {n.lower() for n, _ in frozen}
    extra = sorted({n for n in _installed_stack(u, venv) if n.lower() not in names})
    actions: list[tuple[str, Action]] = []
    if extra:
        actions.append((f"remove packages the run added to {venv}",
                        Action((py, "-m", "pip", "uninstall", "-y", *extra), as_user=True, changes=(f"venv:{venv}",))))
    indexes = env.get("indexes")
    urls = sorted({v for v in indexes.values() if isinstance(v, str)}) if isinstance(indexes, dict) else []
    extra_idx = [x for url in urls for x in ("--extra-index-url", url)]
    pins = [f"{n}=={v}" for n, v in frozen if STACK_RE.match(n)]
    if pins:
        actions.append((f"restore {venv} exactly from the backup's pip freeze",
                        Action((py, "-m", "pip", "install", "--no-deps", *extra_idx, *pins), as_user=True,
                               changes=(f"venv:{venv}",), timeout=7200)))
        # after the install, so a rollback resumed after a kill inside it (the install runs again) clears them
        actions.append((f"remove what a pip killed in {venv} left (its ~-named stashes of what it was replacing)",
                        Action(("sh", "-c", PIP_STASHES, "sh", venv), as_user=True, changes=(f"venv:{venv}",))))
    return Undo(actions=tuple(actions))


# sh -c PIP_STASHES sh VENV: pip moves what it uninstalls aside under a name starting with "~" (its stash, put back
# if the install fails, deleted when it succeeds); a pip killed in between leaves them, and every later pip warns
# "Ignoring invalid distribution ~orch". No distribution's name starts with "~".
PIP_STASHES = 'for d in "$1"/lib/python*/site-packages/~*; do if [ -e "$d" ]; then rm -rf -- "$d"; fi; done'


def _freeze(text: str) -> list[tuple[str, str]]:
    out = []
    for line in text.splitlines():
        mo = re.match(r"^([A-Za-z0-9_.\-]+)==(\S+)$", line.strip())
        if mo:
            out.append((mo.group(1), mo.group(2)))
    return out


def _installed_stack(u: UndoContext, venv: str) -> list[str]:
    out = []
    for dist in u.glob(f"{venv}/lib/python*/site-packages/*.dist-info"):
        mo = re.search(r"^Name: (.+)$", u.read_text(f"{dist}/METADATA") or "", re.M)
        if mo and STACK_RE.match(mo.group(1).strip()):
            out.append(mo.group(1).strip())
    return out


KIND = StepKind(name="pip_pin", summary="the torch stack pinned in a venv, from the one index the plan names",
                target_needs=("torch", "index"), streams=("legacy", "core-sdk", "pip"),
                params=NoParams, plan=plan, destructive=True, preflight=checks, undo=undo)
