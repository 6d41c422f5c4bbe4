"""Layout at the sizes people use (issue 15 point 8): 80x24 and 100x32.

The header names the machine, a multi-product GPU name becomes the model the evidence names, toasts take
their own rows instead of covering content, the Help key table fits without scrolling, every stage screen's
footer offers its keys, and the GPU table keeps its last column whole.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from rich.console import Console

from tests.tui.test_snapshots import CASES, app_at
from wizard.host import open_recorded
from wizard.model import Evidence, EvidenceText
from wizard.probes import detect
from wizard.record import replace
from wizard.render import facts_renderables, gpu_display_name, name_alternatives
from wizard.session import Stage
from wizard.tui.screens.base import breadcrumb, machine_label

pytestmark = pytest.mark.integration

SIZES = [(80, 24), (100, 32)]
LSPCI = "Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]"


def drawn(widget: Any) -> list[str]:
    """The lines a widget draws at its size on screen."""
    from textual.geometry import Region

    return [strip.text for strip in widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))]


def _settled(app: Any, size: tuple[int, int], check: Any, notifications: bool = False, keys: tuple[str, ...] = ()
             ) -> None:
    async def go() -> None:
        async with app.run_test(size=size, notifications=notifications) as pilot:
            await pilot.pause(0.2)
            app.drain()
            for k in keys:
                await pilot.press(k)
            await pilot.pause(0.2)
            await check(app, pilot)

    asyncio.run(go())


def test_multi_product_name_alternatives() -> None:
    assert name_alternatives(LSPCI) == ["Radeon RX 7900 XT", "Radeon RX 7900 XTX", "Radeon RX 7900 GRE",
                                        "Radeon RX 7900M"]
    assert name_alternatives("AMD Radeon RX 7900 XTX / 7900 XT") == ["AMD Radeon RX 7900 XTX", "AMD Radeon RX 7900 XT"]
    assert name_alternatives("AMD Radeon RX 5600 XT") == []


def test_multi_product_name_becomes_the_model_the_evidence_names() -> None:
    facts = detect(open_recorded("seed-7900xt"))
    gpu = replace(facts.gpus[0], name=LSPCI, sources=(Evidence("lspci.txt", 1, LSPCI),))
    bare = replace(facts, texts=())
    # nothing but the lspci line (which lists every product): the name stays whole, no model is guessed
    assert gpu_display_name(gpu, bare) == LSPCI
    named = replace(bare, texts=(EvidenceText("collect_env.txt", "GPU models and configuration: "
                                              "AMD Radeon RX 7900 XTX (gfx1100)"),))
    assert gpu_display_name(gpu, named) == "Radeon RX 7900 XTX"  # XTX, not XT: whole words only
    xt = replace(bare, texts=(EvidenceText("paste", "my Radeon RX 7900 XT hangs"),))
    assert gpu_display_name(gpu, xt) == "Radeon RX 7900 XT"
    both = replace(bare, texts=(EvidenceText("paste", "RX 7900 XT or RX 7900 XTX?"),))
    assert gpu_display_name(gpu, both) == LSPCI  # two models named: not shortened
    other = replace(bare, texts=(EvidenceText("paste", "RX 7900 XTX", own=False),))
    assert gpu_display_name(gpu, other) == LSPCI  # another person's post does not name this machine's GPU


def test_header_names_the_machine_at_every_width() -> None:
    label = machine_label("bundle:/somewhere/seed-7900xt", True, ["Radeon RX 7900 XT"] * 2)
    assert label == "recorded seed-7900xt, read-only: 2× Radeon RX 7900 XT"
    assert machine_label("live", False, []) == "this machine"
    assert machine_label("sandbox:/tmp/rw/seed-5600xt", False, ["Radeon RX 5600 XT"]).startswith("rehearsal seed-5600xt")
    for width in (78, 98, 160):
        line = breadcrumb(Stage.REVIEW, label, width).plain
        assert len(line) <= width and "[Review]" in line and "recorded seed-7900xt" in line, (width, line)
    assert "Report" in breadcrumb(Stage.REVIEW, label, 160).plain  # room for every stage: all are shown


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "100x32"])
@pytest.mark.parametrize("example", ["seed-7900xt", "seed-5600xt"])
def test_header_and_gpu_table_fit(example: str, size: tuple[int, int]) -> None:
    async def check(app: Any, pilot: Any) -> None:
        header = "".join(drawn(app.screen.query_one("#crumbs")))
        assert f"recorded {example}" in header and "[Detect]" in header and "Radeon RX" in header, header
        lines = drawn(app.screen.query_one("#facts-body"))
        head = next(line for line in lines if " gfx " in line and "PCI id" in line)
        assert head.rstrip().endswith("family"), head  # the last column whole, not "fami…"
        row = next(line for line in lines if "1002:7" in line)
        assert "…" not in row and row.split()[-1] in ("RDNA1", "RDNA3"), row

    _settled(app_at(Stage.DETECT, example=example), size, check)


def test_gpu_table_last_column_whole_in_the_cli_at_80_columns() -> None:
    console = Console(width=80, record=True)
    for item in facts_renderables(detect(open_recorded("seed-5600xt"))):
        console.print(item)
    out = console.export_text()
    assert "family" in out and "fami…" not in out and "override!" in out and "1002:731f" in out


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "100x32"])
def test_toast_does_not_cover_content(size: tuple[int, int]) -> None:
    async def check(app: Any, pilot: Any) -> None:
        from textual.widgets._toast import Toast

        facts = app.screen.query_one("#facts")
        before = facts.region
        app.notify("evidence shown: where each GPU fact came from, a line long enough to wrap in a toast")
        await pilot.pause(0.3)
        toasts = [app.screen.find_widget(t).region for t in app.screen.query(Toast).nodes] or [
            app.screen.find_widget(t).region for t in app.screen.walk_children(Toast)]
        assert toasts, "the toast is shown"
        after = facts.region
        assert after.height < before.height  # the content gave up rows for the toast ...
        for t in toasts:
            assert not after.overlaps(t), (after, t)  # ... and the toast covers none of it

    _settled(app_at(Stage.DETECT), size, check, notifications=True)


@pytest.mark.parametrize("stage", ["detect", "detect_no_gpu", "diagnose", "choose", "review", "confirm", "failed", "reboot", "resume",
                                   "verify", "report"])
def test_help_key_table_fits_at_80x24(stage: str) -> None:
    async def check(app: Any, pilot: Any) -> None:
        screen = app.screen
        assert type(screen).__name__ == "HelpModal"
        box = screen.query_one("#help")
        assert box.max_scroll_y == 0 and box.region.bottom <= 24, (box.region, box.virtual_size)
        assert box.virtual_size.width <= box.content_region.width

    _settled(CASES[stage](), (80, 24), check, keys=("question_mark",))


@pytest.mark.parametrize("stage", ["detect", "detect_no_gpu", "diagnose", "choose", "review", "confirm", "failed", "reboot", "resume",
                                   "verify", "report"])
def test_every_footer_shows_the_screens_keys_at_80x24(stage: str) -> None:
    """Each key the screen offers now (its own bindings that are enabled) is in the footer, whole."""
    async def check(app: Any, pilot: Any) -> None:
        from textual.widgets import Footer

        screen = app.screen
        footer = screen.query_one(Footer)
        shown = {k.description for k in footer.query("FooterKey").results() if k.region.width}  # type: ignore[attr-defined]
        right = max(k.region.right for k in footer.query("FooterKey"))
        assert right <= 80
        wanted = {b.description for _, b, enabled, _ in screen.active_bindings.values()
                  if b.show and enabled and b.description}
        assert wanted <= shown, wanted - shown
        if stage == "choose":
            assert "Review this plan" in shown  # Enter, which the plan list itself takes

    _settled(CASES[stage](), (80, 24), check)


def test_step_table_looks_the_same_whatever_order_the_run_updates_came_in() -> None:
    """Column widths come from the rows shown, never from rows an earlier update held: the planned titles
    first and then the run's own, or the run's own straight away, draw the same table."""
    from textual.app import App, ComposeResult

    from wizard.session import StepRow
    from wizard.tui.widgets.step_list import StepList

    planned = [StepRow(0, "preflight", "Preflight: check everything the plan needs before the first change"),
               StepRow(1, "rocm_install", "Install ROCm")]
    started = [StepRow(0, "preflight", "Preflight", "ok", 1.5), StepRow(1, "rocm_install", "Install", "running")]

    def table(*updates: list[StepRow]) -> list[str]:
        class Host(App[None]):
            def compose(self) -> ComposeResult:
                yield StepList(id="steps")

        async def go() -> list[str]:
            app = Host()
            async with app.run_test(size=(100, 8)) as pilot:
                steps = app.query_one(StepList)
                for rows in updates:
                    steps.show(rows)
                    await pilot.pause()
                return [line.rstrip() for line in drawn(steps)]

        return asyncio.run(go())

    direct = table(started)
    assert table(planned, started) == direct
    assert "Preflight" in direct[1] and "check everything" not in "\n".join(direct)
    assert len(direct[0]) < 60  # the long planned title no longer sizes the column
