"""What the fleet adds around a plan (wizard/fleet/safety.py): retries only on network actions that can be repeated,
and the GPU-idle preflight names a process that holds /dev/kfd or a render node."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from wizard.fleet.safety import GPU_HOLDERS, retryable
from wizard.model import Action

pytestmark = pytest.mark.unit


def test_only_network_actions_that_can_be_repeated_are_retried() -> None:
    plan = __import__("test_plan_golden").machines()["seed-7900xt"]
    from wizard.planner import resolve_plan

    rp = resolve_plan("upgrade-6.4", plan, state_dir="/var/lib/rocm-wizard", wizard_python="python3")
    retried = {a.description for s in rp.steps for a in s.actions if retryable(a)}
    assert "read the new repository lists" in retried  # apt-get update
    assert any(d.startswith("download amdgpu-install") for d in retried)  # wget of the .deb
    assert any(d.startswith("install the pinned stack") for d in retried)  # pip from the wheel index
    assert "remove exactly these packages" not in retried and not any("simulation" in d for d in retried)
    assert not retryable(Action(("apt-get", "install", "-y", "x"), destructive=True))
    assert not retryable(Action(("pip", "install", "x"), idempotent=False))


def test_the_gpu_idle_check_names_the_holder(tmp_path: Path) -> None:
    """Run for real: this machine's processes (none holds a GPU here, or the check says which one does)."""
    res = subprocess.run([sys.executable, *GPU_HOLDERS[1:]], capture_output=True, text=True, timeout=120)
    if res.returncode == 0:
        assert "no process holds /dev/kfd" in res.stdout
    else:
        assert "the GPU is in use: pid " in res.stderr and ("/dev/kfd" in res.stderr or "renderD" in res.stderr)
