"""Every recorded machine: detect() finds what its expected.json says (a subset of detect --json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wizard.facts_json import facts_to_json
from wizard.host import BUILTIN_EXAMPLES, open_recorded
from wizard.probes import detect

pytestmark = pytest.mark.unit

FIXTURES = Path(__file__).parent / "fixtures" / "machines"
MACHINES = sorted(
    [p for p in FIXTURES.iterdir() if (p / "expected.json").is_file()]
    + [p for p in BUILTIN_EXAMPLES.iterdir() if (p / "expected.json").is_file()]
)
# expected.json keys that are not detect --json facts (the catalogue's category, the thread's cause, the held-out flag).
NOT_FACTS = ("category", "diagnosis", "holdout")
# Recorded machines whose facts the detector does not read yet: benchmarks/reading_accuracy.py
# measures them. They are strict xfails: once one is read right, take it off the list.
NOT_READ_YET = {
    line.split("#", 1)[0].strip() for line in (FIXTURES / "not-read-yet.txt").read_text(encoding="utf-8").splitlines()
} - {""}


def _subset_mismatches(expected: object, actual: object, where: str) -> list[str]:
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected an object, got {actual!r}"]
        out: list[str] = []
        for key, value in expected.items():
            if key.startswith("_"):
                continue
            out += _subset_mismatches(value, actual.get(key), f"{where}.{key}")
        return out
    if isinstance(expected, list) and expected and isinstance(expected[0], dict):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where}: expected {len(expected)} entries, got {actual if not isinstance(actual, list) else len(actual)}"]
        out = []
        for i, (e, a) in enumerate(zip(expected, actual)):
            out += _subset_mismatches(e, a, f"{where}[{i}]")
        return out
    return [] if expected == actual else [f"{where}: expected {expected!r}, got {actual!r}"]


def test_there_are_enough_recorded_machines() -> None:
    assert len(MACHINES) >= 25


@pytest.mark.parametrize("machine", [
    pytest.param(m, marks=pytest.mark.xfail(strict=True, reason="not read yet (tests/fixtures/machines/not-read-yet.txt)"))
    if m.name in NOT_READ_YET and m.parent == FIXTURES else m
    for m in MACHINES
], ids=lambda p: p.name)
def test_detect_matches_expected(machine: Path) -> None:
    expected = {k: v for k, v in json.loads((machine / "expected.json").read_text()).items() if k not in NOT_FACTS}
    facts = detect(open_recorded(str(machine)))
    got = facts_to_json(facts)
    problems = _subset_mismatches(expected, got, "detect")
    assert not problems, "\n".join(problems)
    assert not facts.errors, facts.errors
