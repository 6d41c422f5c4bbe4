"""A Rich renderable drawn once per width, however often Textual asks.

Laying out a screen, Textual renders a ``Static``'s content to measure its height and again to paint it,
and again if a scrollbar narrows it: the Detect screen's tables were drawn three times before the first
screen showed (``python benchmarks/tui_start.py``). Wrapped in :class:`RenderedOnce`, the tables are
drawn once per width and the lines are reused; the facts behind a screen never change while it shows
(a new ``update`` brings a new wrapper). For content whose lines do not depend on the height given
(tables, text), as the Detect screen's.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment


class RenderedOnce:
    def __init__(self, inner: RenderableType) -> None:
        self.inner = inner
        self._lines: dict[tuple[object, ...], list[list[Segment]]] = {}

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        key = (options.max_width, options.justify, options.overflow, options.no_wrap, options.highlight,
               options.markup)
        lines = self._lines.get(key)
        if lines is None:  # the height only crops or pads: the caller's render_lines does that to these lines
            lines = self._lines[key] = console.render_lines(self.inner, options.update(height=None), pad=False)
        newline = Segment.line()
        for line in lines:
            yield from line
            yield newline

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.inner)
