"""What a resolved plan must satisfy on this machine before it may run (or be shown as a script).

The same rules hold for a plan resolved from a name and for a resolved-plan JSON file given to
``--plan`` (which is not resolved again): every step kind is known, nothing destructive comes before a
backup step that really backs up, and a venv the plan creates is not poured into a directory that
exists and is not a venv (a rollback could not tell its files from what was there), and no root action
starts a program a user can change (one in a home, a temporary directory or a venv the plan touches;
on the live machine, one whose file or directory is not root's or is writable by others: a venv's
interpreter runs its ``.pth`` files). Each refusal is one line.
"""

from __future__ import annotations

import os
import posixpath
import stat

from wizard.host import Host
from wizard.model import ResolvedPlan, StepPlan

# where programs a user can change live (a venv the plan touches is added to these)
USER_WRITABLE = ("/home/", "/tmp/", "/var/tmp/", "/dev/shm/", "/run/user/")


def _destructive(step: StepPlan) -> bool:
    from wizard.steps import registry

    kinds = registry()
    return step.destructive or any(a.destructive for a in step.actions) or (
        step.kind in kinds and kinds[step.kind].destructive and bool(step.actions))


def structure(plan: ResolvedPlan) -> list[str]:
    """Refusals a plan earns by its shape alone (a resolved-plan file is checked with these)."""
    from wizard.steps import registry

    kinds = registry()
    out: list[str] = []
    backed_up = False
    for i, step in enumerate(plan.steps):
        if step.kind not in kinds and step.kind != "preflight":
            out.append(f"step {i + 1}: unknown step kind {step.kind!r}")
        if step.kind == "backup" and step.skipped_reason is None and step.actions:
            backed_up = True
        elif _destructive(step) and step.skipped_reason is None and not backed_up:
            out.append(f"step {i + 1} ({step.title}) is destructive and comes before any backup step: "
                       "a plan never changes the machine before its backup")
            break
    return out + user_programs(plan)


def _root_programs(plan: ResolvedPlan) -> list[tuple[int, str]]:
    """(step number, program) of every command line a root action runs: its argv, done-check and undo."""
    out = []
    for i, step in enumerate(plan.steps):
        for a in step.actions:
            if a.root:
                out += [(i + 1, argv[0]) for argv in (a.argv, a.check, a.undo) if argv]
    return out


def _venvs(plan: ResolvedPlan) -> list[str]:
    return [str(s.param("venv")).rstrip("/") + "/" for s in plan.steps if s.param("venv")]


def user_programs(plan: ResolvedPlan) -> list[str]:
    """Refusals for root actions whose program lies where a user can change it (by path alone)."""
    out = []
    venvs = _venvs(plan)
    for k, prog in _root_programs(plan):
        if "/" not in prog:
            continue  # found on root's PATH
        norm = posixpath.normpath(prog)
        if not prog.startswith("/") or norm.startswith(USER_WRITABLE) or norm == "/root" or any(
                norm.startswith(v) for v in venvs) or "/.local/" in norm:
            out.append(f"step {k}: a root action runs {prog}, a program a user can change: root runs only "
                       "programs root owns")
    return out


def _not_roots(path: str) -> str | None:
    """Why ``path`` (a live program) or a directory above it is not root's alone (None: it is)."""
    p = path
    while True:
        try:
            st = os.stat(p)
        except OSError:
            return None  # not there: the action fails on its own
        if st.st_uid != 0:
            return f"{p} is owned by uid {st.st_uid}"
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not (stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX):
            return f"{p} is writable by group or others"
        if p == "/":
            return None
        p = os.path.dirname(p)


def live_user_programs(host: Host, plan: ResolvedPlan) -> list[str]:
    """On the live machine: root actions' programs (absolute paths) and their directories are root's."""
    if not host.is_live:
        return []
    out = []
    for k, prog in _root_programs(plan):
        why = _not_roots(os.path.realpath(prog)) if prog.startswith("/") else None
        if why:
            out.append(f"step {k}: a root action runs {prog}, but {why}: root runs only programs root owns")
    return out


def new_venvs(plan: ResolvedPlan) -> list[str]:
    """The venvs the plan creates (a pip_pin step with ``new_venv``)."""
    out = []
    for step in plan.steps:
        if step.kind == "pip_pin" and step.param("new_venv") and step.param("venv"):
            out.append(str(step.param("venv")))
    return out


def refusals(host: Host, plan: ResolvedPlan) -> list[str]:
    """Every reason ``plan`` may not run on ``host``'s machine (empty: it may)."""
    out = structure(plan) + live_user_programs(host, plan)
    for venv in new_venvs(plan):
        if host.exists(venv) and not host.exists(venv.rstrip("/") + "/pyvenv.cfg"):
            out.append(f"{venv} exists and is not a Python venv (no pyvenv.cfg): choose another venv path "
                       "(a venv made inside it could not be told apart from what is there, nor undone)")
    return out
