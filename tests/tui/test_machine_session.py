"""One machine session below both front ends (issue 20): the CLI and the TUI make the same plan for the same
machine and options; a TUI rehearsal leaves the live machine's state usable; run events reach a screen only
once it is mounted."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.tui.helpers import FakeAuth, rehearse_first_profile, sync, wait_for
from wizard.cli import build_parser, main
from wizard.commands import Context
from wizard.machine_session import MachineSession, MachineSpec
from wizard.mirror.config import KNOWN_ORIGINS, REGISTRY_ORIGINS
from wizard.plan_file import builtin_plan_names
from wizard.planner import PlanError, PlanRefused
from wizard.profiles import PROFILES
from wizard.runner import planfile
from wizard.session import Move, Stage
from wizard.tui.app import make_app
from wizard.tui.messages import MoveRequested, PlanChosen
from wizard.tui.services import Services

pytestmark = pytest.mark.integration

SIZE = (100, 32)
MIRROR_HOST = "mirror.example"
EVERY_ORIGIN = [a for i, o in enumerate(KNOWN_ORIGINS)
                for a in ("--mirror", f"{o}=registry.example:5000/hub" if o in REGISTRY_ORIGINS
                          else f"{o}=https://{MIRROR_HOST}/m{i}")]
PLANS = builtin_plan_names()


def context(argv: list[str]) -> Context:
    """The CLI's context, as ``rocm-wizard ARGV`` makes it."""
    return Context(build_parser(argv).parse_args(argv))


def outcome(resolve: Any, spec: str) -> str:
    """A plan's digest (sha256 of its plan.json), or what refused it."""
    try:
        plan = resolve(spec)
    except PlanRefused as exc:
        return "refused: " + "; ".join(exc.reasons)
    except PlanError as exc:
        return "error: " + exc.message
    return hashlib.sha256(planfile.dumps(plan).encode()).hexdigest()


def cli_outcome(argv: list[str], spec: str) -> tuple[str, str | None]:
    """The CLI's answer to ``--plan SPEC`` (``resolve_plan_or_fail``): its digest and text, or its refusal."""
    from wizard.commands import CommandError, resolve_plan_or_fail

    ctx = context([*argv, "--plan", spec])
    try:
        text = planfile.dumps(resolve_plan_or_fail(spec, ctx))
    except CommandError as exc:
        lines = exc.message.splitlines()
        if all(line.startswith("refused: ") for line in lines):
            return "refused: " + "; ".join(line.removeprefix("refused: ") for line in lines), None
        return "error: " + exc.message, None
    finally:
        ctx.close()
    return hashlib.sha256(text.encode()).hexdigest(), text


@pytest.mark.parametrize("mirrored", [False, True], ids=["no-mirror", "mirror-every-origin"])
@pytest.mark.parametrize("profile", sorted(PROFILES))
@sync
async def test_the_cli_and_the_tui_make_the_same_plan(profile: str, mirrored: bool, tmp_path: Path) -> None:
    """Every shipped plan, chosen in the TUI (Pilot, the Choose screen's message) and given to the CLI's
    ``--plan``, for the same sandbox and options: the same digest, or the same refusal."""
    argv = ["--sandbox", str(tmp_path / profile), "--profile", profile, "--lock-wait", "7",
            *(EVERY_ORIGIN if mirrored else [])]
    cli = {spec: cli_outcome(argv, spec) for spec in PLANS}
    ctx = context(argv)  # the TUI's own session, as `rocm-wizard ARGV` builds it (wizard.commands.tui)
    app = make_app(Services(ctx, authenticator=FakeAuth(), export_dir=tmp_path))
    tui: dict[str, str] = {}
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "n")
        await wait_for(pilot, lambda: app.session.stage == Stage.CHOOSE)
        for spec in PLANS:
            app.session.resolved, app.session.resolve_error = None, ()
            app.post_message(PlanChosen(spec))
            await wait_for(pilot, lambda: app.session.resolved is not None or bool(app.session.resolve_error))
            if app.session.resolved is not None:
                assert app.session.stage == Stage.REVIEW
                tui[spec] = hashlib.sha256(planfile.dumps(app.session.resolved).encode()).hexdigest()
                app.post_message(MoveRequested(Move.BACK))
                await wait_for(pilot, lambda: app.session.stage == Stage.CHOOSE)
            else:
                tui[spec] = outcome(lambda s: app.services.resolve(s), spec)
                assert tui[spec].startswith(("refused: ", "error: "))
    assert tui == {spec: digest for spec, (digest, _) in cli.items()}
    made = [text for _, text in cli.values() if text is not None]
    assert made, f"no plan fits {profile}: the comparison proves nothing"
    waits = {w for text in made for w in _lock_waits(text)}  # --lock-wait reached the plans that wait for apt
    assert waits == {"7"} if profile == "seed-7900xt" else waits <= {"7"}
    if mirrored:
        assert all("https://repo.radeon.com" not in t and "https://download.pytorch.org" not in t for t in made)
        assert any(MIRROR_HOST in t for t in made)


