"""Shared helpers of the runner, journal, sandbox and crash tests."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from wizard.model import Action, ResolvedPlan, StepPlan

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable


def plan_of(*steps: StepPlan, name: str = "test-plan") -> ResolvedPlan:
    return ResolvedPlan(name=name, title=name, why="test", target=(), steps=tuple(steps))


def py_action(code: str, **kw) -> Action:
    return Action((PY, "-c", code), **kw)


def wizard(args: list[str], *, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    e = dict(os.environ)
    e.pop("ROCM_WIZARD_STATE_DIR", None)
    e.update(env or {})
    return subprocess.run([PY, "-m", "wizard", *args], capture_output=True, text=True, timeout=timeout, env=e,
                          cwd=REPO, stdin=subprocess.DEVNULL)


def end_state(root: Path) -> dict:
    """What a migration changes: dpkg status, ROCm version files, venv contents, apt sources, groups."""
    from wizard.sandbox import machine as m

    venvs = {}
    for site in sorted(root.glob("home/*/*/lib/python*/site-packages")):
        venvs[str(site.relative_to(root))] = sorted(p.name for p in site.iterdir() if not p.name.startswith("."))
    for act in sorted(root.glob("home/*/*/bin/activate")):
        venvs[str(act.relative_to(root))] = act.read_text()
    return {
        "dpkg": m.installed(root),
        "rocm": {str(p.relative_to(root)): p.read_text() for p in sorted(root.glob("opt/rocm*/.info/version"))},
        "opt_rocm_link": os.readlink(root / "opt/rocm") if (root / "opt/rocm").is_symlink() else None,
        "venvs": venvs,
        "apt": {p.name: p.read_text() for p in sorted((root / "etc/apt/sources.list.d").glob("*"))},
        "pins": {p.name: p.read_text() for p in sorted((root / "etc/apt/preferences.d").glob("*"))}
        if (root / "etc/apt/preferences.d").is_dir() else {},
        "groups": (root / "etc/group").read_text(),
        "units": sorted(str(p.relative_to(root)) for p in (root / "etc/systemd/system").rglob("*")
                        if p.is_file() or p.is_symlink())  # (an emptied .wants directory stays, as in systemd)
        if (root / "etc/systemd/system").is_dir() else [],
        "profile_d": sorted(p.name for p in (root / "etc/profile.d").glob("*")) if (root / "etc/profile.d").is_dir() else [],
    }


def calls(root: Path, tool: str) -> list[list[str]]:
    out = []
    p = root / ".sandbox/calls.log"
    for line in p.read_text().splitlines() if p.exists() else []:
        rec = json.loads(line)
        if rec["tool"] == tool or re.search(rf"/{re.escape(tool)}$", rec["tool"]):
            out.append(rec["argv"])
    return out


def default_signals() -> None:
    """A child's preexec_fn: SIGINT, SIGHUP and SIGTERM at their defaults, whatever the suite was started with
    (``nohup`` ignores SIGHUP, a shell's background job SIGINT, and an ignored signal stays ignored across
    exec: the wizard then rightly leaves it alone, and a test that sends it would wait for nothing)."""
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def until(cond: Callable[[], object], seconds: float = 30.0) -> bool:
    """Poll ``cond`` every 50 ms until it is true or ``seconds`` have passed; its last answer."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return bool(cond())
