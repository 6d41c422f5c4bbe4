"""Every recorded machine under tests/fixtures/machines is well formed.

Checks the catalogue itself, not a detector: each fixture names its public source, its
expected.json is a parseable subset of the ``detect --json`` shape with well-formed values, it holds
at least one piece of evidence, any ``root/`` symlink stays inside the fixture, and the README
table lists it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

MACHINES = Path(__file__).parent / "fixtures" / "machines"
FIXTURES = sorted(p for p in MACHINES.iterdir() if p.is_dir()) if MACHINES.is_dir() else []

TOP_KEYS = {"os", "gpus", "rocm", "python_envs", "env", "driver", "other_gpus"}
GPU_KEYS = {"name", "gfx", "gfx_reported", "pci_id", "bdf", "integrated", "vram_bytes", "family",
            "hip_index", "kfd_node", "render_node"}
EVIDENCE = {"rocminfo.txt", "lspci.txt", "collect_env.txt", "traceback.txt", "env.txt",
            "os-release.txt", "uname.txt", "pip-freeze.txt", "rocm-smi.txt", "amd-smi.txt",
            "kfd-properties.txt", "dmesg.txt", "rocm-version.txt", "rocm_agent_enumerator.txt",
            "clinfo.txt", "dpkg.txt", "rpm.txt", "groups.txt", "root"}
GFX = re.compile(r"^gfx[0-9]{3,4}[0-9a-f]?$|^gfx9[0-9a-f]{2}$")
PCI_ID = re.compile(r"^1002:[0-9a-f]{4}$")


def test_there_are_fixtures() -> None:
    assert len(FIXTURES) >= 14


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_source_names_a_public_url(fixture: Path) -> None:
    source = fixture / "SOURCE.md"
    assert source.is_file(), f"{fixture.name}: SOURCE.md missing"
    assert re.search(r"https://\S+", source.read_text(encoding="utf-8")), f"{fixture.name}: no https URL"


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_expected_is_a_wellformed_subset(fixture: Path) -> None:
    data = json.loads((fixture / "expected.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict) and data, f"{fixture.name}: expected.json must be a non-empty object"
    assert set(data) <= TOP_KEYS, f"{fixture.name}: unknown keys {set(data) - TOP_KEYS}"
    for gpu in data.get("gpus", []):
        assert isinstance(gpu, dict) and set(gpu) <= GPU_KEYS, f"{fixture.name}: bad gpu {gpu}"
        for key in ("gfx", "gfx_reported"):
            if key in gpu:
                assert GFX.match(gpu[key]), f"{fixture.name}: bad {key} {gpu[key]!r}"
        if "pci_id" in gpu:
            assert PCI_ID.match(gpu["pci_id"]), f"{fixture.name}: bad pci_id {gpu['pci_id']!r}"
        if "integrated" in gpu:
            assert isinstance(gpu["integrated"], bool)
        if "vram_bytes" in gpu:
            assert isinstance(gpu["vram_bytes"], int) and gpu["vram_bytes"] > 0
    for env in data.get("python_envs", []):
        assert isinstance(env, dict) and env
    if "env" in data:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in data["env"].items())


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_holds_evidence(fixture: Path) -> None:
    present = {p.name for p in fixture.iterdir()}
    assert present & EVIDENCE, f"{fixture.name}: no evidence file"


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_root_symlinks_stay_inside(fixture: Path) -> None:
    root = fixture / "root"
    if not root.is_dir():
        return
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if path.is_symlink():
                target = (path.parent / os.readlink(path)).resolve()
                assert target.is_relative_to(root.resolve()), f"{path} points outside root/"
                assert target.exists(), f"{path} is dangling"


def test_readme_lists_every_fixture() -> None:
    readme = (MACHINES / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in FIXTURES if f"`{p.name}`" not in readme]
    assert not missing, f"README.md does not list: {missing}"
