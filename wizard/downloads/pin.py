"""A resolved plan's pip step, pinned to exact files: downloaded by hash with resume, installed exactly.

One pass after the plan is resolved and its mirrors applied (so the listing is read through the mirrors
in force). For each ``pip_pin`` step, the requirements and every dependency they bring are resolved against
the index's own listing and the wheels' own metadata (:func:`wizard.downloads.closure.resolve_closure`), and
the ``pip install --index-url ...`` action becomes two:

1. ``python -m wizard.downloads fetch``: the files into the wheelhouse, resuming, each checked against the
   sha256 the index published (a mismatch stops the step before anything is installed);
2. ``pip install --no-index --find-links WHEELHOUSE --require-hashes -r REQS``: exactly those files, with
   pip's own resolver over them (no ``--no-deps``): a dependency missing from the closure fails the install
   instead of being fetched from anywhere.

A dependency the venv already has (and keeps through the step) in a version every specifier takes is left
as it is; any other installed dependency may be moved to the version pinned here (the note says so).

When the closure cannot be resolved (a conflict the resolver would need backtracking for, a dependency only
served as a source distribution, a server that does not honour range requests), only the requirements
themselves are pinned, as before: ``pip install ... --no-deps -r REQS`` then the original ``pip install
--index-url ...``, which brings the dependencies unpinned, and a note says why. When even the listing
cannot be read the step stays as it was and a note says so (never silently).

The step's params gain ``downloads`` (filename, url, sha256, size), ``download_bytes`` and ``wheelhouse``,
the plan's target gains ``download`` (the total size the review shows).
"""

from __future__ import annotations

import hashlib
import os
from typing import Callable, Mapping, Sequence

from packaging.utils import canonicalize_name

from wizard.downloads.closure import Closure, resolve_closure
from wizard.downloads.fetch import files_json, human
from wizard.downloads.listing import ListingError, RemoteFile, resolve
from wizard.downloads.wheelhouse import ENV_VAR, ROOT_CACHE, WHEELHOUSE
from wizard.model import Action, PythonEnv, ResolvedPlan, StepPlan
from wizard.record import replace

NOT_PINNED = "the index listing could not be read at plan time"
DEPS_NOT_PINNED = "the dependencies could not be resolved at plan time"
# set to 1: plans are not pinned to files (the suite's default: its machines are made up, no index is reached)
OFF_VAR = "ROCM_WIZARD_NO_DOWNLOAD_PINS"
Resolver = Callable[[str, Sequence[str], str], tuple[RemoteFile, ...]]
ClosureResolver = Callable[[str, Sequence[str], str, Mapping[str, str]], Closure]
PIP_ISOLATED = ("--isolated", "--no-input")  # as the step's own install: no pip.conf, no PIP_* variable


def _closure(index_url: str, reqs: Sequence[str], python: str, installed: Mapping[str, str]) -> Closure:
    return resolve_closure(index_url, reqs, python, installed=installed)


def wheelhouse_for(home: str | None) -> str:
    """The wheelhouse of the user a plan's pip step runs as (root's under /var/cache)."""
    if os.environ.get(ENV_VAR):
        return f"{os.environ[ENV_VAR].rstrip('/')}/{WHEELHOUSE}"
    if not home or home == "/root":
        return f"{ROOT_CACHE}/{WHEELHOUSE}"
    return f"{home.rstrip('/')}/.cache/rocm-wizard/{WHEELHOUSE}"


def _is_install(a: Action) -> bool:
    return a.argv[1:4] == ("-m", "pip", "install") and "--index-url" in a.argv


def installed_kept(step: StepPlan, envs: Sequence[PythonEnv]) -> dict[str, str]:
    """What discovery saw installed in the step's venv that the step does not uninstall (name: version)."""
    venv = step.param("venv")
    env = next((e for e in envs if venv and e.path == venv), None)
    if env is None or step.param("new_venv"):
        return {}
    gone = {str(canonicalize_name(n)) for a in step.actions if a.argv[1:4] == ("-m", "pip", "uninstall")
            for n in a.argv[4:] if not n.startswith("-")}
    seen = {"torch": env.torch, "torchvision": env.torchvision, "torchaudio": env.torchaudio, "numpy": env.numpy}
    return {n: v for n, v in seen.items() if v and n not in gone}


