"""Helper F12: the exported role and the collection's role take the locks the engine and the dry-run script take
(wizard.steps.executor_locks, the one rule), not only the plan's ``STATE/lock``.

Where the roles and the engine differed (F11/C11's one lock a task, LOCKED in wizard/fleet/lock.py):

* a system plan that changes a user's things (upgrade-6.4: state dir /var/lib/rocm-wizard, a pip step into
  /home/user/pytorch_venv-upgrade-6.4 run as the user): the engine run as root takes the system's lock and the user's
  (``/home/user/.local/state/rocm-wizard/lock``); a root task of the role took only the system's, so it ran while
  the user's own ``rocm-wizard --plan pip-only`` of that venv held the user's lock;
* the tasks run as the GPU user (become_user: the pip step, the activate block) of such a plan ran with no lock at
  all, beside the user's own run and beside a root run of the wizard.

Now LOCKED takes a newline-separated list of lock files, all or nothing, in order, with the same checks and the
holder record in each, and the refusal over an unfinished run checked in every state dir taken. A root task takes
the rule's locks; a task run as a user takes the ones a user can take (the non-system ones: the user's own lock,
which the root run of a plan changing that user's things and the user's own run both take, so it excludes both).

Near misses: a user-only plan's role takes only the user's lock and no task of it becomes root to take one; a task
after a finished wizard run is not refused; a task run as the user never touches the system's state dir; a read of
a state dir that does not exist makes none; plan data exported before (one lock, no ``user_lock``) keeps its
behaviour in the collection's role.

The lock scripts are run here as the roles run them (``sh -c``), with the host's state dirs mapped onto temporary
ones (the paths in the rendered lock list replaced, as a sandbox maps them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fleet.test_role_lock_F11 import facts, yaml_load
from wizard.fleet.collection import LOCK_VARS, action_tasks, plan_vars, step_tasks
from wizard.fleet.export import PlanGroup, export
from wizard.fleet.lock import AGAIN
from wizard.planner import resolve_plan
from wizard.runner.lock import Lock, held
from wizard.script import held_line, unfinished_line

pytestmark = pytest.mark.integration

SYSTEM = "/var/lib/rocm-wizard"
USER = "/home/user/.local/state/rocm-wizard"  # the seed machine's user: its venvs are under /home/user
ROLE = "rocm_wizard_upgrade_6_4"
ENGINE = "rocm-wizard --plan pip-only --yes"  # the user's own run of their venv
# asks the engine's lock (wizard.runner.lock.Lock) for each file given: what the engine would say taking it now
PROBE = ("import sys\nfrom wizard.runner.lock import Lock, LockHeld\n"
         "for p in sys.argv[1:]:\n"
         "    try:\n"
         "        Lock(p, 'rocm-wizard --plan pip-only --yes').acquire().release()\n"
         "        print('free')\n"
         "    except LockHeld as exc:\n"
         "        print(exc)\n")


def role_of(tmp_path: Path, plan: str = "upgrade-6.4", state: str = SYSTEM) -> Path:
    rp = resolve_plan(plan, facts(), state_dir=state, wizard_python="python3")
    export([PlanGroup(rp)], tmp_path / "export")
    (role,) = (tmp_path / "export" / "roles").iterdir()
    return role


def tasks_of(role: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def walk(ts: Any) -> None:
        for t in ts or []:
            out.append(t)
            walk(t.get("block"))

    for f in sorted((role / "tasks").glob("*.yml")):
        walk(yaml_load(f))
    return out


def lock_var(argv: list[str]) -> str | None:
    """The role's lock variable a command runs under (``sh -c {{ VAR }} rocm-wizard-lock MODE ...``), None: none."""
    if argv[3:4] == ["rocm-wizard-lock"]:
        return str(argv[2]).removeprefix("{{ ").removesuffix(" }}")
    return None


def mapped(script: str, dirs: dict[str, Path]) -> str:
    """The role's lock script with each host state dir on its first line (the lock list) replaced by a temp dir."""
    first, rest = script.split("\n", 1)
    for host, local in dirs.items():
        assert first.count(host + "/lock") == 1, (host, first)
        first = first.replace(host + "/lock", f"{local}/lock")
    return first + "\n" + rest


