"""Sub-commands. Each module: ``add_arguments(parser)`` and ``run(args, ctx) -> int``.

Modules import only the standard library at their top; heavy imports go inside ``run``.
"""

from __future__ import annotations

import argparse
import os
from contextlib import ExitStack
from functools import cached_property
from typing import TYPE_CHECKING

from wizard import exit_codes

if TYPE_CHECKING:
    from pathlib import Path

    from wizard.host import Host
    from wizard.model import Facts, ResolvedPlan
    from wizard.mirror.config import MirrorConfig
    from wizard.realroot.machine import RealRoot
    from wizard.runner.service import Machine, RunService


class CommandError(Exception):
    """A command ends with a one-line message and an exit code (no traceback)."""

    def __init__(self, message: str, code: int = exit_codes.FAILURE) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def usage_error(message: str) -> CommandError:
    return CommandError(f"error: {message}", exit_codes.USAGE)


def resolve_plan_or_fail(spec: str, ctx: Context) -> ResolvedPlan:
    """The planner's answer, or the CLI's: exit 2 for a bad plan, exit 5 with one line per reason.
    ``spec`` may also be a resolved-plan JSON file (``runs/<id>/plan.json``): loaded, not resolved
    again, and held to the same rules (``wizard.runner.plan_checks``)."""
    from wizard.planner import PlanError, PlanRefused, resolve_plan
    from wizard.runner import plan_checks, planfile

    try:
        if planfile.is_plan_file(spec):
            plan = planfile.load(spec)
        else:
            plan = resolve_plan(spec, ctx.facts, venv=ctx.venv, state_dir=ctx.plan_state_dir, lock_wait=ctx.lock_wait,
                                wizard_python=None if ctx.read_only else ctx.machine.wizard_python,
                                mirrors=ctx.mirrors if ctx.mirrors.mirrors else None)
    except planfile.PlanFileError as exc:
        raise CommandError(str(exc), exit_codes.USAGE) from None
    except PlanError as exc:
        raise CommandError(exc.message, exit_codes.USAGE) from None
    except PlanRefused as exc:
        raise CommandError("\n".join(f"refused: {r}" for r in exc.reasons), exit_codes.REFUSED) from None
    reasons = plan_checks.refusals(ctx.host, plan)
    if reasons:
        raise CommandError("\n".join(f"refused: {r}" for r in reasons), exit_codes.REFUSED)
    return plan


def run_error(exc: Exception) -> CommandError:
    """A RunError of the run service as the CLI's one-line error (its own exit code)."""
    return CommandError(str(getattr(exc, "message", exc)), int(getattr(exc, "code", exit_codes.FAILURE)))


def _venv_path(text: str | None, *, on_this_machine: bool) -> str | None:
    """``--venv PATH`` as an absolute path (``~`` expanded); on this machine, a path that exists and is no
    venv is refused. For a recorded machine the path is its own: only made absolute."""
    if text is None:
        return None
    if not text.strip():
        raise usage_error("--venv needs a path")
    if not on_this_machine:
        if not text.startswith(("/", "~/")):
            raise usage_error(f"--venv {text}: on a recorded machine give an absolute path (or ~/...)")
        return text.rstrip("/") or "/"
    path = os.path.abspath(os.path.expanduser(text))
    if os.path.exists(path) and not os.path.isfile(os.path.join(path, "pyvenv.cfg")):
        raise usage_error(f"--venv {text}: {path} exists and is not a Python venv (no pyvenv.cfg); "
                          "give an existing venv or a new path")
    return path


