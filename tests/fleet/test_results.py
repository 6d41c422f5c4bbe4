"""Results an operator keeps: JUnit XML of a fleet run's rows (wizard.fleet.junit) and the history of runs with
the hosts whose stack changed since the entry before (wizard.fleet.history)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from wizard.fleet import history, junit
from wizard.fleet.facts_io import dumps
from wizard.fleet.detect import facts_path
from wizard.model import Facts, OsInfo, Rocm

pytestmark = pytest.mark.unit

ROWS: list[dict[str, Any]] = [
    {"host": "ok", "plan": "upgrade-6.4", "steps_done": 10, "steps": 10, "reboot": "rebooted",
     "verify": {"status": "pass", "checks": 12, "findings": []}, "failed": None, "next": None},
    {"host": "broke", "plan": "upgrade-6.4", "steps_done": 2, "steps": 10, "reboot": "not reached",
     "verify": {"status": "none"}, "next": "fix the cause above, then: rocm-wizard fleet run upgrade-6.4 -i inv --limit broke",
     "failed": {"task": "Step 4/10 rocm_install: apt-get install", "status": "failed",
                "message": "E: Unable to locate package rocm-hip-runtime & <friends>"}},
    {"host": "ghost", "plan": "upgrade-6.4", "steps_done": 0, "steps": 0, "reboot": "-", "verify": {"status": "-"},
     "failed": {"task": "detect", "status": "unreachable", "message": "ssh: connect to host port 22: refused"}},
    {"host": "old", "plan": "upgrade-6.4", "refused": ["RX 5600 XT (gfx1010) is not supported"], "steps_done": 0,
     "steps": 0, "reboot": "-", "verify": {"status": "-"}, "failed": None},
    {"host": "badgpu", "plan": "upgrade-6.4", "steps_done": 10, "steps": 10, "reboot": "earlier", "failed": None,
     "verify": {"status": "fail", "checks": 12, "findings": ["matmul fp16: fail: mismatch"]}},
    {"host": "root", "plan": "upgrade-6.4", "steps_done": 10, "steps": 10, "reboot": "rebooted", "failed": None,
     "verify": {"status": "skipped", "reason": "real root: no GPU"}},
]


def test_junit_has_one_case_per_host_with_failures_errors_and_skips() -> None:
    text = junit.render("run", "rocm-wizard fleet run upgrade-6.4", ROWS, "2026-11-26T15:00:00+00:00")
    suite = ET.fromstring(text).find("testsuite")
    assert suite is not None
    assert {k: suite.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "6", "failures": "2", "errors": "1", "skipped": "1"}
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    failure = cases["broke"].find("failure")
    assert failure is not None and "Unable to locate package rocm-hip-runtime & <friends>" in (failure.get("message") or "")
    assert "--limit broke" in (failure.text or "")
    assert cases["ghost"].find("error") is not None and cases["old"].find("skipped") is not None
    assert "matmul fp16" in (cases["badgpu"].find("failure").text or "")  # type: ignore[union-attr]
    # a run that migrated a host whose verify cannot run passes; the run's output says the verify was skipped
    assert list(cases["root"]) and cases["root"].find("skipped") is None
    assert "verify skipped (real root: no GPU)" in (cases["root"].find("system-out").text or "")  # type: ignore[union-attr]
    assert cases["ok"].find("system-out").text == "steps done 10/10, reboot rebooted, verify pass"  # type: ignore[union-attr]
    verify = ET.fromstring(junit.render("verify", "v", [ROWS[5]], "t")).find("testsuite")
    assert verify is not None and verify.get("skipped") == "1"


def write_facts(fleet: Path, host: str, rocm: str) -> None:
    facts_path(fleet, host).parent.mkdir(parents=True, exist_ok=True)
    facts_path(fleet, host).write_text(dumps(Facts(os=OsInfo(id="debian", version="12"), rocm=Rocm(version=rocm))))


def test_history_keeps_each_run_and_names_the_hosts_whose_stack_changed(tmp_path: Path) -> None:
    fleet, results = tmp_path / "fleet", tmp_path / "results"
    write_facts(fleet, "ok", "6.2.0")
    write_facts(fleet, "broke", "6.2.0")
    history.add(results, "detect", [{"host": "ok", "status": "ok"}, {"host": "broke", "status": "ok"}],
                history.stacks(fleet, ["ok", "broke", "ghost"]))
    history.add(results, "run", ROWS[:3], history.stacks(fleet, ["ok", "broke", "ghost"]), plan="upgrade-6.4")
    write_facts(fleet, "ok", "6.4.4")  # the run migrated it; the next detect reads the new stack
    write_facts(fleet, "new", "6.4.4")
    history.add(results, "detect", [{"host": "ok", "status": "ok"}, {"host": "broke", "status": "ok"},
                                    {"host": "new", "status": "ok"}, {"host": "ghost", "status": "unreachable"}],
                history.stacks(fleet, ["ok", "broke", "new", "ghost"]))
    (results / "history" / "garbage.json").write_text("not json")
    past = history.entries(results)
    assert [e["kind"] for e in past] == ["detect", "run", "detect"]
    assert [(r["kind"], r["plan"], r["hosts"], r["passed"], r["failed"]) for r in history.runs(past)] == [
        ("detect", None, 2, 2, 0), ("run", "upgrade-6.4", 3, 1, 2), ("detect", None, 4, 3, 1)]
    by = {c["host"]: c for c in history.changes(past)}
    assert by["ok"]["state"] == "changed" and by["ok"]["differences"] == [
        {"field": "rocm", "before": "6.2.0", "now": "6.4.4"}]
    assert by["ok"]["since"] == past[1]["written"]
    assert by["broke"]["state"] == "same" and by["new"]["state"] == "new" and "ghost" not in by
