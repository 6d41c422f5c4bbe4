"""Issue 25, point 2: a plan that changes nothing system-wide (pip-only) needs no root. Its backup and its
script's progress live in the user's state dir ($XDG_STATE_HOME/rocm-wizard, default
~/.local/state/rocm-wizard), its dry-run script has no sudo, its preflight does not ask for root, and a user
whose sudo wants a password runs ``--plan pip-only --yes`` to the end without it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wizard import paths
from wizard.cli import main
from wizard.sandbox import machine as sandbox_machine

pytestmark = pytest.mark.integration

USER_STATE = "/home/user/.local/state/rocm-wizard"


def dry_run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    assert main([*args, "--dry-run"]) == 0
    return capsys.readouterr().out


def test_the_pip_only_script_has_no_sudo_and_keeps_its_state_in_the_users_dir(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = dry_run(capsys, "--sandbox", str(tmp_path / "sb"), "--profile", "seed-7900xt", "--plan", "pip-only")
    assert "sudo" not in script
    assert f"progress={USER_STATE}/script/pip-only.progress" in script
    assert f"{USER_STATE}/backup/pip-only" in script and "/var/lib/rocm-wizard" not in script
    assert "root is available" not in script  # preflight does not check for root


def test_a_plan_that_changes_the_system_keeps_roots_state_dir(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    script = dry_run(capsys, "--sandbox", str(tmp_path / "sb"), "--profile", "seed-7900xt", "--plan", "downgrade-6.2")
    assert "sudo -- " in script and "progress=/var/lib/rocm-wizard/script/downgrade-6.2.progress" in script
    assert f"{USER_STATE}/backup" not in script and f"{USER_STATE}/script" not in script
    # its pip step changes the user's venv: the script takes the user's lock too, as the engine does (J12)
    assert f"locks=(/var/lib/rocm-wizard/lock {USER_STATE}/lock)" in script


def test_a_recording_plans_into_its_users_state_dir(capsys: pytest.CaptureFixture[str]) -> None:
    script = dry_run(capsys, "--from", "seed-7900xt", "--plan", "pip-only")
    assert "sudo" not in script and f"{USER_STATE}/backup/pip-only" in script


def test_a_named_state_dir_holds_everything(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state"
    script = dry_run(capsys, "--from", "seed-7900xt", "--plan", "pip-only", "--state-dir", str(state))
    assert f"progress={state}/script/pip-only.progress" in script
    assert f"locks=({state}/lock)" in script  # its lock alone, as the engine's run with --state-dir takes (J12)


def test_user_state_dir_follows_xdg() -> None:
    assert paths.user_state_dir("/home/a") == "/home/a/.local/state/rocm-wizard"
    assert paths.user_state_dir("/home/a", {"XDG_STATE_HOME": "/srv/a/state/"}) == "/srv/a/state/rocm-wizard"


def test_a_user_whose_sudo_wants_a_password_runs_pip_only_to_the_end(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    sb = tmp_path / "sb"
    assert main(["detect", "--sandbox", str(sb), "--profile", "seed-7900xt"]) == 0
    (sb / sandbox_machine.SANDBOX_DIR / "sudo-password").write_text("not-known-to-the-wizard\n")
    capsys.readouterr()
    assert main(["--sandbox", str(sb), "--plan", "pip-only", "--yes"]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    assert "[sudo]" not in out and "sudo:" not in out  # never asked for, never refused
    backup = sb / USER_STATE.lstrip("/") / "backup" / "pip-only"
    manifest = json.loads((backup / "manifest.json").read_text())
    assert manifest and (backup / "pip-freeze-1-home-user-pytorch-venv.txt").is_file()
    assert not (sb / "var/lib/rocm-wizard/backup").exists()
    calls = [json.loads(line) for line in (sb / sandbox_machine.SANDBOX_DIR / "calls.log").read_text().splitlines()]
    assert not [c for c in calls if c["tool"] == "sudo"]
    assert (sb / "home/user/pytorch_venv-pip-only/pyvenv.cfg").is_file()
