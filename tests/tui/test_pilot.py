"""Pilot tests: the app driven by keys through every stage, on sandbox machines.

Assertions are on the session's state machine, the journal and the messages shown, never on pixels.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wizard.machine_session import MachineSession, MachineSpec
from wizard.session import Stage
from wizard.tui.app import make_app
from wizard.tui.services import Services
from wizard.tui.widgets.log_pane import MAX_LINES, LogPane
from tests.tui.helpers import (FakeAuth, choose, flaky_plan, flood_plan, reboot_plan, rehearse_first_profile,
                               sandbox_services, settle, slow_plan, sync, wait_for)

pytestmark = pytest.mark.integration

SIZE = (100, 32)


def svc_run_id(sandbox: Path) -> str:
    return (sandbox / "var/lib/rocm-wizard/current").read_text().strip()


def journal_events(services: Services) -> list[str]:
    run = services.runs.current()  # type: ignore[union-attr]
    assert run is not None
    return [r["event"] for r in run.journal.records()]


def screen_text(app) -> str:  # type: ignore[no-untyped-def]
    """The text of every Static on the current screen (rich renderables rendered plain)."""
    from rich.console import Console
    from textual.widgets import Static

    console = Console(width=200, record=True, file=open("/dev/null", "w"), color_system=None)
    for w in app.screen.query(Static):
        content = w.content
        console.print(content if not isinstance(content, str) else content, markup=False)
    return console.export_text()


@sync
async def test_recorded_machine_review_and_export_only(tmp_path: Path) -> None:
    svc = Services(MachineSession(MachineSpec(from_="seed-7900xt")), export_dir=tmp_path, authenticator=FakeAuth())
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.session.stage == Stage.DETECT
        assert "Radeon RX 7900 XT" in screen_text(app)
        await choose(app, pilot, "downgrade-6.2")
        assert app.session.stage == Stage.REVIEW
        text = screen_text(app)
        assert "⚠" in text and "amdgpu-install" in text and "read-only" in text
        await pilot.press("c")  # not offered on a recorded machine
        await pilot.pause()
        assert app.session.stage == Stage.REVIEW
        await pilot.press("x")  # export asks where to write; Enter takes the proposed path
        await pilot.pause()
        assert type(app.screen).__name__ == "ExportModal"
        await pilot.press("enter")
        await pilot.pause()
        script = tmp_path / "rocm-wizard-downgrade-6.2.sh"
        assert app.session.exported == str(script) and script.exists()
        assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
        await pilot.press("b")
        await pilot.pause()
        assert app.session.stage == Stage.CHOOSE


@sync
async def test_recommended_first_and_refused_plans_explained(tmp_path: Path) -> None:
    svc = Services(MachineSession(MachineSpec(from_="seed-5600xt")), export_dir=tmp_path)
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        assert app.session.options == []  # resolved when Choose is first shown, not before the first screen
        opts = app.plan_options()
        assert any(not o.applicable and o.reasons for o in opts)
        if any(o.recommended for o in opts):
            assert opts[0].recommended
        refused = next(o for o in opts if not o.applicable)
        notes: list[str] = []
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        await choose(app, pilot, refused.name)
        assert app.session.stage == Stage.CHOOSE
        # the reasons on the screen (the refusal banner), the toast only naming the plan refused
        assert app.session.resolve_error and refused.reasons[0] in screen_text(app)
        assert app.session.refused == refused.name and notes == ["the reasons are at the top of the screen"]


@sync
async def test_no_amd_gpu_offers_a_rehearsal(tmp_path: Path) -> None:
    # a torch is found: no offer to make one
    svc = Services(MachineSession(MachineSpec(verify_python=sys.executable)), rehearsal_root=tmp_path / "rehearsal",
                   authenticator=FakeAuth())
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        if app.session.has_amd_gpu:
            pytest.skip("this machine has an AMD GPU")
        await settle(pilot)
        assert "No AMD GPU was found on this machine" in screen_text(app)
        assert "Press r to rehearse" in screen_text(app)
        await pilot.press("r")  # which machine: every profile, where it lives
        await pilot.pause()
        assert type(app.screen).__name__ == "RehearsalModal"
        from wizard.profiles import PROFILES

        ol = app.screen.query_one("OptionList")
        assert [ol.get_option_at_index(i).id for i in range(ol.option_count)] == list(PROFILES)
        assert str(tmp_path / "rehearsal" / "seed-5600xt") in str(ol.get_option_at_index(1).prompt)
        await pilot.press("enter")  # the first: seed-7900xt
        await pilot.pause()
        assert app.session.machine.startswith("sandbox:")
        assert app.session.has_amd_gpu and app.session.stage == Stage.DETECT
        assert (tmp_path / "rehearsal" / "seed-7900xt").is_dir()


@sync
async def test_a_second_rehearsal_on_a_used_machine_asks_whether_to_start_over(tmp_path: Path) -> None:
    root = tmp_path / "rehearsal"
    svc = Services(MachineSession(MachineSpec(verify_python=sys.executable)), rehearsal_root=root,
                   authenticator=FakeAuth())
    used = svc.rehearsal("seed-7900xt")  # lay it, and leave a trace of a run in its state
    (root / "seed-7900xt/var/lib/rocm-wizard/runs/run-1").mkdir(parents=True)
    marker = root / "seed-7900xt/home/user/touched-by-the-run"
    marker.write_text("x")
    assert used.rehearsal_used("seed-7900xt")
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        await rehearse_first_profile(app, pilot)
        await pilot.pause()
        assert type(app.screen).__name__ == "StartOverModal"
        await pilot.press("escape")  # cancel: nothing changes
        await pilot.pause()
        assert marker.exists() and not app.session.machine.startswith("sandbox:")
        await pilot.press("r")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("s")  # start over: the machine is laid fresh from its profile
        await pilot.pause()
        assert app.session.machine.startswith("sandbox:")
        assert not marker.exists() and not app.services.rehearsal_used("seed-7900xt")
        assert (root / "seed-7900xt/home/user/pytorch_venv").is_dir()


@sync
async def test_flood_run_to_report(tmp_path: Path) -> None:
    svc = sandbox_services(tmp_path / "sb", plans={"flood": flood_plan(20_000)})
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        await choose(app, pilot, "flood")
        assert app.session.stage == Stage.REVIEW
        await pilot.press("c")
        await pilot.pause()
        assert app.session.stage == Stage.CONFIRM
        await pilot.press("y")
        await wait_for(pilot, lambda: app.session.stage == Stage.REPORT)
        assert app.session.run.state == "done"
        assert app.session.run.lines >= 20_000
        assert [r.state for r in app.session.run.steps] == ["ok", "ok"]
        await wait_for(pilot, lambda: "✔ Finished" in screen_text(app))  # the Report screen is mounted
        assert "replayable plan" in screen_text(app)
    ev = journal_events(svc)
    assert ev[0] == "run-start" and ev[-1] == "run-end"
    assert [h[1] for h in app.session.history] == ["next", "next", "choose", "confirm", "yes", "done"]


@sync
async def test_log_pane_is_bounded_under_a_flood(tmp_path: Path) -> None:
    svc = sandbox_services(tmp_path / "sb", plans={"flood": flood_plan(50_000, hold=1.0)})
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        await choose(app, pilot, "flood")
        await pilot.press("c", "y")
        await pilot.pause()
        pane = app.screen.query_one(LogPane)
        seen: list[int] = []
        await wait_for(pilot, lambda: seen.append(pane.line_count) or app.session.stage == Stage.REPORT, timeout=60)
        assert pane.total >= 50_000  # every line reached the pane ...
        assert max(seen) <= MAX_LINES + 1  # ... which never held more than its bound


@sync
async def test_failure_then_retry(tmp_path: Path) -> None:
    svc = sandbox_services(tmp_path / "sb", plans={"flaky": flaky_plan(tmp_path / "sb" / "flag")})
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        await choose(app, pilot, "flaky")
        await pilot.press("c", "y")
        await wait_for(pilot, lambda: app.session.stage == Stage.FAILED)
        f = app.session.run.failure
        assert f is not None and f.exit_code == 7 and f.step == 1
        assert any("hipErrorNoBinaryForGpu" in line for line in f.tail)
        await wait_for(pilot, lambda: "FAILED" in screen_text(app))  # the Failed screen is composed
        text = screen_text(app)
        assert "FAILED" in text and "exit code 7" in text
        assert f.findings, "the known issue for hipErrorNoBinaryForGpu should match"
        assert f.findings[0].title in text
        await pilot.press("r")
        await wait_for(pilot, lambda: app.session.stage == Stage.REPORT)
        assert app.session.run.state == "done"
        assert [r.state for r in app.session.run.steps] == ["ok", "ok", "ok"]
    ev = journal_events(svc)
    assert "retry" in ev and ev.count("run-start") == 1


@sync
async def test_failure_then_stop_keeps_the_run_pending(tmp_path: Path) -> None:
    svc = sandbox_services(tmp_path / "sb", plans={"flaky": flaky_plan(tmp_path / "sb" / "flag")})
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        await choose(app, pilot, "flaky")
        await pilot.press("c", "y")
        await wait_for(pilot, lambda: app.session.stage == Stage.FAILED)
        await pilot.press("s")
        await settle(pilot)
        assert app.session.stage == Stage.REPORT
        assert "✘ Failed" in screen_text(app)
    pending = svc.runs.pending()  # type: ignore[union-attr]
    assert pending is not None and pending.state == "failed" and pending.next_step == 1


@sync
async def test_failure_then_rollback(tmp_path: Path) -> None:
    svc = sandbox_services(tmp_path / "sb", plans={"flaky": flaky_plan(tmp_path / "sb" / "flag")})
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        await choose(app, pilot, "flaky")
        await pilot.press("c", "y")
        await wait_for(pilot, lambda: app.session.stage == Stage.FAILED)
        await pilot.press("u")
        await settle(pilot)
        # nothing is undone before the user has seen what will be undone and said yes
        assert type(app.screen).__name__ == "RollbackModal" and app.session.stage == Stage.FAILED
        assert "Roll back this run?" in screen_text(app)
        await pilot.press("n")
        await pilot.pause()
        assert app.session.stage == Stage.FAILED and "rollback-start" not in journal_events(svc)
        await pilot.press("u")
        await pilot.pause()
        await pilot.press("y")
        await wait_for(pilot, lambda: app.session.stage == Stage.REPORT)
        await settle(pilot)
        assert app.session.run.state == "rolled-back"
        assert "↶ Rolled back" in screen_text(app)
    ev = journal_events(svc)
    assert "rollback-start" in ev and ev[-1] == "run-end"
    run = svc.runs.current()  # type: ignore[union-attr]
    assert run.journal.records()[-1]["state"] == "rolled-back"
    assert svc.runs.pending() is None  # type: ignore[union-attr]


@sync
async def test_reboot_then_resume_then_verify(tmp_path: Path) -> None:
    import sys

    sb = tmp_path / "sb"
    svc = sandbox_services(sb, plans={"rebooting": reboot_plan()}, verify_python=sys.executable)
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        await choose(app, pilot, "rebooting")
        await pilot.press("c", "y")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "RebootModal")
        await settle(pilot)  # the dialog mounted with its text, not just pushed
        assert "What happens next" in screen_text(app)
        await pilot.press("n")
        await wait_for(pilot, lambda: app.return_code is not None)
    assert app.return_code == 3
    pending = svc.runs.pending()  # type: ignore[union-attr]
    assert pending is not None and pending.state == "reboot-pending" and pending.rebooted

    svc2 = sandbox_services(sb, verify_python=sys.executable)
    app2 = make_app(svc2)
    async with app2.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app2.session.stage == Stage.RESUME
        assert "has rebooted" in screen_text(app2) and "rebooting" in screen_text(app2)
        await pilot.press("r")
        await wait_for(pilot, lambda: app2.session.stage == Stage.REPORT)
        await settle(pilot)  # the Report screen mounted, not just its stage reached
        assert [h[1] for h in app2.session.history] == ["resume", "verify", "done"]
        assert [(v.name, v.status) for v in app2.session.run.verify] == [
            ("import", "pass"), ("matmul", "pass"), ("conv2d", "pass")]
        assert "tflops=1.25" in screen_text(app2)
        # the steps the first session ran are shown as done (from the journal), not as planned
        rows = app2.session.run.steps
        assert [r.state for r in rows] == ["ok", "ok", "ok", "ok"]
        assert rows[0].duration is not None and rows[0].log_path and rows[0].log_path.endswith("01-backup.log")
        assert "planned" not in screen_text(app2)
    ev = journal_events(svc2)
    assert "rebooted" in ev and ev[-1] == "run-end"


@sync
async def test_resume_later_keeps_it_pending(tmp_path: Path) -> None:
    sb = tmp_path / "sb"
    svc = sandbox_services(sb, plans={"flaky": flaky_plan(sb / "flag")})
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        await choose(app, pilot, "flaky")
        await pilot.press("c", "y")
        await wait_for(pilot, lambda: app.session.stage == Stage.FAILED)
    app2 = make_app(sandbox_services(sb))
    async with app2.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app2.session.stage == Stage.RESUME
        await pilot.press("l")
        await settle(pilot)
        assert app2.session.stage == Stage.DETECT
        # a new plan is refused at Choose (not after Confirm) while the old run is unfinished,
        # with the same message the CLI gives: the run, and the commands that finish or abandon it
        notes: list[str] = []
        app2.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        await choose(app2, pilot, "downgrade-6.2")
        assert app2.session.stage == Stage.CHOOSE and app2.session.resolved is None
        pending = svc_run_id(sb)
        assert any(pending in n and "rollback" in n and "abandon" in n for n in notes), notes
        assert "A new plan cannot start" in screen_text(app2) and pending in screen_text(app2)


@sync
async def test_ctrl_c_mid_step_leaves_a_consistent_journal(tmp_path: Path) -> None:
    svc = sandbox_services(tmp_path / "sb", plans={"slow": slow_plan()})
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        await choose(app, pilot, "slow")
        await pilot.press("c", "y")
        await wait_for(pilot, lambda: app.session.run.current == 1 and app.session.run.lines >= 2)
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: app.return_code is not None, timeout=30)
    assert app.return_code == 1  # a stopped run exits 1, as the README and the CLI say (issue 25)
    from wizard.runner.journal import replay

    run = svc.runs.current()  # type: ignore[union-attr]
    view = replay(run.journal.entries())
    assert view.state == "stopped" and not view.open_actions and view.next_step == 1
    assert "resume" in app.stop_message()


@sync
async def test_sudo_refused_changes_nothing(tmp_path: Path) -> None:
    from wizard.host import LiveHost
    from wizard.model import Action, StepPlan
    from wizard.runner.executor import LiveExecutor
    from wizard.runner.privilege import Privilege
    from wizard.runner.service import Machine, RunService
    from tests.tui.helpers import TestServices, plan

    rooted = plan("rooted", StepPlan("groups", "Needs root", (Action(("true",), "noop", root=True),)))
    auth = FakeAuth(answer=False)
    host = LiveHost()
    rc = RunService(Machine(host, LiveExecutor(host.environ, Privilege(is_root=False, sudo="/nonexistent/sudo")),
                            tmp_path / "state", tmp_path / "logs", str(tmp_path / "state"), ["rocm-wizard", "resume"]))
    svc = TestServices(MachineSession(machine=rc.machine), authenticator=auth, export_dir=tmp_path)
    svc.extra_plans = {"rooted": rooted}
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        await choose(app, pilot, "rooted")
        assert app.needs_sudo
        await pilot.press("c", "y")
        await pilot.pause()
        assert auth.calls and app.session.stage == Stage.CONFIRM
    assert rc.current() is None


@sync
async def test_help_and_full_log(tmp_path: Path) -> None:
    svc = sandbox_services(tmp_path / "sb", plans={"flaky": flaky_plan(tmp_path / "sb" / "flag")})
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await settle(pilot)
        assert type(app.screen).__name__ == "HelpModal" and "Ctrl+C" in screen_text(app)
        await pilot.press("escape")
        await choose(app, pilot, "flaky")
        await pilot.press("c", "y")
        await wait_for(pilot, lambda: app.session.stage == Stage.FAILED)
        await pilot.press("l")
        await pilot.pause()
        from textual.widgets import Log

        assert type(app.screen).__name__ == "LogModal"
        text = "\n".join(app.screen.query_one(Log).lines)
        assert "hipErrorNoBinaryForGpu" in text


def test_version_does_not_import_textual() -> None:
    import sys

    out = subprocess.run([sys.executable, "-c", "import sys; from wizard.cli import main; main(['--version']); "
                          "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
                          "('textual','rich','torch'))))".replace("json.dumps", "__import__('json').dumps")],
                         capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.splitlines()[-1]) == []


@sync
async def test_an_interrupted_run_blocks_a_second_plan_at_choose_and_resume_continues_that_run(tmp_path: Path) -> None:
    """Issue 10's case: downgrade-6.2 interrupted (the terminal killed), the wizard restarted, "Later",
    pip-only chosen: refused at Choose; resuming continues the downgrade run itself, under its own steps."""
    import os
    import sys

    sb = tmp_path / "sb"
    env = {k: v for k, v in os.environ.items() if k != "ROCM_WIZARD_STATE_DIR"}
    env["ROCM_WIZARD_CRASH_AFTER"] = "30"  # kill -9 inside the run, after the purge started
    crashed = subprocess.run([sys.executable, "-m", "wizard", "--sandbox", str(sb), "--profile", "seed-7900xt",
                              "--plan", "downgrade-6.2", "--yes"], env=env, capture_output=True, text=True,
                             stdin=subprocess.DEVNULL, timeout=300)
    assert crashed.returncode == -9, crashed.stdout[-2000:]
    run_id = svc_run_id(sb)
    app = make_app(sandbox_services(sb))
    async with app.run_test(size=SIZE) as pilot:
        assert app.session.stage == Stage.RESUME and app.session.pending.state == "interrupted"
        await pilot.press("l")
        await pilot.pause()
        notes: list[str] = []
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        await choose(app, pilot, "pip-only")
        assert app.session.stage == Stage.CHOOSE and app.session.resolved is None
        assert any(run_id in n and "interrupted" in n for n in notes), notes
    assert svc_run_id(sb) == run_id  # nothing new was created
    app2 = make_app(sandbox_services(sb))
    async with app2.run_test(size=SIZE) as pilot:
        assert app2.session.stage == Stage.RESUME
        await pilot.press("r")
        await wait_for(pilot, lambda: app2.session.stage in (Stage.REBOOT, Stage.REPORT, Stage.FAILED), timeout=120)
        assert app2.session.run.run_id == run_id and app2.session.run.plan == "downgrade-6.2"
        assert [r.kind for r in app2.session.run.steps][:4] == ["preflight", "backup", "purge", "rocm_install"]
        assert app2.session.stage == Stage.REBOOT, app2.session.run.error
    assert svc_run_id(sb) == run_id


@sync
async def test_review_steps_collapsed_venv_choice_full_script_and_export_elsewhere(tmp_path: Path) -> None:
    from textual.widgets import Collapsible, Input, OptionList

    svc = Services(MachineSession(MachineSpec(from_="seed-7900xt")), export_dir=tmp_path, authenticator=FakeAuth())
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        await choose(app, pilot, "pip-only")
        assert app.session.stage == Stage.REVIEW
        steps = list(app.screen.query(Collapsible))
        assert len(steps) == len(app.session.resolved.steps) and all(c.collapsed for c in steps)
        pin = next(i for i, st in enumerate(app.session.resolved.steps) if st.kind == "pip_pin")
        assert str(steps[pin].title).startswith(f"Step {pin + 1} · user · undo · ")
        # the default venv is new, beside the old one, which stays untouched
        assert dict(app.session.resolved.target)["venv"] == "/home/user/pytorch_venv-pip-only"
        await pilot.press("enter")  # expands the focused step
        await pilot.pause()
        assert not steps[0].collapsed
        await pilot.press("v")
        await pilot.pause()
        assert type(app.screen).__name__ == "VenvModal"
        ol = app.screen.query_one(OptionList)
        ids = [ol.get_option_at_index(i).id for i in range(ol.option_count)]
        ol.highlighted = ids.index("/home/user/pytorch_venv")
        await pilot.press("enter")
        await pilot.pause()
        assert app.session.stage == Stage.REVIEW and app.session.venv == "/home/user/pytorch_venv"
        assert dict(app.session.resolved.target)["venv"] == "/home/user/pytorch_venv"
        await pilot.press("v")
        await pilot.pause()
        ol = app.screen.query_one(OptionList)
        ol.highlighted = ol.option_count - 1  # type a path
        await pilot.press("enter")
        await pilot.pause()
        app.screen.query_one("#venv-path", Input).value = "/home/user/venvs/rocm"
        await pilot.press("enter")
        await pilot.pause()
        assert dict(app.session.resolved.target)["venv"] == "/home/user/venvs/rocm"
        await pilot.press("s")  # the whole script, one key away
        await pilot.pause()
        assert type(app.screen).__name__ == "ScriptModal"
        assert "python3 -m venv /home/user/venvs/rocm" in app.screen.text
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("x")
        await pilot.pause()
        out = tmp_path / "elsewhere" / "mine.sh"
        app.screen.query_one("#export-path", Input).value = str(out)
        await pilot.press("enter")  # its directory does not exist: refused with a message, nothing written
        await pilot.pause()
        assert app.session.exported is None and not out.parent.exists()
        out.parent.mkdir()
        await pilot.press("x")
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = str(out)
        await pilot.press("enter")
        await pilot.pause()
        assert app.session.exported == str(out) and "/home/user/venvs/rocm" in out.read_text()


@sync
async def test_report_acts_verify_again_rollback_bundle_and_leaves_a_summary(tmp_path: Path) -> None:
    from wizard.tui.screens.results import exit_summary

    svc = sandbox_services(tmp_path / "sb", plans={"flood": flood_plan(10)}, export_dir=tmp_path)
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        await choose(app, pilot, "flood")
        await pilot.press("c")
        await pilot.pause()
        await pilot.press("y")
        await wait_for(pilot, lambda: app.session.stage == Stage.REPORT)
        shown = {b.key for (_, b, enabled, _) in app.screen.active_bindings.values() if b.show and enabled}
        assert {"v", "r", "w"} <= shown
        await pilot.press("w")  # the evidence bundle: asks where
        await pilot.pause()
        assert type(app.screen).__name__ == "ExportModal"
        await pilot.press("enter")
        await wait_for(pilot, lambda: (tmp_path / "rocm-wizard-evidence.tar.gz").exists(), timeout=120)
        await pilot.press("v")  # a rehearsal without a CPU torch: says so, verifies nothing
        await wait_for(pilot, lambda: any("no torch to verify with" in n.message for n in app._notifications))
        assert app.verified is None
        await pilot.press("r")  # roll back: the confirmation first; No changes nothing
        await pilot.pause()
        assert type(app.screen).__name__ == "RollbackModal"
        await pilot.press("n")
        await pilot.pause()
        assert app.session.stage == Stage.REPORT and app.session.run.state == "done"
        summary = exit_summary(app.session, None)
        assert summary is not None and "✔ Finished" in summary and "journal:" in summary
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


@sync
async def test_diagnose_takes_pasted_error_text(tmp_path: Path) -> None:
    from textual.widgets import TextArea

    svc = Services(MachineSession(MachineSpec(from_="seed-7900xt")), export_dir=tmp_path, authenticator=FakeAuth())
    app = make_app(svc)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await pilot.pause()
        assert app.session.stage == Stage.DIAGNOSE
        before = {f.id for f in app.session.findings}
        assert "no-binary-for-gpu" not in before
        await pilot.press("p")
        await pilot.pause()
        assert type(app.screen).__name__ == "PasteModal"
        app.screen.query_one(TextArea).text = ("Traceback (most recent call last):\n"
                                               "RuntimeError: HIP error: hipErrorNoBinaryForGpu: Unable to find "
                                               "code object for all current devices!\n")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.session.stage == Stage.DIAGNOSE
        found = {f.id: f for f in app.session.findings}
        assert "no-binary-for-gpu" in found
        assert "hipErrorNoBinaryForGpu" in screen_text(app)
