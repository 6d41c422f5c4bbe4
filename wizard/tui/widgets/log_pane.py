"""A live log that stays responsive under a flood (style.md C1).

Producers never touch the widget: the app drains its event queue on a clock and hands this pane one
batch per tick through :meth:`LogPane.add`, which normalises the lines (ANSI stripped, tabs
expanded, repeats of a progress line dropped) and writes them with one ``write_lines`` call. Above
``BATCH_MAX`` lines in a tick only the last ones are shown, with a marker naming the full log.
"""

from __future__ import annotations

from textual.widgets import Log

from wizard import lazy_re

_ANSI = lazy_re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_CTRL = lazy_re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
BATCH_MAX = 2000
MAX_LINES = 5000


def normalise(line: str) -> str:
    line = line.rsplit("\r", 1)[-1] if "\r" in line else line
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    return _CTRL.sub("", line.expandtabs(4))


class LogPane(Log):
    DEFAULT_CSS = """
    LogPane { border: round $primary-darken-2; height: 1fr; }
    """

    def __init__(self, *, log_path: str | None = None, **kw: object) -> None:
        super().__init__(max_lines=MAX_LINES, highlight=False, auto_scroll=True, **kw)  # type: ignore[arg-type]
        self.log_path = log_path
        self._last: str | None = None
        self.total = 0

    def add(self, lines: list[str]) -> None:
        if not lines:
            return
        self.total += len(lines)
        if len(lines) > BATCH_MAX:
            omitted = len(lines) - BATCH_MAX
            lines = [f"... {omitted:,} lines omitted (full log: {self.log_path or 'the step log'})",
                     *lines[-BATCH_MAX:]]
        out = []
        for raw in lines:
            line = normalise(raw)
            if line == self._last and line:
                continue
            self._last = line
            out.append(line)
        if out:
            self.auto_scroll = self.is_vertical_scroll_end or self.max_scroll_y == 0
            self.write_lines(out)
