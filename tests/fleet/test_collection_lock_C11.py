"""The collection's role ``rocm_wizard.fleet.rocm_wizard`` takes the wizard's lock as the exported role does (C11;
F11's rule, tests/fleet/test_role_lock_F11.py): its progress read, each changing command run with the state dir
owner's rights and each done mark run under the flock on the plan's ``STATE/lock`` (wizard.fleet.lock: LOCKED, one
copy for both roles), with the engine's holder record naming the role and the plan; it refuses, with the dry-run
script's line, while another run holds the lock (exit 4) or a run of the wizard is not finished (exit 1).

The plan data names the lock and the holder (plan_vars); the role holds the script (vars/main.yml). One system test
runs the role with real ansible-playbook (local connection, as root) on a toy plan whose state dir is a system one."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest

from wizard.fleet import lock as lock_module
from wizard.fleet.collection import NAME, NAMESPACE, ROLE, plan_vars, sources
from wizard.fleet.yaml_text import document
from wizard.model import Action, ResolvedPlan, StepPlan
from wizard.runner.lock import Lock, held
from wizard.script import held_line, unfinished_line

BIN = os.path.dirname(sys.executable)
PLAYBOOK = shutil.which("ansible-playbook", path=BIN + os.pathsep + os.environ["PATH"])
HOLDER = f"Ansible role {NAMESPACE}.{NAME}.{ROLE} (plan toy)"
AGAIN = "then run the play again"
PROBE = ("import sys\nfrom wizard.runner.lock import LockHeld, held\nh = held(sys.argv[1])\n"
         "open(sys.argv[2], 'a').write(str(LockHeld(h, sys.argv[1])) if h else 'free')\nopen(sys.argv[2], 'a').write('\\n')")


def yaml_load(text: str) -> Any:
    yaml = pytest.importorskip("yaml")

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))
    return yaml.load(text, Loader=Loader)


def role_file(*parts: str) -> Any:
    return yaml_load(sources()[Path("roles", ROLE, *parts)])


def toy(state: Path, shared: Path) -> ResolvedPlan:
    """preflight (read-only), a root action that asks the engine who holds the lock, a user action (the GPU user's,
    without the lock: it cannot open root's state dir), verify (skipped: no GPU)."""
    log = str(shared / "log")

    def say(word: str, **kw: Any) -> Action:
        return Action(("sh", "-c", f'echo "{word} $(id -un)" >> "$1"', "sh", log), description=word, **kw)

    return ResolvedPlan("toy", "a toy plan", "the collection's role under the wizard's lock", (), (
        StepPlan("preflight", "Preflight", (say("preflight"),)),
        StepPlan("backup", "Ask who holds the lock", (
            Action((sys.executable, "-c", PROBE, str(state / "lock"), log), "probe", root=True),)),
        StepPlan("pip_pin", "As the GPU user", (say("user", as_user=True),)),
        StepPlan("verify", "Verify", (Action(("false",), "the suite", requires=("gpu",)),)),
    ), state_dir=str(state))


# ------------------------------------------------------------------------------------------------ the role's text


@pytest.mark.integration
def test_the_plan_data_names_the_lock_file_and_the_collections_role_as_holder(tmp_path: Path) -> None:
    data = plan_vars(toy(tmp_path / "state", tmp_path))["rocm_wizard_plan"]
    assert data["lock"] == str(tmp_path / "state" / "lock")
    assert json.loads(data["holder"]) == HOLDER == "Ansible role rocm_wizard.fleet.rocm_wizard (plan toy)"


@pytest.mark.integration
def test_one_copy_of_the_lock_script_serves_both_roles() -> None:
    script = role_file("vars", "main.yml")["rocm_wizard_lock_script"]
    assert script == lock_module.LOCKED
    fleet = Path(lock_module.__file__).parent
    copies = [p.name for p in sorted(fleet.glob("*.py")) if "cannot take the wizard" in p.read_text(encoding="utf-8")]
    assert copies == ["lock.py"], copies


@pytest.mark.integration
def test_the_progress_read_each_changing_command_and_each_done_mark_take_the_lock() -> None:
    # a system state dir's progress is root's: root's locks; else a user's (F12: tests/fleet/test_role_locks_F12.py)
    prefix = ["sh", "-c", "{{ rocm_wizard_lock_script }}", "rocm-wizard-lock",
              "{{ rocm_wizard_plan.lock if rocm_wizard_plan.root_progress else rocm_wizard_plan.user_lock "
              "| default(rocm_wizard_plan.lock) }}", "{{ rocm_wizard_plan.holder }}"]
    assert role_file("vars", "main.yml")["rocm_wizard_locked"] == (
        "{{ ['sh', '-c', rocm_wizard_lock_script, 'rocm-wizard-lock', rocm_wizard_plan.lock, rocm_wizard_plan.holder] }}")
    main = role_file("tasks", "main.yml")
    read = next(t for t in main if t["name"].startswith("Read this host's progress"))
    assert read["ansible.builtin.command"]["argv"][:7] == [*prefix, "read"]
    mark = next(t for t in role_file("tasks", "step.yml") if t["name"] == "Record the step as done")
    assert mark["ansible.builtin.command"]["argv"].startswith(
        "{{ (rocm_wizard_locked if rocm_wizard_plan.root_progress else rocm_wizard_user_locked) + ['change'] + ")
    act = next(t for t in role_file("tasks", "action.yml") if t["name"] == "Run the action")
    assert act["ansible.builtin.command"]["argv"].startswith("{{ (rocm_wizard_locked + ['change'] + rocm_wizard_action.argv) if ")
    check = next(t for t in role_file("tasks", "action.yml") if t["name"].startswith("Check whether"))
    assert "lock" not in check["ansible.builtin.command"]["argv"]  # read-only: no lock, as the export's checks


@pytest.mark.integration
def test_a_plan_without_a_lock_older_plan_data_is_refused_before_anything_runs() -> None:
    main = role_file("tasks", "main.yml")
    first = next(i for i, t in enumerate(main) if "ansible.builtin.command" in t)
    that = [c for t in main[:first] for c in t.get("ansible.builtin.assert", {}).get("that", [])]
    assert {"rocm_wizard_plan.lock is defined", "rocm_wizard_plan.holder is defined"} <= set(that), that


@pytest.mark.integration
def test_the_engine_names_the_collections_role_as_holder_while_a_command_runs(tmp_path: Path) -> None:
    state = tmp_path / "state"
    data = plan_vars(toy(state, tmp_path))["rocm_wizard_plan"]
    script = role_file("vars", "main.yml")["rocm_wizard_lock_script"]
    res = subprocess.run(["sh", "-c", script, "rocm-wizard-lock", data["lock"], data["holder"], "change", sys.executable,
                          "-c", PROBE, data["lock"], str(tmp_path / "said")], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    said = (tmp_path / "said").read_text()
    assert said.startswith("another rocm-wizard run holds the lock (pid ") and f": {HOLDER}); lock file: " in said, said
    assert held(state / "lock") is None and (state / "lock").read_text() == ""


# ------------------------------------------------------------------------- the role through ansible-playbook


@pytest.fixture
def places() -> Iterator[tuple[Path, Path]]:
    """(a system state dir: under /var/, so the role reads and marks progress as root; a folder the GPU user can
    write), both removed after the test."""
    var = Path(tempfile.mkdtemp(prefix="rocm-wizard-C11-", dir="/var/tmp"))
    shared = Path(tempfile.mkdtemp(prefix="rocm-wizard-C11-"))
    try:
        yield var / "state", shared
    finally:
        shutil.rmtree(var, ignore_errors=True)
        shutil.rmtree(shared, ignore_errors=True)


def journal(state: Path, *ends: str) -> None:
    (state / "runs" / "r7").mkdir(parents=True, exist_ok=True)
    (state / "current").write_text("r7\n")
    lines = ['{"event": "run-start", "plan": "upgrade-6.4"}', *(json.dumps({"event": "run-end", "state": e}) for e in ends)]
    (state / "runs" / "r7" / "journal.jsonl").write_text("\n".join(lines) + "\n")


@pytest.mark.system
@pytest.mark.skipif(PLAYBOOK is None, reason="ansible-core is not installed (pip install '.[fleet]')")
@pytest.mark.skipif(os.geteuid() != 0, reason="become_user to another account needs root")
def test_a_play_refuses_while_the_wizard_holds_the_lock_or_a_run_is_unfinished_then_runs(
        tmp_path: Path, places: tuple[Path, Path]) -> None:
    state, shared = places
    python = shutil.which("python3", path="/usr/bin:/bin") or pytest.skip("no /usr/bin/python3 for the GPU user")
    nobody = pwd.getpwnam("nobody").pw_name
    os.chmod(shared, 0o1777)
    log = shared / "log"
    log.touch()
    os.chmod(log, 0o666)
    collection = tmp_path / "collections" / "ansible_collections" / NAMESPACE / NAME  # as ansible-galaxy installs it
    for rel, text in sources().items():
        (collection / rel).parent.mkdir(parents=True, exist_ok=True)
        (collection / rel).write_text(text)
    (tmp_path / "plan.yml").write_text(document(plan_vars(toy(state, shared))))
    (tmp_path / "site.yml").write_text(document([{
        "name": "Toy plan", "hosts": "all", "gather_facts": False, "vars_files": [str(tmp_path / "plan.yml")],
        "roles": [{"role": f"{NAMESPACE}.{NAME}.{ROLE}"}]}]))
    (tmp_path / "inv.ini").write_text(f"h1 ansible_connection=local ansible_python_interpreter={python} "
                                      "ansible_become_method=su ansible_become_flags='-s /bin/sh'\n")
    extra = {"rocm_wizard_gpu_user": nobody, "rocm_wizard_results": str(tmp_path / "results"),
             "rocm_wizard_unavailable": {"h1": {"gpu": "no GPU here"}}}
    env = {**os.environ, "HOME": str(tmp_path / "home"), "ANSIBLE_HOME": str(tmp_path / ".ansible"),
           "ANSIBLE_LOCAL_TEMP": str(tmp_path / ".tmp"), "ANSIBLE_REMOTE_TEMP": str(tmp_path / ".rt"),
           "ANSIBLE_NOCOLOR": "1", "ANSIBLE_COLLECTIONS_PATH": str(tmp_path / "collections"), "ANSIBLE_PIPELINING": "1"}

    def play(*flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(PLAYBOOK), "-i", str(tmp_path / "inv.ini"), str(tmp_path / "site.yml"), "-e",
                               json.dumps(extra), *flags], capture_output=True, text=True, timeout=900, env=env,
                              cwd=tmp_path, stdin=subprocess.DEVNULL)

    check = play("--check")  # near miss: no state dir, no wizard ever ran here; --check makes none
    assert check.returncode == 0, check.stdout[-4000:]
    assert not state.exists() and log.read_text() == ""

    with Lock(state / "lock", "rocm-wizard --plan upgrade-6.4 --yes"):
        holder = f"pid {os.getpid()}, started {json.loads((state / 'lock').read_text())['start_time']}: " \
                 "rocm-wizard --plan upgrade-6.4 --yes"
        first = play()
    assert first.returncode != 0 and held_line(holder, str(state / "lock"), AGAIN) in first.stdout, first.stdout[-4000:]
    assert log.read_text() == "" and not (state / "script").exists()  # refused at the progress read: nothing ran

    journal(state, "failed")
    second = play()
    assert second.returncode != 0 and unfinished_line("r7", AGAIN) in second.stdout, second.stdout[-4000:]
    assert log.read_text() == "" and not (state / "script").exists()

    journal(state, "failed", "done")  # near miss: after a finished wizard run the play runs
    third = play()
    assert third.returncode == 0, third.stdout[-4000:]
    lines = log.read_text().splitlines()
    assert lines[0] == "preflight root" and lines[2:] == [f"user {nobody}"], lines  # the GPU user's action ran
    assert lines[1].startswith("another rocm-wizard run holds the lock (pid "), lines  # the probe, under the role's lock
    assert lines[1].endswith(f": {HOLDER}); lock file: {state / 'lock'}"), lines
    assert (state / "script" / "toy.progress").read_text().split() == ["1", "2", "3"]
    assert held(state / "lock") is None and (state / "lock").read_text() == ""

    fourth = play()  # near miss: a second play in a row is not refused and changes nothing
    assert fourth.returncode == 0, fourth.stdout[-4000:]
    assert "changed=0" in fourth.stdout.split("PLAY RECAP")[1] and len(log.read_text().splitlines()) == 3
    assert held(state / "lock") is None
