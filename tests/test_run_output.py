"""Issue 25, points 6 and 7: the console shows one line per action and one per step result (commands and
their output go to the step log, ``-v`` shows them), no tar warnings for paths a machine does not have, one
count of steps and commands everywhere, and every "what next" line names the machine the run is on
(``--sandbox DIR``), never a resume that nothing will start, never "interrupted" for a run another wizard
is running."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wizard.cli import main

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def rebooted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """downgrade-6.2 --yes in a sandbox, to its reboot: (sandbox, console output)."""
    import contextlib
    import io

    sb = tmp_path_factory.mktemp("dg") / "sb"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["--sandbox", str(sb), "--profile", "seed-7900xt", "--plan", "downgrade-6.2", "--yes"])
    assert code == 3, out.getvalue()[-3000:]  # reboot pending
    return sb, out.getvalue()


def test_downgrade_prints_at_most_80_lines_to_the_reboot(rebooted: tuple[Path, str]) -> None:
    sb, out = rebooted
    lines = out.splitlines()
    reboot = next(i for i, line in enumerate(lines) if line.startswith("REBOOT"))
    assert reboot + 1 <= 80, "\n".join(lines[: reboot + 1])
    assert "Cannot stat" not in out and "tar:" not in out
    assert "import fcntl" not in out and '"format"' not in out  # no lock-check script, no manifest
    # preflight, backup, purge, install, pin, env, reboot; Secure Boot and groups skipped, one line each
    assert sum(1 for line in lines if line.startswith("== step")) == 7
    assert sum(1 for line in lines if line.startswith("-- step") and "skipped" in line) == 2
    assert sum(1 for line in lines if line.startswith("   step ") and line.endswith("s)")) == 6  # step results


def test_the_step_logs_keep_the_commands(rebooted: tuple[Path, str]) -> None:
    sb, _ = rebooted
    logs = sorted((sb / "var/log/rocm-wizard").glob("*/01-preflight.log"))
    assert logs and "import fcntl" in logs[0].read_text()


def test_what_next_names_the_sandbox_and_no_boot_time_resume(rebooted: tuple[Path, str],
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    sb, out = rebooted
    reboot = next(line for line in out.splitlines() if line.startswith("REBOOT"))
    assert f"rocm-wizard --sandbox {sb} resume" in reboot and "by itself" not in out
    capsys.readouterr()
    assert main(["status", "--json", "--sandbox", str(sb)]) == 0
    status = json.loads(capsys.readouterr().out)
    assert f"--sandbox {sb} resume" in status["next"]


def test_verbose_shows_each_command_and_its_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sb = str(tmp_path / "sb")
    capsys.readouterr()
    assert main(["--sandbox", sb, "--profile", "seed-7900xt", "--plan", "pip-only", "--yes", "-v"]) == 0
    out = capsys.readouterr().out
    assert "$ " in out and "import os" in out  # the scripts, as they run
    assert main(["--sandbox", sb, "rollback", "--yes"]) == 0
    quiet = capsys.readouterr().out
    assert "$ " not in quiet


def test_a_run_another_wizard_holds_is_running_not_interrupted(rebooted: tuple[Path, str], tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    sb = tmp_path / "sb"
    shutil.copytree(rebooted[0], sb, symlinks=True)
    journal = next((sb / "var/lib/rocm-wizard/runs").glob("*/journal.jsonl"))
    records = journal.read_text().splitlines()
    journal.write_text("\n".join(r for r in records if '"run-end"' not in r and '"reboot-pending"' not in r) + "\n")
    capsys.readouterr()
    main(["status", "--json", "--sandbox", str(sb)])
    assert json.loads(capsys.readouterr().out)["state"] == "interrupted"
    lock = sb / "var/lib/rocm-wizard/lock"
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time\n"
                               "fd = open(sys.argv[1], 'a'); fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True)\n"
                               "time.sleep(60)", str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        main(["status", "--json", "--sandbox", str(sb)])
        status = json.loads(capsys.readouterr().out)
        assert status["state"] == "running" and "another rocm-wizard" in status["next"]
        assert main(["--sandbox", str(sb), "--plan", "pip-only", "--yes"]) == 4  # exit_codes.LOCKED, as resume's
        assert "is running in another rocm-wizard" in capsys.readouterr().err
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.1)
    main(["status", "--json", "--sandbox", str(sb)])
    assert json.loads(capsys.readouterr().out)["state"] == "interrupted"


def test_one_count_of_steps_and_commands(capsys: pytest.CaptureFixture[str]) -> None:
    from wizard.host import open_recorded
    from wizard.planner import resolve_plan
    from wizard.probes import detect
    from wizard.tui.screens.plans import confirm_text, review_head

    plan = resolve_plan("downgrade-6.2", detect(open_recorded("seed-7900xt")), state_dir="/var/lib/rocm-wizard")
    commands = sum(len(s.actions) for s in plan.steps)
    assert plan.size.startswith(f"{len(plan.steps)} steps") and f", {commands} commands" in plan.size
    assert "skipped" in plan.size  # Secure Boot and groups have nothing to do on this machine
    assert plan.size in confirm_text(plan, "m", False).plain
    assert plan.size in review_head(plan, False).plain


def test_a_failed_preflight_names_its_check_and_how_to_skip_it(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    sb = tmp_path / "sb"
    assert main(["detect", "--sandbox", str(sb), "--profile", "seed-7900xt"]) == 0
    (sb / ".sandbox/fail").mkdir()
    (sb / ".sandbox/fail/wget").write_text("\nwget: unable to resolve host address 'repo.radeon.com'\n")
    capsys.readouterr()
    assert main(["--sandbox", str(sb), "--plan", "downgrade-6.2", "--yes"]) == 1
    out = capsys.readouterr().out
    headline = next(line for line in out.splitlines() if line.startswith("FAILED"))
    assert headline.startswith("FAILED preflight check package-url (the amdgpu-install package for this distro "
                               "exists)"), headline
    assert f"`rocm-wizard --sandbox {sb} resume --skip-preflight package-url`" in out


@pytest.mark.parametrize("command", ["detect", "diagnose"])
def test_an_empty_paste_is_one_line_exit_2(tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n")
    capsys.readouterr()
    assert main([command, "--paste", str(empty)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "empty" in err[0]


def test_a_sandbox_venv_under_tilde_is_the_sandbox_users(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["--sandbox", str(tmp_path / "sb"), "--profile", "seed-7900xt", "--plan", "pip-only", "--dry-run",
                 "--venv", "~/x"]) == 0
    script = capsys.readouterr().out
    assert "python3 -m venv /home/user/x" in script
    import os

    assert os.path.expanduser("~") == "/home/user" or os.path.expanduser("~/x") not in script
