"""Issue 25, point 1: ``report --bundle`` reproduces the machine. For every built-in sandbox profile the
bundle made from the sandbox gives ``detect --from`` and ``diagnose --from`` the facts and findings the
sandbox itself gives (Python environments included, without ``--python``), and it carries the last run's
plan, journal and step logs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wizard.cli import main
from wizard.profiles import PROFILES

pytestmark = pytest.mark.integration


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def facts_of(d: dict[str, Any]) -> dict[str, Any]:
    """What a bundle can carry: everything but this process's own view (free disk, access checks, docker on
    PATH, uid, ssh, the runtime's guess under an override) and where each fact was read."""
    drv = d["driver"]
    return {
        "os": {k: d["os"][k] for k in ("id", "version", "codename", "package_manager", "secure_boot")},
        "gpus": [{k: v for k, v in g.items() if k not in ("sources", "gfx_reported")} for g in d["gpus"]],
        "driver": {k: drv[k] for k in ("kind", "version", "dkms_packages", "user", "groups", "in_render_group",
                                       "in_video_group")},
        "rocm": {k: v for k, v in d["rocm"].items() if k != "sources"},
        "python_envs": [{k: v for k, v in e.items() if k != "sources"} for e in d["python_envs"]],
        "env": {k: v for k, v in d["env"].items()} if isinstance(d["env"], dict) else d["env"],
    }


def findings_of(d: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["id"], f["severity"]) for f in d["findings"]]


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_bundle_gives_the_sandbox_facts_and_findings(profile: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    sandbox, bundle = str(tmp_path / "sb"), str(tmp_path / "bundle.tar.gz")
    assert main(["report", "--sandbox", sandbox, "--profile", profile, "--bundle", bundle]) == 0
    live = cli_json(capsys, "detect", "--json", "--sandbox", sandbox)
    recorded = cli_json(capsys, "detect", "--json", "--from", bundle)
    assert facts_of(recorded) == facts_of(live)
    if any(e.get("torch") for e in live["python_envs"]):
        assert any(e.get("torch") and e.get("gfx_targets") for e in recorded["python_envs"])
    live_d = cli_json(capsys, "diagnose", "--json", "--sandbox", sandbox)
    recorded_d = cli_json(capsys, "diagnose", "--json", "--from", bundle)
    assert findings_of(recorded_d) == findings_of(live_d)


def test_bundle_lists_each_env_with_its_pip_freeze_and_the_last_run(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    sandbox, bundle = str(tmp_path / "sb"), tmp_path / "b"
    assert main(["--sandbox", sandbox, "--profile", "seed-7900xt", "--plan", "pip-only", "--yes"]) in (0, 1)
    assert main(["report", "--sandbox", sandbox, "--bundle", str(bundle)]) == 0
    listed = [json.loads(line) for line in (bundle / "python/envs.jsonl").read_text().splitlines()]
    paths = [e["path"] for e in listed]
    assert "/home/user/pytorch_venv" in paths and "/home/user/pytorch_venv-pip-only" in paths
    freeze = (bundle / "python" / str(paths.index("/home/user/pytorch_venv")) / "pip-freeze.txt").read_text()
    assert "torch==2.5.1+rocm6.2" in freeze
    assert (bundle / "root/home/user/pytorch_venv/pyvenv.cfg").is_file()
    journal = (bundle / "run/journal.jsonl").read_text()
    assert '"run-start"' in journal and json.loads((bundle / "run/plan.json").read_text())["plan"]["name"] == "pip-only"
    logs = sorted(p.name for p in (bundle / "run/logs").iterdir())
    assert logs and all(name.endswith(".log") for name in logs)
    # the run's files are evidence for a person, never read back as the machine's texts
    recorded = cli_json(capsys, "detect", "--json", "--from", str(bundle))
    assert not any(t["source"].startswith("run/") for t in recorded.get("texts", []))