def run(script: str, mode: str, *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", "-c", script, "rocm-wizard-lock", mode, *argv], capture_output=True, text=True,
                          timeout=60, env=env)


def holder_line(lock: Path) -> str:
    return f"pid {os.getpid()}, started {json.loads(lock.read_text())['start_time']}: {ENGINE}"


def unfinished(state: Path, *ends: str) -> None:
    (state / "runs" / "r7").mkdir(parents=True, exist_ok=True)
    (state / "current").write_text("r7\n")
    lines = ['{"event": "run-start", "plan": "pip-only"}', *(json.dumps({"event": "run-end", "state": e}) for e in ends)]
    (state / "runs" / "r7" / "journal.jsonl").write_text("\n".join(lines) + "\n")


@pytest.fixture
def upgrade(tmp_path: Path) -> tuple[dict[str, str], Path, Path]:
    """upgrade-6.4's role vars with /var/lib/rocm-wizard and the user's state dir mapped onto temp dirs."""
    role = role_of(tmp_path)
    system, user = tmp_path / "system", tmp_path / "user"
    raw = yaml_load(role / "vars" / "main.yml")
    out = {}
    for name, script in raw.items():
        out[name] = mapped(script, {h: d for h, d in ((SYSTEM, system), (USER, user)) if h + "/lock" in
                                    script.split("\n", 1)[0]})
    return out, system, user


# ------------------------------------------------------------------------------------------ the exported role


def test_the_system_plans_root_tasks_take_both_locks_and_its_user_tasks_the_users(tmp_path: Path) -> None:
    role = role_of(tmp_path)
    lock_vars = yaml_load(role / "vars" / "main.yml")
    assert lock_vars[f"{ROLE}_lock"].split("\n", 1)[0].startswith(
        f"set -- \"$(printf '%s\\n' {SYSTEM}/lock {USER}/lock)\" ")
    assert lock_vars[f"{ROLE}_user_lock"].split("\n", 1)[0].startswith(f"set -- {USER}/lock ")
    by_var: dict[str | None, list[str]] = {}
    for t in tasks_of(role):
        argv = (t.get("ansible.builtin.command") or {}).get("argv")
        if not argv or t.get("changed_when") is not True or "delegate_to" in t:  # read-only checks, the hooks
            continue
        by_var.setdefault(lock_var(argv), []).append(t["name"])
        if t.get("become") is True:
            assert lock_var(argv) == f"{ROLE}_lock", t["name"]  # root: the system's and the user's
        elif "become_user" in t:
            assert lock_var(argv) == f"{ROLE}_user_lock", t["name"]  # the GPU user: the user's lock, not the system's
        else:  # near miss: run as whoever connects (a read-only look): no lock that account may not be able to open
            assert lock_var(argv) is None, t["name"]
    pip = [n for n in by_var[f"{ROLE}_user_lock"] if "pip_pin" in n]
    assert len(pip) >= 3 and any(" env: write the rocm-wizard block" in n for n in by_var[f"{ROLE}_user_lock"]), by_var
    assert len(by_var[f"{ROLE}_lock"]) >= 10, by_var


def test_a_root_task_refuses_while_the_users_own_run_holds_the_users_lock(upgrade: Any, tmp_path: Path) -> None:
    lock_vars, system, user = upgrade
    user.mkdir(mode=0o700)
    marker = tmp_path / "ran"
    with Lock(user / "lock", ENGINE):
        res = run(lock_vars[f"{ROLE}_lock"], "change", "touch", str(marker))
        holder = holder_line(user / "lock")
        assert held(system / "lock") is None  # all or nothing: the system's, taken first, is let go
    assert res.returncode == 4 and not marker.exists(), res.stderr
    assert res.stderr == held_line(holder, str(user / "lock"), AGAIN) + "\n"
    assert (system / "lock").read_text() == ""  # no holder left behind in the lock let go


