"""`fleet detect --reference HOST|FACTS.json` through the CLI in-process (the hosts' detection replaced by
facts the sandbox profiles answer): the drift table, its JSON and the exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wizard import exit_codes
from wizard.cli import main
from wizard.fleet.detect import HostFacts
from wizard.fleet.facts_io import loads

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def profiles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("profiles")
    out = {}
    for p in ("seed-7900xt", "seed-5600xt"):
        res = subprocess.run([sys.executable, "-m", "wizard", "--sandbox", str(base / p), "--profile", p, "fleet",
                              "facts"], capture_output=True, text=True, timeout=120, cwd=base)
        assert res.returncode == 0, res.stderr
        out[p] = res.stdout
    return out


@pytest.fixture
def fleet(monkeypatch: pytest.MonkeyPatch, profiles: dict[str, str], tmp_path: Path) -> Path:
    hosts = [HostFacts("a", "ok", loads(profiles["seed-7900xt"])), HostFacts("b", "ok", loads(profiles["seed-7900xt"])),
             HostFacts("c", "ok", loads(profiles["seed-5600xt"]))]
    monkeypatch.setattr("wizard.fleet.detect.detect", lambda inventory, fleet_dir, **kw: hosts)
    return tmp_path


def test_drift_json_and_exit_1_when_a_host_drifts(fleet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["fleet", "detect", "-i", "inv.ini", "--fleet-dir", str(fleet), "--reference", "a", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == exit_codes.FAILURE
    assert doc["drift"]["reference"]["source"] == "a" and doc["drift"]["reference"]["stack"]["gpus"] == "2x gfx1100"
    by = {h["host"]: h for h in doc["drift"]["hosts"]}
    assert by["b"]["status"] == "same" and by["c"]["status"] == "drift"
    assert {d["field"]: (d["reference"], d["host"]) for d in by["c"]["differences"]} == {
        "os": ("ubuntu 22.04", "ubuntu 24.04"), "gpus": ("2x gfx1100", "1x gfx1010"), "rocm": ("6.2.0", "6.2.4"),
        "overrides": ("none", "HSA_OVERRIDE_GFX_VERSION=10.3.0")}
    assert [h["host"] for h in doc["hosts"]] == ["a", "b", "c"]  # the detect table stays


def test_no_drift_against_a_facts_file_is_exit_0(monkeypatch: pytest.MonkeyPatch, profiles: dict[str, str],
                                               tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ref = tmp_path / ("a-long-folder-name-" * 8) / "known-good.json"  # the title stays whole past the table's width
    ref.parent.mkdir()
    ref.write_text(profiles["seed-7900xt"])
    hosts = [HostFacts("a", "ok", loads(profiles["seed-7900xt"])), HostFacts("b", "ok", loads(profiles["seed-7900xt"]))]
    monkeypatch.setattr("wizard.fleet.detect.detect", lambda inventory, fleet_dir, **kw: hosts)
    rc = main(["fleet", "detect", "-i", "inv.ini", "--fleet-dir", str(tmp_path), "--reference", str(ref)])
    out = capsys.readouterr().out
    assert rc == exit_codes.OK and f"drift against {ref}" in out and "│ drift" not in out
    assert out.count("│ same") == 2


def test_reference_errors_are_one_line_exit_2(fleet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = fleet / "bad.json"
    bad.write_text("{}")
    for spec in (str(bad), "nosuchhost"):
        rc = main(["fleet", "detect", "-i", "inv.ini", "--fleet-dir", str(fleet), "--reference", spec])
        err = capsys.readouterr().err
        assert rc == exit_codes.USAGE and len(err.strip().splitlines()) == 1 and "--reference" in err
