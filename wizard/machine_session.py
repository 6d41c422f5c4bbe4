"""One machine session below both front ends: the CLI's ``Context`` and the TUI's ``Services`` are thin
adapters over it, so a plan resolved in either for the same machine and options is the same plan.

A session owns, for the machine the options name (``--from``, ``--sandbox DIR [--profile P] [--root
debian12]``, or this one): the host and its executor, the facts (detected once), the mirrors in force
(mirrors.toml, then ``--mirror`` / ``--mirror-key``, then a real root's own mirror; merged once), the venv
choice, the lock wait, plan resolution with its refusals, the dry-run script, the Ansible export, the
evidence bundle, verify-again, and the run service. A rehearsal machine is another session
(:meth:`MachineSession.rehearsal`) whose machine and state live in the rehearsal's own directory.

Errors are :class:`SessionError` (one line and an exit code); the planner's refusals stay
``PlanRefused`` / ``PlanError`` so each front end words them its own way.
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from functools import cached_property
from pathlib import Path

from wizard import exit_codes
from wizard.record import record, replace

TYPE_CHECKING = False  # typing's, not imported at run time (wizard/record.py says why)
if TYPE_CHECKING:
    from wizard.host import Host
    from wizard.mirror.config import MirrorConfig
    from wizard.model import Facts, ResolvedPlan
    from wizard.planner import PlanChoice
    from wizard.realroot.machine import RealRoot
    from wizard.runner.service import Machine, RunService



class SessionError(Exception):
    """The session cannot do what was asked: one line (``message``) and the exit code a command ends with."""

    def __init__(self, message: str, code: int = exit_codes.FAILURE) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def usage_error(message: str) -> SessionError:
    return SessionError(f"error: {message}", exit_codes.USAGE)


@record
class MachineSpec:
    """Which machine, and the options that shape every plan for it (the CLI's machine options)."""

    from_: str | None = None  # a recorded machine (read-only)
    pythons: tuple[str, ...] = ()
    sandbox: str | None = None
    profile: str | None = None
    root_kind: str | None = None  # "debian12": a real root under --sandbox
    state_dir: str | None = None
    verify_python: str | None = None
    venv: str | None = None
    lock_wait: int | None = None
    allow_remove: tuple[str, ...] = ()  # --allow-remove: dependents of the distribution's ROCm a purge may remove
    channel: str | None = None  # --channel stable|nightly: which AMD wheel indexes a plan may use
    mirrors: tuple[str, ...] = ()  # --mirror ORIGIN=URL
    mirror_keys: tuple[str, ...] = ()  # --mirror-key ORIGIN=FINGERPRINT
    rehearsal: bool = False  # a rehearsal machine: its state in its own directory, whatever the environment says


def _venv_path(text: str | None, *, on_this_machine: bool) -> str | None:
    """``--venv PATH`` as an absolute path (``~`` expanded); on this machine, a path that exists and is no
    venv is refused. For a recorded machine the path is its own: only made absolute."""
    if text is None:
        return None
    if not text.strip():
        raise usage_error("--venv needs a path")
    if not on_this_machine:
        if not text.startswith(("/", "~/")):
            raise usage_error(f"--venv {text}: on a recorded or rehearsal machine give an absolute path (or ~/...)")
        return text.rstrip("/") or "/"
    path = os.path.abspath(os.path.expanduser(text))
    if os.path.exists(path) and not os.path.isfile(os.path.join(path, "pyvenv.cfg")):
        raise usage_error(f"--venv {text}: {path} exists and is not a Python venv (no pyvenv.cfg); "
                          "give an existing venv or a new path")
    return path


class MachineSession:
    """The machine a front end works on. ``host``, ``machine`` and ``facts`` may be given already made
    (tests, a recorded machine shown as if it could run); otherwise they are made from ``spec`` on first use."""

    def __init__(self, spec: MachineSpec | None = None, *, host: Host | None = None, machine: Machine | None = None,
                 facts: Facts | None = None, read_only: bool | None = None, wizard_python: str | None = None) -> None:
        spec = spec or MachineSpec()
        self.spec = spec
        self.from_ = spec.from_
        self.pythons: list[str] = list(spec.pythons)
        self.sandbox = spec.sandbox
        self.profile = spec.profile
        self.root_kind = spec.root_kind
        self.state_dir = spec.state_dir
        self.verify_python = spec.verify_python
        self._check_inputs()
        if self.from_ and self.sandbox:
            raise usage_error("--from and --sandbox name two different machines; give one")
        if self.profile and not self.sandbox:
            raise usage_error("--profile goes with --sandbox DIR")
        if self.root_kind and not self.sandbox:
            raise usage_error("--root goes with --sandbox DIR (a rehearsal on a real root)")
        # a sandbox's ~ is its user's home, not this process's: the planner expands it (like a recording's)
        self.venv = _venv_path(spec.venv, on_this_machine=not self.from_ and not self.sandbox)
        self.channel = spec.channel
        if self.venv and not self.from_ and self.venv not in self.pythons and os.path.exists(self.venv):
            self.pythons.append(self.venv)  # detected like --python: its torch, and its backup
        self.read_only: bool = self.from_ is not None if read_only is None else read_only
        self._stack = ExitStack()
        self._real_root: RealRoot | None = None
        self._given_wizard_python = wizard_python
        if machine is not None:
            self.__dict__["machine"] = machine
            host = host or machine.host
        elif host is not None:
            self.__dict__["machine"] = None  # a host given without a machine: shown, never run on
        if host is not None:
            self.__dict__["host"] = host
        if facts is not None:
            self.__dict__["facts"] = facts

    def _check_inputs(self) -> None:
        """Paths from the command line: never empty (``--sandbox ""`` is not the live machine), no control
        characters; --sandbox a directory (or not there yet), --from something that exists."""
        from wizard.inputs import InputError, cli_path, plain

        try:
            if self.sandbox is not None:
                self.sandbox = cli_path(self.sandbox, "--sandbox")
                if os.path.exists(self.sandbox) and not os.path.isdir(self.sandbox):
                    raise InputError(f"--sandbox {self.sandbox}: not a directory (a sandbox is a directory, "
                                     "created on first use)")
            if self.state_dir is not None:
                self.state_dir = cli_path(self.state_dir, "--state-dir")
            if self.from_ is not None:
                plain(self.from_, "--from")
            if self.verify_python is not None:
                plain(self.verify_python, "--verify-python")
            for py in self.pythons:
                plain(py, "--python")
        except InputError as exc:
            raise usage_error(str(exc)) from None

    def close(self) -> None:
        """Stop what the session started (a real root's mirror server)."""
        self._stack.close()

    # -- the machine -----------------------------------------------------------------------------
    @property
    def real_root(self) -> bool:
        if not self.sandbox:
            return False
        from wizard.realroot.rehearsal import is_real_root

        return bool(self.root_kind) or is_real_root(Path(self.sandbox))

    @cached_property
    def host(self) -> Host:
        from wizard.host import HostError, LiveHost, open_recorded

        try:
            if self.from_:
                return open_recorded(self.from_)
            if self.sandbox and self.real_root:
                return self._open_real_root()
            if self.sandbox:
                from wizard.sandbox import open_sandbox

                return open_sandbox(self.sandbox, self.profile)
        except HostError as exc:
            raise usage_error(str(exc)) from None
        return LiveHost()

    def _open_real_root(self) -> Host:
        from wizard.realroot.base import RealRootError
        from wizard.realroot.executor import RealRootHost
        from wizard.realroot.rehearsal import opened

        assert self.sandbox is not None
        try:
            self._real_root = self._stack.enter_context(opened(Path(self.sandbox), self.profile, self.root_kind))
        except RealRootError as exc:
            raise SessionError(f"error: {exc}", exit_codes.FAILURE) from None
        return RealRootHost(self._real_root.path)

    @cached_property
    def machine(self) -> Machine | None:
        """The machine runs act on (live, sandbox, real root); None for a recorded one."""
        from wizard import machines

        if self.read_only:
            return None
        if self.sandbox and self.real_root:
            host = self.host
            assert self._real_root is not None
            return machines.realroot(host, self._real_root)
        if self.sandbox:
            return machines.sandbox(self.host, self.sandbox, verify_python=self.verify_python,  # type: ignore[arg-type]
                                    state_dir=self.state_dir, own_state=self.spec.rehearsal)
        return machines.live(self.host, state_dir=self.state_dir)

    @property
    def lock_wait(self) -> int:
        """Seconds the preflight waits for another apt/dpkg (--lock-wait; else the planner's default)."""
        from wizard.preflight import LOCK_WAIT

        return self.spec.lock_wait if self.spec.lock_wait is not None else LOCK_WAIT

    @property
    def can_run(self) -> bool:
        return self.machine is not None

    @cached_property
    def runs(self) -> RunService:
        """The run service of this machine (a recorded machine has none: SessionError)."""
        from wizard.runner.service import RunService

        if self.machine is None:
            raise usage_error("a recorded machine (--from) has no runs: it can be looked at, planned for and exported, "
                              "never changed")
        from wizard.mirror.config import MirrorConfigError

        try:
            logins = self.mirrors.credentials()  # handed to the actions that reach a mirror, never in plan.json
        except MirrorConfigError:
            logins = ()  # a broken mirrors.toml stops planning, not status, resume or rollback
        return RunService(self.machine, logins)

    @cached_property
    def facts(self) -> Facts:
        from wizard.probes import detect

        return detect(self.host, pythons=self.pythons)

    def for_diagnosis(self, facts: Facts | None = None) -> Facts:
        """``facts`` (the session's, by default) with what diagnosis reads of this machine and ``detect`` leaves
        out for its speed: the GPUs' memory pools and MemTotal (``wizard.probes.gpu_memory``), from this session's
        host (a sandbox's root, a bundle's ``root/``, the live machine's ``/``)."""
        from wizard.probes.gpu_memory import with_gpu_memory

        return with_gpu_memory(self.facts if facts is None else facts, self.host)

    @property
    def name(self) -> str:
        return self.host.name

    @property
    def relaunch_hint(self) -> str:
        """The command that opens this machine again (after a reboot, to resume)."""
        return self.machine.command() if self.machine is not None else "rocm-wizard"

    # -- what plans are made with ----------------------------------------------------------------
    @cached_property
    def site_mirrors(self) -> MirrorConfig:
        """The site's mirrors: mirrors.toml files, then --mirror / --mirror-key (no machine is opened)."""
        from wizard.mirror.config import MirrorConfigError, check_root_sources, load_config

        try:
            return check_root_sources(load_config(list(self.spec.mirrors), list(self.spec.mirror_keys)))
        except MirrorConfigError as exc:
            raise usage_error(str(exc)) from None

    @cached_property
    def mirrors(self) -> MirrorConfig:
        """The site's mirrors, then the machine's own (a real root's rehearsal mirror)."""
        cfg = self.site_mirrors
        own = self.machine.mirrors if self.machine is not None else None
        return cfg.merged(own.mirrors) if own is not None else cfg

    @property
    def plan_state_dir(self) -> str:
        """The state dir as the machine sees it: what a plan writes into (its backup, its downloads)."""
        if self.machine is None:
            from wizard import paths

            return str(paths.state_dir(self.state_dir))
        return self.machine.machine_state

    @property
    def user_state_dir(self) -> str | None:
        """Where a user-only plan keeps its backup and progress (``paths.user_state_dir``); None when a state
        dir the user named holds everything."""
        if self.state_dir or os.environ.get("ROCM_WIZARD_STATE_DIR"):
            return None
        return "~/.local/state/rocm-wizard" if self.machine is None else self.machine.user_state

    @property
    def wizard_python(self) -> str | None:
        if self._given_wizard_python is not None:
            return self._given_wizard_python
        return self.machine.wizard_python if self.machine is not None else None

    def resolve(self, spec: str, venv: str | None = None, *, replan: bool = False) -> ResolvedPlan:
        """A plan for this machine: a shipped plan's name or a plan file, resolved against the facts with the
        venv (``venv``, else the session's), the lock wait and the mirrors in force; or a resolved-plan JSON
        file (``runs/<id>/plan.json``) loaded as it is, or with ``replan`` the plan it was made from resolved
        again for this machine. Either is held to ``wizard.runner.plan_checks``.
        Raises ``PlanRefused(reasons)`` or ``PlanError(message)`` (a plan file that cannot be read)."""
        from wizard.planner import PlanError, PlanRefused, resolve_plan
        from wizard.runner import plan_checks, planfile

        try:
            if replan and planfile.is_plan_file(spec):
                was = planfile.load(spec)
                spec = was.source_file if was.source_file and os.path.isfile(was.source_file) else was.name
            if planfile.is_plan_file(spec):
                plan = planfile.load(spec)
            else:
                plan = resolve_plan(spec, self.facts, venv=venv or self.venv, state_dir=self.plan_state_dir,
                                    lock_wait=self.lock_wait, wizard_python=self.wizard_python,
                                    mirrors=self._mirrors_for_plans(), user_state_dir=self.user_state_dir,
                                    channel=self.channel, allow_remove=self.spec.allow_remove)
        except planfile.PlanFileError as exc:
            raise PlanError(str(exc)) from None
        reasons = plan_checks.refusals(self.host, plan)
        if reasons:
            raise PlanRefused(reasons)
        return plan

    def choices(self) -> list[PlanChoice]:
        """Every shipped plan for this machine, resolved as :meth:`resolve` does, one marked recommended."""
        from wizard.planner import recommend

        return recommend(self.facts, venv=self.venv, state_dir=self.plan_state_dir, wizard_python=self.wizard_python,
                         mirrors=self._mirrors_for_plans(), user_state_dir=self.user_state_dir, channel=self.channel)

    def _mirrors_for_plans(self) -> MirrorConfig | None:
        return self.mirrors if self.mirrors.mirrors else None

    # -- what a plan becomes without running -----------------------------------------------------
    def script(self, plan: ResolvedPlan) -> str:
        """The dry-run script: the plan as a commented bash script (a state dir named on the command line holds
        everything: its lock alone, as the engine's run then takes)."""
        from wizard import script

        named = bool(self.state_dir or os.environ.get("ROCM_WIZARD_STATE_DIR"))
        return script.render(plan, self.facts, own_state_only=named)

    def write_script(self, plan: ResolvedPlan, path: Path) -> Path:
        """Write the script to ``path`` (a file, or a directory to put ``rocm-wizard-PLAN.sh`` in); its directory
        must exist (FileNotFoundError), and a link planted there is never followed."""
        from wizard.inputs.files import new_file

        if path.is_dir():
            path = path / f"rocm-wizard-{plan.name}.sh"
        if not path.parent.is_dir():
            raise FileNotFoundError(2, f"no such directory: {path.parent}")
        with new_file(path, 0o755, replace=True) as fh:
            fh.write(self.script(plan).encode("utf-8"))
        return path

    def export_ansible(self, plan: ResolvedPlan, out_dir: str) -> Path:
        """The plan as an Ansible playbook and role in ``out_dir``; the playbook's path. From the live machine or a
        recording: the standalone export (Ansible's modules, the suite file); from a ``--sandbox``: commands only."""
        from wizard.fleet.export import ExportError, PlanGroup, export
        from wizard.runner.state import private
        from wizard.script import machine_summary

        try:
            with private():  # umask 077: an export may name mirror credentials and the machine's users and paths
                # a rehearsal machine's export is bound to it and runs over its connection, which acts through
                # commands alone (a sandbox; a real root has no python3-apt for the apt module): commands only
                return export([PlanGroup(plan, machine=tuple(machine_summary(self.facts)))], out_dir,
                              modules=self.sandbox is None)
        except ExportError as exc:
            raise usage_error(str(exc)) from None

    def write_bundle(self, out: str) -> str:
        """This machine's evidence, user and host names redacted, into ``out`` (a directory or .tar.gz): every
        Python environment detect found, and the pending or last run's plan, journal and step logs. Returns
        the line that says where it went and what it holds."""
        from wizard.evidence import Redactor, check_out, collect, write_bundle
        from wizard.inputs import InputError, cli_path

        if self.read_only:
            raise usage_error("report collects the live machine's evidence; --from names a recording already")
        try:
            out = cli_path(out, "--bundle")
            check_out(out)  # before anything is collected
        except (InputError, FileExistsError, FileNotFoundError) as exc:
            raise usage_error(str(exc)) from None
        env = self.host.environ
        users = {env.get(k, "") for k in ("USER", "LOGNAME", "SUDO_USER")}
        users.add(os.path.basename(env.get("HOME", "").rstrip("/")))
        redact = Redactor(tuple(sorted(u for u in users if u)), os.uname().nodename if self.name == "live" else None)
        files = collect(self.host, self.pythons, self.facts)
        files.update(self._run_files())
        try:
            path = write_bundle(files, out, redact)
        except (FileExistsError, FileNotFoundError) as exc:
            raise usage_error(str(exc)) from None
        except OSError as exc:
            raise SessionError(f"cannot write {out}: {exc.strerror or exc}") from None
        freezes = sum(1 for name in files if name.startswith("python/") and name.endswith("pip-freeze.txt"))
        listed = files.get("python/envs.jsonl", "").count("\n")
        run_note = "; the last run's plan, journal and step logs" if "run/journal.jsonl" in files else ""
        return (f"Evidence written to {path} (user and host names redacted): {listed} Python environment(s), "
                f"{freezes} with pip freeze{run_note}.")

    def _run_files(self) -> dict[str, str]:
        """The pending or last run's plan, journal and step logs (none where no run ever started)."""
        from wizard.evidence import run_files
        from wizard.runner.service import RunError

        if not self.can_run:
            return {}
        try:
            run = self.runs.current()
        except (RunError, OSError):
            return {}
        return {} if run is None else run_files(run.dir, run.logs)

    def verify_again(self, plan: ResolvedPlan) -> str:
        """Run the suite again on what the plan set up; its summary line. SessionError (one line) when there
        is nothing to verify with."""
        from wizard.verify import SuiteOptions, resolve_python, run_verify
        from wizard.verify.view import summary_text

        venv = dict(plan.target).get("venv")
        if self.name.startswith("sandbox:") or self.verify_python:
            if not self.verify_python:
                raise SessionError("skipped: no torch to verify with (start the rehearsal with --verify-python PATH)")
            python, device = self.verify_python, "cpu"
        elif venv:
            python, device = f"{venv}/bin/python", "auto"
        else:
            raise SessionError("this plan set up no venv to verify (a container plan: run `rocm-wizard verify "
                               "--image TAG`)")
        report = run_verify(python=resolve_python(python), options=SuiteOptions(device=device), facts=self.facts)
        return summary_text(report.to_json())

    # -- rehearsals ------------------------------------------------------------------------------
    @property
    def rehearsal_root(self) -> Path:
        """Where this machine's rehearsal machines live: ``<state>/rehearsal`` (the state checks skip it)."""
        from wizard import paths

        return paths.rehearsal_dir(self.state_dir)

    def rehearsal(self, directory: Path, profile: str, *, real: bool = False,
                  verify_python: str | None = None) -> MachineSession:
        """The session of a rehearsal machine in ``directory`` (a stand-in sandbox, or with ``real`` a real
        Debian 12 root built on first use): the same site mirrors, lock wait and venv choice as this one; its
        machine and state in ``directory`` only."""
        spec = replace(self.spec, from_=None, pythons=(), sandbox=str(directory), profile=profile,
                       root_kind="debian12" if real else None, state_dir=None, rehearsal=True,
                       verify_python=verify_python, venv=self.venv, channel=self.channel)
        session = MachineSession(spec)
        try:
            session.machine  # opens (or builds) the machine now: its mirror is served until close()
        except BaseException:
            session.close()
            raise
        return session


__all__ = ["MachineSession", "MachineSpec", "SessionError", "usage_error"]
