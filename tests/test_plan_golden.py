"""Golden tests: every shipped plan on >= 12 machines -> the expected dry-run script or refusal.

Machines: the two built-in examples (the user's notes), recorded fixtures under
tests/fixtures/machines/, and Facts built here from model.py records where no recording exists
(gfx1102 venv, gfx1103 iGPU only, RHEL 9 MI300X, a Core SDK 10.0 machine, RDNA2 gfx1031 with an
override, DKMS and Secure Boot, and an RX 9070 XT with nothing installed).
Recorded bundles do not name their user; the tests name one (``user``) so venv paths are concrete.

Regenerate after an intended change: ``ROCM_WIZARD_UPDATE_GOLDEN=1 pytest tests/test_plan_golden.py``
and review the diff of tests/golden/.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

from wizard import record
from wizard.host import BUILTIN_EXAMPLES, BundleHost
from wizard.model import (
    Docker,
    Driver,
    EnvSetting,
    Facts,
    Gpu,
    OsInfo,
    PythonEnv,
    Rocm,
    RocmInstall,
)
from wizard.plan_file import builtin_plan_names
from wizard.planner import PlanRefused, resolve_plan
from wizard.script import render

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent
GOLDEN = ROOT / "golden"
FIXTURES = ROOT / "fixtures" / "machines"
UPDATE = os.environ.get("ROCM_WIZARD_UPDATE_GOLDEN") == "1"
STATE_DIR = "/var/lib/rocm-wizard"
WIZARD_PYTHON = "python3"
GIB = 1 << 30

RECORDED = {
    # name in tests/golden -> bundle directory
    "seed-7900xt": BUILTIN_EXAMPLES / "seed-7900xt",
    "seed-5600xt": BUILTIN_EXAMPLES / "seed-5600xt",
    "rdna2-gfx1032-override": FIXTURES / "rdna2-6600xt-gfx1032-rocminfo",
    "rdna2-gfx1030-jammy": FIXTURES / "rdna2-6950xt-ubuntu2204-xformers",
    "rdna3-gfx1101": FIXTURES / "rdna3-7800xt-ubuntu2404-sdk-builder",
    "strix-halo-gfx1151": FIXTURES / "apu-strix-halo-gfx1151",
    "rx9070xt-gfx1201": FIXTURES / "rdna4-9070xt-ubuntu2604-amdgpu-install",
    "mi300x-x4": FIXTURES / "cdna-mi300x-x4",
    "debian12-gfx906": FIXTURES / "vega-gfx906-debian12",
    "strixhalo-r9700-egpu": FIXTURES / "multi-strixhalo-r9700-egpu",
    "rx9070xt-noble-no-kfd": FIXTURES / "rdna4-9070xt-noble-fresh-no-kfd",
}

UBUNTU_NOBLE = OsInfo(id="ubuntu", version="24.04", codename="noble", kernel="6.8.0-48-generic", like=("debian",),
                      pretty_name="Ubuntu 24.04.1 LTS", arch="x86_64", package_manager="apt", secure_boot=False)
UBUNTU_JAMMY = OsInfo(id="ubuntu", version="22.04", codename="jammy", kernel="6.8.0-40-generic", like=("debian",),
                      pretty_name="Ubuntu 22.04.5 LTS", arch="x86_64", package_manager="apt", secure_boot=True)
USER_DRIVER = Driver(loaded=True, kind="in-tree", kfd_present=True, kfd_accessible=True, user="user",
                     in_render_group=True, in_video_group=True)


def built_machines() -> dict[str, Facts]:
    """Facts built by hand where no recording exists (values are the scenario, not a real capture)."""
    return {
        "rdna3-gfx1102-venv": Facts(
            os=UBUNTU_NOBLE,
            gpus=(Gpu(name="AMD Radeon RX 7600 XT", gfx="gfx1102", pci_id="1002:7480", integrated=False,
                      family="RDNA3", hip_index=0),),
            driver=USER_DRIVER,
            python_envs=(PythonEnv(path="/home/user/sd", python="/home/user/sd/bin/python", python_version="3.12",
                                   torch="2.6.0+rocm6.2.4", torchvision="0.21.0+rocm6.2.4", build="rocm",
                                   kind="venv"),),
            env=(EnvSetting("HSA_OVERRIDE_GFX_VERSION", "11.0.0", "~/.bashrc:12"),),
            disk_free_bytes=200 * GIB, home_free_bytes=200 * GIB, origin="built:rdna3-gfx1102-venv"),
        "apu-gfx1103-only": Facts(
            os=UBUNTU_NOBLE,
            gpus=(Gpu(name="AMD Radeon 780M", gfx="gfx1103", pci_id="1002:15bf", integrated=True, family="RDNA3",
                      hip_index=0),),
            driver=USER_DRIVER, disk_free_bytes=100 * GIB, home_free_bytes=100 * GIB,
            origin="built:apu-gfx1103-only"),
        "rhel9-mi300x": Facts(
            os=OsInfo(id="rhel", version="9.4", kernel="5.14.0-427.13.1.el9_4.x86_64", like=("fedora",),
                      pretty_name="Red Hat Enterprise Linux 9.4 (Plow)", arch="x86_64", package_manager="dnf",
                      secure_boot=False),
            gpus=tuple(Gpu(name="AMD Instinct MI300X", gfx="gfx942", pci_id="1002:74a1", integrated=False,
                           family="CDNA3", hip_index=i) for i in range(2)),
            driver=Driver(loaded=True, kind="dkms", version="6.7.0", dkms_packages=("amdgpu-dkms 6.7.0-1781449.el9",),
                          kfd_present=True, user="user", in_render_group=True, in_video_group=True),
            rocm=Rocm(version="6.1.2", stream="legacy", installs=(RocmInstall(
                version="6.1.2", stream="legacy", path="/opt/rocm-6.1.2", how="package",
                packages=("amdgpu-install", "rocm-core", "rocm-hip-runtime", "rocminfo", "amdgpu-dkms")),)),
            python_envs=(PythonEnv(path=None, python="3.9", python_version="3.9", kind="system"),),
            disk_free_bytes=500 * GIB, home_free_bytes=500 * GIB, origin="built:rhel9-mi300x"),
        "coresdk10-gfx1100": Facts(
            os=UBUNTU_NOBLE,
            gpus=(Gpu(name="AMD Radeon RX 7900 XTX", gfx="gfx1100", pci_id="1002:744c", integrated=False,
                      family="RDNA3", hip_index=0),),
            driver=USER_DRIVER,
            rocm=Rocm(version="10.0.0", stream="core-sdk", installs=(RocmInstall(
                version="10.0.0", stream="core-sdk", path="/opt/rocm/core-10.0", how="version-file",
                packages=("amdrocm-core", "amdrocm-hip")),)),
            python_envs=(PythonEnv(path="/home/user/therock", python="/home/user/therock/bin/python",
                                   python_version="3.12", torch="2.14.1", build="rocm", rocm_sdk="10.0.0",
                                   rocm_sdk_targets=("gfx1100",), kind="venv"),),
            disk_free_bytes=300 * GIB, home_free_bytes=300 * GIB, origin="built:coresdk10-gfx1100"),
        "rdna2-gfx1031-dkms-secureboot": Facts(
            os=UBUNTU_JAMMY,
            gpus=(Gpu(name="AMD Radeon RX 6700 XT", gfx="gfx1031", pci_id="1002:73df", integrated=False,
                      family="RDNA2", hip_index=0),),
            driver=Driver(loaded=True, kind="dkms", version="6.8.5", dkms_packages=("amdgpu-dkms 1:6.8.5.60204",),
                          kfd_present=True, user="user", in_render_group=False, in_video_group=True),
            rocm=Rocm(version="6.2.4", stream="legacy", installs=(RocmInstall(
                version="6.2.4", stream="legacy", path="/opt/rocm-6.2.4", how="package",
                packages=("amdgpu-install", "rocm-core", "rocm-hip-runtime", "rocminfo", "amdgpu-dkms")),)),
            python_envs=(PythonEnv(path="/home/user/venv", python="/home/user/venv/bin/python", python_version="3.10",
                                   torch="2.5.1+rocm6.2", build="rocm", kind="venv"),),
            env=(EnvSetting("HSA_OVERRIDE_GFX_VERSION", "10.3.0", "/etc/environment:2"),),
            docker=Docker(docker="/usr/bin/docker", in_docker_group=True),
            disk_free_bytes=80 * GIB, home_free_bytes=80 * GIB, origin="built:rdna2-gfx1031-dkms-secureboot"),
        "rx9070xt-noble-fresh": Facts(
            os=UBUNTU_NOBLE,
            gpus=(Gpu(name="AMD Radeon RX 9070 XT", gfx="gfx1201", pci_id="1002:7550", integrated=False,
                      family="RDNA4", hip_index=0),),
            driver=Driver(loaded=True, kind="in-tree", kfd_present=True, user="user", in_render_group=False,
                          in_video_group=False),
            python_envs=(PythonEnv(path=None, python="/usr/bin/python3", python_version="3.12", kind="system"),),
            docker=Docker(docker="/usr/bin/docker", in_docker_group=False),
            disk_free_bytes=400 * GIB, home_free_bytes=400 * GIB, origin="built:rx9070xt-noble-fresh"),
    }


@functools.cache
def machines() -> dict[str, Facts]:
    from wizard.probes import detect

    out: dict[str, Facts] = {}
    for name, path in RECORDED.items():
        if not path.is_dir():
            continue
        facts = detect(BundleHost(path))
        driver = facts.driver if facts.driver.user else record.replace(facts.driver, user="user")
        out[name] = record.replace(facts, origin=f"recorded:{name}", driver=driver)
    out.update(built_machines())
    return out


def outcome(plan: str, facts: Facts) -> tuple[str, str]:
    """('sh', script) or ('refused', reasons one per line)"""
    try:
        rp = resolve_plan(plan, facts, state_dir=STATE_DIR, wizard_python=WIZARD_PYTHON)
    except PlanRefused as exc:
        return "refused", "".join(f"{r}\n" for r in exc.reasons)
    return "sh", render(rp, facts)


CASES = [(m, p) for m in [*RECORDED, *built_machines()] for p in builtin_plan_names()]


def test_enough_machines_and_plans() -> None:
    assert len(machines()) >= 12
    assert set(builtin_plan_names()) >= {"downgrade-6.2", "upgrade-6.4", "upgrade-7.2", "core-sdk", "driver", "therock-pip",
                                          "pip-only", "docker"}


@pytest.mark.parametrize("machine, plan", CASES)
def test_golden(machine: str, plan: str) -> None:
    facts = machines().get(machine)
    if facts is None:
        pytest.skip(f"recorded machine {machine} is not in this checkout")
    kind, text = outcome(plan, facts)
    base = GOLDEN / machine / plan
    path = base.with_name(f"{plan}.{kind}")
    other = base.with_name(f"{plan}.{'refused' if kind == 'sh' else 'sh'}")
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if other.exists():
            other.unlink()
        return
    assert not other.exists() or path.exists(), f"{machine}/{plan}: expected {other.name}, got {kind}:\n{text}"
    assert path.exists(), f"no golden {path}; run with ROCM_WIZARD_UPDATE_GOLDEN=1 and review"
    assert text == path.read_text(), f"{machine}/{plan} differs from {path} (ROCM_WIZARD_UPDATE_GOLDEN=1 to update)"
