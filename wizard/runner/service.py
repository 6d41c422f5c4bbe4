"""The run service: the one way both front ends start, resume, retry, roll back, abandon and stop runs.

It owns the lock (one wizard per machine), the privilege (root asked for once, before the first
change, through the executor; kept alive while the run goes on), the rule that a new plan never
starts while another run is unfinished (the same message in the CLI and the TUI, naming the run and
the commands that finish or abandon it), the binding of a retry or a resume to the run it continues,
and the check that a run's plan.json is the one it started with. The CLI's console view and the
Textual app are two views of it: each passes an event callback and, where root is needed, how to ask.
"""

from __future__ import annotations

import os
import subprocess
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Sequence

from wizard import exit_codes
from wizard.host import Host
from wizard.mirror.config import MirrorConfig
from wizard.mirror.credentials import Credential
from wizard.model import Action, ResolvedPlan
from wizard.record import field, record
from wizard.runner import events as ev
from wizard.runner import plan_checks, runs, state
from wizard.runner.engine import BOOT_ID, Engine, Mode, Outcome
from wizard.runner.executor import Executor
from wizard.runner.journal import JournalError, RunView, atomic_write
from wizard.runner.lock import HelperLock, Lock, LockHeld, LockUnavailable, held
from wizard.runner.planfile import PlanFileError
from wizard.runner.privilege import PrivilegeError
from wizard.runner.records import RunEnd, RunState
from wizard.runner.rollback import RollbackPlan, build
from wizard.runner.signals import stop_on_signals
from wizard.runner.state import StateError

LOCK_NAME = "lock"
SYSTEM_LOCK_HELP = ("a plan that changes the system takes the system's lock as root: run `sudo -v` first, or run the "
                    "wizard with sudo")
EventSink = Callable[[ev.Event], None]
Authenticate = Callable[[], None]  # asks for root once (raises PrivilegeError when not granted)


