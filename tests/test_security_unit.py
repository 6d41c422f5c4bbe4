"""Second security review, B13: the resume unit's ``ConditionPathExists`` for a state path with white space, quotes,
``$``, ``%``, backticks and ``;``. It was written quoted, which systemd reads as "not absolute" and drops: the unit
would then run ``resume --yes`` as root at every boot. ``systemd-analyze`` checks the condition as systemd reads it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from wizard.runner.resume_unit import unit_text

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")]

HOSTILE = "st a%n$USER;`id`\"q'x\\y"


def condition(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("ConditionPathExists="))


def test_the_trigger_condition_names_the_real_path_for_systemd(tmp_path: Path) -> None:
    trigger = tmp_path / HOSTILE / "resume-pending"
    trigger.parent.mkdir()
    text = unit_text(["/bin/true", "resume", "--yes"], trigger)
    cond = condition(text)
    res = subprocess.run(["systemd-analyze", "condition", cond], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and "not absolute" not in res.stdout + res.stderr, res.stdout + res.stderr  # absent
    trigger.write_text("")
    res = subprocess.run(["systemd-analyze", "condition", cond], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and "succeeded" in res.stdout + res.stderr, res.stdout + res.stderr
    unit = tmp_path / "rocm-wizard-resume.service"
    unit.write_text(text)
    res = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert "ConditionPathExists" not in res.stderr, res.stderr


@pytest.mark.parametrize("path", ["relative/resume-pending", "/x/resume-pending ", " /x/resume-pending"])
def test_a_path_systemd_would_trim_or_not_read_as_absolute_is_refused(path: str) -> None:
    with pytest.raises(ValueError, match="condition"):
        unit_text(["/bin/true"], Path(path) if not path.startswith(" ") else path)  # type: ignore[arg-type]
