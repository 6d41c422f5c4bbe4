"""What the app calls below it: the machine session (``wizard.machine_session``, the same one the CLI's
commands use: facts, plans, the script, the bundle, verify again, the run service), and what only the app
needs: sudo through a suspended app, a clock, the rehearsal machines and their CPU torch. One injectable
object, so tests swap in fakes (an authenticator that never prompts, a frozen clock) without touching the
screens. Nothing here imports Textual except the real authenticator, which needs the app to suspend."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Protocol

from wizard.session import PlanOption, Session, order_options

if TYPE_CHECKING:
    from wizard.host import Host
    from wizard.machine_session import MachineSession
    from wizard.mirror.config import MirrorConfig
    from wizard.model import Facts, ResolvedPlan
    from wizard.runner.service import RunService
    from wizard.sandbox.cpu_torch import Made

REHEARSAL_PROFILE = "seed-7900xt"
SUDO_REASON = "rocm-wizard needs administrator rights for the next steps (packages, drivers, groups)."


class Authenticator(Protocol):
    def __call__(self, app: Any, reason: str) -> bool: ...


def tui_authenticator(app: Any, reason: str) -> bool:
    """Suspend the app, run ``sudo -v`` through the machine's executor (the run's own privilege and
    environment: a sandbox's PATH finds its stand-in) on the real terminal, resume. The TUI never sees
    the password. Ctrl+C at the prompt gives up (nothing has changed yet) and brings the app back."""
    from wizard.runner.privilege import PrivilegeError

    runs = app.services.runs
    if runs is None:
        return False
    with app.suspend(), _ctrl_c_goes_to_the_prompt():
        print(f"\n{reason}\n", flush=True)
        try:
            runs.machine.executor.authenticate(yes=False)
        except PrivilegeError as exc:
            print(exc, flush=True)
            return False
    return True


@contextmanager
def _ctrl_c_goes_to_the_prompt() -> Iterator[None]:
    """While sudo asks, Ctrl+C is sudo's (it gives up) and not the wizard's: asyncio's handler would
    end the whole app. A Python handler, unlike SIG_IGN, is reset to the default in the child."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: None)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


# PyTorch's CPU-only wheel index (https://pytorch.org/get-started/locally/, "Compute Platform: CPU"): a torch that
# plays the venv's torch in a rehearsal, so its Verify step runs matmul and conv for real on the CPU.
CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
TORCH_PYTHON_ENV = "ROCM_WIZARD_TEST_TORCH_PYTHON"  # a CPU torch's interpreter, as the tests and .ci/run use
NO_TORCH = "skipped: no torch to verify with"


