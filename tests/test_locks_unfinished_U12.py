"""A new plan is refused over a run that is not finished in any state dir the run locks, not only its journal's
(the dry-run script already checks each; the engine checked its journal's alone): a user's own run of a system plan
went on over root's unfinished downgrade in /var/lib/rocm-wizard (reboot pending, half purged), and root's run of a
system plan over the user's own pip-only run of that venv, failed half-way. Each case failed on the code before;
each has a near miss that must not fire."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runner_helpers import plan_of
from test_locks_J11 import _root_machine, _sudo, _system_plan, _user_machine

from wizard.model import Action, StepPlan
from wizard.record import replace
from wizard.runner.lock import held
from wizard.runner.service import RunBlocked, RunService

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("isolated_state")]


def _run_in(state: Path, end: str | None, plan: str = "downgrade-6.2", run: str = "20261201-010203-x-1") -> str:
    (state / "runs" / run).mkdir(parents=True, exist_ok=True)
    (state / "current").write_text(run + "\n")
    lines = [{"event": "run-start", "plan": plan}]
    if end:
        lines.append({"event": "run-end", "state": end})
    (state / "runs" / run / "journal.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return run


def test_a_users_system_plan_is_refused_over_roots_unfinished_run(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    log = _sudo(tmp_path, monkeypatch)
    m, own, system = _user_machine(tmp_path)
    system.mkdir(mode=0o700)
    run = _run_in(system, None)
    with pytest.raises(RunBlocked) as exc:
        RunService(m).start(_system_plan("/home/alice/venv", state_dir=str(own)), yes=True, authenticate=lambda: None)
    text = exc.value.message
    assert run in text and str(system) in text and "sudo rocm-wizard resume" in text and "\n" not in text
    assert exc.value.code == 1
    assert not (own / "current").exists()  # no run was recorded
    assert held(system / "lock") is None and held(own / "lock") is None
    assert any(line.split()[:2] == ["-n", "--"] for line in log.read_text().splitlines())  # read as root


@pytest.mark.parametrize("end", ["done", "rolled-back", "abandoned"])
def test_near_miss_roots_finished_run_does_not_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     end: str) -> None:
    _sudo(tmp_path, monkeypatch)
    m, own, system = _user_machine(tmp_path)
    system.mkdir(mode=0o700)
    _run_in(system, end)
    out = RunService(m).start(_system_plan("/home/alice/venv", state_dir=str(own)), yes=True,
                              authenticate=lambda: None)
    assert out.state.value == "done", out


def test_roots_system_plan_is_refused_over_the_users_unfinished_run_of_that_venv(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _sudo(tmp_path, monkeypatch)
    m, root_state, user_state = _root_machine(tmp_path)
    run = _run_in(user_state, "failed", plan="pip-only")
    with pytest.raises(RunBlocked) as exc:
        RunService(m).start(_system_plan("/home/alice/venv", state_dir=str(root_state)), yes=True)
    assert run in exc.value.message and str(user_state) in exc.value.message and "as alice" in exc.value.message
    assert not (root_state / "current").exists()


def test_near_miss_a_user_only_run_reads_no_other_state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Alice's own pip-only run locks her state dir alone: root's unfinished run elsewhere is none of its business,
    and no sudo runs."""
    log = _sudo(tmp_path, monkeypatch)
    m, own, system = _user_machine(tmp_path)
    system.mkdir(mode=0o700)
    _run_in(system, None)
    plan = replace(plan_of(StepPlan("verify", "verify", (Action(("true",), "suite", as_user=True),)), name="pip-only"),
                   state_dir=str(own))  # a user-only plan that starts (the pin alone is refused before a backup)
    out = RunService(m).start(plan, yes=True)
    assert out.state.value == "done", out
    assert not log.exists()
