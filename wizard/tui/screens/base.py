"""What every stage screen shares: the breadcrumb of stages, the footer, the help binding."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from wizard.session import Move, Session, Stage
from wizard.tui.messages import MoveRequested

if TYPE_CHECKING:
    from wizard.tui.app import WizardApp

CRUMBS = (
    (Stage.DETECT, "Detect"), (Stage.DIAGNOSE, "Diagnose"), (Stage.CHOOSE, "Choose"), (Stage.REVIEW, "Review"),
    (Stage.CONFIRM, "Confirm"), (Stage.RUN, "Run"), (Stage.VERIFY, "Verify"), (Stage.REPORT, "Report"),
)
_ALIAS = {Stage.FAILED: Stage.RUN, Stage.REBOOT: Stage.RUN, Stage.RESUME: Stage.RUN}


def breadcrumb(stage: Stage, machine: str, read_only: bool) -> Text:
    here = _ALIAS.get(stage, stage)
    t = Text()
    for i, (s, label) in enumerate(CRUMBS):
        if i:
            t.append(" › ", style="dim")
        if s == here:
            t.append(f"[{label}]", style="bold reverse")
        else:
            t.append(label, style="dim")
    t.append(f"   machine: {machine}", style="italic")
    if read_only:
        t.append("  (recorded: read-only)", style="bold")
    return t


class StageScreen(Screen[None]):
    """A stage's screen: reads ``app.session``, posts typed messages (wizard.tui.messages) for what the
    user wants."""

    STAGE: Stage = Stage.DETECT
    BINDINGS = [Binding("question_mark,f1", "app.help", "Help", key_display="?")]

    @property
    def wizard(self) -> WizardApp:
        return cast("WizardApp", self.app)

    @property
    def session(self) -> Session:
        return self.wizard.session

    def compose(self) -> ComposeResult:
        yield Static(breadcrumb(self.STAGE, self.session.machine, self.session.read_only), id="crumbs")
        yield from self.body()
        yield Footer()

    def body(self) -> ComposeResult:
        yield from ()

    def move(self, move: Move) -> None:
        self.wizard.post_message(MoveRequested(move))

    def action_move(self, name: str) -> None:
        """Bindings name a plain move: ``Binding("n", "move('next')", ...)``."""
        self.move(Move(name))
