"""Issue 25, point 7: the Run screen's progress line counts a skipped step as skipped, never as done, and shows
the first line of a script, not the script."""

from __future__ import annotations

import pytest

from wizard.session import RunProgress, StepRow
from wizard.tui.screens.run import status_text

pytestmark = pytest.mark.unit


def test_skipped_steps_are_not_done() -> None:
    run = RunProgress(plan="p")
    run.steps = [StepRow(0, "preflight", "Preflight", "ok"), StepRow(1, "backup", "Back up", "ok"),
                 StepRow(2, "secure_boot", "MOK", "skipped"), StepRow(3, "groups", "Groups", "skipped"),
                 StepRow(4, "pip_pin", "Pin", "running"), StepRow(5, "verify", "Verify", "planned")]
    run.current = 4
    run.current_action = "python3 -c 'import fcntl, os\nprint(1)\n'"
    text = status_text(run).plain
    assert text.startswith("2/4 steps done, 2 skipped · step 5: Pin")
    assert "$ python3 -c 'import fcntl, os …" in text and "print(1)" not in text
