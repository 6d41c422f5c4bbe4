"""Review D9: one plan, every door (the engine's ``--plan NAME --yes``, the ``--dry-run`` script, the Ansible
role, ``resume``, the TUI). Each case here failed on the code before its mend and passes after it; each has a near
miss that must not fire.

* A done-check is read with the privilege of the action it guards: the engine probes it as the action runs
  (``Engine._check``: root for a root action) and the role gives it the action's ``become``; the script ran every
  check as the invoking user, so a check of a root-only path (the backup, the downloads under a 0700 state dir)
  failed there and the action ran again.
* A finished backup of a plan is never overwritten: the same plan asked again (a second ``--plan NAME --yes``
  after the first one finished, the script after the engine, the engine after a script cut off mid-way) made
  its backup again over the changed machine, and the first one, the machine before the plan, was lost: a
  rollback then restored the migrated machine.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from runner_helpers import plan_of, wizard
from test_plan_golden import STATE_DIR, machines

from wizard.model import Action, StepPlan
from wizard.script import render

BACKUP = "var/lib/rocm-wizard/backup/upgrade-6.4"


# --------------------------------------------------------------------------- the script's done-checks


@pytest.mark.unit
def test_the_scripts_check_of_a_root_action_runs_as_root() -> None:
    root_action = Action(("mkdir", "-p", "--", "/var/lib/x/d"), "make it", root=True,
                         check=("test", "-e", "/var/lib/x/d/manifest.json"))
    plan = plan_of(StepPlan(kind="backup", title="t", actions=(root_action,)))
    text = render(plan, machines()["seed-7900xt"])
    assert "if ! sudo -- test -e /var/lib/x/d/manifest.json; then" in text
    assert "  sudo -- mkdir -p -- /var/lib/x/d" in text


@pytest.mark.unit
def test_the_scripts_check_of_a_user_action_runs_as_the_user() -> None:
    """Near miss: a user-scope action's check (a venv's python) gets no sudo."""
    user_action = Action(("python3", "-m", "venv", "/home/u/v"), "make the venv", as_user=True,
                         check=("test", "-x", "/home/u/v/bin/python"))
    plan = plan_of(StepPlan(kind="pip_pin", title="t", actions=(user_action,)))
    text = render(plan, machines()["seed-7900xt"])
    assert "if ! test -x /home/u/v/bin/python; then" in text
    assert "sudo" not in text.split("# ---- step 1/1")[1]


@pytest.mark.unit
def test_a_shipped_plans_script_reads_its_root_downloads_as_root() -> None:
    """The amdgpu-install package in the root state dir (0700): the script looked for it as the user, never found
    it and fetched it again; the engine looks as root."""
    from wizard.planner import resolve_plan

    facts = machines()["seed-7900xt"]
    text = render(resolve_plan("upgrade-6.4", facts, state_dir=STATE_DIR, wizard_python="python3"), facts)
    # (the check reads the release's version file first: where ROCm 6.4.4 is installed nothing is downloaded)
    assert (f"if ! sudo -- sh -c 'test -e \"$1\" && exit 0; shift; [ \"$#\" -gt 0 ] && exec \"$@\"; exit 1' sh "
            f"/opt/rocm-6.4.4/.info/version test -s {STATE_DIR}/downloads/amdgpu-install_") in text
    assert f"if ! test -s {STATE_DIR}/downloads/" not in text
    assert f"if ! sh -c 'test -e \"$1\" && exit 0; shift; [ \"$#\" -gt 0 ] && exec \"$@\"; exit 1' sh /opt" \
           f"/rocm-6.4.4/.info/version test -s {STATE_DIR}/downloads/" not in text


# --------------------------------------------------------------------------- the backup is never made twice


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())} if d.is_dir() else {}


def _run(*args: str) -> str:
    r = wizard(list(args))
    assert r.returncode in (0, 3), r.stdout[-3000:] + r.stderr[-2000:]
    return r.stdout


@pytest.mark.integration
def test_the_same_plan_asked_again_keeps_the_first_backup_and_rolls_back_to_the_first_machine(tmp_path: Path) -> None:
    root = tmp_path / "m"
    _run("--sandbox", str(root), "--profile", "seed-7900xt", "--plan", "upgrade-6.4", "--yes")
    first = _files(root / BACKUP)
    assert "6.2.0" in first["dpkg-selections.txt"].decode()
    _run("--sandbox", str(root), "resume", "--yes")

    out = _run("--sandbox", str(root), "--plan", "upgrade-6.4", "--yes")  # asked again, a new run
    assert {k: v for k, v in _files(root / BACKUP).items() if k in first} == first, "the first backup was overwritten"
    assert "already done" in out
    r = wizard(["--sandbox", str(root), "rollback", "--yes"])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert (root / "opt/rocm-6.2.0/.info/version").is_file(), "the rollback did not get back the first machine"


@pytest.mark.integration
def test_a_first_backup_is_made_whole(tmp_path: Path) -> None:
    """Near miss: on a machine with no backup of the plan the step writes every file of it."""
    root = tmp_path / "m"
    _run("--sandbox", str(root), "--profile", "seed-7900xt", "--plan", "upgrade-6.4", "--yes")
    assert {"dpkg-selections.txt", "etc-files.tar.gz", "manifest.json", "kfd-properties.txt",
            "pip-freeze-1-home-user-pytorch-venv.txt"} <= set(_files(root / BACKUP))
    manifest = json.loads((root / BACKUP / "manifest.json").read_text())
    assert manifest["rocm"]["version"] == "6.2.0"


@pytest.mark.integration
def test_the_script_after_the_engine_keeps_the_engines_backup(tmp_path: Path) -> None:
    from test_script_resume import run_script

    root = tmp_path / "m"
    _run("--sandbox", str(root), "--profile", "seed-7900xt", "--plan", "upgrade-6.4", "--yes")
    _run("--sandbox", str(root), "resume", "--yes")
    first = _files(root / BACKUP)
    script = _run("--sandbox", str(root), "--plan", "upgrade-6.4", "--dry-run")
    # all but verify: asked again on the finished machine nothing reboots before it, and it needs a torch to run
    s = run_script(root, script.split("# ---- step 10/")[0] + "\nexit 0\n", "/nonexistent")
    assert s.returncode == 0, s.stderr[-3000:]
    assert {k: v for k, v in _files(root / BACKUP).items() if k in first} == first


@pytest.mark.integration
def test_the_engine_after_a_script_cut_off_keeps_the_scripts_backup(tmp_path: Path) -> None:
    """The script made the backup and purged, then stopped (here: at the package's download); the engine asked to run
    the plan backs up the half-migrated machine no more."""
    from test_script_resume import run_script

    root = tmp_path / "m"
    script = _run("--sandbox", str(root), "--profile", "seed-7900xt", "--plan", "upgrade-6.4", "--dry-run")
    cut = script.split("# ---- step 4/")[0] + "\nexit 7\n"  # steps 1-3: preflight, backup, purge
    s = run_script(root, cut, "/nonexistent")
    assert s.returncode == 7, s.stderr[-3000:]
    assert not (root / "opt/rocm-6.2.0").exists()  # purged
    first = _files(root / BACKUP)
    assert "6.2.0" in first["dpkg-selections.txt"].decode()
    shutil.rmtree(root / "var/lib/rocm-wizard/script")  # the engine does not read the script's progress anyway
    _run("--sandbox", str(root), "--plan", "upgrade-6.4", "--yes")
    assert {k: v for k, v in _files(root / BACKUP).items() if k in first} == first
