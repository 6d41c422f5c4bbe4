"""Second security review, B2 and B3: root never starts a program a user can change, and the user a run
started for survives a reboot (``as_user`` actions never run as root because the boot-time resume is root)."""

from __future__ import annotations

import json
import os
import pwd
from pathlib import Path

import pytest
from runner_helpers import plan_of, wizard

from wizard.host import LiveHost
from wizard.model import Action, StepPlan
from wizard.runner import plan_checks
from wizard.runner.executor import LiveExecutor
from wizard.runner.privilege import Privilege

pytestmark = pytest.mark.integration

VENV_PY = "/home/user/pytorch_venv/bin/python"


def _root_plan(program: str, venv: str | None = None):
    params = (("venv", venv),) if venv else ()
    return plan_of(StepPlan("preflight", "checks"), StepPlan("groups", "a root action", params=params, actions=(
        Action((program, "-c", "pass"), "run a program as root", root=True),)))


# ------------------------------------------------------------------ B2: root runs only root's programs


def test_env_step_comments_out_a_system_override_with_the_system_python(tmp_path: Path) -> None:
    """The review's repro: an override in /etc/environment was commented out by ``sudo -- <venv>/bin/python``
    (a .pth planted in the venv ran as uid 0). Now the system ``python3 -I``, and the rehearsal still does it."""
    root = tmp_path / "sb"
    assert wizard(["--sandbox", str(root), "--profile", "seed-7900xt", "detect"]).returncode == 0
    with open(root / "etc/environment", "a") as fh:
        fh.write("HSA_OVERRIDE_GFX_VERSION=11.0.0\n")
    r = wizard(["--sandbox", str(root), "--plan", "pip-only", "--dry-run"])
    assert r.returncode == 0, r.stderr
    assert "sudo -- python3 -I -c" in r.stdout and "/etc/environment 2 HSA_OVERRIDE_GFX_VERSION" in r.stdout
    assert not any("sudo --" in line and "/bin/python" in line for line in r.stdout.splitlines())
    r = wizard(["--sandbox", str(root), "--plan", "pip-only", "--yes"])
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    assert "# rocm-wizard: HSA_OVERRIDE_GFX_VERSION=11.0.0" in (root / "etc/environment").read_text()
    cur = (root / "var/lib/rocm-wizard/current").read_text().strip()
    plan = json.loads((root / "var/lib/rocm-wizard/runs" / cur / "plan.json").read_text())["plan"]
    root_argvs = [argv for s in plan["steps"] for a in s["actions"] if a["root"]
                  for argv in (a["argv"], a["check"], a["undo"]) if argv]
    assert root_argvs and not any(argv[0].startswith("/home/") for argv in root_argvs)


@pytest.mark.parametrize("program, venv", [
    (VENV_PY, None),  # in a home
    ("/opt/envs/torch/bin/python", "/opt/envs/torch"),  # in a venv the plan touches
    ("/tmp/x/python3", None), ("/var/tmp/x", None), ("/dev/shm/x", None),
    ("./python3", None), ("/usr/../home/user/x", None), ("/root/.local/bin/tool", None),
])
def test_a_root_action_running_a_program_a_user_can_change_is_refused(program: str, venv: str | None) -> None:
    reasons = plan_checks.structure(_root_plan(program, venv))
    assert len(reasons) == 1 and "a program a user can change" in reasons[0] and program in reasons[0], reasons


def test_root_actions_of_system_programs_pass() -> None:
    for program in ("python3", "/usr/bin/python3", "/usr/sbin/dkms", "apt-get"):
        assert plan_checks.structure(_root_plan(program)) == []


def test_every_shipped_plan_on_every_golden_machine_passes_the_rule() -> None:
    """No plan the wizard resolves itself has a root action with a user-changeable program."""
    from test_plan_golden import machines
    from wizard.plan_file import builtin_plan_names
    from wizard.planner import PlanRefused, resolve_plan

    checked = 0
    for facts in machines().values():
        for name in builtin_plan_names():
            try:
                plan = resolve_plan(name, facts, state_dir="/var/lib/rocm-wizard", wizard_python="python3")
            except PlanRefused:
                continue
            assert plan_checks.user_programs(plan) == [], (name, plan_checks.user_programs(plan))
            checked += 1
    assert checked > 20


