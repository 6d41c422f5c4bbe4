"""The run's steps with their state (a symbol and a word, never colour alone) and durations."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import DataTable

from wizard.session import StepRow

SYMBOL = {
    "planned": ("·", "planned", "dim"),
    "running": ("▶", "running", "bold $accent"),
    "ok": ("✔", "ok", "green"),
    "unchanged": ("=", "already done", "green"),
    "skipped": ("–", "skipped", "dim"),
    "failed": ("✘", "FAILED", "bold red"),
    "reboot": ("⟳", "reboot", "bold yellow"),
    "stopped": ("■", "stopped", "yellow"),
}


def state_text(state: str) -> Text:
    sym, word, style = SYMBOL.get(state, ("?", state, ""))
    return Text(f"{sym} {word}", style=style.replace("$accent", "cyan"))


def duration_text(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 60:
        return f"{seconds:.1f}s"
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


class StepList(DataTable[object]):
    DEFAULT_CSS = """
    StepList { height: auto; max-height: 14; }
    """

    def __init__(self, **kw: object) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kw)  # type: ignore[arg-type]
        self._titles: tuple[str, ...] | None = None  # the titles the rows and column widths were built from

    def on_mount(self) -> None:
        if not self.columns:
            self._add_columns([])

    def _add_columns(self, rows: list[StepRow]) -> None:
        """Every column's width fixed from these rows (the longest number and title), never from whichever rows
        the table happened to hold first: a DataTable's auto width only ever grows."""
        self.add_column("#", key="n", width=max([1, *(len(str(r.index + 1)) for r in rows)]))
        self.add_column("state", key="state", width=14)
        self.add_column("step", key="title", width=max([4, *(cell_len(r.title) for r in rows)]))
        self.add_column("time", key="time", width=7)

    def show(self, rows: list[StepRow]) -> None:
        """The rows as they are now. Column widths come from these rows alone (a DataTable only ever widens an
        auto column), so the table looks the same whatever order the run's updates arrived in."""
        titles = tuple(r.title for r in rows)
        if titles != self._titles:
            self._rebuild(rows, titles)
            return
        for r in rows:
            key = str(r.index)
            self.update_cell(key, "state", state_text(r.state))
            self.update_cell(key, "time", duration_text(r.duration))

    def _rebuild(self, rows: list[StepRow], titles: tuple[str, ...]) -> None:
        row = self.cursor_row if self._titles is not None else 0
        self.clear(columns=True)
        self._add_columns(rows)
        for r in rows:
            self.add_row(str(r.index + 1), state_text(r.state), Text(r.title), duration_text(r.duration),
                         key=str(r.index))  # Text: literal, a str cell would be parsed as markup
        self._titles = titles
        if 0 < row < len(rows):
            self.move_cursor(row=row, animate=False)
