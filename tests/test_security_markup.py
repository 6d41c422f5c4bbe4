"""Rich markup in untrusted text (issue 16 item 10): ``[...]`` in paths and commands is shown literally,
in the CLI's tables and in the TUI's step list, verify table, log title and notifications."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.text import Text

import pytest

from tests.tui.helpers import sync
from wizard.host import BundleHost
from wizard.probes import detect
from wizard.render import facts_renderables

pytestmark = pytest.mark.integration

HOSTILE = "/opt/[/x]lib:[bold red]loud[/]:[link=file:///etc]z[/link]"
LSPCI = "03:00.0 VGA compatible controller [0300]: Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 [1002:744c]\n"


def _bundle(tmp_path: Path) -> Path:
    b = tmp_path / "b"
    b.mkdir()
    (b / "lspci.txt").write_text(LSPCI)
    (b / "env.txt").write_text(f"LD_LIBRARY_PATH={HOSTILE}\nROCM_PATH=/opt/rocm[/]\n")
    (b / "[red]notes[bold].txt").write_text("some prose\n")
    return b


def test_the_cli_shows_bracketed_values_literally(tmp_path: Path) -> None:
    b = _bundle(tmp_path)
    res = subprocess.run([sys.executable, "-m", "wizard", "detect", "--evidence", "--from", str(b)],
                         capture_output=True, text=True, timeout=60, env={"COLUMNS": "400", "PATH": "/usr/bin:/bin"})
    assert res.returncode == 0, res.stderr
    flat = res.stdout.replace("\n", "")
    assert "[/x]lib:[bold red]loud[/]" in flat and "/opt/rocm[/]" in flat and "[red]notes[bold].txt" in flat


def test_fact_tables_are_literal_text() -> None:
    from wizard.record import replace

    facts = detect(BundleHost(Path(__file__).parent.parent / "wizard" / "examples" / "seed-7900xt"))
    facts = replace(facts, python_envs=tuple(replace(e, path="/home/u/[/x]venv[dim]") for e in facts.python_envs))
    out = io.StringIO()
    console = Console(file=out, width=300, color_system=None)
    for item in facts_renderables(facts):
        console.print(item)
    assert "/home/u/[/x]venv[dim]" in out.getvalue()


@sync
async def test_the_tui_shows_bracketed_titles_and_messages_literally() -> None:
    from textual.app import App, ComposeResult

    from wizard.session import StepRow
    from wizard.tui.app import WizardApp
    from wizard.tui.screens.results import verify_cells
    from wizard.tui.widgets.step_list import StepList

    rows = [StepRow(0, "backup", "Back up /home/u/[/x]venv"), StepRow(1, "pip_pin", "Pin torch in [bold]v[/bold]"),
            StepRow(2, "env", "Set the venv's environment")]

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield StepList(id="steps")

        notify = WizardApp.notify  # the wizard's own: literal notifications

    app = Host()
    async with app.run_test(size=(120, 20)) as pilot:
        table = app.query_one(StepList)
        table.show(rows)
        await pilot.pause()
        assert table.row_count == 3  # no step hidden
        titles = [table.get_cell(str(i), "title") for i in range(3)]
        assert [t.plain if isinstance(t, Text) else t for t in titles] == [r.title for r in rows]
        table.show([StepRow(r.index, r.kind, r.title, state="done") for r in rows])  # the update path
        await pilot.pause()
        assert table.get_cell("0", "title").plain == "Back up /home/u/[/x]venv"
        app.notify("could not export: /tmp/[/x] [red]", title="[b]t")
        await pilot.pause()
        note = list(app._notifications)[-1]
        assert note.message == "could not export: /tmp/[/x] [red]" and note.markup is False

    from wizard.session import VerifyRow

    cells = verify_cells(VerifyRow(name="matmul[/x]", device="cuda:0[b]", status="fail", seconds=1.0,
                                   error="[red]boom"))
    assert [c.plain for c in cells][:2] == ["matmul[/x]", "cuda:0[b]"]
