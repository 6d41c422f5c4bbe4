"""Issue 21 walked as its users would (helper A9): gaps found with the installed CLI, each shown failing first.

* The core-sdk plan, which tells a machine without /dev/kfd to run the driver plan first, purged the amdgpu-dkms
  that the driver plan had just installed (purge took every DKMS package as part of the "legacy" stream, even on a
  machine with no legacy ROCm at all), leaving the machine without its driver after the reboot.
* A driver plan whose kernel_driver step was refused also said "/dev/kfd is missing ..., and this plan does not
  install one": the driver plan is the one that installs it.
* The note that pip is downloading, not hung, on AMD's indexes (no PEP 658 metadata) reached only the step log and
  ``-v`` output: the default CLI run printed nothing during the pip step.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from test_plan_golden import STATE_DIR, built_machines
from wizard import record
from wizard.model import Facts, RocmInstall
from wizard.planner import PlanRefused, resolve_plan

REPO = Path(__file__).resolve().parent.parent


def _resolve(plan: str, facts: Facts):  # type: ignore[no-untyped-def]
    return resolve_plan(plan, facts, state_dir=STATE_DIR, wizard_python="python3")


def _purged(rp) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    step = next(s for s in rp.steps if s.kind == "purge")
    return tuple(dict(step.params).get("packages", ()))


def _with_driver_plans_dkms(facts: Facts) -> Facts:
    """What the driver plan leaves on a fresh RX 9070 XT: amdgpu-dkms from AMD's 31.60 driver repository, no ROCm."""
    drv = record.replace(facts.driver, kind="dkms", dkms_packages=("amdgpu-dkms 1:31.60-sandbox",))
    rocm = record.replace(facts.rocm, apt_sources=(
        "/etc/apt/sources.list.d/amdgpu.list: deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] "
        "https://repo.radeon.com/amdgpu/31.60/ubuntu noble main",))
    return record.replace(facts, driver=drv, rocm=rocm)


@pytest.mark.integration
def test_core_sdk_keeps_the_driver_the_driver_plan_installed() -> None:
    facts = _with_driver_plans_dkms(built_machines()["rx9070xt-noble-fresh"])
    rp = _resolve("core-sdk", facts)
    assert "amdgpu-dkms" not in _purged(rp)
    assert not any(s.actions for s in rp.steps if s.kind == "purge")


@pytest.mark.integration
def test_core_sdk_still_removes_a_legacy_lines_dkms_driver() -> None:
    """Near miss: with a legacy ROCm installed, its DKMS driver goes with it (AMD: uninstall 7.2.4 or older first)."""
    facts = _with_driver_plans_dkms(built_machines()["rx9070xt-noble-fresh"])
    legacy = RocmInstall("7.2.4", "legacy", "/opt/rocm-7.2.4", "version-file", ("rocm-core", "rocminfo"), ())
    facts = record.replace(facts, rocm=record.replace(facts.rocm, version="7.2.4", stream="legacy",
                                                      installs=(legacy,)))
    assert "amdgpu-dkms" in _purged(_resolve("core-sdk", facts))


@pytest.mark.integration
def test_a_refused_driver_plan_does_not_say_it_installs_no_driver() -> None:
    fresh = built_machines()["rx9070xt-noble-fresh"]
    no_kfd = record.replace(fresh, driver=record.replace(fresh.driver, kfd_present=False, loaded=False, kind=None))
    questing = record.replace(no_kfd, os=record.replace(no_kfd.os, version="25.10", codename="questing"))
    with pytest.raises(PlanRefused) as exc:
        _resolve("driver", questing)
    assert exc.value.reasons and not any("this plan does not install one" in r for r in exc.value.reasons), \
        exc.value.reasons
    # near miss: a pip plan, which installs no driver, still says so and points at the driver plan's refusal
    with pytest.raises(PlanRefused) as exc:
        _resolve("pip-only", questing)
    assert any("this plan does not install one" in r for r in exc.value.reasons), exc.value.reasons


@pytest.mark.system  # a whole therock-pip run in a stand-in sandbox: a few seconds
def test_the_default_cli_run_shows_the_no_pep658_note_during_the_pip_step(tmp_path: Path) -> None:
    box, state = str(tmp_path / "box"), str(tmp_path / "state")
    base = [sys.executable, "-m", "wizard", "--sandbox", box, "--state-dir", state]
    run = subprocess.run([*base, "--profile", "rx9070xt-noble", "--plan", "therock-pip", "--yes"],
                         capture_output=True, text=True, cwd=REPO, timeout=600)
    out = run.stdout
    assert "install the pinned stack from https://stable.repo.amd.com/rocm/whl-next/" in out, out[-3000:]
    pip_at = out.index("install the pinned stack from")
    assert "PEP 658" in out[pip_at:], out[-3000:]
    assert out.count("PEP 658") == 1  # once, at the pip install from AMD's index, not at every action
