"""What every stage screen shares: the breadcrumb of stages, the footer, the help binding."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

from wizard.session import Move, Session, Stage
from wizard.tui.messages import MoveRequested, RunUpdated

if TYPE_CHECKING:
    from wizard.tui.app import WizardApp

CRUMBS = (
    (Stage.DETECT, "Detect"), (Stage.DIAGNOSE, "Diagnose"), (Stage.CHOOSE, "Choose"), (Stage.REVIEW, "Review"),
    (Stage.CONFIRM, "Confirm"), (Stage.RUN, "Run"), (Stage.VERIFY, "Verify"), (Stage.REPORT, "Report"),
)
_ALIAS = {Stage.FAILED: Stage.RUN, Stage.REBOOT: Stage.RUN, Stage.RESUME: Stage.RUN}


def _crumbs(here: Stage, compact: bool) -> Text:
    """Every stage, the current one marked; compact: the stage's number, it and the next one."""
    t = Text()
    index = next((i for i, (s, _label) in enumerate(CRUMBS) if s == here), 0)
    shown = list(enumerate(CRUMBS))
    if compact:
        t.append(f"{index + 1}/{len(CRUMBS)} ", style="dim")
        shown = shown[index:index + 2]
    for n, (i, (s, label)) in enumerate(shown):
        if n:
            t.append(" › ", style="dim")
        t.append(f"[{label}]" if s == here else label, style="bold reverse" if s == here else "dim")
    if compact and index + 2 < len(CRUMBS):
        t.append(" › …", style="dim")
    return t


def machine_label(machine: str, read_only: bool, gpus: list[str]) -> str:
    """What the header calls the machine: where it lives (this one, a recording, a rehearsal) and its GPUs."""
    kind, _, where = machine.partition(":")
    name = {"live": "this machine", "bundle": "recorded", "sandbox": "rehearsal"}.get(kind, kind)
    if where:
        name += " " + (where.rstrip("/").rsplit("/", 1)[-1] or where)
    if read_only and kind != "bundle":
        name += " (read-only)"
    elif read_only:
        name += ", read-only"
    if gpus:
        counts = {g: gpus.count(g) for g in gpus}
        name += ": " + ", ".join(f"{n}× {g}" if n > 1 else g for g, n in counts.items())
    return name


def breadcrumb(stage: Stage, machine: str, width: int | None = None) -> Text:
    """The header line: the stages and the machine, fitted to ``width`` (the stages compact first, then the
    machine's name cut at its end)."""
    here = _ALIAS.get(stage, stage)
    t = Text()
    for compact in (False, True):
        t = _crumbs(here, compact)
        t.append("   ")
        t.append(machine, style="italic")
        if width is None or t.cell_len <= width:
            return t
    t.truncate(width or t.cell_len, overflow="ellipsis")
    return t


class Crumbs(Widget):
    """The header: the stages (the current one marked) and the machine's name, at any width."""

    def __init__(self, stage: Stage, machine: str) -> None:
        super().__init__(id="crumbs")
        self.stage, self.machine = stage, machine

    def render(self) -> Text:
        return breadcrumb(self.stage, self.machine, self.content_size.width or None)


# on the screens before a plan is chosen: back to the resume offer of a run the user put off ("Later")
PENDING_KEY = Binding("u", "pending_run", "Unfinished run…")


class StageScreen(Screen[None]):
    """A stage's screen: reads ``app.session``, posts typed messages (wizard.tui.messages) for what the
    user wants."""

    STAGE: Stage = Stage.DETECT
    BINDINGS = [Binding("question_mark,f1", "app.help", "Help", key_display="?")]
    updates_waiting = 0  # RunUpdated messages posted to this screen and not handled yet

    def deliver(self, update: RunUpdated) -> None:
        """Hand a run update to this screen: now when it is mounted and nothing posted earlier is still
        waiting; otherwise as a message, which Textual handles after the screen's mount, in order."""
        if self.is_mounted and not self.updates_waiting:
            self.run_updated(update)
            return
        self.updates_waiting += 1
        self.post_message(update)

    @on(RunUpdated)
    def _run_update_arrived(self, update: RunUpdated) -> None:
        self.updates_waiting -= 1
        self.run_updated(update)

    def run_updated(self, update: RunUpdated) -> None:
        """The run's fold changed (screens that show the run override this)."""

    @property
    def wizard(self) -> WizardApp:
        return cast("WizardApp", self.app)

    @property
    def session(self) -> Session:
        return self.wizard.session

    def compose(self) -> ComposeResult:
        from wizard.render import gpu_display_name

        facts = self.session.facts
        gpus = [gpu_display_name(g, facts) for g in facts.gpus]
        yield Crumbs(self.STAGE, machine_label(self.session.machine, self.session.read_only, gpus))
        yield from self.body()
        yield Footer()

    def body(self) -> ComposeResult:
        yield from ()

    def move(self, move: Move) -> None:
        self.wizard.post_message(MoveRequested(move))

    def action_move(self, name: str) -> None:
        """Bindings name a plain move: ``Binding("n", "move('next')", ...)``."""
        self.move(Move(name))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "pending_run":  # shown only while a run is unfinished (and this machine can change)
            return self.session.pending is not None and self.session.can(Move.PENDING)
        return True

    def action_pending_run(self) -> None:
        self.move(Move.PENDING)