@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")
def test_on_the_live_machine_a_program_not_roots_alone_is_refused(tmp_path: Path) -> None:
    """A root action's program (or a directory above it) owned by a user, or writable by others, is refused
    before the run (the path rule cannot see /opt/venv chowned to a user)."""
    d = tmp_path / "opt" / "bin"
    d.mkdir(parents=True)
    prog = d / "tool"
    prog.write_text("#!/bin/sh\n")
    prog.chmod(0o755)
    host = LiveHost()
    assert plan_checks.live_user_programs(host, _root_plan(str(prog))) == []
    nobody = pwd.getpwnam("nobody").pw_uid
    os.chown(prog, nobody, -1)
    (reason,) = plan_checks.live_user_programs(host, _root_plan(str(prog)))
    assert f"owned by uid {nobody}" in reason
    os.chown(prog, 0, -1)
    d.chmod(0o777)
    (reason,) = plan_checks.live_user_programs(host, _root_plan(str(prog)))
    assert "writable by group or others" in reason and str(d) in reason


# ------------------------------------------------------------------ B3: the run's user survives the reboot


def _live_service(tmp_path: Path):
    from wizard import machines

    return machines.service(machines.live(LiveHost(), state_dir=str(tmp_path / "state")))


def _journal(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    return state / "runs" / (state / "current").read_text().strip() / "journal.jsonl"


@pytest.mark.skipif(os.geteuid() != 0, reason="the attack is a run as root")
def test_a_resumed_run_as_root_never_runs_as_user_actions_as_root(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The review's repro: a run as root stops (a reboot, here a failure), the boot-time resume runs as root
    with no SUDO_USER. A journal that names no user (as every run-start before this fix) makes the ``as_user``
    action refused, not run as root; the journal of a new run names its user."""
    monkeypatch.delenv("SUDO_USER", raising=False)
    flag, marker = tmp_path / "flag", tmp_path / "marker"
    plan = plan_of(
        StepPlan("preflight", "checks"),
        StepPlan("groups", "wait for the flag", actions=(
            Action(("test", "-e", str(flag)), "the flag is there", root=True),)),
        StepPlan("verify", "the user's part", actions=(
            Action(("sh", "-c", f'id -u > "{marker}"'), "as the user", as_user=True),)))
    service = _live_service(tmp_path)
    assert service.start(plan, yes=True).state.value == "failed"
    records = [json.loads(line) for line in _journal(tmp_path).read_text().splitlines()]
    assert records[0]["event"] == "run-start" and records[0]["user"] == "root"  # no venv, no SUDO_USER: root's run
    records[0].pop("user")  # a journal that names no user
    _journal(tmp_path).write_text("".join(json.dumps(r) + "\n" for r in records))
    flag.touch()
    out = _live_service(tmp_path).resume(yes=True)
    assert out.state.value == "failed" and not marker.exists()
    logs = "".join(p.read_text() for p in (tmp_path / "state").rglob("*.log"))
    assert "the run's journal names no user" in logs


@pytest.mark.skipif(os.geteuid() != 0, reason="the executor's user questions are root's")
def test_the_run_user_is_sudo_user_else_the_venv_owner(tmp_path: Path) -> None:
    nobody = pwd.getpwnam("nobody")
    home = tmp_path / "home" / "nobody"
    home.mkdir(parents=True)
    os.chown(home, nobody.pw_uid, nobody.pw_gid)
    plan = plan_of(StepPlan("pip_pin", "venv", params=(("venv", str(home / "new-venv")),)))
    ex = LiveExecutor({}, Privilege(is_root=True))
    assert ex.user_for(plan) == "nobody"  # a new venv: the owner of the directory it goes in
    assert LiveExecutor({}, Privilege(is_root=True, sudo_user="alice")).user_for(plan) == "alice"
    assert ex.user_for(plan_of(StepPlan("groups", "no venv"))) == "root"
    ex.adopt_user("nobody")
    argv = ex.privilege.wrap(Action(("id", "-u"), "x", as_user=True))
    assert argv[:6] == ["sudo", "-n", "-u", "nobody", "-H", "--"]
    assert ex.privilege.wrap(Action(("id", "-u"), "x", root=True)) == ["id", "-u"]
