"""Which wizard locks a run of a plan takes: the one rule for the engine and the three executors that run a plan
without it (the dry-run script, the exported Ansible role, the collection's role).

A plan's run takes the lock of (``STATE/lock`` each, the run service's flock):

* the state dir the plan keeps its state in (``plan.state_dir``: its backup, the script's progress);
* the system state dir where the plan changes something system-wide (``changes_system``) and keeps its state
  elsewhere (a user's own run of a system plan: two users with sudo never run system plans at once);
* the state dir of the user whose things the plan changes (``changes_user``: an action run as the user changes a
  venv, its activate script, ~/.bashrc), so a system plan and that user's own pip-only run of the venv exclude
  each other.

In one order, the system's first, then the users' (two runs never each hold a lock the other waits for), each dir
once. The engine (wizard.runner.service.RunService._locks_for) adds its journal's own and maps each dir to the file
it takes here; the script and the roles render the list as it is.
"""

from __future__ import annotations

from wizard import lazy_re, paths

from wizard.model import PREFLIGHT, ResolvedPlan
from wizard.record import record

LOCK_FILE = "lock"  # the run service's lock in a state dir (wizard.runner.service.LOCK_NAME)
SYSTEM_STATE = paths.ROOT_STATE  # the target's system state dir
USER_STATE = ".local/state/rocm-wizard"  # a user's state dir under their home (wizard.paths.user_state_dir)
_SYSTEM_DIRS = ("/var/", "/etc/", "/opt/", "/usr/", "/srv/")
_HOME = lazy_re.compile(r"^(/home/[^/]+|/root|~)(?:/|$)")


@record
class PlanLock:
    """One state dir whose lock a plan's run takes, as the target names it."""

    state_dir: str
    system: bool  # the system's (root's to take; taken first), else a user's

    @property
    def path(self) -> str:
        return f"{self.state_dir}/{LOCK_FILE}"


def system_path(path: str) -> bool:
    """A path only root writes (a state dir there is the system's)."""
    return path.rstrip("/") == SYSTEM_STATE or path.startswith(_SYSTEM_DIRS)


def _same(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


def plan_locks(plan: ResolvedPlan, *, system_state: str | None, user_state: str | None) -> tuple[PlanLock, ...]:
    """The state dirs whose locks a run of ``plan`` takes, in the order they are taken (see the module).

    ``system_state``: the system state dir where the run keeps its own state elsewhere (None: the run's own state dir
    holds the system's, as a root run's does, or a state dir given on the command line holds everything).
    ``user_state``: the state dir of the user whose things the plan changes, as the target names it (None: none, or
    root's own things)."""
    from wizard.steps import changes_system, changes_user

    dirs: list[PlanLock] = []
    if system_state is not None and changes_system(plan):
        dirs.append(PlanLock(system_state.rstrip("/"), True))
    if plan.state_dir:
        own = system_path(plan.state_dir) or (system_state is not None and _same(plan.state_dir, system_state))
        dirs.append(PlanLock(plan.state_dir.rstrip("/"), own))
    if user_state is not None and changes_user(plan):
        dirs.append(PlanLock(user_state.rstrip("/"), False))
    out: list[PlanLock] = []
    for lk in sorted(dirs, key=lambda d: (not d.system, d.state_dir)):
        if all(not _same(o.state_dir, lk.state_dir) for o in out):
            out.append(lk)
    return tuple(out)


def changed_home(plan: ResolvedPlan) -> str | None:
    """The home of the user whose things ``plan`` changes, as its paths name it (``/home/U``, ``/root``, or ``~`` for
    a recording's venv): the venv of a step whose actions run as the user change something, else the first such path
    an action names (None: no action run as the user changes anything, or its paths are under no home)."""
    for sp in plan.steps:
        if sp.kind == PREFLIGHT:
            continue
        acts = [a for a in sp.actions if a.as_user and (a.changes or a.destructive or a.undo is not None)]
        if not acts:
            continue
        venv = sp.param("venv")
        for path in [str(venv) if venv else "", *(c.removeprefix("venv:") for a in acts for c in a.changes)]:
            m = _HOME.match(path)
            if m:
                return m.group(1)
    return None


def home_user_state(plan: ResolvedPlan) -> str | None:
    """The state dir, on the target, of the user whose things ``plan`` changes, found from their home (what the
    engine run as root takes: ``HOME/.local/state/rocm-wizard``); None for root's own things or none found."""
    home = changed_home(plan)
    if home is None or home == "/root":
        return None
    return f"{home}/{USER_STATE}"


def executor_locks(plan: ResolvedPlan, user_state: str | None = None) -> tuple[PlanLock, ...]:
    """The locks the dry-run script and the Ansible roles take for ``plan`` (they have no journal of their own: the
    plan's state dir is theirs). The user's state dir is ``user_state``, else found from the home of the things the
    plan changes; the system's is taken where the plan keeps its state in that user's (or any home's) state dir."""
    user = user_state if user_state is not None else home_user_state(plan)
    state = plan.state_dir
    in_home = state is not None and not system_path(state) and (
        (user is not None and _same(state, user)) or _HOME.match(state) is not None)
    return plan_locks(plan, system_state=SYSTEM_STATE if in_home else None, user_state=user)