def _lock_waits(plan_json: str) -> list[str]:
    """The seconds the preflight's package-lock check waits, as each plan says them."""
    import json

    from wizard.preflight import LOCK_WAIT_PROGRAM

    return [a["argv"][3] for step in json.loads(plan_json)["plan"]["steps"] for a in step["actions"]
            if a["argv"][:3] == ["python3", "-c", LOCK_WAIT_PROGRAM]]


@sync
async def test_a_tui_rehearsal_leaves_the_live_state_usable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The rehearsal machine lives in <state>/rehearsal/ with symlinks of its own; afterwards the live machine
    (a sandbox standing in for it, with the same state dir) runs, resumes and is not refused."""
    from wizard.runner.state import StateError, check_tree, prepare

    state = tmp_path / "state"
    svc = Services(MachineSession(MachineSpec(state_dir=str(state), verify_python=sys.executable)),
                   authenticator=FakeAuth())
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        await rehearse_first_profile(app, pilot)
        await wait_for(pilot, lambda: app.session.machine.startswith("sandbox:"))
        assert app.services.session.plan_state_dir == "/var/lib/rocm-wizard"  # the rehearsal's own state
    rehearsal = state / "rehearsal" / "seed-7900xt"
    assert (rehearsal / "usr/bin/python3").is_symlink()  # what used to poison the live state
    with pytest.raises(StateError, match="is a symlink"):  # the control: the whole tree is not trustworthy
        check_tree(state)
    prepare(state, state / "logs")  # the wizard's own state is
    live = ["--sandbox", str(tmp_path / "live"), "--profile", "seed-7900xt", "--state-dir", str(state)]
    torch = os.environ.get("ROCM_WIZARD_TEST_TORCH_PYTHON") or sys.executable
    capsys.readouterr()
    # ran (0), or ran and its CPU verify failed under load (1): never refused before it starts
    assert main([*live, "--plan", "pip-only", "--yes", "--verify-python", torch]) in (0, 1)
    assert len(list((state / "runs").iterdir())) == 1
    for command in (["status"], ["rollback", "--yes"], ["resume", "--yes"], ["abandon", "--yes"]):
        main([*live, *command])
    err = capsys.readouterr().err
    assert "refusing to use the state dir" not in err, err
    assert (state / "runs").is_dir() and not (rehearsal / "var/lib/rocm-wizard/runs").exists()


@sync
async def test_run_events_reach_a_screen_only_once_it_is_mounted() -> None:
    """The 15 Hz drain used to call ``refresh_run()`` on a VerifyScreen that Textual had not mounted yet (its
    table had no columns): ValueError under load. Here the verify step starts, the app switches to Verify, and
    check results arrive in the same tick, before the screen's mount: they are shown once it is mounted."""
    from tests.tui.test_snapshots import _services
    from wizard.runner import events as ev
    from wizard.runner.records import StepOutcome
    from wizard.session import RunProgress

    svc = _services()
    s = svc.new_session()
    s.pending = None
    s.resolved = svc.resolve("downgrade-6.2")
    s.chosen, s.run, s.stage = "downgrade-6.2", RunProgress.for_plan(s.resolved), Stage.RUN
    app = make_app(svc, s, theme="textual-dark")
    n = len(s.resolved.steps)
    verify = n - 1
    checks = tuple('{"type": "check", "name": "%s", "device": "cpu", "status": "pass", "seconds": 0.1}' % c
                   for c in ("import", "matmul", "conv2d"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: type(app.screen).__name__ == "RunScreen")
        app.events.extend([ev.RunStarted("run-1", "downgrade-6.2", n, False, "/j", "/l"),
                           ev.StepStarted(verify, n, "verify", "Verify", "/l/verify.log")])
        app.drain()  # VERIFY: the Verify screen is pushed, not mounted yet
        assert type(app.screen).__name__ == "VerifyScreen" and not app.screen.is_mounted
        for line in checks:  # the next ticks come before its mount
            app.events.append(ev.OutputLines(verify, 0, (line,)))
            app.drain()
        await wait_for(pilot, lambda: app.screen.is_mounted)
        await pilot.pause()
        table = app.screen.query_one("#checks")
        assert table.row_count == 3  # type: ignore[attr-defined]
        app.events.append(ev.StepFinished(verify, "verify", StepOutcome.OK, 1.0))
        app.drain()
        await pilot.pause()
    assert app.return_code in (None, 0)
