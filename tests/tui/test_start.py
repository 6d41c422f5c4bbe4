"""Issue 15.12 (start fast): what `rocm-wizard` imports before its first screen, checked in a fresh interpreter.

The command runs as the console script does (``wizard.cli.main``), headless, on this machine with an empty state
dir; at the first screen the modules loaded so far are compared with what only later stages need.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

START = r"""
import sys
from textual.app import App

class Terminal:  # the wizard needs a terminal; headless, Textual writes nothing to it
    def __init__(self, stream):
        self.stream = stream
    def isatty(self):
        return True
    def __getattr__(self, name):
        return getattr(self.stream, name)

run = App.run

def headless(app, *args, **kwargs):
    async def at_first_screen(pilot):
        await pilot.pause()
        print(type(app.screen).__name__, *sorted(sys.modules), file=sys.__stderr__)
        app.exit(0)
    return run(app, headless=True, size=(100, 32), auto_pilot=at_first_screen)

App.run = headless
sys.stdin, sys.stdout = Terminal(sys.stdin), Terminal(sys.stdout)
from wizard.cli import main
main(["--state-dir", sys.argv[1]])
"""

# what only a later stage needs: the screens after the first and the dialogs, the diagnosis, the planner, the
# process library actions run with, the rehearsal mirror's builder
LATER = ("wizard.tui.screens.plans", "wizard.tui.screens.run", "wizard.tui.screens.results",
         "wizard.tui.screens.modals", "wizard.diagnose", "wizard.planner", "sh", "wizard.mirror.build")


def test_the_first_screen_waits_for_no_module_of_a_later_stage(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", START, str(tmp_path / "state")], capture_output=True, text=True,
                         timeout=120, stdin=subprocess.DEVNULL)
    lines = [line for line in out.stderr.splitlines() if line.startswith(("DetectScreen ", "ResumeScreen "))]
    assert lines, f"no first screen (exit {out.returncode}):\n{out.stderr[-3000:]}"
    screen, *modules = lines[-1].split()
    assert screen == "DetectScreen"
    assert "wizard.tui.screens.machine" in modules
    assert [m for m in LATER if m in modules] == []
