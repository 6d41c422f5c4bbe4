"""Every recorded machine (tests/fixtures/machines/*) and built-in example (wizard/examples/*)
is a well-formed evidence bundle: a SOURCE.md naming an https URL, an expected.json that parses
into the `detect --json` subset shape, and only the file names DESIGN.md defines."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "machines"
EXAMPLES = REPO / "wizard" / "examples"

BUNDLE_FILES = {
    "os-release.txt", "uname.txt", "lspci.txt", "rocminfo.txt", "rocm-smi.txt", "amd-smi.txt",
    "rocm-version.txt", "dpkg.txt", "rpm.txt", "kfd-properties.txt", "collect_env.txt",
    "pip-freeze.txt", "env.txt", "groups.txt", "dmesg.txt", "rocm_agent_enumerator.txt",
    "clinfo.txt", "traceback.txt",
}
# Evidence that is not one tool's output: the reporter's own text (issue.txt) beside split files,
# or a whole issue body / terminal scrollback pasted as one text (paste.txt, with no split files).
TEXT_FILES = {"issue.txt", "paste.txt"}
META_FILES = {"SOURCE.md", "expected.json"}
EXPECTED_KEYS = {"os", "gpus", "rocm", "python_envs", "env", "driver", "docker", "other_gpus", "in_container",
                 "category", "diagnosis", "holdout"}
GPU_KEYS = {"name", "gfx", "gfx_reported", "pci_id", "bdf", "integrated", "vram_bytes", "family",
            "hip_index", "kfd_node", "render_node"}
GFX = re.compile(r"^gfx[0-9a-f]{3,4}$")
PCI_ID = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{4}$")


def _bundles() -> list[Path]:
    dirs = []
    for base in (FIXTURES, EXAMPLES):
        if base.is_dir():
            dirs += sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
    return dirs


BUNDLES = _bundles()


def test_there_are_bundles() -> None:
    assert len(BUNDLES) >= 2


@pytest.mark.parametrize("bundle", BUNDLES, ids=[b.name for b in BUNDLES])
def test_source_names_an_https_url(bundle: Path) -> None:
    text = (bundle / "SOURCE.md").read_text(encoding="utf-8")
    assert re.search(r"https://\S+", text), f"{bundle.name}/SOURCE.md names no https URL"


@pytest.mark.parametrize("bundle", BUNDLES, ids=[b.name for b in BUNDLES])
def test_only_known_file_names(bundle: Path) -> None:
    unknown = sorted(
        p.name for p in bundle.iterdir() if p.name != "root" and p.name not in BUNDLE_FILES | TEXT_FILES | META_FILES
    )
    assert not unknown, f"{bundle.name}: not bundle file names: {unknown}"
    assert any((bundle / n).exists() for n in BUNDLE_FILES | TEXT_FILES) or (bundle / "root").is_dir()


@pytest.mark.parametrize("bundle", BUNDLES, ids=[b.name for b in BUNDLES])
def test_a_paste_stands_alone(bundle: Path) -> None:
    """paste.txt is the whole text as the user pasted it: it is never split into files beside it."""
    if (bundle / "paste.txt").exists():
        split = sorted(p.name for p in bundle.iterdir() if p.name not in META_FILES | {"paste.txt"})
        assert not split, f"{bundle.name}: paste.txt beside split evidence {split}"


@pytest.mark.parametrize("bundle", BUNDLES, ids=[b.name for b in BUNDLES])
def test_expected_json_shape(bundle: Path) -> None:
    exp = json.loads((bundle / "expected.json").read_text(encoding="utf-8"))
    assert isinstance(exp, dict) and exp, f"{bundle.name}: expected.json must be a non-empty object"
    assert set(exp) <= EXPECTED_KEYS, f"{bundle.name}: unknown keys {set(exp) - EXPECTED_KEYS}"
    for gpu in exp.get("gpus", []):
        assert isinstance(gpu, dict) and set(gpu) <= GPU_KEYS, f"{bundle.name}: bad gpu {gpu}"
        for key in ("gfx", "gfx_reported"):
            if key in gpu:
                assert GFX.match(gpu[key]), f"{bundle.name}: {key}={gpu[key]!r}"
        if "pci_id" in gpu:
            assert PCI_ID.match(gpu["pci_id"]), f"{bundle.name}: pci_id={gpu['pci_id']!r}"
    for env in exp.get("python_envs", []):
        assert isinstance(env, dict)
    for name, value in exp.get("env", {}).items():
        assert isinstance(name, str) and isinstance(value, str)


WITH_ROOT = [b for b in BUNDLES if (b / "root").is_dir()]


@pytest.mark.parametrize("bundle", WITH_ROOT, ids=[b.name for b in WITH_ROOT])
def test_root_symlinks_stay_inside(bundle: Path) -> None:
    root = bundle / "root"
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            if p.is_symlink():
                target = os.readlink(p)
                assert not target.startswith("/"), f"{p}: absolute link {target}"
                assert (p.parent / target).resolve().is_relative_to(root.resolve()), f"{p} -> {target}"
