"""`fleet report` through the CLI in-process: the runs kept in the results directory and the hosts whose stack
changed since the entry before (table and --json); nothing recorded is one line, exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wizard import exit_codes
from wizard.cli import main
from wizard.fleet import history

pytestmark = pytest.mark.integration

STACK = {"os": "debian 12", "kernel": "6.1.0-28-amd64", "gpus": "2x gfx1100", "driver": "dkms 6.8.5", "rocm": "6.2.0",
         "torch": "2.5.1+rocm6.2", "torch_gfx": "gfx1100", "overrides": "none"}


def test_report_lists_runs_and_stack_changes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "kept"
    history.add(results, "detect", [{"host": "a", "status": "ok"}], {"a": STACK})
    history.add(results, "run", [{"host": "a", "plan": "upgrade-6.4", "steps_done": 9, "steps": 9, "reboot": "rebooted",
                                  "verify": {"status": "pass"}, "failed": None}], {"a": STACK}, plan="upgrade-6.4")
    history.add(results, "detect", [{"host": "a", "status": "ok"}],
                {"a": {**STACK, "rocm": "6.4.4", "torch": "2.7.1+rocm6.4"}})
    assert main(["fleet", "report", "--results", str(results), "--json"]) == exit_codes.OK
    doc = json.loads(capsys.readouterr().out)
    assert [(r["kind"], r["passed"]) for r in doc["runs"]] == [("detect", 1), ("run", 1), ("detect", 1)]
    (a,) = doc["changed"]
    assert a["state"] == "changed" and [d["field"] for d in a["differences"]] == ["rocm", "torch"]
    assert main(["fleet", "report", "--results", str(results)]) == exit_codes.OK
    out = capsys.readouterr().out
    assert "rocm: 6.2.0 -> 6.4.4" in out and "upgrade-6.4" in out


def test_report_without_history_is_one_line_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fleet", "report", "--fleet-dir", str(tmp_path)]) == exit_codes.FAILURE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no fleet runs recorded" in err[0]
