"""Issue 25, point 5: the dialogs that matter are whole at 80x24: Confirm and the resume offer show all their
text and their buttons (a snapshot each at 80x24, and the buttons' regions checked inside the screen)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.tui.helpers import keys_then_settle, settle, sync
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


def _real_root_picker() -> Any:
    from pathlib import Path

    from tests.tui.test_snapshots import _no_gpu

    app = _no_gpu()
    app.services.rehearsal_root = Path("/nonexistent/rocm-wizard/rehearsal")
    app._real_root_why = None  # mmdebstrap taken as there: the real-root picker opens (the machine's own answer aside)
    return app


def test_review_at_80x24(snap_compare: Any) -> None:
    """Review's step lines wrap at 80 columns: every step's title whole (the list scrolls)."""
    assert snap_compare(CASES["review"](), terminal_size=SIZE, run_before=settle)


def test_real_root_picker_at_80x24(snap_compare: Any) -> None:
    """The real-root picker: its question and its hint whole, the profiles scrolling between them."""
    assert snap_compare(_real_root_picker(), terminal_size=SIZE, run_before=keys_then_settle("d"))


@sync
async def test_review_step_titles_whole_at_80x24() -> None:
    from rich.text import Text
    from textual.widgets._collapsible import CollapsibleTitle

    app = CASES["review"]()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        titles = list(app.screen.query(CollapsibleTitle))
        assert len(titles) == len(app.session.resolved.steps)
        for t in titles:
            t.scroll_visible(animate=False)
            await pilot.pause()
            label = f"{t.collapsed_symbol} {t.label}"
            lines = Text(label).wrap(app.console, t.content_size.width)
            assert t.region.right <= SIZE[0] and t.content_size.height >= len(lines), (label, t.region)
            assert any(word in str(t.label) for word in ("Preflight", "Back up", "Verify", "ROCm", "torch", "venv",
                                                         "user", "Reboot", "DKMS")), label


@sync
async def test_real_root_picker_question_and_hint_whole() -> None:
    from textual.widgets import Label

    app = _real_root_picker()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()
        await pilot.pause()
        assert type(app.screen).__name__ == "RehearsalModal"
        box = app.screen.query_one("#rehearse").region
        for label in app.screen.query(Label):
            text = str(label.content)
            assert label.region.height >= len(label.render_lines(label.region.reset_offset)), text
            assert box.contains_region(label.region), (text, label.region, box)
        question = app.screen.query(Label).first()
        assert "real Debian 12 root" in str(question.content) and question.region.height == 2  # wrapped, not cut


@sync
async def test_review_arrows_move_between_steps() -> None:
    from textual.widgets._collapsible import CollapsibleTitle

    app = CASES["review"]()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        titles = list(app.screen.query(CollapsibleTitle))
        assert app.focused is titles[0]
        await pilot.press("down", "down")
        assert app.focused is titles[2]
        await pilot.press("enter")  # opens the step the arrows reached
        await pilot.pause()
        assert not titles[2].collapsed and titles[0].collapsed
        await pilot.press("down")
        assert app.focused is titles[3]  # over the open step's commands, to the next step
        await pilot.press("up", "up", "up", "up", "up")
        assert app.focused is titles[0]  # and no further than the first
        for _ in range(len(titles) + 2):
            await pilot.press("down")
        await pilot.pause()
        assert app.focused is titles[-1]
        assert app.screen.query_one("#review").region.contains_region(titles[-1].region)  # scrolled into sight


@sync
async def test_toasts_short_and_off_the_refusal_banner_and_the_gpu_table() -> None:
    """Toasts take their own rows above the footer (the screen's content shrinks), never cover the refusal banner,
    the banner of the unfinished run or the GPU table, and go within a few seconds."""
    from textual.widgets._toast import Toast

    from tests.tui.test_snapshots import app_at
    from wizard.session import Stage
    from wizard.tui.app import TOAST_SECONDS

    def check(app: Any, covered: tuple[str, ...]) -> None:
        toasts = list(app.screen.query(Toast))
        assert toasts and all(t.region.height > 0 for t in toasts)
        for sel in covered:
            r = app.screen.query_one(sel).region
            assert r.height > 0, sel
            for t in toasts:
                assert not t.region.overlaps(r), (sel, r, t.region)
            for y in range(r.y, r.bottom):
                for x in range(r.x, r.right):
                    widget, _ = app.screen.get_widget_at(x, y)
                    assert not any(isinstance(w, Toast) for w in (widget, *widget.ancestors)), (sel, x, y)
        assert all(n.timeout <= max(TOAST_SECONDS.values()) for n in app._notifications)

    why = "run run-1 (downgrade-6.2) is interrupted: `rocm-wizard resume` continues it"
    app = app_at(Stage.CHOOSE, example="seed-5600xt", blocked=why)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause()
        app.choose("downgrade-6.2")  # refused for an RX 5600 XT: the reasons in a banner, a one-line toast
        await pilot.pause(0.2)
        assert "RDNA1" in str(app.screen.query_one("#refused-text").content)
        check(app, ("#blocked", "#refused"))

    app = app_at(Stage.DETECT, example="seed-5600xt")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause(0.2)
        check(app, ("#facts",))
