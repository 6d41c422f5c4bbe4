"""Issue 15.2: an override is fixed where it lives: the env step comments out the line that sets it (the
detector's ``~/.bashrc:12``), keeps a copy, and its undo puts the line back."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from test_plan_golden import machines
import pytest

from wizard import record
from wizard.model import EnvSetting
from wizard.planner import resolve_plan

pytestmark = pytest.mark.integration


def env_actions(facts):  # type: ignore[no-untyped-def]
    rp = resolve_plan("pip-only", facts, state_dir="/var/lib/rocm-wizard")
    return next(s for s in rp.steps if s.kind == "env").actions


def run(argv: tuple[str, ...], py: str = sys.executable) -> subprocess.CompletedProcess[str]:
    return subprocess.run([py, *argv[1:]], capture_output=True, text=True)


def test_the_line_that_sets_the_override_is_commented_out_with_a_copy_and_an_undo(tmp_path: Path) -> None:
    base = machines()["rdna3-gfx1102-venv"]  # 11.0.0 in ~/.bashrc:12 on a card its wheel carries natively
    acts = env_actions(base)
    comment = next(a for a in acts if a.description.startswith("comment out HSA_OVERRIDE_GFX_VERSION"))
    assert comment.argv[3:] == ("/home/user/.bashrc", "12", "HSA_OVERRIDE_GFX_VERSION")
    assert comment.as_user and not comment.root and comment.undo is not None and comment.check is not None
    # the same actions on a real file here
    rc = tmp_path / ".bashrc"
    text = "".join(f"echo line {i}\n" for i in range(1, 12)) + "export HSA_OVERRIDE_GFX_VERSION=11.0.0\nalias ll='ls -l'\n"
    rc.write_text(text)
    rc.chmod(0o640)
    facts = record.replace(base, env=(EnvSetting("HSA_OVERRIDE_GFX_VERSION", "11.0.0", f"{rc}:12"),))
    comment = next(a for a in env_actions(facts) if a.description.startswith("comment out"))
    assert run(comment.check).returncode == 1  # not done yet
    res = run(comment.argv)
    assert res.returncode == 0, res.stderr
    lines = rc.read_text().splitlines()
    assert lines[11] == "# rocm-wizard: export HSA_OVERRIDE_GFX_VERSION=11.0.0" and lines[12] == "alias ll='ls -l'"
    assert (tmp_path / ".bashrc.rocm-wizard-bak").read_text() == text and rc.stat().st_mode & 0o777 == 0o640
    assert run(comment.check).returncode == 0  # done: a resume does not repeat it
    assert run(comment.undo).returncode == 0  # type: ignore[arg-type]
    assert rc.read_text() == text
    # a line that changed since detection is left alone, with one clear line
    rc.write_text("echo nothing here\n" * 12)
    res = run(comment.argv)
    assert res.returncode == 1 and "does not set HSA_OVERRIDE_GFX_VERSION" in res.stderr
    assert rc.read_text() == "echo nothing here\n" * 12


def test_a_value_the_plan_keeps_and_a_venvs_own_activate_script_are_left_alone() -> None:
    base = machines()["rdna3-gfx1102-venv"]
    facts = record.replace(base, env=(
        EnvSetting("HSA_OVERRIDE_GFX_VERSION", "11.0.0", "/home/user/sd/bin/activate:40"),))
    assert not [a for a in env_actions(facts) if a.description.startswith("comment out")]
    facts = record.replace(base, env=(EnvSetting("HSA_OVERRIDE_GFX_VERSION", "11.0.0", "/etc/environment:1"),))
    etc = [a for a in env_actions(facts) if a.description.startswith("comment out")]
    assert len(etc) == 1 and etc[0].root  # a system file: as root
