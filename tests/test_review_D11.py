"""Review D11: one plan, every door, for the plans D9 did not walk (pip-only, therock-pip, docker, core-sdk, driver).
Each case here failed on the code before its mend and passes after it; each has a near miss that must not fire.

* A plan resolved on a machine where it has already finished (pip-only asked again: every change behind a check that
  passes, so its preflight asks for nothing) carried no machine check at all: "a plan with nothing to do checks
  nothing" took a plan whose actions are all skipped by their checks for one with no actions. Its plan file, run on
  another machine (or on this one after its venv went), skipped the binding and ran its pip step there.
* therock-pip (or pip-only) on the RX 5600 XT whose ~/.bashrc sets HSA_OVERRIDE_GFX_VERSION: the env step writes
  ``unset HSA_OVERRIDE_GFX_VERSION`` into the venv's block and comments the ~/.bashrc line out. Asked again, the
  override is set nowhere any more, so the block wanted is one line shorter: the step rewrote the activate script,
  that second run became the one ``rollback`` undoes, and the rollback left the first run's venv and the
  commented-out line in place. An ``unset`` of a variable set nowhere is the same machine: the step is done.
* The dry-run script on a machine the plan was not made for exited 1 with a second line ("preflight failed:
  machine: this is the machine the plan was made for ..."); the engine refuses with exit 5 (README's exit codes:
  "a plan file made for another machine included").
"""

from __future__ import annotations

from pathlib import Path

import pytest
from runner_helpers import wizard

from wizard import binding, exit_codes
from wizard.machine_session import MachineSession, MachineSpec
from wizard.runner import planfile

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("isolated_state")]

STATE = "var/lib/rocm-wizard"


def _run(*args: str, rc: tuple[int, ...] = (0,)) -> str:
    r = wizard(list(args))
    assert r.returncode in rc, r.stdout[-3000:] + r.stderr[-2000:]
    return r.stdout


def _runs(root: Path) -> list[str]:
    return sorted(p.name for p in (root / STATE / "runs").iterdir())


# --------------------------------------------------------------------------- 1. a finished plan is still bound


def _finished_plan_file(tmp_path: Path) -> Path:
    box = tmp_path / "done"
    _run("--sandbox", str(box), "--profile", "seed-7900xt", "--plan", "pip-only", "--yes")
    again = MachineSession(MachineSpec(sandbox=str(box))).resolve("pip-only")
    path = tmp_path / "pip-only-again.json"
    path.write_text(planfile.dumps(again))
    return path


def test_a_plan_resolved_where_it_already_finished_is_still_bound_to_that_machine(tmp_path: Path) -> None:
    plan_json = _finished_plan_file(tmp_path)
    plan = planfile.load(plan_json)
    assert [a.name for a in plan.preflight][:1] == [binding.NAME]
    # the same profile, but a machine where the plan has not run (no venv yet): not the machine it was made for
    other = tmp_path / "other"
    _run("--sandbox", str(other), "--profile", "seed-7900xt", "detect")
    r = wizard(["--sandbox", str(other), "--plan", str(plan_json), "--yes"])
    assert r.returncode == exit_codes.REFUSED, r.stdout[-3000:] + r.stderr
    assert "venv_python: the plan was made for 3.10, this machine has absent" in r.stderr
    assert not (other / "home/user/pytorch_venv-pip-only").exists()
    assert not (other / STATE / "runs").exists() or not _runs(other)


def test_near_miss_the_finished_plan_on_its_own_machine_passes_its_check_and_changes_nothing(tmp_path: Path) -> None:
    plan_json = _finished_plan_file(tmp_path)
    box = tmp_path / "done"
    first = _runs(box)
    out = _run("--sandbox", str(box), "--plan", str(plan_json), "--yes")
    assert "this is the machine the plan was made for" in out
    assert (box / STATE / "current").read_text().strip() == first[0]  # a run that changed nothing


def test_near_miss_a_plan_with_nothing_to_do_checks_nothing(tmp_path: Path) -> None:
    """The driver plan where the running kernel's driver serves the GPU and the user is in render and video (here
    after pip-only added the groups): no action at all, so no check either."""
    box = tmp_path / "b"
    _run("--sandbox", str(box), "--profile", "rx9070xt-noble", "--plan", "pip-only", "--yes")
    plan = MachineSession(MachineSpec(sandbox=str(box))).resolve("driver")
    assert not [a for s in plan.steps for a in s.actions] and not plan.preflight


# --------------------------------------------------------------------------- 2. the env step's own unset


