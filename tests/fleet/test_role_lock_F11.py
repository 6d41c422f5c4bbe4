"""The exported role takes the wizard's lock (F11): each task that changes the host runs its command under the flock
on the plan's ``STATE/lock`` (the role's ``<role>_lock``: the dry-run script's helper's checks, modes and holder
record, so the engine names the role as holder), and refuses under it, with the script's line, while another run
holds the lock or a run of the wizard is not finished; the progress read, the role's first task, takes it first.

The lock script is run here as the role runs it (``sh -c {{ ROLE_lock }} rocm-wizard-lock MODE COMMAND...``) on a
temporary state dir; one system test runs the role with real ansible-playbook on a sandbox host."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wizard.fleet.export import PlanGroup, export
from wizard.fleet.lock import AGAIN
from wizard.planner import resolve_plan
from wizard.runner.lock import Lock, held
from wizard.script import held_line, unfinished_line

ROLE = "rocm_wizard_pip_only"
HOLDER = f"Ansible role {ROLE} (plan pip-only)"


def facts() -> Any:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from test_plan_golden import machines

    return machines()["seed-7900xt"]


def yaml_load(path: Path) -> Any:
    yaml = pytest.importorskip("yaml")

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))
    return yaml.load(path.read_text(), Loader=Loader)


def exported(tmp_path: Path, plan: str = "pip-only", state: str | None = None) -> Path:
    rp = resolve_plan(plan, facts(), state_dir=state or str(tmp_path / "state"), wizard_python="python3")
    out = tmp_path / "export"
    export([PlanGroup(rp)], out)
    return out


def lock_script(tmp_path: Path) -> tuple[str, Path]:
    out = exported(tmp_path)
    return yaml_load(out / "roles" / ROLE / "vars" / "main.yml")[f"{ROLE}_lock"], tmp_path / "state"


def run(script: str, mode: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", "-c", script, "rocm-wizard-lock", mode, *argv], capture_output=True, text=True,
                          timeout=60)


def unfinished(state: Path, end: str | None) -> None:
    (state / "runs" / "r7").mkdir(parents=True)
    (state / "current").write_text("r7\n")
    lines = ['{"event": "run-start", "plan": "upgrade-6.4"}']
    if end:
        lines.append(json.dumps({"event": "run-end", "state": end}))
    (state / "runs" / "r7" / "journal.jsonl").write_text("\n".join(lines) + "\n")


PROBE = ("import sys\nfrom wizard.runner.lock import LockHeld, held\nh = held(sys.argv[1])\n"
         "print(LockHeld(h, sys.argv[1]) if h else 'free')")


@pytest.mark.integration
def test_each_changing_command_runs_under_the_lock_and_the_progress_read_takes_it_first(tmp_path: Path) -> None:
    for plan, state in (("pip-only", None), ("downgrade-6.2", "/var/lib/rocm-wizard")):
        out = exported(tmp_path / plan, plan, state)
        (role,) = (out / "roles").iterdir()
        lock = ["sh", "-c", "{{ %s_lock }}" % role.name, "rocm-wizard-lock"]
        main = yaml_load(role / "tasks" / "main.yml")
        assert main[0]["ansible.builtin.command"]["argv"][:5] == [*lock, "read"], main[0]["name"]
        changing = checks = 0
        for f in sorted((role / "tasks").glob("step-*.yml")):
            for t in yaml_load(f) or []:
                argv = (t.get("ansible.builtin.command") or {}).get("argv")
                if not argv:
                    continue
                is_locked = argv[:5] == [*lock, "change"]
                if not t["name"].endswith(": done") and (": already done? " in t["name"] or "preflight" in t["name"]
                                                         or "verify" in t["name"].split(":")[0]):
                    checks += 1
                    assert not is_locked, t["name"]  # read-only: a check, the preflight, the verify suite
                elif t.get("become") is True or t["name"].endswith(": done") or state is None:
                    changing += 1
                    assert is_locked, t["name"]
        assert changing >= 4 and checks >= 2, (plan, changing, checks)


@pytest.mark.integration
def test_the_engine_names_the_role_as_the_holder_while_its_command_runs(tmp_path: Path) -> None:
    script, state = lock_script(tmp_path)
    res = run(script, "change", sys.executable, "-c", PROBE, str(state / "lock"))
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("another rocm-wizard run holds the lock (pid "), res.stdout
    assert res.stdout.rstrip().endswith(f": {HOLDER}); lock file: {state / 'lock'}"), res.stdout
    assert oct(state.stat().st_mode & 0o777) == "0o700" and oct((state / "lock").stat().st_mode & 0o777) == "0o600"
    assert held(state / "lock") is None and (state / "lock").read_text() == ""  # let go at the command's end


@pytest.mark.integration
def test_a_held_lock_fails_the_task_with_the_scripts_line_naming_the_holder(tmp_path: Path) -> None:
    script, state = lock_script(tmp_path)
    marker = tmp_path / "ran"
    with Lock(state / "lock", "rocm-wizard --plan upgrade-6.4 --yes") as lk:
        res = run(script, "change", "touch", str(marker))
        holder = f"pid {os.getpid()}, started {json.loads((state / 'lock').read_text())['start_time']}: " \
                 "rocm-wizard --plan upgrade-6.4 --yes"
        assert lk.stale is None
    assert res.returncode == 4 and not marker.exists()
    assert res.stderr == held_line(holder, str(state / "lock"), AGAIN) + "\n"
    assert "run the play again" in res.stderr


@pytest.mark.integration
@pytest.mark.parametrize("end", [None, "failed", "reboot-pending"])
def test_an_unfinished_wizard_run_is_refused_before_the_command(tmp_path: Path, end: str | None) -> None:
    script, state = lock_script(tmp_path)
    unfinished(state, end)
    marker = tmp_path / "ran"
    for mode in ("read", "change"):
        res = run(script, mode, "touch", str(marker))
        assert res.returncode == 1 and not marker.exists()
        assert res.stderr == unfinished_line("r7", AGAIN) + "\n"
        assert held(state / "lock") is None and (state / "lock").read_text() == ""


@pytest.mark.integration
@pytest.mark.parametrize("end", ["done", "rolled-back", "abandoned"])
def test_near_miss_a_play_after_a_finished_wizard_run_is_not_refused(tmp_path: Path, end: str) -> None:
    script, state = lock_script(tmp_path)
    unfinished(state, end)
    res = run(script, "change", "echo", "ran")
    assert (res.returncode, res.stdout, res.stderr) == (0, "ran\n", "")


@pytest.mark.integration
def test_near_miss_two_in_a_row_both_finish_and_a_daemon_left_behind_holds_nothing(tmp_path: Path) -> None:
    script, state = lock_script(tmp_path)
    assert run(script, "change", "echo", "one").stdout == "one\n"
    assert run(script, "change", "sh", "-c", "exit 3").returncode == 3  # the command's own status
    daemon = run(script, "change", "sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!")
    try:
        assert daemon.returncode == 0 and held(state / "lock") is None  # it inherited the lock: let go for all copies
        assert run(script, "change", "echo", "two").stdout == "two\n"
    finally:
        subprocess.run(["kill", daemon.stdout.strip()], check=False)


@pytest.mark.integration
def test_near_miss_no_wizard_state_dir_a_read_makes_none_a_change_makes_it(tmp_path: Path) -> None:
    script, state = lock_script(tmp_path)
    res = run(script, "read", "echo", "read")
    assert (res.returncode, res.stdout) == (0, "read\n") and not state.exists()  # --check changes nothing
    res = run(script, "change", "echo", "changed")
    assert (res.returncode, res.stdout) == (0, "changed\n") and (state / "lock").is_file()


# ------------------------------------------------------------------ the role through ansible-playbook on a sandbox

STATE = "home/user/.local/state/rocm-wizard"  # pip-only changes nothing system-wide: the user's state dir
VENV = "home/user/pytorch_venv-pip-only"


@pytest.mark.system
@pytest.mark.fleet
@pytest.mark.timeout(1800)
def test_a_play_refuses_while_the_wizard_holds_the_lock_or_a_run_is_unfinished_then_runs(tmp_path: Path) -> None:
    from wizard.fleet import FleetError, ansible_program
    from wizard.fleet.ansible_run import environment

    if os.geteuid() != 0:
        pytest.skip("the sandbox connection needs root (unshare --mount)")
    try:
        ansible_program()
    except FleetError:
        pytest.skip("ansible-playbook is not installed")
    root = tmp_path / "seed"
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    res = subprocess.run([sys.executable, "-m", "wizard", "--sandbox", str(root), "--profile", "seed-7900xt", "--plan",
                          "pip-only", "--export", "ansible", str(tmp_path / "export")], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=900)
    assert res.returncode == 0, res.stderr
    inv = tmp_path / "seed.ini"
    inv.write_text(f"seed ansible_connection=rocm_wizard_sandbox rocm_wizard_sandbox_root={root} "
                   f"ansible_python_interpreter={sys.executable}\n")

    def play() -> subprocess.CompletedProcess[str]:
        return subprocess.run([ansible_program(), "-i", str(inv), "-e", "rocm_wizard_hosts=all", "--skip-tags", "verify",
                               str(tmp_path / "export" / "pip-only.yml")], capture_output=True, text=True,
                              env={**environment(tmp_path / "fleet"), "ANSIBLE_STDOUT_CALLBACK": "default",
                                   "HOME": str(tmp_path / "home"), "ANSIBLE_REMOTE_TEMP": str(tmp_path / "ansible-tmp")},
                              timeout=1500, stdin=subprocess.DEVNULL)

    state = root / STATE
    with Lock(state / "lock", "rocm-wizard --plan upgrade-6.4 --yes"):
        first = play()
    assert first.returncode != 0 and "another rocm-wizard run holds the lock (pid " in first.stdout, first.stdout[-3000:]
    assert "rocm-wizard --plan upgrade-6.4 --yes); lock file: " in first.stdout  # the path as the sandbox maps it:
    assert "/home/user/.local/state/rocm-wizard/lock: wait for it to end, then run the play again" in first.stdout
    assert not (root / VENV).exists() and not (state / "backup").exists()
    unfinished(state, "failed")
    second = play()
    assert second.returncode != 0 and "run r7 of the wizard is not finished" in second.stdout, second.stdout[-3000:]
    assert not (root / VENV).exists() and not (state / "backup").exists()
    unfinished_done = state / "runs" / "r7" / "journal.jsonl"
    unfinished_done.write_text(unfinished_done.read_text() + json.dumps({"event": "run-end", "state": "done"}) + "\n")
    third, fourth = play(), play()  # after a finished run: runs; a second play in a row finishes too
    assert third.returncode == 0 and (root / VENV / "bin" / "activate").is_file(), third.stdout[-3000:]
    assert fourth.returncode == 0 and "changed: [seed]" not in fourth.stdout, fourth.stdout[-3000:]
    assert held(state / "lock") is None
