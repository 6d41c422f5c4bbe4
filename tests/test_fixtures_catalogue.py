"""Every recorded machine under tests/fixtures/machines is well formed.

Checks the catalogue itself, not a detector: each fixture names its public source, its
expected.json is a parseable subset of the ``detect --json`` shape with well-formed values plus its
``category`` and the ``diagnosis`` its thread found (whose known-issue ids exist in the knowledge
base or are declared in CAUSES.md), it holds at least one piece of evidence, any ``root/`` symlink
stays inside the fixture, and the README table lists it. CAUSES.md sections are well formed.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parent.parent
MACHINES = Path(__file__).parent / "fixtures" / "machines"
FIXTURES = sorted(p for p in MACHINES.iterdir() if p.is_dir()) if MACHINES.is_dir() else []
CATEGORIES = {"rdna1", "rdna2", "rdna3", "rdna35-apu", "rdna4", "vega", "gcn-old", "cdna", "multi-gpu", "wsl",
              "container", "override", "truncated", "core-sdk", "distro-packaged"}

TOP_KEYS = {"os", "gpus", "rocm", "python_envs", "env", "driver", "other_gpus", "in_container", "category",
            "diagnosis", "holdout"}
GPU_KEYS = {"name", "gfx", "gfx_reported", "pci_id", "bdf", "integrated", "vram_bytes", "family",
            "hip_index", "kfd_node", "render_node"}
EVIDENCE = {"rocminfo.txt", "lspci.txt", "collect_env.txt", "traceback.txt", "env.txt",
            "os-release.txt", "uname.txt", "pip-freeze.txt", "rocm-smi.txt", "amd-smi.txt",
            "kfd-properties.txt", "dmesg.txt", "rocm-version.txt", "rocm_agent_enumerator.txt",
            "clinfo.txt", "dpkg.txt", "rpm.txt", "groups.txt", "root", "issue.txt", "paste.txt"}
GFX = re.compile(r"^gfx[0-9]{3,4}[0-9a-f]?$|^gfx9[0-9a-f]{2}$")
PCI_ID = re.compile(r"^1002:[0-9a-f]{4}$")


def test_there_are_fixtures() -> None:
    assert len(FIXTURES) >= 14


def test_the_corpus_keeps_its_spread() -> None:
    """Issue 12's public corpus: enough machines, causes and whole pastes, every category covered."""
    expected = [json.loads((f / "expected.json").read_text(encoding="utf-8")) for f in FIXTURES]
    assert len(FIXTURES) >= 150  # issue 21: at least 150 recorded machines from public threads
    assert sum(1 for e in expected if isinstance(e.get("diagnosis"), dict)) >= 45
    assert sum(1 for f in FIXTURES if (f / "paste.txt").is_file()) >= 25
    per_category = {c: sum(1 for e in expected if e.get("category") == c) for c in CATEGORIES}
    thin = {c: n for c, n in per_category.items() if n < 4}
    assert not thin, f"categories with fewer than 4 fixtures: {thin}"


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


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_holdout_flag_follows_the_fixed_rule(fixture: Path) -> None:
    """The held-out part of the corpus is chosen by a hash of the name, never by hand (so never by results)."""
    data = json.loads((fixture / "expected.json").read_text(encoding="utf-8"))
    assert data.get("holdout", False) in (True, False), f"{fixture.name}: holdout must be true or absent"
    rule = _load_scorer().is_holdout(fixture.name)
    assert data.get("holdout", False) is rule, (
        f"{fixture.name}: " + ('add "holdout": true' if rule else 'remove "holdout"') + " (the rule: is_holdout)")


def test_readme_lists_every_fixture() -> None:
    readme = (MACHINES / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in FIXTURES if f"`{p.name}`" not in readme]
    assert not missing, f"README.md does not list: {missing}"


def _load_scorer() -> ModuleType:
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("reading_score", REPO / "benchmarks" / "reading_score.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("reading_score", module)
    spec.loader.exec_module(module)
    return module


def _kb_ids() -> set[str]:
    data = json.loads((REPO / "wizard" / "kb" / "known_issues.json").read_text(encoding="utf-8"))
    return {i["id"] for i in data["issues"]}


def _causes() -> list[Any]:
    path = MACHINES / "CAUSES.md"
    return _load_scorer().parse_causes(path.read_text(encoding="utf-8")) if path.is_file() else []


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_category_and_diagnosis_are_wellformed(fixture: Path) -> None:
    data = json.loads((fixture / "expected.json").read_text(encoding="utf-8"))
    assert data.get("category") in CATEGORIES, f"{fixture.name}: category {data.get('category')!r}"
    assert "diagnosis" in data, f"{fixture.name}: say \"diagnosis\": null when the thread found no cause"
    diag = data["diagnosis"]
    if diag is None:
        return
    assert isinstance(diag, dict) and set(diag) == {"cause", "fix", "known_issues"}, f"{fixture.name}: {diag}"
    assert isinstance(diag["cause"], str) and diag["cause"].strip() and "\n" not in diag["cause"]
    assert isinstance(diag["fix"], str) and diag["fix"].strip() and "\n" not in diag["fix"]
    ids = diag["known_issues"]
    assert isinstance(ids, list) and ids and all(isinstance(i, str) for i in ids), f"{fixture.name}: {ids}"
    known = _kb_ids() | {c.id for c in _causes()}
    unknown = [i for i in ids if i not in known]
    assert not unknown, f"{fixture.name}: ids neither in known_issues.json nor in CAUSES.md: {unknown}"


def test_causes_sections_are_wellformed() -> None:
    sections = _causes()
    assert sections, "tests/fixtures/machines/CAUSES.md declares no cause"
    problems = [p for s in sections for p in s.problems()]
    assert not problems, "\n".join(problems)
    ids = [s.id for s in sections]
    assert len(ids) == len(set(ids)), f"duplicate ids: {sorted(i for i in ids if ids.count(i) > 1)}"


def test_every_declared_cause_is_expected_by_a_fixture() -> None:
    used = set()
    for fixture in FIXTURES:
        diag = json.loads((fixture / "expected.json").read_text(encoding="utf-8")).get("diagnosis")
        if isinstance(diag, dict):
            used |= set(diag["known_issues"])
    unused = [s.id for s in _causes() if s.id not in used]
    assert not unused, f"CAUSES.md declares ids no fixture expects: {unused}"


def test_not_read_yet_names_fixtures() -> None:
    listed = {ln.split("#", 1)[0].strip() for ln in (MACHINES / "not-read-yet.txt").read_text().splitlines()} - {""}
    missing = sorted(listed - {p.name for p in FIXTURES})
    assert not missing, f"not-read-yet.txt names no such fixture: {missing}"