BASHRC = "home/user/.bashrc"
OVERRIDE_LINE = "export HSA_OVERRIDE_GFX_VERSION=10.3.0"


def _activate(box: Path, plan: str) -> str:
    return (box / f"home/user/pytorch_venv-{plan}/bin/activate").read_text()


def test_a_plan_asked_again_keeps_the_envs_unset_and_rolls_back_to_the_first_machine(tmp_path: Path) -> None:
    plan, box = "therock-pip", tmp_path / "m"
    _run("--sandbox", str(box), "--profile", "seed-5600xt", "detect")
    bashrc_before = (box / BASHRC).read_text()
    assert OVERRIDE_LINE in bashrc_before
    _run("--sandbox", str(box), "--plan", plan, "--yes")
    assert "unset HSA_OVERRIDE_GFX_VERSION" in _activate(box, plan)
    assert f"# rocm-wizard: {OVERRIDE_LINE}" in (box / BASHRC).read_text()
    activate = _activate(box, plan)
    first = _runs(box)

    out = _run("--sandbox", str(box), "--plan", plan, "--yes")  # asked again
    assert "write the rocm-wizard block" not in out.split("(env)", 1)[1].split("step 5:")[0], out[-3000:]
    assert _activate(box, plan) == activate
    assert (box / STATE / "current").read_text().strip() == first[0]  # the run that changed something

    r = wizard(["--sandbox", str(box), "rollback", "--yes"])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    assert (box / BASHRC).read_text() == bashrc_before  # the first machine's line is back


def test_near_miss_a_block_without_its_constraint_line_is_written_again(tmp_path: Path) -> None:
    box = tmp_path / "m"
    _run("--sandbox", str(box), "--profile", "seed-5600xt", "--plan", "therock-pip", "--yes")
    act = box / "home/user/pytorch_venv-therock-pip/bin/activate"
    text = act.read_text()
    constraint = next(line for line in text.splitlines() if line.startswith("export PIP_CONSTRAINT="))
    act.write_text(text.replace(constraint + "\n", ""))
    out = _run("--sandbox", str(box), "--plan", "therock-pip", "--yes")
    assert "write the rocm-wizard block" in out.split("(env)", 1)[1].split("step 5:")[0], out[-3000:]
    assert constraint in act.read_text()


# --------------------------------------------------------------------------- 3. the script's refusal


def _script_on(tmp_path: Path, plan_json: Path, profile: str) -> tuple[Path, str]:
    other = tmp_path / "other"
    _run("--sandbox", str(other), "--profile", profile, "detect")
    return other, _run("--sandbox", str(other), "--plan", str(plan_json), "--dry-run")


def _seed_plan(tmp_path: Path) -> Path:
    plan = MachineSession(MachineSpec(sandbox=str(tmp_path / "seed"), profile="seed-7900xt")).resolve("pip-only")
    path = tmp_path / "seed-plan.json"
    path.write_text(planfile.dumps(plan))
    return path


def test_the_script_refuses_a_plan_for_another_machine_as_the_engine_does(tmp_path: Path) -> None:
    from test_script_resume import run_script

    plan_json = _seed_plan(tmp_path)
    other, script = _script_on(tmp_path, plan_json, "seed-5600xt")
    s = run_script(other, script, "/nonexistent")
    engine = wizard(["--sandbox", str(other), "--plan", str(plan_json), "--yes"])
    assert engine.returncode == exit_codes.REFUSED
    assert s.returncode == exit_codes.REFUSED, s.stderr[-3000:]
    said = s.stderr.strip().splitlines()
    assert len(said) == 1 and said[0].startswith(binding.REFUSAL), said
    # the same differences the engine names
    why = engine.stderr.split("refused: ", 1)[1].split("; nothing was changed")[0]
    assert said[0].startswith(why), (said[0], why)
    assert not (other / "home/user/pytorch_venv-pip-only").exists()


def test_near_miss_another_failed_preflight_check_in_the_script_is_exit_1(tmp_path: Path) -> None:
    """A check of the plan's own needs (here: the venv is not new nor a venv) stays a failed preflight, exit 1."""
    from test_script_resume import run_script

    plan_json = _seed_plan(tmp_path)
    box = tmp_path / "seed"
    script = _run("--sandbox", str(box), "--plan", str(plan_json), "--dry-run")
    venv = box / "home/user/pytorch_venv-pip-only"
    venv.mkdir(parents=True)
    (venv / "not-a-venv").write_text("x")
    s = run_script(box, script, "/nonexistent")
    assert s.returncode == 1, s.stderr[-3000:]
    assert "preflight failed:" in s.stderr and binding.REFUSAL not in s.stderr
