"""A resolved plan's pip step, pinned to exact files: downloaded by hash with resume, installed exactly.

One pass after the plan is resolved and its mirrors applied (so the listing is read through the mirrors
in force). For each ``pip_pin`` step, the requirements are resolved against the index's own listing
(:func:`wizard.downloads.listing.resolve`) and the ``pip install --index-url`` action becomes three:

1. ``python -m wizard.downloads fetch``: the files into the wheelhouse, resuming, each checked against the
   sha256 the index published (a mismatch stops the step before anything is installed);
2. ``pip install --no-index --find-links WHEELHOUSE --require-hashes --no-deps -r REQS``: exactly those files;
3. the original ``pip install --index-url ...`` of the same pins: already satisfied for the pinned files,
   it brings only their small dependencies (AMD's indexes serve no metadata to resolve them at plan time).

The step's params gain ``downloads`` (filename, url, sha256, size), ``download_bytes`` and ``wheelhouse``,
the plan's target gains ``download`` (the total size the review shows). When the listing cannot be read
the step stays as it was and a note says so (never silently).
"""

from __future__ import annotations

import hashlib
import os
from typing import Callable, Sequence

from wizard.downloads.fetch import files_json, human
from wizard.downloads.listing import ListingError, RemoteFile, resolve
from wizard.downloads.wheelhouse import ENV_VAR, ROOT_CACHE, WHEELHOUSE
from wizard.model import Action, ResolvedPlan, StepPlan
from wizard.record import replace

NOT_PINNED = "the index listing could not be read at plan time"
# set to 1: plans are not pinned to files (the suite's default: its machines are made up, no index is reached)
OFF_VAR = "ROCM_WIZARD_NO_DOWNLOAD_PINS"
Resolver = Callable[[str, Sequence[str], str], tuple[RemoteFile, ...]]


def wheelhouse_for(home: str | None) -> str:
    """The wheelhouse of the user a plan's pip step runs as (root's under /var/cache)."""
    if os.environ.get(ENV_VAR):
        return f"{os.environ[ENV_VAR].rstrip('/')}/{WHEELHOUSE}"
    if not home or home == "/root":
        return f"{ROOT_CACHE}/{WHEELHOUSE}"
    return f"{home.rstrip('/')}/.cache/rocm-wizard/{WHEELHOUSE}"


def _is_install(a: Action) -> bool:
    return a.argv[1:4] == ("-m", "pip", "install") and "--index-url" in a.argv


def pin_step(step: StepPlan, python: str, wizard_python: str, home: str | None,
             resolver: Resolver = resolve) -> tuple[StepPlan, str | None]:
    """The step pinned to files, and the total size for the review (None: not pinned; a note says why)."""
    install = next((a for a in step.actions if _is_install(a)), None)
    if install is None:
        return step, None
    argv = install.argv
    index_url = argv[argv.index("--index-url") + 1]
    reqs = [a for a in argv[argv.index("--index-url") + 2:] if not a.startswith("-")]
    try:
        files = resolver(index_url, reqs, python)
    except ListingError as exc:
        note = (f"{NOT_PINNED} ({exc}): pip downloads from {index_url} as "
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
    exact = Action(argv=(py, "-m", "pip", "install", "--no-index", "--find-links", wh, "--require-hashes",
                         "--no-deps", "-r", req_file),
                   description="install exactly the downloaded files (hash-checked)", as_user=True,
                   check=install.check, changes=install.changes, timeout=install.timeout)
    # its own done-check: after the exact install the stack's check passes while its dependencies are missing
    deps = replace(install, description=f"their dependencies from {index_url}", check=(py, "-m", "pip", "check"))
    actions: list[Action] = []
    for a in step.actions:
        actions += [fetch, exact, deps] if a is install else [a]
    params = (*step.params, ("downloads", tuple((f.filename, f.url, f.sha256, f.size) for f in files)),
              ("download_bytes", total), ("wheelhouse", wh))
    note = (f"downloads {len(files)} file(s), {human(total)}, into the wheelhouse {wh}, pinned to the sha256 "
            "the index publishes; a file already there is not fetched again")
    return replace(step, actions=tuple(actions), params=params, notes=(*step.notes, note)), human(total)


def pin_plan(plan: ResolvedPlan, python: str | None, wizard_python: str, home: str | None,
             resolver: Resolver = resolve) -> ResolvedPlan:
    """Every pip step of ``plan`` pinned to files (see the module); unchanged where pinning is off."""
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
                sp, size = pin_step(sp, python, wizard_python, home, resolver)
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
        out += [n for n in sp.notes if n.startswith(NOT_PINNED)]
    return out
