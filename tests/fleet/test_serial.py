"""`fleet run --serial`: a number or a list of batches (`1,10%,100%`); without it a canary first
([1, "10%", "100%"]) and max_fail_percentage 0, given to the playbook as rocm_wizard_serial / rocm_wizard_max_fail."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from wizard.commands.fleet import serial_batches
from wizard.fleet import run as fleet_run_module
from wizard.fleet.ansible_run import PlaybookResult

pytestmark = pytest.mark.unit


def test_serial_is_a_number_or_a_list_of_batches() -> None:
    assert serial_batches("5") == 5
    assert serial_batches("1,10%,100%") == [1, "10%", "100%"]
    assert serial_batches(" 2 , 50% ") == [2, "50%"]
    assert serial_batches("25%") == ["25%"]
    for bad in ("0", "1,,2", "101%", "x", "-1", "1,0%", ""):
        with pytest.raises(argparse.ArgumentTypeError, match="not a batch size"):
            serial_batches(bad)


@pytest.mark.parametrize(("serial", "max_fail", "want"), [
    (None, None, ([1, "10%", "100%"], 0)),
    ([1, "50%"], 20, ([1, "50%"], 20)),
    (3, None, (3, 0)),
])
def test_run_gives_the_batches_and_the_failure_limit_to_the_playbook(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, serial: Any, max_fail: int | None, want: tuple[Any, int]) -> None:
    seen: dict[str, Any] = {}
    rec = fleet_run_module.RunRecord("p", tmp_path / "p.yml", (), (), ())
    monkeypatch.setattr(fleet_run_module, "prepare", lambda *a, **kw: rec)

    def run_playbook(book: Path, inventory: str, fleet_dir: Path, **kw: Any) -> PlaybookResult:
        seen.update(kw["extra_vars"])
        return PlaybookResult(0, ())

    monkeypatch.setattr(fleet_run_module, "run_playbook", run_playbook)
    fleet_run_module.fleet_run("p", "inv", tmp_path, serial=serial, max_fail=max_fail)
    assert (seen["rocm_wizard_serial"], seen["rocm_wizard_max_fail"]) == want
