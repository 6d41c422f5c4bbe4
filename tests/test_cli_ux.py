"""Issue 15 as a user meets the CLI: the venv is theirs, verify is visible, output can be pasted, bad input
gets one clear line (exit code, no traceback, nothing created)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from wizard import exit_codes
from wizard.commands.console import ConsoleView
from wizard.verify.view import VerifyOutput, report_from_text
from wizard.runner import events as ev
from wizard.runner.records import RunState, StepOutcome

pytestmark = pytest.mark.integration


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wizard", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env=env)


def one_line_error(res: subprocess.CompletedProcess[str], code: int) -> str:
    assert res.returncode == code, (res.returncode, res.stdout[-2000:], res.stderr[-2000:])
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    return lines[0]


# ----------------------------------------------------------------------------- 1: the venv is the user's
def test_venv_flag_on_the_dry_run_and_on_plans(tmp_path: Path) -> None:
    res = run_cli("--from", "seed-7900xt", "--plan", "pip-only", "--dry-run", "--venv", "/home/user/venvs/rocm")
    assert res.returncode == 0, res.stderr
    assert "python3 -m venv /home/user/venvs/rocm" in res.stdout
    res = run_cli("--from", "seed-7900xt", "plans", "--json", "--venv", "/home/user/venvs/rocm")
    import json

    rows = {p["name"]: p for p in json.loads(res.stdout)["plans"]}
    assert rows["pip-only"]["target"]["venv"] == "/home/user/venvs/rocm"
    default = run_cli("--from", "seed-7900xt", "--plan", "pip-only", "--dry-run").stdout
    assert "python3 -m venv /home/user/pytorch_venv-pip-only" in default
    assert "/home/user/pytorch_venv stays as it is" in default


def test_a_recording_without_a_home_plans_into_the_documented_default() -> None:
    machines = Path(__file__).parent / "fixtures" / "machines"
    res = run_cli("--from", str(machines / "cdna-mi300x-x4"), "--plan", "pip-only", "--dry-run")
    assert res.returncode == 0, res.stderr  # was: exit 5, "the user's home is unknown: pass a venv path"
    assert "python3 -m venv ~/rocm-wizard-venv" in res.stdout and "'~" not in res.stdout
    assert subprocess.run(["bash", "-n"], input=res.stdout, text=True).returncode == 0


@pytest.mark.parametrize("make", ["file", "dir"])
def test_venv_that_is_not_a_venv_is_one_clear_line(tmp_path: Path, make: str) -> None:
    target = tmp_path / "thing"
    target.write_text("x") if make == "file" else target.mkdir()
    before = sorted(tmp_path.rglob("*"))
    res = run_cli("--from", "seed-7900xt", "--plan", "pip-only", "--dry-run", "--venv", "relative/path")
    assert "absolute path" in one_line_error(res, exit_codes.USAGE)
    # on this machine (a sandbox's paths are its own since --venv ~/x became the sandbox user's: not checked here)
    res = run_cli("--plan", "pip-only", "--dry-run", "--venv", str(target))
    assert "is not a Python venv" in one_line_error(res, exit_codes.USAGE)
    assert sorted(tmp_path.rglob("*")) == before


# ----------------------------------------------------------------------------- 3: verify is visible
def test_verify_json_streams_each_check_and_the_view_prints_lines_and_one_summary(torch_python: str) -> None:
    res = run_cli("verify", "--python", torch_python, "--device", "cpu", "--quick", "--json")
    streamed = [x for x in res.stderr.splitlines() if x.startswith('{"type": "check"')]
    assert len(streamed) >= 3  # one line per finished check, on stderr, while the suite runs
    doc = report_from_text(res.stdout)
    assert doc is not None and len(doc["checks"]) == len(streamed)  # stdout stays one JSON document
    view = VerifyOutput()
    shown = [x for x in (view.feed(line) for line in [*streamed, *res.stdout.splitlines()]) if x is not None]
    assert len(shown) == len(streamed) and all(x.lstrip().split()[0] in ("pass", "skip") for x in shown)
    end = view.finish()
    assert len(end) == 1 and end[0].startswith("verify: OK: ") and "checks)" in end[0]


def test_console_view_of_a_verify_step(capsys: pytest.CaptureFixture[str]) -> None:
    v = ConsoleView()
    doc = ['{', '  "checks": [{"name": "import", "device": "cpu", "status": "pass", "seconds": 1.0, "error": null,'
           ' "metrics": {}}],', '  "summary": {"pass": 1, "total": 1, "ok": true, "seconds": 1.5}', '}']
    for e in [ev.RunStarted("r1", "pip-only", 2, True, "/j", "/l"),
              ev.StepStarted(1, 2, "verify", "Verify", "/l/02-verify.log"),
              ev.OutputLines(1, 0, ('{"type": "check", "name": "import", "device": "cpu", "status": "pass", '
                                    '"seconds": 1.0, "error": null, "metrics": {}}', *doc)),
              ev.StepFinished(1, "verify", StepOutcome.OK, 2.0), ev.RunFinished(RunState.DONE, "r1")]:
        v(e)
    out = capsys.readouterr().out
    assert '"checks"' not in out and "{" not in out  # no JSON on the terminal
    assert out.count("verify: OK: 1 pass (1 checks) in 1.5 s") == 1
    assert "  pass     import" in out


def test_a_skipped_verify_is_never_a_plain_done(tmp_path: Path) -> None:
    sb = tmp_path / "sb"
    res = run_cli("--sandbox", str(sb), "--profile", "seed-7900xt", "--plan", "pip-only", "--yes",
                  "--state-dir", str(tmp_path / "state"))
    assert res.returncode == 0, res.stderr[-2000:]
    assert "SKIPPED, NOT VERIFIED" in res.stdout and "done, but NOT VERIFIED" in res.stdout
    status = run_cli("--sandbox", str(sb), "--state-dir", str(tmp_path / "state"), "status").stdout
    assert "4 done, 2 skipped" in status and "verify: skipped, NOT verified" in status
    assert len(status.splitlines()) == len(set(status.splitlines()))  # no line twice
    import json

    d = json.loads(run_cli("--sandbox", str(sb), "--state-dir", str(tmp_path / "state"), "status", "--json").stdout)
    assert d["verify"]["state"] == "skipped"


def test_resume_after_the_reboot_shows_the_reboot_step(tmp_path: Path) -> None:
    sb, state = tmp_path / "sb", str(tmp_path / "state")
    res = run_cli("--sandbox", str(sb), "--profile", "seed-7900xt", "--state-dir", state, "--plan", "downgrade-6.2",
                  "--yes")
    assert res.returncode == exit_codes.REBOOT_PENDING, res.stderr[-2000:]
    res = run_cli("--sandbox", str(sb), "--state-dir", state, "resume", "--yes")
    assert res.returncode == 0, res.stderr[-2000:]
    assert "== step 9/10: reboot: done, the machine has rebooted" in res.stdout
    steps = [x for x in res.stdout.splitlines() if x.startswith(("==", "--", "!!"))]
    assert [int(x.split()[2].split("/")[0].rstrip(":")) for x in steps] == list(range(1, 11))


def test_output_that_is_not_a_terminal_is_not_wrapped_mid_path() -> None:
    res = run_cli("detect", "--from", "seed-5600xt")
    assert res.returncode == 0
    assert "/home/user/.bashrc:3" in res.stdout and "AMD Radeon RX 5600 XT" in res.stdout
    assert "\x1b[" not in res.stdout  # no colour codes in a pasted output
    res = run_cli("diagnose", "--from", "seed-5600xt")
    assert "https://github.com/ROCm/TheRock/blob/89553ce3746eda74ade42557470d25e37c91b6f0/RELEASES.md" in res.stdout
    for panel in res.stdout.split("╰"):
        body = [x for x in panel.splitlines() if x.startswith("│   - ")]
        assert len(body) == len(set(body))  # an evidence line is said once per finding


# ----------------------------------------------------------------------------- 10: bad input, clear words
def test_unknown_plan_lists_the_plans_in_plain_words(tmp_path: Path) -> None:
    res = run_cli("--plan", "nope", "--dry-run", cwd=tmp_path)
    line = one_line_error(res, exit_codes.USAGE)
    assert "unknown plan 'nope'" in line and "pip-only" in line and "downgrade-6.2" in line and "key '" not in line
    assert list(tmp_path.iterdir()) == []


def test_verify_on_an_interpreter_without_torch(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "v")], check=True)
    before = sorted(tmp_path.rglob("*"))
    res = run_cli("verify", "--python", str(tmp_path / "v"), cwd=tmp_path)
    line = one_line_error(res, exit_codes.USAGE)
    assert "torch is not installed in" in line and "--python" in line
    assert sorted(tmp_path.rglob("*")) == before


def test_verify_image_with_the_daemon_down_shows_dockers_own_error(tmp_path: Path) -> None:
    import os
    import shutil

    if shutil.which("docker") is None:
        pytest.skip("no docker client on this machine")
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-daemon.sock"}
    res = run_cli("verify", "--image", "rocm/pytorch:latest", env=env, cwd=tmp_path)
    line = one_line_error(res, exit_codes.FAILURE)
    assert "docker cannot run containers" in line and "Cannot connect to the Docker daemon" in line
    assert list(tmp_path.iterdir()) == []


def test_a_cpu_torch_on_a_machine_with_an_amd_gpu_is_not_a_success(torch_python: str) -> None:
    from wizard.commands.verify import gpu_not_used
    from wizard.host import open_recorded
    from wizard.model import Facts
    from wizard.probes import detect

    res = run_cli("verify", "--python", torch_python, "--quick", "--json")
    doc = report_from_text(res.stdout)
    assert doc is not None and doc["summary"]["build"] == "cpu"
    assert res.returncode == 0  # this test machine has no AMD GPU: CPU-only is all it can be
    why = gpu_not_used(doc["summary"], detect(open_recorded("seed-7900xt")))
    assert why is not None and "CPU build" in why and "RX 7900 XT" in why
    assert gpu_not_used(doc["summary"], Facts()) is None
