"""Shared by the TUI tests: services over a sandbox with injected plans, a fake authenticator,
and a pilot helper that waits for a stage instead of sleeping blind."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from wizard.model import Action, ResolvedPlan, StepPlan
from wizard.record import field, record
from wizard.machine_session import MachineSession, MachineSpec
from wizard.tui.services import Services

PY = sys.executable


def sh(script: str, description: str = "", **kw: Any) -> Action:
    return Action(("sh", "-c", script), description or script[:40], **kw)


def plan(name: str, *steps: StepPlan) -> ResolvedPlan:
    return ResolvedPlan(name=name, title=f"Test plan {name}", why="A harmless plan for the TUI tests.",
                        target=(("torch", "2.5.1"),), steps=tuple(steps))


def flood_plan(n: int, hold: float = 0.0) -> ResolvedPlan:
    """A step printing n lines; ``hold`` seconds of quiet before it, so a view can be caught mid-run."""
    code = f"import time; time.sleep({hold})\nfor i in range({n}): print('line', i)"
    return plan("flood", StepPlan("backup", "Back up", (sh("echo backed up"),)),
                StepPlan("pip_pin", "Flood", (Action((PY, "-c", code), "flood"),)))


def flaky_plan(flag: Path) -> ResolvedPlan:
    """The second step fails the first time (a known error text in its output), then succeeds. ``flag`` lies
    inside the sandbox (a script naming a path outside it is refused)."""
    fail = Action((PY, "-c", (
        "import pathlib, sys\n"
        f"flag = pathlib.Path({str(flag)!r})\n"
        "if flag.exists(): print('installed'); sys.exit(0)\n"
        "flag.write_text('x')\n"
        "print('working...')\n"
        "print('hipErrorNoBinaryForGpu: Unable to find code object for all current devices!')\n"
        "sys.exit(7)\n")), "install")
    return plan("flaky", StepPlan("backup", "Back up", (sh("echo backed up"),)),
                StepPlan("rocm_install", "Install", (fail,), destructive=True),
                StepPlan("groups", "Groups", (sh("echo groups ok"),)))


def verify_lines_script() -> str:
    return ("import json\n"
            "for n, s in [('import','pass'),('matmul','pass'),('conv2d','pass')]:\n"
            "    print(json.dumps({'type':'check','name':n,'device':'cpu','status':s,'seconds':0.5,"
            "'error':None,'metrics':{'tflops':1.25} if n=='matmul' else {}}), flush=True)\n")


def reboot_plan() -> ResolvedPlan:
    return plan("rebooting",
                StepPlan("backup", "Back up", (sh("echo backed up"),)),
                StepPlan("rocm_install", "Install the driver", (sh("echo driver installed"),)),
                StepPlan("reboot", "Reboot", (Action(("systemctl", "reboot"), "reboot", root=True),), reboot=True),
                StepPlan("verify", "Verify", (Action(("python3", "-c", verify_lines_script(), "verify"), "suite"),)))


def slow_plan() -> ResolvedPlan:
    return plan("slow", StepPlan("backup", "Back up", (sh("echo backed up"),)),
                StepPlan("pip_pin", "Slow", (sh("echo start; sleep 30; echo end", "sleep"),)))


@record(frozen=False)
class FakeAuth:
    answer: bool = True
    calls: list[str] = field(default_factory=list)

    def __call__(self, app: Any, reason: str) -> bool:
        self.calls.append(reason)
        return self.answer


class TestServices(Services):
    """Real detection, diagnosis and planner; plus named test plans resolved without the planner."""

    extra_plans: dict[str, ResolvedPlan]

    def resolve(self, spec: str, venv: str | None = None) -> ResolvedPlan:
        if spec in getattr(self, "extra_plans", {}):
            return self.extra_plans[spec]
        return super().resolve(spec, venv)


def sandbox_services(sandbox: Path, profile: str = "seed-7900xt", *, plans: dict[str, ResolvedPlan] | None = None,
                     verify_python: str | None = None, auth: FakeAuth | None = None,
                     export_dir: Path | None = None) -> TestServices:
    session = MachineSession(MachineSpec(sandbox=str(sandbox), profile=profile, verify_python=verify_python))
    s = TestServices(session, authenticator=auth or FakeAuth(), clock=lambda: 1_700_000_000.0,
                     export_dir=export_dir or sandbox.parent / "export")
    s.extra_plans = dict(plans or {})
    return s


async def wait_for(pilot: Any, cond: Any, timeout: float = 60.0) -> None:
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"timed out after {timeout}s")
        await pilot.pause(0.05)


async def settle(pilot: Any, timeout: float = 60.0) -> None:
    """Wait for state, not for time: the queued run events folded into the session, the stage's screen
    mounted with every run update it was sent handled, its step table holding the run's rows, the dialog
    on top (if any) mounted, and nothing left to process."""
    from wizard.tui.widgets.step_list import StepList

    app = pilot.app

    def ready() -> bool:
        app.drain()
        screen = app.stage_screen()
        if screen is None or screen.STAGE is not app.session.stage or not screen.is_mounted:
            return False
        if screen.updates_waiting or not app.screen.is_mounted:
            return False
        for table in screen.query(StepList):
            titles = [r.title for r in app.session.run.steps]
            if table.row_count != len(titles):
                return False
            if [str(table.get_cell(str(i), "title")) for i in range(len(titles))] != titles:
                return False
        return True

    await wait_for(pilot, ready, timeout)
    await pilot.pause()


def keys_then_settle(*keys: str) -> Any:
    """A snapshot's ``run_before``: the first screen settled, the keys pressed, and the state they lead to
    (a dialog on top, a panel expanded) settled before the frame is taken. ``snap_compare(press=...)``
    presses after ``run_before`` and takes the frame after a fixed idle wait, which a loaded machine may end
    before the dialog is mounted and laid out."""

    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        if keys:
            await pilot.press(*keys)
            await settle(pilot)

    return run_before


async def rehearse_first_profile(app: Any, pilot: Any) -> None:
    """On a machine without an AMD GPU (else the test is skipped): press r and take the first profile."""
    import pytest

    if app.session.has_amd_gpu:
        pytest.skip("this machine has an AMD GPU")
    await pilot.press("r")
    await pilot.pause()
    await pilot.press("enter")


async def choose(app: Any, pilot: Any, name: str) -> None:
    """From Detect: next, next, then pick plan `name` (test plans are picked through the file dialog)."""
    await pilot.press("n")
    await pilot.pause()
    await pilot.press("n")
    await pilot.pause()
    names = [o.name for o in app.session.options]
    if name in names:
        app.screen.query_one("OptionList").highlighted = names.index(name)
        await pilot.pause()
        await pilot.press("enter")
    else:
        await pilot.press("o")
        await pilot.pause()
        await pilot.press(*list(name))
        await pilot.press("enter")
    await settle(pilot)


_ = asyncio


def sync(fn: Any) -> Any:
    """Run an async test with asyncio (no pytest async plugin is a dependency)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args: Any, **kw: Any) -> Any:
        return asyncio.run(fn(*args, **kw))

    return wrapper
