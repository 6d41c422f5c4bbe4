"""The run's steps with their state (a symbol and a word, never colour alone) and durations."""

from __future__ import annotations

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

    def on_mount(self) -> None:
        self._add_columns()

    def _add_columns(self) -> None:
        if self.columns:
            return
        self.add_column("#", key="n")
        self.add_column("state", key="state", width=14)
        self.add_column("step", key="title")
        self.add_column("time", key="time", width=7)

    def show(self, rows: list[StepRow]) -> None:
        self._add_columns()  # a run's events can arrive before this table is mounted
        if self.row_count != len(rows):
            self.clear()
            for r in rows:
                self.add_row(str(r.index + 1), state_text(r.state), Text(r.title), duration_text(r.duration),
                             key=str(r.index))
            return
        for r in rows:
            key = str(r.index)
            self.update_cell(key, "state", state_text(r.state))
            self.update_cell(key, "title", Text(r.title))  # literal: a str cell would be parsed as markup
            self.update_cell(key, "time", duration_text(r.duration))
