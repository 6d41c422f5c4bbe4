"""Issue 25, point 5: the dialogs that matter are whole at 80x24: Confirm and the resume offer show all their
text and their buttons (a snapshot each at 80x24, and the buttons' regions checked inside the screen)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.tui.helpers import settle, sync
from tests.tui.test_snapshots import CASES

pytestmark = pytest.mark.integration

SIZE = (80, 24)


@pytest.mark.parametrize("name", ["confirm", "resume"])
def test_dialog_at_80x24(name: str, snap_compare: Any) -> None:
    assert snap_compare(CASES[name](), terminal_size=SIZE, run_before=settle)


@pytest.mark.parametrize("name,buttons,last_words", [
    ("confirm", ("Button#yes", "Button#no"), "continues."),
    ("resume", ("Button#resume", "Button#later"), "offers it again"),
])
@sync
async def test_dialog_text_and_buttons_fit_80x24(name: str, buttons: tuple[str, ...], last_words: str) -> None:
    from textual.widgets import Static

    app = CASES[name]()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        box = screen.query_one(f"#{name}.dialog").region  # the dialog
        for sel in buttons:
            region = screen.query_one(sel).region
            assert region.height > 0 and region.bottom <= SIZE[1] - 1, (sel, region)  # above the footer
            assert region.bottom <= box.bottom - 2, (sel, region, box)  # inside the dialog, not under its border
        body = next(w for w in screen.query(Static) if w.id in ("confirm-body", "resume-body"))
        assert str(body.content).rstrip().endswith(last_words)
        assert body.region.height >= len(str(body.content).splitlines())  # nothing of the text cut
