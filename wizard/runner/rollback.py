"""Rollback: what a run's backup allows to restore, as actions, and what it cannot.

Sources, in order: (1) the backup manifest (``manifest.json`` written by the backup step): every
Python environment is restored exactly from its ``pip freeze`` (stack packages not in the freeze are
removed first), the repo lists and env files from the saved archive, and the previous ROCm release
through its amdgpu-install package when the knowledge base knows its URL; (2) the ``undo`` of every
action the run really ran (not those skipped by a done-check), newest first. Actions that changed
something and have neither are listed as not restorable before anything starts.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wizard.host import Host
from wizard.model import Action, ResolvedPlan
from wizard.runner import events as ev
from wizard.runner.journal import RunView

if TYPE_CHECKING:
    from wizard.runner.engine import Engine, Outcome
    from wizard.runner.runs import Run

STACK = re.compile(r"^(torch|torchvision|torchaudio|pytorch-triton-rocm|triton|rocm|rocm-sdk-.*|amd-torch-device-.*|"
                   r"_rocm_sdk_.*)$", re.I)


@dataclass
class RollbackPlan:
    actions: list[tuple[str, Action]] = field(default_factory=list)  # (why, action)
    cannot: list[str] = field(default_factory=list)


def _manifest(host: Host, plan: ResolvedPlan) -> dict | None:
    for step in plan.steps:
        if step.kind != "backup":
            continue
        for a in step.actions:
            for c in a.changes:
                if c.endswith("/manifest.json"):
                    text = host.read_text(c)
                    if text:
                        try:
                            return json.loads(text)
                        except ValueError:
                            return None
    return None


def _freeze(host: Host, path: str) -> list[tuple[str, str]]:
    out = []
    for line in (host.read_text(path) or "").splitlines():
        mo = re.match(r"^([A-Za-z0-9_.\-]+)==(\S+)$", line.strip())
        if mo:
            out.append((mo.group(1), mo.group(2)))
    return out


def build(host: Host, plan: ResolvedPlan, view: RunView, *, facts=None) -> RollbackPlan:
    rb = RollbackPlan()
    man = _manifest(host, plan)
    restored_envs: set[str] = set()
    if man:
        d = man.get("backup_dir", "")
        for env in man.get("envs", []):
            py = env.get("python") or f"{env['path']}/bin/python"
            if not py.startswith("/"):
                py = f"{env['path']}/bin/python"
            frozen = _freeze(host, f"{d}/{env['freeze']}")
            if not frozen:
                rb.cannot.append(f"{env['path']}: its pip freeze is missing or empty in {d}")
                continue
            names = {n.lower() for n, _ in frozen}
            extra = sorted({_n for _n in _installed_stack(host, env["path"]) if _n.lower() not in names})
            if extra:
                rb.actions.append((f"remove packages the run added to {env['path']}",
                                   Action((py, "-m", "pip", "uninstall", "-y", *extra), as_user=True)))
            idx = sorted({u for u in (env.get("indexes") or {}).values() if isinstance(u, str)}) \
                if isinstance(env.get("indexes"), dict) else []
            extra_idx = [x for u in idx for x in ("--extra-index-url", u)]
            rb.actions.append((f"restore {env['path']} exactly from the backup's pip freeze",
                               Action((py, "-m", "pip", "install", "--no-deps", *extra_idx,
                                       *[f"{n}=={v}" for n, v in frozen if STACK.match(n)]), as_user=True,
                                      timeout=7200)))
            restored_envs.add(env["path"])
        pk = man.get("packages", {})
        rocm = man.get("rocm", {})
        if pk.get("manager") == "apt" and rocm.get("version"):
            url = _amdgpu_install_url(rocm["version"], man.get("machine", {}))
            if url:
                deb = f"{d}/{url.rsplit('/', 1)[-1]}"
                dkms = man.get("driver", {}).get("kind") == "dkms"
                rb.actions += [
                    ("remove the ROCm the run installed", Action(("amdgpu-install", "-y", "--uninstall",
                                                                  "--rocmrelease=all"), root=True, ok_codes=(0, 127))),
                    ("remove the run's amdgpu-install", Action(("apt-get", "-y", "purge", "amdgpu-install"), root=True)),
                    ("restore repo lists, keys and env files", Action(("tar", "-xzf", f"{d}/etc-files.tar.gz", "-C", "/"),
                                                                      root=True)),
                    (f"download amdgpu-install for ROCm {rocm['version']}", Action(("wget", "-O", deb, url), root=True)),
                    (f"reinstall amdgpu-install for ROCm {rocm['version']}", Action(("apt-get", "-y", "install", deb),
                                                                                   root=True)),
                    (f"reinstall ROCm {rocm['version']}", Action(("amdgpu-install", "-y", "--usecase=rocm",
                                                                  *([] if dkms else ["--no-dkms"])), root=True,
                                                                 timeout=7200)),
                ]
            else:
                rb.cannot.append(f"ROCm {rocm['version']}: no amdgpu-install package URL is known for this machine")
        elif rocm.get("version"):
            rb.cannot.append(f"ROCm {rocm['version']}: restoring system packages is only automated on apt systems")
    else:
        rb.cannot.append("no backup manifest was found: Python environments and packages cannot be restored")
    for s, a in reversed(view.ran_actions):
        if s >= len(plan.steps) or a >= len(plan.steps[s].actions):
            continue
        act = plan.steps[s].actions[a]
        if plan.steps[s].kind in ("backup", "verify") or not act.changes:
            continue
        if act.undo:
            if any(c.startswith("venv:") and c[5:] in restored_envs for c in act.changes):
                continue
            rb.actions.append((f"undo: {act.description or act.shown()}",
                               Action(act.undo, root=act.root, as_user=act.as_user)))
        elif man is None or plan.steps[s].kind not in ("purge", "rocm_install", "pip_pin"):
            rb.cannot.append(f"step {s + 1} ({plan.steps[s].title}): {act.description or act.shown()} has no undo")
    return rb


def execute(engine: Engine, run: Run, rb: RollbackPlan) -> Outcome:
    """Run ``rb`` through ``engine`` (its privilege, sandbox mapping, cancel flag and events), logged to
    ``rollback.log`` and journalled as rollback-* records ending in run-end rolled-back or failed."""
    from wizard.runner.engine import Outcome

    j = run.journal
    j.append("rollback-start", actions=len(rb.actions), cannot=rb.cannot)
    log_path = run.logs / "rollback.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        for n, (why, action) in enumerate(rb.actions):
            log.write(f"=== [{time.strftime('%H:%M:%S')}] {why}: {action.shown()}\n".encode())
            engine.emit(ev.ActionStarted(-1, n, action.shown(), why))
            j.append("rollback-action-start", action=n, argv=action.shown())
            res, _ = engine._exec(action, log, -1, n)
            ok = res.exit_code in action.ok_codes and not res.timed_out and not res.cancelled
            outcome = "ok" if ok else "cancelled" if res.cancelled else "timeout" if res.timed_out else "failed"
            engine.emit(ev.ActionFinished(-1, n, res.exit_code, res.duration, outcome))
            j.append("rollback-action-end", action=n, exit_code=res.exit_code, outcome="ok" if ok else "failed")
            if not ok:
                j.append("run-end", state="failed", message=f"rollback: {why} failed")
                return Outcome("failed", run.id, f"rollback: {why} failed (exit {res.exit_code}); log: {log_path}")
    j.append("run-end", state="rolled-back")
    msg = f"rolled back run {run.id}" + (f"; {len(rb.cannot)} item(s) could not be restored" if rb.cannot else "")
    return Outcome("rolled-back", run.id, msg, skipped=tuple(rb.cannot))


def _installed_stack(host: Host, venv: str) -> list[str]:
    out = []
    for site in host.glob(f"{venv}/lib/python*/site-packages/*.dist-info"):
        text = host.read_text(f"{site}/METADATA", 8192) or ""
        mo = re.search(r"^Name: (.+)$", text, re.M)
        if mo and STACK.match(mo.group(1).strip()):
            out.append(mo.group(1).strip())
    return out


def _amdgpu_install_url(version: str, machine: dict) -> str | None:
    try:
        from wizard.kb import load_kb

        return load_kb().amdgpu_install_url(version, machine.get("os"), machine.get("version"), machine.get("codename"))
    except Exception:  # noqa: BLE001 - unknown stays unknown
        return None