def test_a_user_task_refuses_while_the_users_own_run_holds_the_users_lock(upgrade: Any, tmp_path: Path) -> None:
    lock_vars, system, user = upgrade
    user.mkdir(mode=0o700)
    marker = tmp_path / "ran"
    with Lock(user / "lock", ENGINE):
        res = run(lock_vars[f"{ROLE}_user_lock"], "change", "touch", str(marker))
        holder = holder_line(user / "lock")
    assert res.returncode == 4 and not marker.exists(), res.stderr
    assert res.stderr == held_line(holder, str(user / "lock"), AGAIN) + "\n"
    assert not system.exists()  # near miss: a task run as the user never touches the system's state dir


@pytest.mark.parametrize("var", [f"{ROLE}_lock", f"{ROLE}_user_lock"])
def test_the_engine_refuses_while_a_roles_task_holds_the_locks(upgrade: Any, var: str) -> None:
    lock_vars, system, user = upgrade
    res = run(lock_vars[var], "change", sys.executable, "-c", PROBE, str(system / "lock"), str(user / "lock"))
    assert res.returncode == 0, res.stderr
    said = res.stdout.splitlines()
    who = f": Ansible role {ROLE} (plan upgrade-6.4)); lock file: "
    assert said[1].startswith("another rocm-wizard run holds the lock (pid ") and f"{who}{user / 'lock'}" in said[1]
    if var == f"{ROLE}_lock":
        assert said[0].startswith("another rocm-wizard run holds the lock (pid ") and f"{who}{system / 'lock'}" in said[0]
    else:
        assert said[0] == "free"  # the user's task holds the user's lock only
    assert held(user / "lock") is None and (user / "lock").read_text() == ""  # let go at the command's end
    assert oct(user.stat().st_mode & 0o777) == "0o700" and oct((user / "lock").stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("var", [f"{ROLE}_lock", f"{ROLE}_user_lock"])
def test_an_unfinished_run_in_the_users_state_dir_is_refused_too(upgrade: Any, tmp_path: Path, var: str) -> None:
    lock_vars, _system, user = upgrade
    unfinished(user, "failed")
    marker = tmp_path / "ran"
    res = run(lock_vars[var], "change", "touch", str(marker))
    assert (res.returncode, res.stderr) == (1, unfinished_line("r7", AGAIN) + "\n") and not marker.exists()
    assert held(user / "lock") is None


@pytest.mark.parametrize("end", ["done", "rolled-back", "abandoned"])
def test_near_miss_a_task_after_a_finished_run_in_either_state_dir_runs(upgrade: Any, end: str) -> None:
    lock_vars, system, user = upgrade
    unfinished(user, "failed", end)
    unfinished(system, end)
    for var in (f"{ROLE}_lock", f"{ROLE}_user_lock"):
        res = run(lock_vars[var], "change", "echo", "ran")
        assert (res.returncode, res.stdout, res.stderr) == (0, "ran\n", ""), var


def test_near_miss_a_read_makes_no_state_dir_that_is_not_there(upgrade: Any) -> None:
    lock_vars, system, user = upgrade
    res = run(lock_vars[f"{ROLE}_lock"], "read", "echo", "read")
    assert (res.returncode, res.stdout) == (0, "read\n") and not system.exists() and not user.exists()
    user.mkdir(mode=0o700)  # one there (the user's own wizard ran): it is taken, the other is still not made
    res = run(lock_vars[f"{ROLE}_lock"], "read", sys.executable, "-c", PROBE, str(user / "lock"))
    assert res.stdout.startswith("another rocm-wizard run holds the lock (pid ") and not system.exists(), res


def test_near_miss_a_user_only_plans_role_takes_only_the_users_lock_and_no_task_becomes_root_for_it(
        tmp_path: Path) -> None:
    role = role_of(tmp_path, "pip-only", USER)
    lock_vars = yaml_load(role / "vars" / "main.yml")
    assert list(lock_vars) == ["rocm_wizard_pip_only_lock"]  # one list: the user's lock is every lock there is
    assert lock_vars["rocm_wizard_pip_only_lock"].split("\n", 1)[0].startswith(f"set -- {USER}/lock ")
    locked = [t for t in tasks_of(role) if lock_var((t.get("ansible.builtin.command") or {}).get("argv") or [])]
    assert len(locked) >= 4 and not [t["name"] for t in locked if t.get("become") is True]


# ------------------------------------------------------------------------------------------ the collection's role


def collection_data(plan: str = "upgrade-6.4", state: str = SYSTEM) -> dict[str, Any]:
    rp = resolve_plan(plan, facts(), state_dir=state, wizard_python="python3")
    return dict(plan_vars(rp)["rocm_wizard_plan"])


def test_the_collections_plan_data_names_both_locks_and_the_users(tmp_path: Path) -> None:
    data = collection_data()
    assert data["lock"] == f"{SYSTEM}/lock\n{USER}/lock" and data["user_lock"] == f"{USER}/lock"
    user_only = collection_data("pip-only", USER)
    assert user_only["lock"] == user_only["user_lock"] == f"{USER}/lock"  # near miss: no system lock, no root


def _argv(task: dict[str, Any], action: dict[str, Any], data: dict[str, Any], gpu_user: str = "user") -> list[str]:
    """The argv a collection task runs, rendered as Ansible renders it."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar, trust_as_template

    plain = json.loads(json.dumps({"rocm_wizard_plan": data, "rocm_wizard_action": action}))  # the YAML's str, list
    variables: dict[str, Any] = {**plain, "rocm_wizard_gpu_user": gpu_user, "rocm_wizard_step": {"number": 7, "verify": False}}
    t = Templar(loader=DataLoader(), variables=variables)
    for name, value in LOCK_VARS.items():
        variables[name] = t.template(trust_as_template(str(value))) if "{{" in str(value) else str(value)
        t = Templar(loader=DataLoader(), variables=variables)
    return list(t.template(trust_as_template(str(task["ansible.builtin.command"]["argv"]))))


def _action(data: dict[str, Any], kind: str, *, root: bool) -> dict[str, Any]:
    step = next(s for s in data["steps"] if s["kind"] == kind)
    return next(a for a in step["actions"] if a["root"] == root and (root or a["user"]))


def test_the_collections_user_action_of_a_system_plan_runs_under_the_users_lock() -> None:
    pytest.importorskip("ansible")
    data = collection_data()
    run_action = next(t for t in action_tasks() if t["name"] == "Run the action")
    pip = _action(data, "pip_pin", root=False)
    argv = _argv(run_action, pip, data)
    assert argv[3:5] == ["rocm-wizard-lock", f"{USER}/lock"] and argv[6] == "change", argv[:7]
    root = next(a for s in data["steps"] for a in s["actions"] if a["root"] and a["changes"])
    assert _argv(run_action, root, data)[3:5] == ["rocm-wizard-lock", f"{SYSTEM}/lock\n{USER}/lock"]
    mark = next(t for t in step_tasks() if t["name"] == "Record the step as done")
    assert _argv(mark, pip, data)[4] == f"{SYSTEM}/lock\n{USER}/lock"  # as root: the system state dir's progress


def test_near_miss_older_plan_data_keeps_its_one_lock_and_its_unlocked_gpu_user_action() -> None:
    pytest.importorskip("ansible")
    data = collection_data()
    old = {**{k: v for k, v in data.items() if k != "user_lock"}, "lock": f"{SYSTEM}/lock"}
    run_action = next(t for t in action_tasks() if t["name"] == "Run the action")
    pip = _action(old, "pip_pin", root=False)
    assert _argv(run_action, pip, old) == list(pip["argv"])  # as before: the GPU user's action, no lock
    root = next(a for s in old["steps"] for a in s["actions"] if a["root"] and a["changes"])
    assert _argv(run_action, root, old)[4] == f"{SYSTEM}/lock"


def test_the_collections_lock_script_refuses_over_the_users_lock_and_the_engine_over_the_roles(tmp_path: Path) -> None:
    data = collection_data()
    system, user = tmp_path / "system", tmp_path / "user"
    locks = data["lock"].replace(SYSTEM, str(system)).replace(USER, str(user))
    script = str(LOCK_VARS["rocm_wizard_lock_script"])
    marker = tmp_path / "ran"

    def locked(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["sh", "-c", script, "rocm-wizard-lock", locks, data["holder"], "change", *argv],
                              capture_output=True, text=True, timeout=60)

    user.mkdir(mode=0o700)
    with Lock(user / "lock", ENGINE):
        res = locked("touch", str(marker))
        holder = holder_line(user / "lock")
    assert res.returncode == 4 and not marker.exists()
    assert res.stderr == held_line(holder, str(user / "lock"), AGAIN) + "\n"
    res = locked(sys.executable, "-c", PROBE, str(user / "lock"))
    assert res.stdout.startswith("another rocm-wizard run holds the lock (pid ") and \
        res.stdout.rstrip().endswith(f": Ansible role rocm_wizard.fleet.rocm_wizard (plan upgrade-6.4)); lock file: "
                                     f"{user / 'lock'}"), res
    # near miss: a single lock file (plan data exported before the list) is taken as it was
    one = subprocess.run(["sh", "-c", script, "rocm-wizard-lock", str(user / "lock"), data["holder"], "change", "echo",
                          "one"], capture_output=True, text=True, timeout=60)
    assert (one.returncode, one.stdout, one.stderr) == (0, "one\n", "")


def test_near_miss_a_users_lock_under_an_unnamed_home_is_none_a_role_names() -> None:
    """A recording's venv (``~/venv``: whose home the plan does not say) gives the rule a ``~`` state dir; a root task
    would expand it to root's home and the collection passes it as it is: the roles take the locks they can name."""
    from wizard.fleet.lock import task_locks
    from wizard.model import Action, ResolvedPlan, StepPlan
    from wizard.steps import executor_locks

    pip = StepPlan("pip_pin", "pin", (Action(("true",), "pip", as_user=True, changes=("venv:~/venv",)),),
                   params=(("venv", "~/venv"),))
    root = StepPlan("groups", "groups", (Action(("true",), "render group", root=True, changes=("/etc/group",)),))
    plan = ResolvedPlan("upgrade-6.4", "t", "d", (), (root, pip), state_dir=SYSTEM)
    assert [lk.path for lk in executor_locks(plan)] == [f"{SYSTEM}/lock", "~/.local/state/rocm-wizard/lock"]
    assert task_locks(plan) == ((f"{SYSTEM}/lock",), ())
    data = plan_vars(plan)["rocm_wizard_plan"]
    assert (data["lock"], data["user_lock"]) == (f"{SYSTEM}/lock", "")


@pytest.mark.skipif(os.geteuid() != 0, reason="making a folder another user owns needs root")
def test_a_root_task_makes_the_users_missing_state_dir_the_users(tmp_path: Path) -> None:
    """Root's task of the system plan, the first to take the user's lock: the state dir it makes under the user's home
    (and the lock file) are the user's, as the engine's and the dry-run script's helper make them, so the user's own
    wizard can take that lock afterwards."""
    import shutil
    import tempfile

    role = role_of(tmp_path)
    # a home its user can reach, as a real one is (tmp_path's folders are root's 0700): the user makes the dirs there
    reach = Path(tempfile.mkdtemp(prefix="f12-", dir="/tmp"))
    reach.chmod(0o755)
    home = reach / "home"
    home.mkdir()
    os.chown(home, 65534, 65534)
    user = home / ".local" / "state" / "rocm-wizard"
    script = mapped(yaml_load(role / "vars" / "main.yml")[f"{ROLE}_lock"], {SYSTEM: tmp_path / "system", USER: user})
    try:
        res = run(script, "change", "echo", "ran")
        assert (res.returncode, res.stdout, res.stderr) == (0, "ran\n", "")
        for p in (home / ".local", home / ".local" / "state", user, user / "lock"):
            assert (p.stat().st_uid, p.stat().st_gid) == (65534, 65534), p
        assert oct(user.stat().st_mode & 0o777) == "0o700" and (tmp_path / "system").stat().st_uid == 0
    finally:
        shutil.rmtree(reach)
