"""One snapshot per screen at 100x32: fixed theme, no animations, no real paths, no live clock.

The run-state screens are fed recorded engine events (fixed paths and durations), not a live run.
Update with `pytest tests/tui/test_snapshots.py --snapshot-update` after reviewing the HTML report.
"""

from __future__ import annotations

from typing import Any

import pytest

from wizard.machine_session import MachineSession, MachineSpec
from wizard.record import replace
from wizard.runner import events as ev
from wizard.runner.records import RunState, StepOutcome
from wizard.runner.service import PendingRun
from wizard.session import RunProgress, Stage
from wizard.tui.app import WizardApp, make_app
from wizard.tui.services import Services

from tests.tui.helpers import keys_then_settle, settle, wait_for

pytestmark = pytest.mark.integration

SIZE = (100, 32)
LOGS = "/var/log/rocm-wizard/run-1"
STATE = "/var/lib/rocm-wizard"


def _services(example: str = "seed-7900xt", facts: Any = None) -> Services:
    from wizard.host import open_recorded
    from wizard.probes import detect

    host = open_recorded(example)
    facts = facts or replace(detect(host), origin=f"bundle:{example}")
    session = MachineSession(MachineSpec(state_dir=STATE), host=host, facts=facts, read_only=False,
                             wizard_python="/usr/bin/python3")
    return Services(session, clock=lambda: 1_700_000_000.0)


def app_at(stage: Stage, *, example: str = "seed-7900xt", events: list[Any] = (), **session: Any) -> WizardApp:  # type: ignore[assignment]
    svc = _services(example)
    s = svc.new_session()
    s.machine = f"bundle:{example}"
    s.pending = None
    if stage not in (Stage.DETECT, Stage.DIAGNOSE, Stage.CHOOSE):
        s.resolved = svc.resolve("downgrade-6.2")
        s.chosen = "downgrade-6.2"
        s.run = RunProgress.for_plan(s.resolved)
    for k, v in session.items():
        setattr(s, k, v)
    s.stage = stage
    app = make_app(svc, s, theme="textual-dark")
    app.events.extend(events)
    return app


def _log(i: int, kind: str) -> str:
    return f"{LOGS}/{i + 1:02d}-{kind}.log"


N = 10  # downgrade-6.2's steps: preflight, backup, purge, install, secure boot, groups, pip, env, reboot, verify


def _midway() -> list[Any]:
    out: list[Any] = [ev.RunStarted("run-1", "downgrade-6.2", N, False, f"{STATE}/runs/run-1/journal.jsonl", LOGS)]
    for i, kind, title in [(0, "preflight", "Preflight"), (1, "backup", "Back up"), (2, "purge", "Remove")]:
        out += [ev.StepStarted(i, N, kind, title, _log(i, kind)),
                ev.OutputLines(i, 0, tuple(f"{kind}: line {n}" for n in range(3))),
                ev.StepFinished(i, kind, StepOutcome.OK, 1.5 + i)]
    out += [ev.StepStarted(3, N, "rocm_install", "Install ROCm 6.2.4 with amdgpu-install", _log(3, "rocm_install")),
            ev.ActionStarted(3, 0, "sudo -n -- apt-get install -y ./amdgpu-install_6.2.60204-1_all.deb", "install"),
            ev.OutputLines(3, 0, tuple(f"Unpacking package {n} ..." for n in range(40)))]
    return out


def _failed() -> list[Any]:
    out = _midway()
    finding = ev.Finding("example-issue", "amdgpu-install could not reach the repository",
                         "check the network and the repo URL, then retry", ("https://rocm.docs.amd.com/",))
    out += [ev.RunFailed(3, 3, "rocm_install", "sudo -n -- amdgpu-install -y --usecase=rocm", 1, "exited with 1",
                         ("Reading package lists...", "E: Unable to locate package rocm"), _log(3, "rocm_install"),
                         (finding,))]
    return out


