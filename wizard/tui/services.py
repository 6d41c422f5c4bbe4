"""What the app calls below it: detection, diagnosis, the planner, the dry-run script, the runner,
and sudo. Bundled into one injectable object so tests swap in fakes (an authenticator that never
prompts, a frozen clock) without touching the screens. Nothing here imports Textual except the
real authenticator, which needs the app to suspend."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Protocol

from wizard.record import field, record
from wizard.session import PlanOption, Session, order_options

if TYPE_CHECKING:
    from wizard.host import Host
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


@record(frozen=False)
class Services:
    host: Host
    read_only: bool
    pythons: tuple[str, ...] = ()
    runs: RunService | None = None  # None: a recorded machine (nothing runs)
    authenticator: Authenticator = tui_authenticator
    clock: Callable[[], float] = time.time
    export_dir: Path = field(default_factory=Path.cwd)
    state_dir: str | None = None
    verify_python: str | None = None
    rehearsal_root: Path | None = None  # where a rehearsal sandbox is created
    relaunch_hint: str = "rocm-wizard"  # the command that resumes, as shown to the user
    facts: Facts | None = None  # already detected (the CLI's ctx.facts)
    wizard_python: str | None = None  # the interpreter plans run the wizard with (planner default: this one)
    closing: ExitStack = field(default_factory=ExitStack)  # what close() stops (a real root's mirror server)
    venv: str | None = None  # --venv PATH: the venv the pip plans fill (None: the planner's default)
    machine_args: tuple[str, ...] = ()  # the CLI options that name this machine (``--sandbox DIR``)
    user_state_dir: str | None = None  # where a user-only plan keeps its backup and progress (planner)
    channel: str | None = None  # stable | nightly: AMD's indexes the plans may use (None: each plan's own)
    mirrors: MirrorConfig | None = None  # the site's mirrors (--mirror, mirrors.toml): the CPU torch tries them first

    # -- the machine -------------------------------------------------------------------
    def detect(self) -> Facts:
        if self.facts is None:
            from wizard.probes import detect

            self.facts = detect(self.host, pythons=list(self.pythons))
        return self.facts

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
    def plan_options(self, facts: Facts) -> list[PlanOption]:
        from wizard.planner import recommend

        out = []
        for c in recommend(facts, venv=self.venv, state_dir=self.state_dir, wizard_python=self.wizard_python,
                           channel=self.channel, mirrors=self.mirrors):
            rec_why = None
            reasons = tuple(c.reasons)
            if c.recommended:
                rec_why = "; ".join(r.removeprefix("recommended: ") for r in c.reasons)
                reasons = ()
            out.append(PlanOption(c.plan.name, c.plan.title, c.plan.why, c.applicable, reasons, c.recommended,
                                  rec_why, tuple(c.target.items())))
        return order_options(out)

    def resolve(self, spec: str, facts: Facts, venv: str | None = None) -> ResolvedPlan:
        """Raises wizard.planner.PlanRefused / PlanError. ``venv``: the user's choice (else ``self.venv``)."""
        from wizard.planner import resolve_plan

        return resolve_plan(spec, facts, venv=venv or self.venv, state_dir=self.state_dir,
                            wizard_python=self.wizard_python, user_state_dir=self.user_state_dir,
                            channel=self.channel)

    def script(self, plan: ResolvedPlan, facts: Facts) -> str:
        from wizard import script

        return script.render(plan, facts)

    def export_script(self, plan: ResolvedPlan, facts: Facts, path: Path | None = None) -> Path:
        """Write the script to ``path`` (default: the export dir); its directory must exist."""
        text = self.script(plan, facts)
        path = path or self.export_dir / f"rocm-wizard-{plan.name}.sh"
        if path.is_dir():
            path = path / f"rocm-wizard-{plan.name}.sh"
        if not path.parent.is_dir():
            raise FileNotFoundError(2, f"no such directory: {path.parent}")
        from wizard.inputs.files import new_file

        with new_file(path, 0o755, replace=True) as fh:  # never through a link planted in a shared directory
            fh.write(text.encode("utf-8"))
        return path

    # -- after a run -----------------------------------------------------------------------
    def verify_again(self, plan: ResolvedPlan, facts: Facts) -> str:
        """Run the suite again on what the plan set up; its summary line. Raises ValueError (one line)
        when there is nothing to verify with."""
        from wizard.commands.verify_view import summary_text
        from wizard.verify import SuiteOptions, resolve_python, run_verify

        venv = dict(plan.target).get("venv")
        if self.host.name.startswith("sandbox:") or self.verify_python:
            if not self.verify_python:
                raise ValueError("skipped: no torch to verify with (start the rehearsal with --verify-python PATH)")
            python, device = self.verify_python, "cpu"
        elif venv:
            python, device = f"{venv}/bin/python", "auto"
        else:
            raise ValueError("this plan set up no venv to verify (a container plan: run `rocm-wizard verify "
                             "--image TAG`)")
        report = run_verify(python=resolve_python(python), options=SuiteOptions(device=device), facts=facts)
        return summary_text(report.to_json())

    def write_bundle(self, path: str) -> str:
        """``rocm-wizard report --bundle PATH`` for this machine; its last line (what it wrote, or why not).
        Raises ValueError with that line when it failed."""
        import subprocess

        out = subprocess.run([*wizard_argv(), *self.machine_args, "report", "--bundle", path], capture_output=True,
                             text=True, stdin=subprocess.DEVNULL, timeout=600)
        lines = (out.stdout + out.stderr).strip().splitlines()
        last = lines[0] if lines else f"exit status {out.returncode}"
        if out.returncode != 0:
            raise ValueError(last.removeprefix("rocm-wizard: "))
        return last

    # -- the rehearsal's verify torch ------------------------------------------------------
    def cpu_torch_dir(self) -> Path:
        """Where the wizard makes a CPU torch for rehearsals (when the user says so)."""
        return (self.rehearsal_root or _default_rehearsal_root()) / "cpu-torch"

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
        return (self.rehearsal_root or _default_rehearsal_root()) / (f"{profile}-debian12" if real else profile)

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

    def rehearsal(self, profile: str = REHEARSAL_PROFILE, *, real: bool = False) -> Services:
        """Services for a built-in rehearsal machine: every step runs there, nothing touches this one.
        ``real``: a real Debian 12 root (real apt, dpkg and pip from a local mirror, built on first use,
        which takes a minute or more; see :func:`real_root_unavailable`); else the stand-in sandbox."""
        from wizard import machines
        from wizard.runner.service import RunService

        root = self.rehearsal_root or _default_rehearsal_root()
        closing = ExitStack()
        if real:
            from wizard.realroot.executor import RealRootHost
            from wizard.realroot.rehearsal import opened

            directory = self.rehearsal_dir(profile, real=True)
            real_root = closing.enter_context(opened(directory, profile))  # its mirror served until close()
            host: Host = RealRootHost(real_root.path)
            machine = machines.realroot(host, real_root)
            hint = f"rocm-wizard --sandbox {directory} --root debian12"
            args: tuple[str, ...] = ("--sandbox", str(directory), "--root", "debian12")
        else:
            from wizard.sandbox import open_sandbox

            sandbox = str(self.rehearsal_dir(profile))
            live = open_sandbox(sandbox, profile)
            host, machine = live, machines.sandbox(live, sandbox, verify_python=self.verify_python)
            hint = f"rocm-wizard --sandbox {sandbox}"
            args = ("--sandbox", sandbox)
        return Services(host=host, read_only=False, runs=RunService(machine), state_dir=machine.machine_state,
                        wizard_python=machine.wizard_python,
                        authenticator=self.authenticator, clock=self.clock, export_dir=self.export_dir,
                        verify_python=self.verify_python, relaunch_hint=hint, rehearsal_root=root,
                        closing=closing, machine_args=args, venv=self.venv, user_state_dir=machine.user_state,
                        channel=self.channel)

    def close(self) -> None:
        """Stop what these services started (a real root's mirror server)."""
        self.closing.close()


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


def _default_rehearsal_root() -> Path:
    from wizard.paths import state_dir

    return state_dir() / "rehearsal"


def wizard_argv() -> list[str]:
    return [sys.executable, "-m", "wizard"]
