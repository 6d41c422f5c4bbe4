"""A text cursor holds still without animations (a screenshot never catches it in its off phase), and blinks
as Textual's does otherwise."""

from __future__ import annotations

from typing import Any

import pytest
import textual.constants

from wizard.session import Stage

from tests.tui.helpers import keys_then_settle, sync
from tests.tui.test_snapshots import app_at

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("level,blinks", [("none", False), ("full", True)])
@pytest.mark.parametrize("stage,key,widget", [(Stage.DIAGNOSE, "p", "TextArea"), (Stage.REVIEW, "x", "Input"),
                                              (Stage.CHOOSE, "o", "Input")])
@sync
async def test_cursor_blinks_only_with_animations(stage: Stage, key: str, widget: str, level: str, blinks: bool,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textual.constants, "TEXTUAL_ANIMATIONS", level)
    app: Any = app_at(stage)
    async with app.run_test(size=(100, 32)) as pilot:
        await keys_then_settle(key)(pilot)
        focused = app.focused
        assert type(focused).__name__ == widget
        assert focused.cursor_blink is blinks
        if not blinks:
            assert focused._cursor_visible  # shown, and no timer turns it off
