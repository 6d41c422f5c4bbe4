"""The pip step's undo when a rollback is resumed after a kill inside its pip install: pip moves what it
replaces aside under "~"-names (its stash) and a killed pip leaves them in site-packages; the install runs again
on resume, and the undo's last action, after it, removes them (found by
``benchmarks/realroot_crash.py --profile debian-real``: without it the resumed rollback ended with ``~orch`` and
``~orch-2.14.1+rocm7.2.dist-info`` beside the restored torch)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from wizard.model import Action, StepPlan
from wizard.steps._common import UndoContext
from wizard.steps.pip_pin import PIP_STASHES, undo

pytestmark = pytest.mark.unit

VENV = "/home/user/cpu-venv"


def _undo() -> list[tuple[str, Action]]:
    step = StepPlan(kind="pip_pin", title="pin", params=(("venv", VENV),), actions=(
        Action((f"{VENV}/bin/python", "-m", "pip", "install", "torch==2.14.1+rocm7.2"), changes=(f"venv:{VENV}",)),))
    manifest = {"backup_dir": "/b", "envs": [{"path": VENV, "freeze": "freeze.txt", "indexes": {}}]}
    u = UndoContext(step=step, index=5, ran=(0,), manifest=manifest,
                    read_text=lambda p: "torch==2.13.0+cpu\nsympy==1.14.0\n" if p == "/b/freeze.txt" else None,
                    glob=lambda pattern: [])
    return list(undo(u).actions)


def test_the_stashes_go_after_the_restoring_install() -> None:
    (why_install, install), (why_clear, clear) = _undo()
    assert install.argv == (f"{VENV}/bin/python", "-m", "pip", "install", "--no-deps", "torch==2.13.0+cpu")
    assert clear.argv == ("sh", "-c", PIP_STASHES, "sh", VENV) and clear.as_user
    assert "~-named stashes" in why_clear


def test_the_script_removes_only_pips_stashes(tmp_path: Path) -> None:
    site = tmp_path / "venv/lib/python3.11/site-packages"
    for name in ("~orch", "~orch-2.14.1+rocm7.2.dist-info", "torch", "torch-2.13.0+cpu.dist-info", "pip"):
        (site / name).mkdir(parents=True)
    (site / "~ympy.py").write_text("")
    (site / "~orch" / "lib.so").write_text("")
    r = subprocess.run(["sh", "-c", PIP_STASHES, "sh", str(tmp_path / "venv")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in site.iterdir()) == ["pip", "torch", "torch-2.13.0+cpu.dist-info"]
    clean = subprocess.run(["sh", "-c", PIP_STASHES, "sh", str(tmp_path / "none")], capture_output=True, text=True)
    assert clean.returncode == 0, clean.stderr  # nothing to remove: not a failure
