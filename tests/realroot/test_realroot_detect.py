"""The wizard's own ``detect`` run by the root's python3 inside a seeded real root."""

from __future__ import annotations

import json
from typing import Callable

import pytest

from wizard.mirror.build import MirrorManifest
from wizard.mirror.server import MirrorServer
from wizard.realroot.machine import RealRoot, install_wizard_source

pytestmark = [pytest.mark.system, pytest.mark.realroot]


def test_detect_reads_the_gpus_rocm_and_the_venv(seeded: Callable[[str], RealRoot],
                                                  rehearsal: tuple[MirrorServer, MirrorManifest]) -> None:
    _, m = rehearsal
    r = seeded("seed-7900xt")
    path = install_wizard_source(r.path)
    out = r.run(["python3", "-m", "wizard", "detect", "--json"], as_user=True, env={"PYTHONPATH": path})
    assert out.returncode == 0, out.stderr[-800:]
    facts = json.loads(out.stdout)
    assert (facts["os"]["id"], facts["os"]["version"]) == ("debian", "12")
    assert [(g["gfx"], g["pci_id"]) for g in facts["gpus"]] == [("gfx1100", "1002:744c")] * 2
    rocm = facts["rocm"]
    assert (rocm["version"], rocm["stream"]) == ("6.2.0", "legacy")
    assert rocm["installs"][0]["path"] == "/opt/rocm-6.2.0"
    assert f"/etc/apt/sources.list.d/rocm.list: deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] " \
           f"{m.base_url}/repo.radeon.com/rocm/apt/6.2 jammy main" in rocm["apt_sources"]
    # the venv with torch, and the root's own python3 (an environment too: a pip plan needs its version)
    envs = {e["path"]: e for e in facts["python_envs"]}
    env = envs["/home/user/pytorch_venv"]
    assert any(e["kind"] == "system" and e["python_version"] == "3.11" for e in envs.values())
    assert (env["path"], env["torch"], env["hip"], env["build"]) == ("/home/user/pytorch_venv", "2.5.1+rocm6.2",
                                                                     "6.2", "rocm")
    assert "gfx1100" in env["gfx_targets"] and env["python_version"] == "3.11"
    drv = facts["driver"]
    assert drv["kind"] == "dkms" and drv["kfd_accessible"] and drv["in_render_group"]
    human = r.run(["python3", "-m", "wizard", "detect"], as_user=True, env={"PYTHONPATH": path, "COLUMNS": "120"})
    assert human.returncode == 0 and "gfx1100" in human.stdout, human.stderr[-500:]
