"""Issue 25, point 8: Diagnose says each thing once, on every built-in profile, in the CLI and in the TUI's pane
(the TUI printed "No known problem matches this machine." twice where nothing matched: mi300x-rhel9,
strix-halo). Inside a finding's box a line may repeat another finding's (the same fix, the same GPU, the same
source); outside the boxes, and line after line, nothing repeats."""

from __future__ import annotations

from pathlib import Path

import pytest

from wizard.profiles import PROFILES
from wizard.tui.app import make_app
from tests.tui.helpers import sandbox_services, settle, sync

pytestmark = pytest.mark.integration

BOX = tuple("│╭╰┃┏┗")


def said_once(text: str) -> None:
    lines = [x.rstrip() for x in text.splitlines() if x.strip()]
    outside = [x for x in lines if not x.lstrip().startswith(BOX)]
    assert len(outside) == len(set(outside)), outside
    assert all(a != b for a, b in zip(lines, lines[1:])), lines
    assert text.count("No known problem matches this machine") <= 1, text


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_diagnose_says_each_thing_once(profile: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from wizard.cli import main

    sandbox = tmp_path / "sb"
    assert main(["diagnose", "--sandbox", str(sandbox), "--profile", profile]) == 0
    cli = capsys.readouterr().out
    said_once(cli)
    tui = pane_text(sandbox, profile)
    said_once(tui)
    if "No known problem matches" in cli:
        assert "No known problem matches" in tui


def pane_text(sandbox: Path, profile: str) -> str:
    from rich.console import Console
    from textual.widgets import Static

    from wizard.session import Stage

    @sync
    async def go() -> str:
        app = make_app(sandbox_services(sandbox, profile))
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await pilot.press("n")
            await settle(pilot)
            assert app.session.stage == Stage.DIAGNOSE
            console = Console(width=116, record=True, file=open("/dev/null", "w"), color_system=None)
            for w in app.screen.query(Static):
                if w.id in ("summary", "findings-body"):
                    console.print(w.content, markup=False)
            return console.export_text()

    text: str = go()
    return text