class Services:
    """The TUI's adapter over its machine session (``wizard.machine_session``): the session does the work
    (facts, plans, script, bundle, verify again, runs); this adds what only the app needs: sudo through a
    suspended app, a clock, where files are exported, and the rehearsal machines and their CPU torch."""

    def __init__(self, session: MachineSession, *, authenticator: Authenticator = tui_authenticator,
                 clock: Callable[[], float] = time.time, export_dir: Path | None = None,
                 rehearsal_root: Path | None = None) -> None:
        self.session = session
        self.authenticator = authenticator
        self.clock = clock
        self.export_dir = export_dir if export_dir is not None else Path.cwd()
        self.rehearsal_root = rehearsal_root  # where rehearsal machines are made (None: the session's)
        self.verify_python = session.verify_python  # the CPU torch a rehearsal verifies with (found or made)

    # -- the machine -------------------------------------------------------------------
    @property
    def host(self) -> Host:
        return self.session.host

    @property
    def read_only(self) -> bool:
        return self.session.read_only

    @property
    def runs(self) -> RunService | None:
        """The run service; None where nothing runs (a recorded machine)."""
        return self.session.runs if self.session.can_run else None

    @property
    def relaunch_hint(self) -> str:
        """The command that resumes, as shown to the user."""
        return self.session.relaunch_hint

    @property
    def channel(self) -> str | None:
        """stable | nightly: AMD's indexes the plans may use (None: each plan's own); ``c`` on Choose sets it."""
        return self.session.channel

    @channel.setter
    def channel(self, value: str | None) -> None:
        self.session.channel = value

    @property
    def mirrors(self) -> MirrorConfig:
        """The site's mirrors (--mirror, mirrors.toml): the rehearsal's CPU torch tries them first."""
        return self.session.site_mirrors

    def detect(self) -> Facts:
        return self.session.facts

    def for_diagnosis(self, facts: Facts) -> Facts:
        """``facts`` with what diagnosis alone reads of the machine (its GPUs' memory pools, MemTotal)."""
        return self.session.for_diagnosis(facts)

    def new_session(self) -> Session:
        facts = self.detect()
        s = Session(machine=self.host.name, read_only=self.read_only, facts=facts)
        # the machine is diagnosed when Diagnose is first shown (WizardApp.findings), and the plans are resolved
        # when Choose is (WizardApp.plan_options): the first screen waits for neither
        if self.runs is not None:
            s.pending = self.runs.pending()
            s.blocked = self.runs.blocked()
        return s

    # -- plans ---------------------------------------------------------------------------
    def plan_options(self) -> list[PlanOption]:
        return order_options([PlanOption.of(c) for c in self.session.choices()])

    def resolve(self, spec: str, venv: str | None = None) -> ResolvedPlan:
        """Raises wizard.planner.PlanRefused / PlanError. ``venv``: the user's choice (else the session's)."""
        return self.session.resolve(spec, venv)

    def script(self, plan: ResolvedPlan) -> str:
        return self.session.script(plan)

    def export_script(self, plan: ResolvedPlan, path: Path | None = None) -> Path:
        """Write the script to ``path`` (default: the export dir); its directory must exist."""
        return self.session.write_script(plan, path or self.export_dir)

    # -- after a run -----------------------------------------------------------------------
    def verify_again(self, plan: ResolvedPlan) -> str:
        """The suite again on what the plan set up; its summary line (SessionError: why not, one line)."""
        return self.session.verify_again(plan)

    def write_bundle(self, path: str) -> str:
        """This machine's evidence bundle; the line saying where. Raises ValueError with the reason."""
        from wizard.machine_session import SessionError

        try:
            return self.session.write_bundle(path)
        except SessionError as exc:
            raise ValueError(exc.message) from None

    # -- the rehearsal's verify torch ------------------------------------------------------
    def cpu_torch_dir(self) -> Path:
        """Where the wizard makes a CPU torch for rehearsals (when the user says so)."""
        return self.rehearsals() / "cpu-torch"

    def find_cpu_torch(self) -> str | None:
        """A CPU torch's interpreter for the rehearsal's Verify step: --verify-python, else
        $ROCM_WIZARD_TEST_TORCH_PYTHON, else the one the wizard made before; None when there is none."""
        made = self.cpu_torch_dir() / "bin" / "python"
        candidates = (self.verify_python, os.environ.get(TORCH_PYTHON_ENV),
                      str(made) if (self.cpu_torch_dir() / ".made").is_file() else None)
        for cand in candidates:
            if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
                return cand
        return None

    def cpu_torch_commands(self) -> list[list[str]]:
        """What making a CPU torch runs (:mod:`wizard.sandbox.cpu_torch`): a venv, then pip from each source."""
        from wizard.sandbox import cpu_torch

        return cpu_torch.commands(self.cpu_torch_dir(), self.mirrors)

    def make_cpu_torch(self) -> Made:
        """Make it (minutes where pip downloads); raises ValueError naming every source tried and what failed."""
        from wizard.sandbox import cpu_torch

        return cpu_torch.make(self.cpu_torch_dir(), self.mirrors)

    # -- the rehearsal -------------------------------------------------------------------
    def rehearsal_dir(self, profile: str, *, real: bool = False) -> Path:
        """Where the rehearsal machine of ``profile`` lives (kept between starts, until reset)."""
        return self.rehearsals() / (f"{profile}-debian12" if real else profile)

    def rehearsal_used(self, profile: str, *, real: bool = False) -> bool:
        """A run was started on that rehearsal machine (its state says so)."""
        return (self.rehearsal_dir(profile, real=real) / "var/lib/rocm-wizard/runs").is_dir()

    def reset_rehearsal(self, profile: str, *, real: bool = False) -> None:
        """Delete that rehearsal machine, so the next start lays it fresh. Only a rehearsal machine the wizard
        made (a stand-in sandbox or a real root): anything else is left as it is."""
        d = self.rehearsal_dir(profile, real=real)
        if not (d / (".realroot" if real else ".sandbox")).is_dir():
            raise ValueError(f"{d} is not a rehearsal machine; left as it is")
        shutil.rmtree(d)

    def rehearsals(self) -> Path:
        """Where rehearsal machines are made: ``<state>/rehearsal`` of this machine, unless told otherwise."""
        return self.rehearsal_root or self.session.rehearsal_root

    def rehearsal(self, profile: str = REHEARSAL_PROFILE, *, real: bool = False) -> Services:
        """Services for a built-in rehearsal machine: every step runs there, nothing touches this one.
        ``real``: a real Debian 12 root (real apt, dpkg and pip from a local mirror, built on first use,
        which takes a minute or more; see :func:`real_root_unavailable`); else the stand-in sandbox."""
        session = self.session.rehearsal(self.rehearsal_dir(profile, real=real), profile, real=real,
                                         verify_python=self.verify_python)
        return Services(session, authenticator=self.authenticator, clock=self.clock, export_dir=self.export_dir,
                        rehearsal_root=self.rehearsals())

    def close(self) -> None:
        """Stop what the session started (a real root's mirror server)."""
        self.session.close()


def real_root_unavailable() -> str | None:
    """Why this machine cannot build a real Debian 12 rehearsal root (one line saying what to install or
    do), or None when it can: root, mmdebstrap, and the tools the local mirror is built with."""
    from wizard.mirror.tools import missing_tools
    from wizard.realroot.base import RealRootError, require_host

    try:
        require_host()
    except RealRootError as exc:
        return str(exc)
    return missing_tools()