def pin_step(step: StepPlan, python: str, wizard_python: str, home: str | None,
             resolver: Resolver = resolve, closure: ClosureResolver = _closure,
             installed: Mapping[str, str] | None = None) -> tuple[StepPlan, str | None]:
    """The step pinned to files, and the total size for the review (None: not pinned; a note says why)."""
    install = next((a for a in step.actions if _is_install(a)), None)
    if install is None:
        return step, None
    argv = install.argv
    index_url = argv[argv.index("--index-url") + 1]
    reqs = [a for a in argv[argv.index("--index-url") + 2:] if not a.startswith("-")]
    deps_why: str | None = None
    kept: tuple[tuple[str, str], ...] = ()
    try:
        c = closure(index_url, reqs, python, installed or {})
        files, kept = c.files, c.kept
    except ListingError as exc:
        deps_why = str(exc)
        try:
            files = resolver(index_url, reqs, python)
        except ListingError as exc2:
            note = (f"{NOT_PINNED} ({exc2}): pip downloads from {index_url} as "
                    "before, without resume across a kill and without pinning the files to their published hashes")
            return replace(step, notes=(*step.notes, note)), None
    wh = wheelhouse_for(home)
    digest = hashlib.sha256(files_json(files).encode()).hexdigest()[:16]
    req_file = f"{wh}/.requirements-{digest}.txt"
    total = sum(f.size for f in files)
    py = argv[0]
    fetch = Action(argv=(wizard_python, "-m", "wizard.downloads", "fetch", "--dest", wh, "--requirements", req_file,
                         files_json(files)),
                   description=f"download {len(files)} file(s), {human(total)}, into {wh} (resumes; sha256-checked)",
                   as_user=True, check=install.check, timeout=6 * 3600)  # a venv that has the stack needs nothing
    exact_argv = (py, "-m", "pip", "install", *PIP_ISOLATED, "--no-index", "--find-links", wh, "--require-hashes")
    if deps_why is None:
        exact = Action(argv=(*exact_argv, "-r", req_file),
                       description="install exactly the downloaded files, dependencies included (hash-checked)",
                       as_user=True, check=install.check, changes=install.changes, timeout=install.timeout,
                       env=install.env)
        swap = [fetch, exact]
        note = (f"downloads {len(files)} file(s), {human(total)} ({len(reqs)} requirement(s) and "
                f"{len(files) - len(reqs)} dependencies, resolved from the index's listing and the wheels' "
                f"metadata), into the wheelhouse {wh}, pinned to the sha256 the index publishes; a file already "
                "there is not fetched again; pip installs exactly these, which may move a dependency the venv "
                "already has to the version pinned here")
        if kept:
            note += "; kept as installed: " + ", ".join(f"{n} {v}" for n, v in kept)
        notes: tuple[str, ...] = (note,)
    else:
        exact = Action(argv=(*exact_argv, "--no-deps", "-r", req_file),
                       description="install exactly the downloaded files (hash-checked)", as_user=True,
                       check=install.check, changes=install.changes, timeout=install.timeout, env=install.env)
        # its own done-check: after the exact install the stack's check passes while its dependencies are missing
        deps = replace(install, description=f"their dependencies from {index_url}", check=(py, "-m", "pip", "check"))
        swap = [fetch, exact, deps]
        notes = (f"downloads {len(files)} file(s), {human(total)}, into the wheelhouse {wh}, pinned to the sha256 "
                 "the index publishes; a file already there is not fetched again",
                 f"{DEPS_NOT_PINNED} ({deps_why}): pip brings them from {index_url}, unpinned, after the pinned "
                 "files")
    actions: list[Action] = []
    for a in step.actions:
        actions += swap if a is install else [a]
    params = (*step.params, ("downloads", tuple((f.filename, f.url, f.sha256, f.size) for f in files)),
              ("download_bytes", total), ("wheelhouse", wh))
    return replace(step, actions=tuple(actions), params=params, notes=(*step.notes, *notes)), human(total)


def pin_plan(plan: ResolvedPlan, python: str | None, wizard_python: str, home: str | None,
             resolver: Resolver = resolve, closure: ClosureResolver = _closure,
             envs: Sequence[PythonEnv] = ()) -> ResolvedPlan:
    """Every pip step of ``plan`` pinned to files (see the module); unchanged where pinning is off.
    ``envs``: the Python environments discovery saw (what the step's venv already has)."""
    if os.environ.get(OFF_VAR) == "1" or not any(sp.kind == "pip_pin" and sp.actions for sp in plan.steps):
        return plan
    steps: list[StepPlan] = []
    sizes: list[str] = []
    for sp in plan.steps:
        if sp.kind == "pip_pin" and sp.actions:
            if python is None:
                sp = replace(sp, notes=(*sp.notes, "the venv's Python version is unknown at plan time: the files "
                                        "cannot be resolved; pip downloads from the index as before"))
            else:
                sp, size = pin_step(sp, python, wizard_python, home, resolver, closure, installed_kept(sp, envs))
                if size:
                    sizes.append(size)
        steps.append(sp)
    target = plan.target + ((("download", " + ".join(sizes)),) if sizes else ())
    return replace(plan, steps=tuple(steps), target=target)


def review_lines(plan: ResolvedPlan) -> list[str]:
    """What the plan question says of downloads: their total size, or why they are not pinned."""
    out = []
    size = dict(plan.target).get("download")
    if size:
        out.append(f"downloads {size} into the wheelhouse, each file pinned to its published sha256 "
                   "(a kill or a dropped link resumes; a file already there is not fetched again)")
    for sp in plan.steps:
        out += [n for n in sp.notes if n.startswith((NOT_PINNED, DEPS_NOT_PINNED))]
    return out
