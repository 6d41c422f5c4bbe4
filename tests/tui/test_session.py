"""The stage machine and the run fold: pure, no Textual."""

from __future__ import annotations

import pytest

from wizard.runner import events as ev
from wizard.runner.records import RunState, StepOutcome
from wizard.session import IllegalTransition, Move, RunProgress, Session, Stage, advance, moves_from
from tests.tui.helpers import flood_plan

pytestmark = pytest.mark.unit


def test_happy_path_through_every_stage() -> None:
    s = Stage.DETECT
    for move, want in [(Move.NEXT, Stage.DIAGNOSE), (Move.NEXT, Stage.CHOOSE), (Move.CHOOSE, Stage.REVIEW),
                       (Move.CONFIRM, Stage.CONFIRM), (Move.YES, Stage.RUN), (Move.REBOOT, Stage.REBOOT)]:
        s = advance(s, move)
        assert s == want
    assert advance(Stage.RESUME, Move.RESUME) == Stage.RUN
    assert advance(Stage.RUN, Move.VERIFY) == Stage.VERIFY
    assert advance(Stage.VERIFY, Move.DONE) == Stage.REPORT


def test_failure_choices() -> None:
    assert advance(Stage.RUN, Move.FAILED) == Stage.FAILED
    assert advance(Stage.FAILED, Move.RETRY) == Stage.RUN
    assert advance(Stage.FAILED, Move.ROLLBACK) == Stage.RUN
    assert advance(Stage.FAILED, Move.STOP) == Stage.REPORT


@pytest.mark.parametrize("stage,move", [(Stage.DETECT, Move.YES), (Stage.CHOOSE, Move.CONFIRM),
                                        (Stage.REPORT, Move.RETRY), (Stage.REBOOT, Move.NEXT),
                                        (Stage.CONFIRM, Move.CHOOSE)])
def test_illegal_transitions_raise(stage: Stage, move: Move) -> None:
    with pytest.raises(IllegalTransition):
        advance(stage, move)


def test_read_only_never_reaches_a_change() -> None:
    with pytest.raises(IllegalTransition):
        advance(Stage.REVIEW, Move.CONFIRM, read_only=True)
    assert Move.CONFIRM not in moves_from(Stage.REVIEW, read_only=True)
    assert Move.CONFIRM in moves_from(Stage.REVIEW)
    s = Session(machine="bundle:x", read_only=True, stage=Stage.REVIEW)
    assert not s.can(Move.CONFIRM) and s.can(Move.BACK)


def test_run_state_folds_events() -> None:
    rs = RunProgress.for_plan(flood_plan(3))
    assert [r.state for r in rs.steps] == ["planned", "planned"]
    assert rs.apply(ev.RunStarted("r1", "flood", 2, False, "/j", "/l")) is None
    rs.apply(ev.StepStarted(0, 2, "backup", "Back up", "/l/01.log"))
    assert rs.steps[0].state == "running"
    rs.apply(ev.OutputLines(0, 0, ("a", "b")))
    rs.apply(ev.StepFinished(0, "backup", StepOutcome.OK, 1.5))
    assert rs.steps[0].state == "ok" and rs.steps[0].duration == 1.5 and rs.lines == 2
    fail = ev.RunFailed(1, 0, "pip_pin", "x", 7, "exited with 7", ("boom",), "/l/02.log")
    assert rs.apply(fail) is Move.FAILED
    assert rs.steps[1].state == "failed" and rs.failure is fail
    assert rs.apply(ev.RunStarted("r1", "flood", 2, True, "/j", "/l")) is None
    assert rs.steps[1].state == "planned"  # a retry starts the step again
    assert rs.apply(ev.RunFinished(RunState.DONE, "r1")) is Move.DONE


def test_verify_rows_from_json_lines_and_from_a_report() -> None:
    rs = RunProgress()
    rs.steps = []
    rs.apply(ev.RunStarted("r", "p", 1, False, "/j", "/l"))
    assert rs.apply(ev.StepStarted(0, 1, "verify", "Verify", "/l")) is Move.VERIFY
    rs.apply(ev.OutputLines(0, 0, ('{"type": "check", "name": "matmul", "device": "cpu", "status": "pass", '
                                   '"seconds": 0.2, "metrics": {"tflops": 1.5}}', "noise")))
    assert [(v.name, v.status) for v in rs.verify] == [("matmul", "pass")]
    assert "tflops=1.5" in rs.verify[0].throughput
    rs2 = RunProgress()
    rs2.apply(ev.RunStarted("r", "p", 1, False, "/j", "/l"))
    rs2.apply(ev.StepStarted(0, 1, "verify", "Verify", "/l"))
    rs2.apply(ev.OutputLines(0, 0, ("{", '  "checks": [{"name": "conv2d", "device": "cuda:0", "status": "fail",',
                                    '   "seconds": 1, "error": "bad"}]', "}")))
    rs2.apply(ev.StepFinished(0, "verify", StepOutcome.OK, 1.0))
    assert [(v.name, v.status, v.error) for v in rs2.verify] == [("conv2d", "fail", "bad")]
