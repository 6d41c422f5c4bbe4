"""`fleet run`'s rows from the play's events: a step skipped as a whole (its include) because the progress says it
is done counts as done, the reboot done earlier says so, a host new to the inventory is named with what to do,
and each host's verify.json is written by the controller from the captured events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wizard.fleet import run as fleet_run_module
from wizard.fleet.ansible_run import Event, PlaybookResult
from wizard.fleet.export import BY_EVENTS

pytestmark = pytest.mark.unit

EARLIER = "'1' not in rocm_wizard_p_progress.stdout_lines"


def _events() -> tuple[Event, ...]:
    return (
        Event("h1", "ok", "Put the host into its plan group"),
        Event("h1", "skipped", "Step 1/4 preflight: Preflight", EARLIER),
        Event("h1", "skipped", "Step 2/4 backup: Back up", EARLIER.replace("1", "2")),
        Event("h1", "skipped", "Step 3/4 reboot: Reboot", EARLIER.replace("1", "3")),
        Event("h1", "ok", "Step 4/4 verify: run the suite", stdout=json.dumps({"checks": [{"name": "x", "status": "pass"}]})),
        Event("new1", "failed", "Stop a host no plan was resolved for", "new1 is new to the inventory: no plan was resolved"),
    )


def test_rows_count_skipped_steps_as_done_and_name_a_new_host(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    rec = fleet_run_module.RunRecord("p", tmp_path / "p.yml", ((("h1",), (1, 2, 3), 3),), (), ())
    monkeypatch.setattr(fleet_run_module, "prepare", lambda *a, **kw: rec)
    seen: dict[str, Any] = {}

    def run_playbook(book: Path, inventory: str, fleet_dir: Path, **kw: Any) -> PlaybookResult:
        seen.update(kw["extra_vars"])
        return PlaybookResult(2, _events())

    monkeypatch.setattr(fleet_run_module, "run_playbook", run_playbook)
    rows = {r["host"]: r for r in fleet_run_module.fleet_run("p", "inv", tmp_path)}
    assert seen[BY_EVENTS] is True and seen["rocm_wizard_hosts"] == "all"
    h1 = rows["h1"]
    assert (h1["steps_done"], h1["steps"], h1["reboot"], h1["failed"]) == (3, 3, "earlier", None)
    assert h1["verify"]["status"] == "pass"  # written by the controller from the captured stdout
    assert json.loads((tmp_path / "runs" / "p" / "results" / "h1" / "verify.json").read_text())["checks"]
    new = rows["new1"]
    assert new["state"] == "new" and "new to the inventory" in new["failed"]["message"] and "--replan" in new["next"]


def test_the_grouped_include_skipped_counts_each_of_its_steps_as_done(monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    """A finished host skips one include for all its unfinished-only steps (``Steps A-B``): each is done earlier,
    the reboot among them too; a step outside A..B is not."""
    rec = fleet_run_module.RunRecord("p", tmp_path / "p.yml", ((("h1",), (1, 2, 3, 5), 3),), (), ())
    monkeypatch.setattr(fleet_run_module, "prepare", lambda *a, **kw: rec)
    grouped = " or ".join(f"('{k}' not in rocm_wizard_p_progress.stdout_lines)" for k in (1, 2, 3))
    events = (Event("h1", "skipped", "Steps 1-3: those this host has not finished", grouped),
              Event("h1", "ok", "Step 4/5 verify: run the suite", stdout=json.dumps({"checks": []})))
    monkeypatch.setattr(fleet_run_module, "run_playbook", lambda *a, **kw: PlaybookResult(0, events))
    (h1,) = fleet_run_module.fleet_run("p", "inv", tmp_path)
    assert (h1["steps_done"], h1["steps"], h1["reboot"]) == (3, 4, "earlier")