class Context:
    """What every command shares: which machine to look at, and its facts (computed once)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.from_: str | None = getattr(args, "from_", None)
        self.pythons: list[str] = list(getattr(args, "pythons", None) or [])
        self.sandbox: str | None = getattr(args, "sandbox", None)
        self.profile: str | None = getattr(args, "profile", None)
        self.state_dir: str | None = getattr(args, "state_dir", None)
        self.verify_python: str | None = getattr(args, "verify_python", None)
        self.venv: str | None = _venv_path(getattr(args, "venv", None), on_this_machine=not self.from_)
        if self.venv and not self.from_ and self.venv not in self.pythons and os.path.exists(self.venv):
            self.pythons.append(self.venv)  # detected like --python: its torch, and its backup
        self.lock_wait: int = int(getattr(args, "lock_wait", None) or 120)
        self.root_kind: str | None = getattr(args, "root", None)
        self.mirror_args: list[str] = list(getattr(args, "mirrors", None) or [])
        self.mirror_key_args: list[str] = list(getattr(args, "mirror_keys", None) or [])
        self._stack = ExitStack()
        self._real_root: RealRoot | None = None
        self._check_inputs()
        if self.from_ and self.sandbox:
            raise usage_error("--from and --sandbox name two different machines; give one")
        if self.profile and not self.sandbox:
            raise usage_error("--profile goes with --sandbox DIR")
        if self.root_kind and not self.sandbox:
            raise usage_error("--root goes with --sandbox DIR (a rehearsal on a real root)")

    def _check_inputs(self) -> None:
        """Paths from the command line: never empty (``--sandbox ""`` is not the live machine), no control
        characters; --sandbox a directory (or not there yet), --from something that exists."""
        import os

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
        """Stop what the command started (a real root's mirror server)."""
        self._stack.close()

    @property
    def real_root(self) -> bool:
        from pathlib import Path

        if not self.sandbox:
            return False
        from wizard.realroot.rehearsal import is_real_root

        return bool(self.root_kind) or is_real_root(Path(self.sandbox))

    @property
    def read_only(self) -> bool:
        """A recorded machine can be looked at, planned for and exported, never changed."""
        return self.from_ is not None

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
        from pathlib import Path

        from wizard.realroot.base import RealRootError
        from wizard.realroot.executor import RealRootHost
        from wizard.realroot.rehearsal import opened

        assert self.sandbox is not None
        try:
            self._real_root = self._stack.enter_context(opened(Path(self.sandbox), self.profile, self.root_kind))
        except RealRootError as exc:
            raise CommandError(f"error: {exc}", exit_codes.FAILURE) from None
        return RealRootHost(self._real_root.path)

    @cached_property
    def machine(self) -> Machine:
        """The machine runs act on (live or sandbox), for the run service."""
        from wizard import machines

        if self.sandbox and self.real_root:
            host = self.host
            assert self._real_root is not None
            return machines.realroot(host, self._real_root)
        if self.sandbox:
            return machines.sandbox(self.host, self.sandbox, verify_python=self.verify_python,  # type: ignore[arg-type]
                                    state_dir=self.state_dir)
        return machines.live(self.host, state_dir=self.state_dir)

    @cached_property
    def runs(self) -> RunService:
        from wizard.runner.service import RunService

        return RunService(self.machine)

    @cached_property
    def site_mirrors(self) -> MirrorConfig:
        """The site's mirrors: mirrors.toml files, then --mirror / --mirror-key (no machine is opened)."""
        from wizard.mirror.config import MirrorConfigError, load_config

        try:
            return load_config(self.mirror_args, self.mirror_key_args)
        except MirrorConfigError as exc:
            raise usage_error(str(exc)) from None

    @cached_property
    def mirrors(self) -> MirrorConfig:
        """The site's mirrors, then the machine's own (a real root's rehearsal mirror)."""
        cfg = self.site_mirrors
        own = None if self.read_only else self.machine.mirrors
        return cfg.merged(own.mirrors) if own is not None else cfg

    @property
    def plan_state_dir(self) -> str:
        """The state dir as the machine sees it: what a plan writes into (its backup, its downloads)."""
        if self.read_only:
            from wizard import paths

            return str(paths.state_dir(self.state_dir))
        return self.machine.machine_state

    @cached_property
    def facts(self) -> Facts:
        from wizard.probes import detect

        return detect(self.host, pythons=self.pythons)