def _verify() -> list[Any]:
    out: list[Any] = [ev.RunStarted("run-1", "downgrade-6.2", N, True, f"{STATE}/runs/run-1/journal.jsonl", LOGS)]
    for i in range(N - 1):
        out.append(ev.StepFinished(i, "x", StepOutcome.OK, 1.0 + i))
    out.append(ev.StepStarted(N - 1, N, "verify", "Verify: matmul and convolution on the GPU", _log(N - 1, "verify")))
    lines = ['{"type": "check", "name": "import", "device": "cpu", "status": "pass", "seconds": 1.2}',
             '{"type": "check", "name": "matmul", "device": "cuda:0", "status": "pass", "seconds": 0.8, '
             '"metrics": {"tflops_fp16": 61.5}}',
             '{"type": "check", "name": "conv2d", "device": "cuda:0", "status": "timeout", "seconds": 60.0, '
             '"error": "no result within 60s"}']
    out.append(ev.OutputLines(N - 1, 0, tuple(lines)))
    return out


def _done() -> list[Any]:
    return [*_verify(), ev.StepFinished(N - 1, "verify", StepOutcome.OK, 65.0), ev.RunFinished(RunState.DONE, "run-1")]


def _reboot() -> list[Any]:
    out = [ev.RunStarted("run-1", "downgrade-6.2", N, False, f"{STATE}/runs/run-1/journal.jsonl", LOGS)]
    for i in range(N - 2):
        out.append(ev.StepFinished(i, "x", StepOutcome.OK, 1.0 + i))
    out += [ev.StepStarted(N - 2, N, "reboot", "Reboot", _log(N - 2, "reboot")),
            ev.RebootPending(N - 2, "boot-1", False, "reboot when ready, then run `rocm-wizard resume`")]
    return out


PENDING = PendingRun("run-1", "downgrade-6.2", RunState.REBOOT_PENDING, N - 1, N,
                     tuple(f"step title {i + 1}" for i in range(N)), True, f"{STATE}/runs/run-1/journal.jsonl")

CASES: dict[str, Any] = {
    "detect": lambda: app_at(Stage.DETECT),
    "detect_no_gpu": lambda: _no_gpu(),
    "diagnose": lambda: app_at(Stage.DIAGNOSE, example="seed-5600xt"),
    "choose": lambda: app_at(Stage.CHOOSE),
    "review": lambda: app_at(Stage.REVIEW),
    "confirm": lambda: app_at(Stage.CONFIRM),
    "run_midway": lambda: app_at(Stage.RUN, events=_midway()),
    "failed": lambda: app_at(Stage.RUN, events=_failed()),
    "reboot": lambda: app_at(Stage.RUN, events=_reboot()),
    "resume": lambda: app_at(Stage.RESUME, pending=PENDING),
    "verify": lambda: app_at(Stage.RUN, events=_verify()),
    "report": lambda: app_at(Stage.RUN, events=_done()),
}


def _no_gpu() -> WizardApp:
    from wizard.model import Facts

    svc = _services(facts=Facts(origin="live"))
    s = svc.new_session()
    s.machine = "live"
    s.pending = None
    return _LiveLooking(svc, s, theme="textual-dark")


class _LiveLooking(WizardApp):
    """A bundle standing in for a live machine without an AMD GPU (so the rehearsal is offered)."""

    can_rehearse = True  # type: ignore[assignment]


