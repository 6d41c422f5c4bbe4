"""The rehearsal mirror carries what the core-sdk plan installs (issue 13): AMD's repository key at its URL,
the Core SDK packages in the repository the knowledge base names for Debian 12 (the real root's distro), and
AMD's torch build with its device extra on the index that serves it, installable by a real pip."""

from __future__ import annotations


import subprocess

from pathlib import Path

from .test_mirror_build import _pip, _venv, fetch, packages

import pytest

from wizard.host import LiveHost
from wizard.kb import load_kb
from wizard.mirror import catalogue as cat
from wizard.mirror.build import MirrorManifest
from wizard.mirror.server import MirrorServer
from wizard.model import Driver, Facts, Gpu, OsInfo, PythonEnv
from wizard.planner import resolve_plan
from wizard.probes.python_envs import env_from_prefix

pytestmark = pytest.mark.integration

DEBIAN12 = Facts(
    os=OsInfo(id="debian", version="12", codename="bookworm", like=(), pretty_name="Debian GNU/Linux 12 (bookworm)",
              arch="x86_64", package_manager="apt", secure_boot=False),
    gpus=(Gpu(name="AMD Radeon RX 7900 XTX", gfx="gfx1100", pci_id="1002:744c", integrated=False, family="RDNA3",
              hip_index=0),),
    driver=Driver(loaded=True, kind="in-tree", kfd_present=True, user="user", in_render_group=True,
                  in_video_group=True),
    python_envs=(PythonEnv(path=None, python="/usr/bin/python3", python_version="3.11", kind="system"),),
    origin="built:debian12-gfx1100")


def test_mirror_serves_everything_the_core_sdk_plan_installs(mirror: MirrorManifest, mirror_server: MirrorServer,
                                                            tmp_path: Path) -> None:
    rp = resolve_plan("core-sdk", DEBIAN12, state_dir="/var/lib/rocm-wizard", wizard_python="python3")
    step = next(s for s in rp.steps if s.kind == "core_sdk_install")
    rel = load_kb().release(str(step.param("release")))
    assert rel is not None and rel.routes is not None and rel.routes.apt is not None
    # the key the plan downloads is the mirror's own (its repositories are signed with it)
    status, _, body = fetch(mirror.url(str(step.param("key_url"))))
    assert status == 200 and body == mirror.keyring.read_bytes()
    # the packages, in the repository and suite the plan's source names
    pk = packages(mirror, str(step.param("repo")).rstrip("/"), rel.routes.apt.suite)
    assert set(step.param("packages")) <= set(pk)
    assert cat.core_sdk_release(load_kb(), rel.version, "debian12").repo() == str(step.param("repo")).rstrip("/")
    # AMD's torch with its device extra, as the plan's pip command asks for it
    pin = next(a.argv for s in rp.steps if s.kind == "pip_pin" for a in s.actions if "--index-url" in a.argv)
    at = pin.index("--index-url")
    reqs = list(pin[at + 2:])
    v = _venv(tmp_path)
    r = _pip(v, "install", "--index-url", mirror.url(pin[at + 1]), *reqs)
    assert r.returncode == 0, r.stderr[-3000:]
    env = env_from_prefix(LiveHost(), str(v), "venv")
    vendor = next(w for w in load_kb().vendor_wheels(rel.version) if f"torch[device-gfx1100]=={w.torch}" in reqs)
    assert env is not None and env.torch == vendor.torch and env.torchvision == vendor.torchvision
    assert env.rocm_sdk == rel.version and env.rocm_sdk_targets == ("gfx1100",)
    names = subprocess.run([str(v / "bin/python"), "-m", "pip", "list", "--format=freeze"], capture_output=True,
                           text=True, check=True).stdout
    assert f"amd-torch-device-gfx1100=={vendor.torch}" in names
