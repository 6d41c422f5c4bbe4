"""What the README states, checked against the code it describes (helper R8's pass over the README): each test
fails when the README's statement and the code part again, and a near-miss test checks the README names nothing
the code does not have."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from wizard import exit_codes
from wizard.kb import load_kb
from wizard.runner.records import RunState

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
FLAT = " ".join(README.split())  # the README with its hard wraps undone


def _sentence(start: str, end: str) -> str:
    i = FLAT.index(start)
    return FLAT[i:FLAT.index(end, i)]


# --------------------------------------------------------------------------- run states (State and logs)

def _documented_states() -> set[str]:
    text = re.sub(r"\([^)]*\)", "", _sentence("A run's state is one of", "blocks a new plan"))  # asides name commands
    return set(re.findall(r"`([a-z-]+)`", text))


def test_every_run_state_status_can_show_is_in_the_readme() -> None:
    shown = {s.value for s in RunState if s is not RunState.NONE}  # NONE: there is no run, status says so
    assert shown - _documented_states() == set()


def test_the_readme_names_no_run_state_the_code_lacks() -> None:
    assert _documented_states() - {s.value for s in RunState} == set()


def test_the_states_said_not_to_block_are_those_that_do_not() -> None:
    text = _sentence("every state but", "blocks a new plan")
    free = set(re.findall(r"`([a-z-]+)`", text))
    assert free == {s.value for s in RunState if s is not RunState.NONE and not s.blocks_new_run}


# --------------------------------------------------------------------------- kernel_series (Knowledge base)

def test_the_releases_with_kernel_series_are_those_the_readme_counts() -> None:
    with_series = [r.version for r in load_kb().releases() if r.kernel_series]
    text = _sentence("Release notes' supported kernel series per distribution", "let the driver plan")
    m = re.search(r"10\.0\.0 and 10\.1\.0 from their tables, (\d+) releases from ([\d.]+) to ([\d.]+)", text)
    assert m is not None, text
    from packaging.version import Version

    older = sorted((v for v in with_series if Version(v) < Version("10.0.0")), key=Version)
    assert {"10.0.0", "10.1.0"} <= set(with_series)
    assert (int(m.group(1)), m.group(2), m.group(3)) == (len(older), older[0], older[-1])


def test_a_release_without_kernel_series_is_not_counted() -> None:
    """Near miss: a release of the range whose notes number no kernel (6.1.3) has none, so the count is not the
    range's length."""
    by_version = {r.version: r for r in load_kb().releases()}
    assert "6.1.3" in by_version and not by_version["6.1.3"].kernel_series


# --------------------------------------------------------------------------- ingest's derived tables (Commands)

def test_the_ingest_row_names_every_derived_table() -> None:
    row = next(line for line in README.splitlines() if line.startswith("| `python -m wizard.kb ingest"))
    derived = sorted(p.name for p in (REPO / "wizard" / "kb").glob("derived_*.json"))
    assert len(derived) >= 5
    assert [d for d in derived if f"`{d}`" not in row] == []


# --------------------------------------------------------------------------- the export's names (Fleets)

def test_the_export_role_name_is_the_one_the_readme_shows() -> None:
    from wizard.fleet.export import role_name

    class _Plan:  # role_name reads the plan's name alone
        name = "downgrade-6.2"

    name = role_name(_Plan())  # type: ignore[arg-type]
    assert name == "rocm_wizard_downgrade_6_2"
    row = next(line for line in README.splitlines() if line.startswith("| `rocm-wizard --plan NAME --export ansible"))
    assert f"`downgrade-6.2` gives `{name}`" in row
    assert "roles/rocm_wizard_downgrade-6.2" not in README  # near miss: the plan's own spelling is no role name


# --------------------------------------------------------------------------- fleet history (Fleets)

def _rows() -> list[dict[str, object]]:
    return [{"host": "h1", "plan": "pip-only", "state": "rolled-back", "failed": None, "cannot": [], "next": ""}]


def test_fleet_rollback_adds_a_history_entry_as_the_readme_says(tmp_path: Path) -> None:
    from wizard.fleet import history, report

    report.write(tmp_path / "results", "rollback", _rows(), fleet_dir=tmp_path / "fleet")
    kinds = [e["kind"] for e in history.entries(tmp_path / "results")]
    assert kinds == ["rollback"]
    assert "Every `fleet detect`, `run`, `verify` and `rollback` adds an entry to `RESULTS/history/`" in FLAT


def test_fleet_report_on_an_empty_history_names_every_command_that_adds_one(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from wizard.cli import main

    code = main(["--state-dir", str(tmp_path / "state"), "fleet", "report", "--fleet-dir", str(tmp_path / "fleet")])
    err = capsys.readouterr().err
    assert code == exit_codes.FAILURE
    assert "fleet detect, run, verify and rollback add them" in err


def test_fleet_report_lists_a_recorded_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Near miss: with an entry recorded, fleet report answers 0 and lists it, no 'nothing recorded' line."""
    from wizard.cli import main
    from wizard.fleet import report

    report.write(tmp_path / "fleet", "rollback", _rows(), fleet_dir=tmp_path / "fleet")
    code = main(["--state-dir", str(tmp_path / "state"), "fleet", "report", "--fleet-dir", str(tmp_path / "fleet"),
                 "--json"])
    out = capsys.readouterr()
    assert code == exit_codes.OK and "no fleet runs recorded" not in out.err
    assert [r.get("kind") for r in json.loads(out.out)["runs"]] == ["rollback"]


# --------------------------------------------------------------------------- how an environment was found

def _how_rows() -> set[str]:
    i = README.index("| how | where |")
    rows = README[i:README.index("\n\n", i)].splitlines()[2:]
    return {h for row in rows for h in re.findall(r"`([a-z-]+)`", row.split("|")[1])}


def test_every_found_by_value_is_in_the_readme_table() -> None:
    from wizard.model import FoundBy

    assert {f.value for f in FoundBy} - _how_rows() == set()


def test_the_found_table_names_no_how_the_code_lacks() -> None:
    from wizard.model import FoundBy

    assert _how_rows() - {f.value for f in FoundBy} == set()
