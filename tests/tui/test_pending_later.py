"""Issue 25, point 8: after "Later" on the resume offer, the first screens still offer the pending run (u, shown
in the footer and in a banner while a run is unfinished): resume it, roll it back or abandon it, each from the
TUI, and each leaves the journal as the CLI's command would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wizard.session import Stage
from wizard.tui.app import WizardApp, make_app
from tests.tui.helpers import choose, flaky_plan, sandbox_services, settle, sync, wait_for

pytestmark = pytest.mark.integration

SIZE = (80, 24)


def offered(app: WizardApp) -> bool:
    """u is in the footer, enabled."""
    return any(b.key == "u" and b.show and enabled for (_, b, enabled, _) in app.screen.active_bindings.values())


def last_state(sandbox: Path) -> str:
    svc = sandbox_services(sandbox)
    run = svc.runs.current()  # type: ignore[union-attr]
    assert run is not None
    state = run.journal.records()[-1].get("state", "")
    svc.close()
    return str(state)


async def failed_run(sandbox: Path) -> None:
    """A run that failed at its second step: unfinished, resumable (the second try succeeds) and undoable."""
    app = make_app(sandbox_services(sandbox, plans={"flaky": flaky_plan(sandbox / "flag")}))
    async with app.run_test(size=SIZE) as pilot:
        await choose(app, pilot, "flaky")
        await pilot.press("c", "y")
        await wait_for(pilot, lambda: app.session.stage == Stage.FAILED)
        await settle(pilot)  # the Failed screen mounted before the app exits


async def later_then_u(app: WizardApp, pilot: Any) -> None:
    """The resume offer put off, then offered again with u from Detect, Diagnose and Choose."""
    await settle(pilot)
    assert app.session.stage == Stage.RESUME
    await pilot.press("l")
    await settle(pilot)
    assert app.session.stage == Stage.DETECT and app.session.pending is not None
    assert offered(app) and app.screen.query_one("#pending")  # the key, and the banner that names it
    for stage in (Stage.DIAGNOSE, Stage.CHOOSE):
        await pilot.press("n")
        await settle(pilot)
        assert app.session.stage == stage and offered(app), stage
    await pilot.press("u")
    await settle(pilot)
    assert app.session.stage == Stage.RESUME


@sync
async def test_later_then_resume(tmp_path: Path) -> None:
    sb = tmp_path / "sb"
    await failed_run(sb)
    app = make_app(sandbox_services(sb))
    async with app.run_test(size=SIZE) as pilot:
        await later_then_u(app, pilot)
        await pilot.press("r")
        await wait_for(pilot, lambda: app.session.stage == Stage.REPORT)
        assert app.session.run.plan == "flaky" and [r.state for r in app.session.run.steps] == ["ok", "ok", "ok"]
    assert last_state(sb) == "done"


@sync
async def test_later_then_roll_back(tmp_path: Path) -> None:
    sb = tmp_path / "sb"
    await failed_run(sb)
    app = make_app(sandbox_services(sb))
    async with app.run_test(size=SIZE) as pilot:
        await later_then_u(app, pilot)
        await pilot.press("u")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "RollbackModal")
        await pilot.press("y")
        await wait_for(pilot, lambda: app.session.stage == Stage.REPORT)
    assert last_state(sb) == "rolled-back"


@sync
async def test_later_then_abandon(tmp_path: Path) -> None:
    sb = tmp_path / "sb"
    await failed_run(sb)
    app = make_app(sandbox_services(sb))
    async with app.run_test(size=SIZE) as pilot:
        await later_then_u(app, pilot)
        await pilot.press("a")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "AbandonModal")
        await pilot.press("n")  # kept pending
        await settle(pilot)
        assert app.session.stage == Stage.RESUME and app.session.pending is not None
        await pilot.press("a")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "AbandonModal")
        await pilot.press("y")
        await settle(pilot)
        assert app.session.stage == Stage.DETECT and app.session.pending is None and app.session.blocked is None
        assert not offered(app) and not app.screen.query("#pending")
    assert last_state(sb) == "abandoned"