class RunError(Exception):
    """A run cannot start or go on; ``message`` is one line (or a few) for the user. ``code`` is the
    CLI's exit code for it (1: failure, 2: bad usage, 4: locked)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@contextmanager
def one_line_errors() -> Iterator[None]:
    """A journal that cannot be read or written, a full disk, a state file gone: RunError, one line."""
    try:
        yield
    except (JournalError, PlanFileError) as exc:
        raise RunError(str(exc)) from None
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        raise RunError(f"{where}{exc.strerror or exc}") from None


class RunBlocked(RunError):
    """Another run is unfinished: a new plan may not start."""


@record
class LockSpec:
    """One lock a run takes: its file, who takes it, and where it stands in the one order locks are taken in."""

    path: Path
    prefix: tuple[str, ...] | None  # the helper runs behind it (HelperLock); None: this process takes it (Lock)
    rank: tuple[int, str]  # (0, ""): the system's; (1, USER): a user's
    journal: bool = False  # the journal's own: taken after its state dir is checked (RunService._lock)

    @property
    def key(self) -> str:
        """The file, whatever the spelling (a dir named through a symlink, ``..``): a set naming it twice takes it once."""
        return os.path.realpath(self.path)


@record
class PendingRun:
    """A run the journal says is not finished: what a front end offers at start."""

    run_id: str
    plan: str | None
    state: RunState
    next_step: int | None
    total_steps: int
    step_titles: tuple[str, ...]
    rebooted: bool  # the boot id changed since the reboot step
    journal: str


@record
class Status:
    """Where the current (or last) run stands: what ``rocm-wizard status`` prints."""

    run_id: str | None
    plan: str | None
    step: int | None  # 1-based: the step running, failed or next
    total_steps: int
    state: RunState
    journal: str | None
    plan_file: str | None
    logs: tuple[str, ...]
    next: str
    skipped: tuple[tuple[int, str], ...] = ()  # (1-based step, reason)
    reboot_needed: bool = False
    message: str = ""
    drift: tuple[tuple[int, str], ...] = ()  # (1-based step, its check): recorded done, the machine says not


@record(frozen=False)
class Machine:
    """Where runs happen: the machine's files (host), how actions reach it (executor), where its
    state and logs live, and how the user names it on a command line."""

    host: Host
    executor: Executor
    state_root: Path
    log_root: Path
    machine_state: str  # the state dir as the machine sees it (what plans write into)
    resume_command: list[str]  # what the boot-time resume runs
    cli: list[str] = field(default_factory=lambda: ["rocm-wizard"])  # the wizard's command for this machine
    wizard_python: str | None = None  # the interpreter a plan's steps run the wizard with (None: this one)
    mirrors: MirrorConfig | None = None  # the machine's own mirrors (a rehearsal root's local one)
    resume_env: tuple[tuple[str, str], ...] = ()  # the environment the boot-time resume keeps
    user_state: str | None = None  # the user's state dir as the machine sees it (a user-only plan's; None: none)
    user_state_root: Path | None = None  # that dir here (a sandbox's under its root; None: none)
    user_state_owner: str | None = None  # who takes its lock: that user, for a wizard run as root (None: this process)
    # a wizard run as root on a live machine: the state dir of a user named by the run (the journal's, the owner of
    # the venv the plan changes), as the machine sees it, its lock taken as that user (None: only user_state's)
    user_state_for: Callable[[str], str | None] | None = None
    # the system state dir (/var/lib/rocm-wizard) where the journal's is another (a user's own run): a plan that
    # changes the system takes its lock too (None: the journal's state dir is the system's, or holds everything)
    system_state_root: Path | None = None
    system_state_owner: str | None = None  # "root": its lock taken through `sudo -n --` (None: this process)

    def command(self, *words: str) -> str:
        return " ".join([*self.cli, *words])


class RunService:
    def __init__(self, machine: Machine, credentials: Sequence[Credential] = ()) -> None:
        self.machine = machine
        self.credentials = tuple(credentials)  # the logins of the mirrors in force (kept out of plan.json)

    # -- what is there ---------------------------------------------------------------------
    def current(self) -> runs.Run | None:
        return runs.current(self.machine.state_root, self.machine.log_root)

    def _view(self, run: runs.Run) -> RunView:
        try:
            return run.view()
        except JournalError as exc:
            raise RunError(f"the journal of run {run.id} is damaged: {exc}") from None

    def _now(self, view: RunView) -> RunView:
        """A journal that stops mid-run reads `interrupted`; while another wizard holds the lock it is `running`
        (for what is shown: never called with the lock held, which would be this process's own)."""
        if view.state in (RunState.INTERRUPTED, RunState.ROLLING_BACK) and held(self.machine.state_root / LOCK_NAME):
            view.state = RunState.RUNNING
        return view

    def pending(self) -> PendingRun | None:
        run = self.current()
        if run is None:
            return None
        try:
            view = self._now(run.view())
        except JournalError:
            return None
        if not view.state.blocks_new_run:
            return None
        boot = self.machine.host.read_text(BOOT_ID)
        rebooted = bool(view.reboot_boot_id and boot and boot.strip() != view.reboot_boot_id)
        return PendingRun(run.id, view.plan, view.state, view.next_step, view.total_steps,
                          tuple(view.step_titles), rebooted, str(run.journal.path))

    def running_elsewhere(self) -> bool:
        """The current run is running in another rocm-wizard (its lock held): a new plan waits for it (exit 4)."""
        run = self.current()
        if run is None:
            return False
        try:
            return self._now(run.view()).state is RunState.RUNNING
        except JournalError:
            return False

    def blocked(self, *, locked: bool = False) -> str | None:
        """Why a new plan cannot start now (None: it can). ``locked``: this process holds the lock."""
        run = self.current()
        if run is None:
            return None
        try:
            view = run.view() if locked else self._now(run.view())
        except JournalError as exc:
            return (f"run {run.id}'s journal is damaged ({exc}); `{self.machine.command('abandon')}` forgets it "
                    "(nothing on the machine changes)")
        if not view.state.blocks_new_run:
            return None
        m = self.machine
        if view.state is RunState.RUNNING:
            return (f"run {run.id} ({view.plan}) is running in another rocm-wizard; wait for it "
                    f"(`{m.command('status')}` shows where it is)")
        ways = []
        if view.state.resumable:
            ways.append(f"`{m.command('resume')}` continues it")
        if view.state.can_roll_back:
            ways.append(f"`{m.command('rollback')}` undoes it")
        ways.append(f"`{m.command('abandon')}` forgets it (nothing on the machine changes)")
        return f"run {run.id} ({view.plan}) is {view.state.value}: " + ", ".join(ways)

    def current_plan(self) -> ResolvedPlan | None:
        run = self.current()
        return self._plan(run) if run is not None else None

    def _plan(self, run: runs.Run) -> ResolvedPlan:
        try:
            return run.plan()
        except PlanFileError as exc:
            raise RunError(str(exc)) from None

    # -- running -----------------------------------------------------------------------------
    def _lock(self) -> Lock:
        """The machine's lock, after the state and log dirs were checked (owner, mode) and made 0700
        (called inside ``state.private()``: umask 077)."""
        try:
            state.prepare(self.machine.state_root, self.machine.log_root)
        except StateError as exc:
            raise RunError(f"refusing to use the state dir: {exc}") from None
        except OSError as exc:
            raise RunError(f"the state dir {self.machine.state_root} cannot be made: {exc.strerror}") from None
        try:
            return Lock(self.machine.state_root / LOCK_NAME).acquire()
        except LockHeld as exc:
            raise RunError(str(exc), exit_codes.LOCKED) from None

    @contextmanager
    def _held(self, plan: ResolvedPlan | None = None, user: str | None = None,
              authorize: Callable[[], None] | None = None) -> Iterator[list[Lock | HelperLock]]:
        """umask 077, the state checked, the locks held, errors as one line. With ``plan`` (what the run will run, as
        far as it is known before its journal is read under the lock), every lock :meth:`_lock_plan_state` names,
        in its one order; without one, the journal's. The locks are released last, in reverse."""
        with state.private():
            held_now: list[Lock | HelperLock] = []
            try:
                self._lock_plan_state(held_now, plan, user, authorize)
                with one_line_errors():
                    yield held_now
            finally:
                for lock in reversed(held_now):
                    lock.release()

    def _unfinished_elsewhere(self, held_now: list[Lock | HelperLock]) -> str | None:
        """Why a new plan cannot start for a run not finished in another state dir this run holds the lock of (the
        system's, for a user's own run of a system plan; a user's, for root's run that changes that user's venv):
        it changed what this plan changes. Read as each lock was taken (through the same ``sudo -n``: root's state
        dir is 0700), with the dry-run script's reader (``wizard.script.UNFINISHED_RUN``); None: none is."""
        from wizard.script import UNFINISHED_RUN

        mine = os.path.realpath(self.machine.state_root)
        for lock in held_now:
            there = lock.path.parent
            if os.path.realpath(there) == mine:
                continue
            prefix = lock.prefix if isinstance(lock, HelperLock) else ()
            try:
                r = subprocess.run([*prefix, "sh", "-c", UNFINISHED_RUN, "sh", str(there)], capture_output=True,
                                   text=True, timeout=60, check=False)
            except (OSError, subprocess.TimeoutExpired) as exc:
                return f"cannot read whether a run in {there} is finished: {exc}"
            if r.returncode != 0:  # the reader itself always exits 0: sudo refused it (or it was killed)
                why = " ".join(r.stderr.split()) or f"exit {r.returncode}"
                return f"cannot read whether a run in {there} is finished: {why}"
            run = r.stdout.strip()
            if run:
                who = "sudo " if prefix[:1] == ("sudo",) and "-u" not in prefix else ""
                owner = f" as {prefix[prefix.index('-u') + 1]}" if "-u" in prefix else ""
                return (f"run {run} in {there} is not finished (it changed what this plan changes): "
                        f"`{who}rocm-wizard status`{owner} shows where it stands; `{who}rocm-wizard resume` continues "
                        f"it, `{who}rocm-wizard rollback` undoes it, `{who}rocm-wizard abandon` forgets it")
        return None

    def _locks_for(self, plan: ResolvedPlan | None, user: str | None) -> list[LockSpec]:
        """The one rule for which locks a run takes, in the one order they are taken in (the system's, then the
        users' by name: two runs never each hold a lock the other waits for), each file once:

        * the lock of the state dir its journal is in;
        * the lock of the state dir its plan keeps its state in (its backup, the dry-run script's progress) where
          that is another: a plan that changes nothing system-wide keeps its state in its user's state dir whoever
          runs it (the planner's ``user_state_dir``);
        * a user's lock where the plan changes something of that user's (an action run as the user changes a venv,
          its activate script, ~/.bashrc: ``changes_user``): the user the run's actions run as (``user``: the
          journal's, else the executor's: SUDO_USER, or the owner of the venv), so a system plan run by root and
          the user's own pip-only run of that venv exclude each other;
        * the system state dir's lock where the plan changes something system-wide and the journal is elsewhere (a
          user's own run of a system plan), so two users with sudo never run system plans at once.

        Two users' own user-only runs never meet, and a user's run of a user-only plan needs no root. A user's lock
        is taken as that user (``HelperLock``) by a wizard run as root, the system's through ``sudo -n --`` by a
        wizard that is not root."""
        from wizard.steps import plan_locks

        m = self.machine
        own = (1, "") if m.system_state_root is not None else (0, "")
        specs = [LockSpec(m.state_root / LOCK_NAME, None, own, journal=True)]
        if plan is not None:
            users = self._users_spec(user)
            system = str(m.system_state_root) if m.system_state_root is not None else None
            # the rule (wizard.steps.plan_locks) names each state dir as the machine does; here each is the file
            # this wizard takes: the journal's own dir is taken above, a dir this machine does not know (a plan made
            # with another state dir) is none of this run's
            for lk in plan_locks(plan, system_state=system, user_state=users[0] if users else None):
                if lk.state_dir == system and m.system_state_root is not None:
                    owner = m.system_state_owner
                    specs.append(LockSpec(m.system_state_root / LOCK_NAME, ("sudo", "-n", "--") if owner else None,
                                          (0, "")))
                elif (m.user_state is not None and m.user_state_root is not None
                      and lk.state_dir == m.user_state.rstrip("/")):
                    specs.append(self._user_spec(m.user_state_root, m.user_state_owner))
                if users and lk.state_dir == users[0].rstrip("/"):
                    specs.append(users[1])
        out: list[LockSpec] = []
        for spec in sorted(specs, key=lambda sp: (sp.rank, not sp.journal, sp.key)):
            if all(sp.key != spec.key for sp in out):
                out.append(spec)
        return out

    @staticmethod
    def _user_spec(root: Path, owner: str | None) -> LockSpec:
        prefix = ("sudo", "-n", "-u", owner, "-H", "--") if owner else None
        return LockSpec(root / LOCK_NAME, prefix, (1, owner or ""))

    def _users_spec(self, user: str | None) -> tuple[str, LockSpec] | None:
        """The state dir (as the machine names it) and lock of the user whose things the run's actions change
        (``user``; None: the machine's user); None: no user's (root's own things, or no user state dir known)."""
        m = self.machine
        if user and user != "root" and user != m.user_state_owner and m.user_state_for is not None:
            there = m.user_state_for(user)
            return (there, self._user_spec(Path(there), user)) if there else None
        if user == "root" and m.user_state_for is not None:
            return None  # root's own things: its state dir is the journal's
        if m.user_state_root is None:
            return None
        return (m.user_state or str(m.user_state_root), self._user_spec(m.user_state_root, m.user_state_owner))

    def _lock_plan_state(self, held_now: list[Lock | HelperLock], plan: ResolvedPlan | None,
                         user: str | None = None, authorize: Callable[[], None] | None = None) -> None:
        """Take every lock :meth:`_locks_for` names for ``plan`` that ``held_now`` lacks, in its order (``user``:
        whose things the run changes, None: the executor says; ``authorize``: asks for root before the system's lock
        is taken through sudo). Start, resume and rollback all go through here."""
        if plan is not None and user is None:
            user = self.machine.executor.user_for(plan)
        have = {os.path.realpath(lock.path) for lock in held_now}
        for spec in self._locks_for(plan, user):
            if spec.key in have:
                continue
            if spec.journal:
                held_now.append(self._lock())
            else:
                held_now.append(self._take(spec, authorize))
            have.add(spec.key)

    def _take(self, spec: LockSpec, authorize: Callable[[], None] | None) -> Lock | HelperLock:
        system = spec.rank[0] == 0
        try:
            if spec.prefix is None:
                why = state.not_linked(spec.path)
                if why:
                    raise RunError(f"refusing to use the state dir: {why}")
                return Lock(spec.path).acquire()
            if system and authorize is not None:
                authorize()
            return HelperLock(spec.path, spec.prefix).acquire()
        except LockHeld as exc:
            raise RunError(str(exc), exit_codes.LOCKED) from None
        except LockUnavailable as exc:
            raise RunError(f"{exc}; {SYSTEM_LOCK_HELP}" if system else str(exc)) from None

    def ensure_unlocked(self) -> None:
        """RunError (exit 4) naming the holder when another wizard holds the lock now."""
        with state.private():
            self._lock().release()

    def needs_authentication(self, plan: ResolvedPlan) -> bool:
        return self.machine.executor.needs_authentication([a for s in plan.steps for a in s.actions])

    def _rights(self, actions: Sequence[Action], *, yes: bool, authenticate: Authenticate | None) -> None:
        ex = self.machine.executor
        if not ex.needs_authentication(actions):
            return
        try:
            if authenticate is not None:
                authenticate()
            else:
                ex.authenticate(yes=yes)
        except PrivilegeError as exc:
            raise RunError(str(exc)) from None

    def _asker(self, *, yes: bool, authenticate: Authenticate | None) -> Callable[[Sequence[Action]], None]:
        """Asks for root once per run (:meth:`_rights`): before the system's lock where a wizard that is not root
        takes it through sudo, and before the first change."""
        granted: list[bool] = []

        def ask(actions: Sequence[Action]) -> None:
            if granted or not self.machine.executor.needs_authentication(actions):
                return
            self._rights(actions, yes=yes, authenticate=authenticate)
            granted.append(True)

        return ask

    @staticmethod
    def _actions(plan: ResolvedPlan | None) -> list[Action]:
        return [a for s in plan.steps for a in s.actions] if plan is not None else []

    def _peek(self) -> tuple[ResolvedPlan | None, str | None]:
        """The current run's plan and user read before its lock is held, for the locks taken in their order (read
        again under them; a run that changed meanwhile has the locks its own plan names taken after)."""
        run = self.current()
        if run is None:
            return None, None
        try:
            return run.plan(), run.view().user
        except (JournalError, PlanFileError, OSError):
            return None, None

    def _engine(self, plan: ResolvedPlan, run: runs.Run, on_event: EventSink | None, *, yes: bool,
                ask_reboot: Callable[[], bool] | None, cancel: threading.Event | None,
                skip_preflight: Sequence[str] = ()) -> Engine:
        from wizard.mirror import credentials

        try:
            logins = credentials.load(run.dir)  # the run's own, saved when it started (a resume has no --mirror)
        except credentials.CredentialError as exc:
            raise RunError(str(exc)) from None
        return Engine(self.machine.host, plan, run, executor=self.machine.executor, on_event=on_event, yes=yes,
                      ask_reboot=ask_reboot, cancel=cancel, resume_command=self.machine.resume_command,
                      resume_env=self.machine.resume_env, skip_preflight=skip_preflight, cli=self.machine.cli,
                      credentials=logins)

    @staticmethod
    def check_skips(plan: ResolvedPlan, skip_preflight: Sequence[str]) -> None:
        names = [a.name for a in plan.preflight if a.name]
        unknown = [n for n in skip_preflight if n not in names]
        if unknown:
            raise RunError(f"--skip-preflight {unknown[0]}: this plan has no such check "
                           f"(its checks: {', '.join(names) or 'none'})", 2)

    def start(self, plan: ResolvedPlan, *, on_event: EventSink | None = None, yes: bool = False,
              authenticate: Authenticate | None = None, ask_reboot: Callable[[], bool] | None = None,
              cancel: threading.Event | None = None, skip_preflight: Sequence[str] = ()) -> Outcome:
        """A new run of ``plan``. Refused (RunBlocked) while another run is unfinished."""
        self.check_skips(plan, skip_preflight)
        refused = plan_checks.refusals(self.machine.host, plan)
        if refused:
            raise RunError("\n".join(f"refused: {r}" for r in refused), 5)
        actions = [a for s in plan.steps for a in s.actions]
        rights = self._asker(yes=yes, authenticate=authenticate)
        with self._held(plan, authorize=lambda: rights(actions)) as held_now:
            why = self.blocked(locked=True) or self._unfinished_elsewhere(held_now)
            if why:
                raise RunBlocked(why)
            self._check_binding(plan, skip_preflight, cancel)
            rights(actions)
            before = self.current()
            run = runs.create(self.machine.state_root, self.machine.log_root, plan)
            from wizard.mirror import credentials

            credentials.save(run.dir, credentials.needed_by(plan, self.credentials))
            with self.machine.executor.kept_alive(actions), stop_on_signals(cancel) as stop:
                out = self._engine(plan, run, on_event, yes=yes, ask_reboot=ask_reboot, cancel=stop,
                                   skip_preflight=skip_preflight).execute(mode=Mode.START)
            self._keep_current(before, run, plan, out)
            return out

    def _keep_current(self, before: runs.Run | None, run: runs.Run, plan: ResolvedPlan, out: Outcome) -> None:
        """A run that finished having changed nothing (a finished plan asked again: every change skipped by its check)
        does not take the place of the finished run whose result the machine shows: ``status``, ``resume`` and
        ``rollback`` go on acting on that one (its rollback restores the machine from before it). Its journal and
        logs stay under runs/."""
        if before is None or out.state is not RunState.DONE:
            return
        try:
            if self._view(before).state is not RunState.DONE:
                return
        except RunError:
            return
        ran = run.view().ran_actions
        if any(a.changes or a.destructive for s, i in ran if s < len(plan.steps) and i < len(plan.steps[s].actions)
               for a in (plan.steps[s].actions[i],)):
            return
        atomic_write(self.machine.state_root / "current", before.id + "\n")

    def _check_binding(self, plan: ResolvedPlan, skip_preflight: Sequence[str],
                       cancel: threading.Event | None) -> None:
        """The plan's machine binding (``wizard.binding``, the first check of its preflight) run before a run is
        recorded: a plan made for another machine is refused like ``plan_checks``' refusals (exit 5), with the
        machine's runs left as they were. Recorded as a failed run, it blocked every new plan, the ``--replan``
        its own message names included, and no ``resume`` of it could ever pass. The engine runs the check again
        as the run's step 1; a check that cannot run here (no python3) is left to it, as before."""
        from wizard import binding

        check = next((a for a in plan.preflight if a.name == binding.NAME), None)
        if check is None or binding.NAME in skip_preflight:
            return
        out: list[bytes] = []
        res = self.machine.executor.run(check, on_output=out.append, cancel=cancel)
        said = [line.strip() for line in b"".join(out).decode("utf-8", "replace").splitlines()]
        why = next((line for line in said if line.startswith(binding.REFUSAL)), None)
        if res.ok or why is None:
            return
        m = self.machine
        why = why.split("; resolve the plan again", 1)[0]  # what resolves it again, said for this machine below
        raise RunError(f"refused: {why}; nothing was changed and no run was recorded: "  # one line (a fleet row's)
                       f"`{m.command('--plan', 'FILE', '--replan')}` resolves that plan file again for this machine, "
                       f"`{m.command('--plan', plan.name)}` plans {plan.name} for it (a fleet: fleet run --replan)",
                       exit_codes.REFUSED)

    def resume(self, *, run_id: str | None = None, on_event: EventSink | None = None, yes: bool = False,
               authenticate: Authenticate | None = None, ask_reboot: Callable[[], bool] | None = None,
               cancel: threading.Event | None = None, skip_preflight: Sequence[str] = ()) -> Outcome:
        """Continue the current run: after a reboot, a crash or a stop, or (a failed run) retry it.
        ``run_id``: the run the caller means; refused when the current run is another one."""
        rights = self._asker(yes=yes, authenticate=authenticate)
        was, was_user = self._peek()
        with self._held(was, was_user, authorize=lambda: rights(self._actions(was))) as locks:
            run = self._bound(run_id, "resume")
            view = self._view(run)
            if view.finished and view.state is not RunState.DONE:  # a finished run resumes only to repair drift
                return Outcome(view.state, run.id, f"run {run.id} ({view.plan}) is already {view.state.value}; "
                                                   "nothing to resume")
            if not view.state.resumable and view.state is not RunState.DONE:
                raise RunError(f"run {run.id} ({view.plan}) is {view.state.value}: "
                               f"`{self.machine.command('rollback')}` continues the rollback")
            plan = self._plan(run)
            self._check_digest(run, view)
            actions = self._actions(plan)
            self._lock_plan_state(locks, plan, view.user, authorize=lambda: rights(actions))
            self.check_skips(plan, skip_preflight)
            rights(actions)
            mode = Mode.RETRY if view.state is RunState.FAILED else Mode.RESUME
            with self.machine.executor.kept_alive(actions), stop_on_signals(cancel) as stop:
                return self._engine(plan, run, on_event, yes=yes or view.yes, ask_reboot=ask_reboot, cancel=stop,
                                    skip_preflight=skip_preflight).execute(mode=mode)

    def _bound(self, run_id: str | None, what: str) -> runs.Run:
        run = self.current()
        if run is None:
            raise RunError(f"no run to {what} (state dir {self.machine.state_root})")
        if run_id is not None and run.id != run_id:
            raise RunError(f"run {run_id} is no longer the current run (that is {run.id}); nothing was {what}d")
        return run

    @staticmethod
    def _check_digest(run: runs.Run, view: RunView) -> None:
        """plan.json is byte for byte the plan the journal's run-start recorded (sha256): an edited plan
        (a step removed after a crash) would credit journal records to the wrong actions."""
        if view.state is RunState.NOT_STARTED:
            return
        if not view.plan_digest:
            raise RunError(f"run {run.id}'s journal records no digest of its plan: refusing to go on with a plan "
                           "it cannot be checked against")
        if run.plan_digest() != view.plan_digest:
            raise RunError(f"{run.plan_path} changed since run {run.id} started: refusing to go on with a plan "
                           "the journal does not describe")

    def rollback_plan(self, run_id: str | None = None) -> tuple[runs.Run, RollbackPlan]:
        """What a rollback of the current run would do (and what it cannot restore), changing nothing."""
        run = self._bound(run_id, "roll back")
        view = self._view(run)
        plan = self._plan(run)
        rb = RollbackPlan()
        if view.rollback is not None:  # an interrupted or failed rollback goes on with its own actions
            from wizard.runner.planfile import action_from_json

            try:
                rb.actions = [(str(d.get("why", "")), action_from_json(d.get("action") or {}))
                              for n, d in enumerate(view.rollback.actions) if n not in view.rolled_back]
            except PlanFileError as exc:
                raise RunError(f"the journal of run {run.id} holds a rollback action that cannot be read: {exc}") from None
            rb.cannot = list(view.rollback.cannot)
            return run, rb
        return run, build(self.machine.host, plan, view)

    def rollback(self, *, run_id: str | None = None, on_event: EventSink | None = None, yes: bool = False,
                 authenticate: Authenticate | None = None, cancel: threading.Event | None = None) -> Outcome:
        rights = self._asker(yes=yes, authenticate=authenticate)
        was, was_user = self._peek()
        with self._held(was, was_user, authorize=lambda: rights(self._actions(was))) as locks:
            run = self._bound(run_id, "roll back")
            view = self._view(run)
            if view.state is RunState.ROLLED_BACK:
                return Outcome(view.state, run.id, f"run {run.id} is already rolled back")
            if not view.state.can_roll_back:
                raise RunError(f"run {run.id} ({view.plan}) is {view.state.value}: there is nothing to roll back")
            self._check_digest(run, view)
            _, rb = self.rollback_plan(run.id)
            plan = self._plan(run)
            self._lock_plan_state(locks, plan, view.user, authorize=lambda: rights(self._actions(plan)))
            actions = [a for _, a in rb.actions]
            rights(actions)
            with self.machine.executor.kept_alive(actions), stop_on_signals(cancel) as stop:
                engine = self._engine(plan, run, on_event, yes=yes, ask_reboot=None, cancel=stop)
                return engine.rollback(rb.actions, rb.cannot)

    def abandon(self, run_id: str | None = None) -> str:
        """Forget an unfinished run (the journal says so; nothing on the machine changes)."""
        with self._held():
            run = self._bound(run_id, "abandon")
            try:
                view = run.view()
                state = view.state
            except JournalError:
                state = RunState.INTERRUPTED
            if state.finished:
                return f"run {run.id} is already {state.value}; nothing to abandon"
            run.journal.append(RunEnd(RunState.ABANDONED, message="abandoned by the user; nothing was changed by that"))
            return (f"run {run.id} is abandoned: nothing on the machine was changed by that; what the run did "
                    f"stays done (its journal and logs stay in {run.dir} and {run.logs})")

    # -- status ------------------------------------------------------------------------------
    def status(self) -> Status:
        m = self.machine
        run = self.current()
        if run is None:
            return Status(None, None, None, 0, RunState.NONE, None, None, (),
                          f"no run yet: `{m.command('plans')}` lists what can run")
        v = self._now(self._view(run))
        step: int | None = None
        if v.state in (RunState.FAILED,) and v.failed_step is not None:
            step = v.failed_step
        elif v.state is RunState.REBOOT_PENDING and v.reboot_step is not None:
            step = v.reboot_step
        elif not v.finished:
            step = v.next_step
        logs = tuple(sorted(str(p) for p in run.logs.glob("*.log"))) if run.logs.is_dir() else ()
        nxt = {
            RunState.DONE: "nothing: the run finished",
            RunState.ROLLED_BACK: "nothing: the run was rolled back",
            RunState.ABANDONED: "nothing: the run was abandoned",
            RunState.REBOOT_PENDING: f"reboot, then `{m.command('resume')}` continues (automatic after boot when "
                                     "started with --yes)",
            RunState.FAILED: f"`{m.command('resume')}` retries the failed action, `{m.command('rollback')}` undoes "
                             "the run",
            RunState.INTERRUPTED: f"`{m.command('resume')}` continues where the run was interrupted",
            RunState.STOPPED: f"`{m.command('resume')}` continues, `{m.command('rollback')}` undoes the run",
            RunState.NOT_STARTED: f"`{m.command('resume')}` starts it",
            RunState.ROLLING_BACK: f"`{m.command('rollback')}` continues the interrupted rollback",
            RunState.ROLLBACK_FAILED: f"`{m.command('rollback')}` tries the failed rollback action again",
            RunState.RUNNING: f"nothing: another rocm-wizard is running it; `{m.command('status')}` shows where it is",
        }.get(v.state, f"`{m.command('resume')}`")
        if v.reboot_needed and v.state.finished:
            nxt = "reboot: the kernel driver changed and is loaded only after a reboot"
        drift = self._drift(run, v)
        if drift and v.state is RunState.DONE:
            nxt = f"`{m.command('resume')}` runs the drifted step(s) again"
        return Status(run.id, v.plan, None if step is None else step + 1, v.total_steps, v.state,
                      str(run.journal.path), str(run.plan_path), logs, nxt,
                      tuple((k + 1, r) for k, r in sorted(v.skipped_steps.items())), v.reboot_needed, v.message,
                      drift)

    def _drift(self, run: runs.Run, view: RunView) -> tuple[tuple[int, str], ...]:
        """The done steps whose check fails now; checks that would ask for a password are left out."""
        if view.state in (RunState.ROLLED_BACK, RunState.ABANDONED, RunState.NOT_STARTED):
            return ()
        try:
            plan = self._plan(run)
        except RunError:
            return ()
        checks = [s.check for s in plan.steps if s.check is not None]
        if not checks or self.machine.executor.needs_authentication(checks):
            return ()
        engine = self._engine(plan, run, None, yes=False, ask_reboot=None, cancel=None)
        return tuple((i + 1, step.check.description if step.check else step.title) for i, step in engine.drift(view))