@pytest.mark.parametrize("name", sorted(CASES))
def test_screen(name: str, snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")
    assert snap_compare(CASES[name](), terminal_size=SIZE, run_before=settle)


def test_detect_with_evidence(snap_compare: Any) -> None:
    assert snap_compare(app_at(Stage.DETECT), terminal_size=SIZE, run_before=keys_then_settle("e"))


def test_open_plan_file_dialog(snap_compare: Any) -> None:
    assert snap_compare(app_at(Stage.CHOOSE), terminal_size=SIZE, run_before=keys_then_settle("o"))


def test_full_log_of_a_step(snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from wizard.tui.screens import modals

    monkeypatch.setattr(modals, "tail_lines", lambda path, n=5000: [f"{path}: line {i}" for i in range(60)])

    async def open_log(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)

    assert snap_compare(app_at(Stage.RUN, events=_midway()), terminal_size=SIZE, run_before=open_log)


def test_reboot_question(snap_compare: Any) -> None:
    from wizard.tui.screens.run import RebootModal, reboot_question

    async def ask(pilot: Any) -> None:
        await settle(pilot)
        pilot.app.push_screen(RebootModal(reboot_question("Downgrade to ROCm 6.2.4", "Reboot", "rocm-wizard")))
        await settle(pilot)

    assert snap_compare(app_at(Stage.RUN, events=_reboot()[:-1]), terminal_size=SIZE, run_before=ask)


@pytest.mark.parametrize("size", [(80, 24), (100, 32)], ids=["80x24", "100x32"])
@pytest.mark.parametrize("stage", [Stage.DETECT, Stage.REVIEW], ids=["detect", "review"])
def test_help_sizes(stage: Stage, size: tuple[int, int], snap_compare: Any) -> None:
    """Help: this screen's keys and everyone's in one table that fits 80x24 without scrolling."""
    assert snap_compare(app_at(stage), terminal_size=size, run_before=keys_then_settle("question_mark"))


@pytest.mark.parametrize("size", [(80, 24), (100, 32)], ids=["80x24", "100x32"])
def test_choose_sizes(size: tuple[int, int], snap_compare: Any) -> None:
    """Choose: the footer names Enter (which the plan list takes) for what it does here."""
    assert snap_compare(app_at(Stage.CHOOSE), terminal_size=size, run_before=settle)


def test_light_theme_review(snap_compare: Any) -> None:
    app = app_at(Stage.REVIEW)
    app.theme = "textual-light"
    assert snap_compare(app, terminal_size=SIZE, run_before=settle)


@pytest.mark.parametrize("name", ["detect", "review", "failed", "report", "resume"])
def test_usable_at_80x24(name: str) -> None:
    """Every key is still offered in the footer at 80x24, and the screen renders without error."""
    import asyncio

    from textual.widgets import Footer

    async def go() -> None:
        app = CASES[name]()
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            assert app.screen.query(Footer)
            shown = {b.key for (_, b, enabled, _) in app.screen.active_bindings.values() if b.show}
            assert "question_mark,f1" in shown or "question_mark" in shown or any("?" in (b or "") for b in shown)

    asyncio.run(go())


def test_rollback_confirmation(snap_compare: Any) -> None:
    from wizard.model import Action
    from wizard.tui.screens.run import RollbackModal, rollback_text

    undo = [("remove the ROCm the run installed",
             Action(("amdgpu-install", "-y", "--uninstall", "--rocmrelease=all"), root=True)),
            ("reinstall ROCm 6.2.0", Action(("amdgpu-install", "-y", "--usecase=rocm", "--no-dkms"), root=True)),
            ("restore /home/user/pytorch_venv exactly from the backup's pip freeze",
             Action(("/home/user/pytorch_venv/bin/python", "-m", "pip", "install", "--no-deps", "torch==2.5.1+rocm6.2"),
                    as_user=True))]

    async def ask(pilot: Any) -> None:
        from textual.widgets import Log

        await settle(pilot)
        tail = pilot.app.screen.query_one("#tail", Log)
        # the failure's output is in the Log, laid out and showing its last lines (the Log is anchored to its
        # end) before the dialog covers the screen
        await wait_for(pilot, lambda: tail.line_count > 0 and tail.size.height > 0 and tail.is_vertical_scroll_end)
        await settle(pilot)
        pilot.app.push_screen(RollbackModal(rollback_text(undo, ["step 6 (groups): add user to render has no undo"]),
                                            True))
        await settle(pilot)

    assert snap_compare(app_at(Stage.FAILED, events=_failed()), terminal_size=SIZE, run_before=ask)


def test_choose_while_another_run_is_unfinished(snap_compare: Any) -> None:
    why = ("run run-1 (downgrade-6.2) is interrupted: `rocm-wizard resume` continues it, `rocm-wizard rollback` "
           "undoes it, `rocm-wizard abandon` forgets it (nothing on the machine changes)")
    assert snap_compare(app_at(Stage.CHOOSE, blocked=why), terminal_size=SIZE, run_before=settle)


@pytest.mark.parametrize("size", [(80, 24), (100, 32)], ids=["80x24", "100x32"])
@pytest.mark.parametrize("keys", [[], ["enter"], ["v"], ["x"], ["s"]],
                         ids=["collapsed", "step-expanded", "venv-choice", "export-dialog", "full-script"])
def test_review_sizes(keys: list[str], size: tuple[int, int], snap_compare: Any, monkeypatch: pytest.MonkeyPatch
                      ) -> None:
    """Review: one line per step, a step expanded, the venv choice, the export dialog, the whole script."""
    from pathlib import Path

    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")
    app = app_at(Stage.REVIEW)
    app.services.export_dir = Path("/home/user")
    assert snap_compare(app, terminal_size=size, run_before=keys_then_settle(*keys))


def _done_unverified() -> list[Any]:
    out: list[Any] = [ev.RunStarted("run-1", "downgrade-6.2", N, True, f"{STATE}/runs/run-1/journal.jsonl", LOGS)]
    out += [ev.StepFinished(i, "x", StepOutcome.OK, 1.0 + i) for i in range(N - 1)]
    out += [ev.StepSkipped(N - 1, "verify", "Verify", "sandbox: no torch to verify with (--verify-python PATH)"),
            ev.RunFinished(RunState.DONE, "run-1")]
    return out


@pytest.mark.parametrize("size", [(80, 24), (100, 32)], ids=["80x24", "100x32"])
@pytest.mark.parametrize("case", ["verify", "report", "report-unverified"])
def test_verify_and_report_sizes(case: str, size: tuple[int, int], snap_compare: Any,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Verify streams checks with the running one's elapsed time; Report never says Finished over a skip."""
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")
    app = {"verify": lambda: app_at(Stage.RUN, events=_verify()), "report": lambda: app_at(Stage.RUN, events=_done()),
           "report-unverified": lambda: app_at(Stage.RUN, events=_done_unverified())}[case]()
    assert snap_compare(app, terminal_size=size, run_before=settle)


@pytest.mark.parametrize("size", [(80, 24), (100, 32)], ids=["80x24", "100x32"])
@pytest.mark.parametrize("keys", [[], ["p"]], ids=["diagnose", "paste-dialog"])
def test_diagnose_sizes(keys: list[str], size: tuple[int, int], snap_compare: Any) -> None:
    """Diagnose, and the dialog that takes the error text the user hit (its cursor shown steadily)."""

    assert snap_compare(app_at(Stage.DIAGNOSE), terminal_size=size, run_before=keys_then_settle(*keys))


@pytest.mark.parametrize("size", [(80, 24), (100, 32)], ids=["80x24", "100x32"])
def test_rehearsal_choice_sizes(size: tuple[int, int], snap_compare: Any) -> None:
    """The rehearsal offers every profile and says where each one lives."""
    from pathlib import Path

    app = _no_gpu()
    app.services.rehearsal_root = Path("/nonexistent/rocm-wizard/rehearsal")
    assert snap_compare(app, terminal_size=size, run_before=keys_then_settle("r"))


@pytest.mark.parametrize("size", [(80, 24), (100, 32)], ids=["80x24", "100x32"])
@pytest.mark.parametrize("example", ["seed-7900xt", "seed-5600xt"])
def test_detect_sizes(example: str, size: tuple[int, int], snap_compare: Any) -> None:
    """Detect at the sizes people use: gfx targets and PCI ids whole, the machine named in the header."""
    assert snap_compare(app_at(Stage.DETECT, example=example), terminal_size=size, run_before=settle)


@pytest.mark.parametrize("size", [(80, 24), (100, 32)], ids=["80x24", "100x32"])
def test_verify_torch_offer_sizes(size: tuple[int, int], snap_compare: Any) -> None:
    """A rehearsal without a CPU torch: the offer to make one (what it runs), or to go on NOT verified."""
    from wizard.tui.screens.modals import VerifyTorchModal
    from wizard.tui.services import CPU_TORCH_INDEX

    where = "/home/user/.local/state/rocm-wizard/rehearsal/cpu-torch"
    commands = [["/usr/bin/python3", "-m", "venv", where],
                [f"{where}/bin/python", "-m", "pip", "install", "--disable-pip-version-check", "torch",
                 "--index-url", CPU_TORCH_INDEX]]

    async def ask(pilot: Any) -> None:
        await settle(pilot)
        pilot.app.push_screen(VerifyTorchModal(commands))
        await settle(pilot)

    assert snap_compare(_no_gpu(), terminal_size=size, run_before=ask)
