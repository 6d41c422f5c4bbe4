"""Dry-run scripts: bash -n and shellcheck on every golden script; the command's exit codes and
stderr lines; fuzzed command lines never produce a traceback."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_plan_golden import GOLDEN, STATE_DIR, machines
from wizard import exit_codes
from wizard.cli import main
from wizard.planner import resolve_plan
from wizard.script import command, render
from wizard.model import Action

pytestmark = pytest.mark.integration

SCRIPTS = sorted(GOLDEN.glob("*/*.sh"))
SHELLCHECK = shutil.which("shellcheck")


def test_there_are_golden_scripts() -> None:
    assert len(SCRIPTS) >= 40


def test_bash_parses_every_golden_script() -> None:
    for path in SCRIPTS:
        res = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
        assert res.returncode == 0, f"{path}: {res.stderr}"


@pytest.mark.skipif(SHELLCHECK is None, reason="shellcheck is not installed (CI installs it: apt-get install -y "
                    "shellcheck); bash -n still runs")
def test_shellcheck_has_no_findings_on_any_golden_script() -> None:
    res = subprocess.run([SHELLCHECK, "--severity=style", *map(str, SCRIPTS)], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout[-4000:]


def test_script_shape_and_root_actions_shown_with_sudo() -> None:
    facts = machines()["seed-7900xt"]
    rp = resolve_plan("downgrade-6.2", facts, state_dir=STATE_DIR, wizard_python="python3")
    text = render(rp, facts)
    lines = text.splitlines()
    assert lines[0] == "#!/usr/bin/env bash" and "set -euo pipefail" in lines
    assert "# ---- step 1/10: preflight:" in text and text.index("step 1/10") < text.index("step 2/10: backup")
    for s in rp.steps:
        for a in s.actions:
            assert command(a) in text
            if a.root:
                assert command(a).startswith("sudo -- ")
    assert "# machine: Ubuntu 22.04.5 LTS (jammy)" in text and "# target: " in text and "# why: " in text


def test_command_quotes_exactly() -> None:
    a = Action(argv=("echo", "a b", "$HOME", "it's"), root=True)
    assert command(a) == "sudo -- echo 'a b' '$HOME' 'it'\"'\"'s'"
    out = subprocess.run(["bash", "-c", command(Action(argv=("printf", "%s|", "a b", "$HOME", "it's")))],
                         capture_output=True, text=True).stdout
    assert out == "a b|$HOME|it's|"


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, timeout=120)


def test_dry_run_cli_prints_the_script() -> None:
    res = run_cli("--from", "seed-7900xt", "--state-dir", STATE_DIR, "--plan", "downgrade-6.2", "--dry-run")
    assert res.returncode == 0, res.stderr
    assert "amdgpu-install_6.2.60204-1_all.deb" in res.stdout and "torch==2.5.1" in res.stdout
    assert subprocess.run(["bash", "-n"], input=res.stdout, text=True).returncode == 0


def test_dry_run_refused_exit_5_one_reason_per_line() -> None:
    res = run_cli("--from", "seed-5600xt", "--plan", "upgrade-7.2", "--dry-run")
    assert res.returncode == exit_codes.REFUSED and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert lines and all(line.startswith("rocm-wizard: refused: ") for line in lines)
    assert "therock-pip" in res.stderr  # the way forward: gfx1010's device packages are on stable whl-next (audit T2)


def test_dry_run_unknown_plan_and_malformed_file_exit_2(tmp_path: Path) -> None:
    res = run_cli("--from", "seed-7900xt", "--plan", "no-such-plan", "--dry-run")
    assert res.returncode == exit_codes.USAGE and len(res.stderr.strip().splitlines()) == 1
    bad = tmp_path / "bad.toml"
    bad.write_text('title = "x"\nwhy = "y"\n[target]\nstream = "pip"\n[[steps]]\nkind = "purge"\n')
    res = run_cli("--from", "seed-7900xt", "--plan", str(bad), "--dry-run")
    assert res.returncode == exit_codes.USAGE
    line = res.stderr.strip()
    assert "\n" not in line and str(bad) in line and "steps[0].kind" in line and "backup" in line


def test_plans_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert main(["plans", "--json", "--from", "seed-7900xt"]) == exit_codes.OK
    doc = json.loads(capsys.readouterr().out)
    rows = doc["plans"]
    assert {r["name"] for r in rows} >= {"downgrade-6.2", "pip-only", "docker", "therock-pip"}
    for r in rows:
        assert set(r) == {"name", "title", "applicable", "reasons", "target", "recommended", "notes"}
        assert r["notes"] == []  # nothing is installed the way any plan would leave it
    assert sum(r["recommended"] for r in rows) == 1


def test_plans_table_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plans", "--from", "seed-5600xt"]) == exit_codes.OK
    assert "therock-pip" in capsys.readouterr().out


words = st.sampled_from(["--plan", "--dry-run", "--from", "seed-7900xt", "seed-5600xt", "plans", "--json",
                         "downgrade-6.2", "pip-only", "docker", "x.toml", "/nonexistent.toml", "--python", "",
                         "--yes-no", "-", "--plan=", "therock"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(argv=st.lists(st.one_of(words, st.text(max_size=8).filter(lambda s: not s.startswith("-"))), max_size=6))
def test_fuzzed_command_lines_never_traceback(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    if any(a.startswith("--plan") for a in argv):
        argv = [*argv, "--dry-run"]  # never the real runner here
    if not any(a.startswith("--plan") for a in argv) and "plans" not in argv:
        argv = ["plans", *argv]
    if "--from" not in argv:
        argv = [*argv, "--from", "seed-7900xt"]
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse --help
        rc = exc.code or 0
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    assert rc in (0, 2, 5)


def test_the_scripts_progress_is_made_under_umask_077(tmp_path: Path) -> None:
    """A user's umask 002 (Debian's and Ubuntu's default for user-private groups) left STATE/script 0775 and its
    progress 0664, which the engine's state check then refuses ("writable by group or others"): the script's own
    records are made as the wizard makes its state files. Its near miss: the step actions keep the caller's umask
    (nothing else of the script runs in the subshell)."""
    facts = machines()["seed-7900xt"]
    state = tmp_path / "state"  # a user's state dir: no sudo
    text = render(resolve_plan("pip-only", facts, state_dir=str(state), wizard_python="python3"), facts)
    fn = next(line for line in text.splitlines() if line.startswith("mark_done()"))
    assert "sudo" not in fn
    progress = state / "script" / "pip-only.progress"
    res = subprocess.run(["bash", "-c", f"umask 002; progress={progress}; {fn}; mark_done 2; umask"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    from wizard.runner.state import check_tree
    assert progress.read_text() == "2\n" and (progress.stat().st_mode & 0o777) == 0o600
    assert (progress.parent.stat().st_mode & 0o777) == 0o700
    check_tree(state)  # the engine trusts it
    assert res.stdout.strip() == "0002"  # the caller's umask is left as it was
