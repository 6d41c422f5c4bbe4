"""A mirror URL reaches every place: with a mirror for every origin the wizard knows, the dry-run script
of every shipped plan on every built-in machine (the two examples, every sandbox profile) names no
upstream host: no URL but the mirrors', no image but the registry mirror's.

The same scripts without mirrors do name the upstream hosts (the control: the check can fail)."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from wizard.host import BUILTIN_EXAMPLES, BundleHost
from wizard.mirror.config import KNOWN_ORIGINS, REGISTRY_ORIGINS, MirrorConfig, load_config
from wizard.model import Facts
from wizard.plan_file import builtin_plan_names
from wizard.planner import PlanRefused, resolve_plan
from wizard.probes import detect
from wizard.profiles import PROFILES
from wizard.sandbox import open_sandbox
from wizard.script import render

pytestmark = pytest.mark.integration

MIRROR_HOST = "mirror.example"
REGISTRY = "registry.example:5000/hub"
STATE_DIR = "/var/lib/rocm-wizard"
URL = re.compile(r"\b[a-z][a-z0-9+.-]*://([^/\s'\"\\;|)]+)")
IMAGE = re.compile(r"(\S*)\brocm/pytorch:")  # AMD's image: what precedes it names the registry


def all_mirrors() -> MirrorConfig:
    args = [f"{o}={REGISTRY}" if o in REGISTRY_ORIGINS else f"{o}=https://{MIRROR_HOST}/m{i}"
            for i, o in enumerate(KNOWN_ORIGINS)]
    return load_config(args, paths=())


@functools.cache
def machine(name: str, sandbox_root: str) -> Facts:
    if name.startswith("example:"):
        return detect(BundleHost(BUILTIN_EXAMPLES / name.split(":", 1)[1]))
    return detect(open_sandbox(Path(sandbox_root) / name, name))


MACHINES = [f"example:{p.name}" for p in sorted(BUILTIN_EXAMPLES.iterdir()) if p.is_dir()] + sorted(PROFILES)
PLANS = builtin_plan_names()


@pytest.fixture(scope="module")
def sandboxes(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("profiles"))


def script(plan: str, name: str, sandboxes: str, mirrors: MirrorConfig | None) -> str | None:
    try:
        resolved = resolve_plan(plan, machine(name, sandboxes), state_dir=STATE_DIR, wizard_python="python3",
                                mirrors=mirrors)
    except PlanRefused:
        return None
    return render(resolved, machine(name, sandboxes))


def upstream(text: str) -> list[str]:
    """Every place the text reaches a host that is not a mirror."""
    out = [f"URL host {m.group(1)}" for m in URL.finditer(text) if m.group(1) != MIRROR_HOST]
    out += [f"image {m.group(0)}" for m in IMAGE.finditer(text) if not m.group(1).endswith(REGISTRY + "/")]
    return out


@pytest.mark.parametrize("plan", PLANS)
def test_no_upstream_url_in_any_dry_run_script_when_every_origin_is_mirrored(plan: str, sandboxes: str) -> None:
    cfg = all_mirrors()
    assert {m.origin for m in cfg.mirrors} == set(KNOWN_ORIGINS)
    resolved, controls = 0, 0
    for name in MACHINES:
        text = script(plan, name, sandboxes, cfg)
        if text is None:
            continue
        resolved += 1
        assert upstream(text) == [], f"{plan} on {name}"
        plain = script(plan, name, sandboxes, None)
        assert plain is not None
        controls += bool(upstream(plain))  # a plan with nothing to do on a machine (driver) downloads nothing
    assert resolved >= 1, f"{plan} resolves on none of {MACHINES}"
    assert controls >= 1, f"{plan}: no control script names an upstream host, so the check proves nothing"


def test_the_check_sees_every_kind_of_upstream_reference() -> None:
    assert upstream("wget -q -O x https://repo.radeon.com/amdgpu-install/6.2.4/a.deb") == \
        ["URL host repo.radeon.com"]
    assert upstream(f"pip install --index-url https://{MIRROR_HOST}/m4/whl/rocm6.2 torch") == []
    assert upstream("deb [arch=amd64] http://127.0.0.1:8080/repo jammy main") == ["URL host 127.0.0.1:8080"]
    assert upstream("docker pull rocm/pytorch:latest") == ["image rocm/pytorch:"]
    assert upstream(f"docker pull {REGISTRY}/rocm/pytorch:latest") == []
    assert upstream("docker pull docker.io/rocm/pytorch:latest") == ["image docker.io/rocm/pytorch:"]
