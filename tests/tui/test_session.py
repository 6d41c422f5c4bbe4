"""The stage machine and the run fold: pure, no Textual."""

from __future__ import annotations

import pytest

from wizard.runner import events as ev
from wizard.session import IllegalTransition, RunState, Session, Stage, advance, events_from
from tests.tui.helpers import flood_plan


def test_happy_path_through_every_stage() -> None:
    s = Stage.DETECT
    for event, want in [("next", Stage.DIAGNOSE), ("next", Stage.CHOOSE), ("choose", Stage.REVIEW),
                        ("confirm", Stage.CONFIRM), ("yes", Stage.RUN), ("reboot", Stage.REBOOT)]:
        s = advance(s, event)
        assert s == want
    assert advance(Stage.RESUME, "resume") == Stage.RUN
    assert advance(Stage.RUN, "verify") == Stage.VERIFY
    assert advance(Stage.VERIFY, "done") == Stage.REPORT


def test_failure_choices() -> None:
    assert advance(Stage.RUN, "failed") == Stage.FAILED
    assert advance(Stage.FAILED, "retry") == Stage.RUN
    assert advance(Stage.FAILED, "rollback") == Stage.RUN
    assert advance(Stage.FAILED, "stop") == Stage.REPORT


@pytest.mark.parametrize("stage,event", [(Stage.DETECT, "yes"), (Stage.CHOOSE, "confirm"), (Stage.REPORT, "retry"),
                                         (Stage.REBOOT, "next"), (Stage.CONFIRM, "choose")])
def test_illegal_transitions_raise(stage: Stage, event: str) -> None:
    with pytest.raises(IllegalTransition):
        advance(stage, event)


def test_read_only_never_reaches_a_change() -> None:
    with pytest.raises(IllegalTransition):
        advance(Stage.REVIEW, "confirm", read_only=True)
    assert "confirm" not in events_from(Stage.REVIEW, read_only=True)
    assert "confirm" in events_from(Stage.REVIEW)
    s = Session(machine="bundle:x", read_only=True, stage=Stage.REVIEW)
    assert not s.can("confirm") and s.can("back")


def test_run_state_folds_events() -> None:
    rs = RunState.for_plan(flood_plan(3))
    assert [r.state for r in rs.steps] == ["planned", "planned"]
    assert rs.apply(ev.RunStarted("r1", "flood", 2, False, "/j", "/l")) is None
    rs.apply(ev.StepStarted(0, 2, "backup", "Back up", "/l/01.log"))
    assert rs.steps[0].state == "running"
    rs.apply(ev.OutputLines(0, 0, ("a", "b")))
    rs.apply(ev.StepFinished(0, "backup", "ok", 1.5))
    assert rs.steps[0].state == "ok" and rs.steps[0].duration == 1.5 and rs.lines == 2
    fail = ev.RunFailed(1, 0, "pip_pin", "x", 7, "exited with 7", ("boom",), "/l/02.log")
    assert rs.apply(fail) == "failed"
    assert rs.steps[1].state == "failed" and rs.failure is fail
    assert rs.apply(ev.RunStarted("r1", "flood", 2, True, "/j", "/l")) is None
    assert rs.steps[1].state == "planned"  # a retry starts the step again
    assert rs.apply(ev.RunFinished("done", "r1")) == "done"


def test_verify_rows_from_json_lines_and_from_a_report() -> None:
    rs = RunState()
    rs.steps = []
    rs.apply(ev.RunStarted("r", "p", 1, False, "/j", "/l"))
    assert rs.apply(ev.StepStarted(0, 1, "verify", "Verify", "/l")) == "verify"
    rs.apply(ev.OutputLines(0, 0, ('{"type": "check", "name": "matmul", "device": "cpu", "status": "pass", '
                                   '"seconds": 0.2, "metrics": {"tflops": 1.5}}', "noise")))
    assert [(v.name, v.status) for v in rs.verify] == [("matmul", "pass")]
    assert "tflops=1.5" in rs.verify[0].throughput
    rs2 = RunState()
    rs2.apply(ev.RunStarted("r", "p", 1, False, "/j", "/l"))
    rs2.apply(ev.StepStarted(0, 1, "verify", "Verify", "/l"))
    rs2.apply(ev.OutputLines(0, 0, ("{", '  "checks": [{"name": "conv2d", "device": "cuda:0", "status": "fail",',
                                    '   "seconds": 1, "error": "bad"}]', "}")))
    rs2.apply(ev.StepFinished(0, "verify", "ok", 1.0))
    assert [(v.name, v.status, v.error) for v in rs2.verify] == [("conv2d", "fail", "bad")]
