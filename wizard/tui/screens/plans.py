"""Choose, Review and Confirm: every plan, every command, and the one question before changes."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from wizard.model import PREFLIGHT, ResolvedPlan
from wizard.session import Move, PlanOption, Stage
from wizard.tui.messages import PlanChosen, RunConfirmed
from wizard.tui.screens.base import StageScreen


def option_label(o: PlanOption) -> Text:
    mark = "★ recommended" if o.recommended else ("✔ fits" if o.applicable else "✘ refused")
    t = Text()
    t.append(f"{mark:<14}", style="bold" if o.recommended else ("" if o.applicable else "dim"))
    t.append(o.name, style="bold" if o.applicable else "dim strike")
    return t


def option_detail(o: PlanOption) -> Text:
    t = Text()
    t.append(o.title + "\n", style="bold")
    if o.recommended and o.recommended_why:
        t.append("★ Recommended: ", style="bold")
        t.append(o.recommended_why + "\n")
    if not o.applicable:
        t.append("✘ Refused for this machine:\n", style="bold red")
        for r in o.reasons:
            t.append(f"  - {r}\n")
    if o.target:
        t.append("Target: ", style="bold")
        t.append(", ".join(f"{k} {v}" for k, v in o.target if k != "index_url") + "\n")
    t.append("\n" + o.why.strip() + "\n")
    return t


class OpenPlanModal(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Open a plan file (.toml) or a plan name:")
            yield Input(placeholder="path/to/my-plan.toml", id="plan-path")
            yield Label("Enter opens it, Escape cancels.", classes="hint")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)


class ChooseScreen(StageScreen):
    STAGE = Stage.CHOOSE
    BINDINGS = [
        *StageScreen.BINDINGS,
        Binding("enter", "choose", "Review this plan"),
        Binding("o", "open_file", "Open plan file"),
        Binding("b,escape", "move('back')", "Back"),
        Binding("q", "app.quit_wizard", "Quit"),
    ]

    def body(self) -> ComposeResult:
        opts = self.session.options
        if self.session.blocked:
            yield Static(blocked_text(self.session.blocked), id="blocked", classes="banner")
        with Horizontal(id="choose"):
            yield OptionList(*[Option(option_label(o), id=o.name) for o in opts], id="plans")
            with VerticalScroll(id="plan-detail-box"):
                yield Static(option_detail(opts[0]) if opts else Text("No plan is shipped."), id="plan-detail")

    def on_mount(self) -> None:
        ol = self.query_one(OptionList)
        ol.focus()
        if ol.option_count:
            ol.highlighted = 0

    def _current(self) -> PlanOption | None:
        ol = self.query_one(OptionList)
        if ol.highlighted is None:
            return None
        return self.session.options[ol.highlighted]

    @on(OptionList.OptionHighlighted)
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        o = self._current()
        if o is not None:
            self.query_one("#plan-detail", Static).update(option_detail(o))

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.action_choose()

    def action_choose(self) -> None:
        o = self._current()
        if o is not None:
            self.wizard.post_message(PlanChosen(o.name))

    def action_open_file(self) -> None:
        def opened(path: str | None) -> None:
            if path:
                self.wizard.post_message(PlanChosen(path))

        self.app.push_screen(OpenPlanModal(), opened)


def blocked_text(why: str) -> Text:
    t = Text()
    t.append("✘ A new plan cannot start: another run is unfinished.\n", style="bold red")
    t.append(why + "\n")
    return t


def review_text(plan: ResolvedPlan, read_only: bool) -> Text:
    t = Text()
    t.append(f"{plan.title}\n", style="bold")
    t.append(plan.why.strip() + "\n")
    target = ", ".join(f"{k} {v}" for k, v in plan.target if k != "index_url")
    t.append(f"Target: {target}\n", style="bold")
    n_cmd = sum(len(s.actions) for s in plan.steps if s.kind != PREFLIGHT)
    n_destr = sum(1 for s in plan.steps for a in s.actions if a.destructive or s.destructive)
    t.append(f"{len(plan.steps)} steps, {n_cmd} commands, {n_destr} destructive (marked ⚠ DESTRUCTIVE); "
             "# = runs as root\n\n")
    for i, s in enumerate(plan.steps, 1):
        if s.kind == PREFLIGHT:
            t.append(f"Step {i}: {s.title}\n", style="bold underline")
            t.append("  checked before the first change; a failure stops the run with nothing changed\n",
                     style="italic")
            for a in s.actions:
                t.append(f"  ? {a.name or 'check'}: {a.description}\n")
                t.append(f"      {'#' if a.root else '$'} {a.shown()}\n", style="dim")
            t.append("\n")
            continue
        head = f"Step {i}: {s.title}  [{s.kind}]"
        if s.destructive:
            head += "  ⚠ DESTRUCTIVE"
        if s.reboot:
            head += "  ⟳ REBOOT"
        t.append(head + "\n", style="bold red" if s.destructive else "bold")
        for n in s.notes:
            t.append(f"  note: {n}\n", style="italic")
        if s.skipped_reason:
            t.append(f"  – skipped: {s.skipped_reason}\n", style="dim")
        for a in s.actions:
            mark = "⚠ " if a.destructive else "  "
            who = "#" if a.root else "$"
            t.append(f"  {mark}{who} {a.shown()}\n", style="red" if a.destructive else "")
            if a.description:
                t.append(f"        {a.description}\n", style="dim")
            if a.undo:
                t.append("        undo: " + " ".join(a.undo) + "\n", style="dim")
        t.append("\n")
    if read_only:
        t.append("This is a recorded machine: review and export only (x writes the script).\n", style="bold")
    return t


class ReviewScreen(StageScreen):
    STAGE = Stage.REVIEW
    BINDINGS = [
        *StageScreen.BINDINGS,
        Binding("c", "confirm", "Confirm…"),
        Binding("x", "app.export", "Export script"),
        Binding("b,escape", "move('back')", "Back"),
        Binding("q", "app.quit_wizard", "Quit"),
    ]

    def body(self) -> ComposeResult:
        assert self.session.resolved is not None
        with VerticalScroll(id="review"):
            yield Static(review_text(self.session.resolved, self.session.read_only), id="review-body")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "confirm" and not self.session.can(Move.CONFIRM):
            return None
        return True

    def action_confirm(self) -> None:
        self.move(Move.CONFIRM)


def confirm_text(plan: ResolvedPlan, machine: str, sudo: bool) -> Text:
    steps = plan.steps
    destr = [s.title for s in steps if s.destructive or any(a.destructive for a in s.actions)]
    t = Text()
    t.append(f"Run “{plan.title}” on {machine}?\n\n", style="bold")
    t.append(f"  {len(steps)} steps, {sum(len(s.actions) for s in steps)} commands, shown on the Review screen.\n")
    if destr:
        t.append(f"  ⚠ Removes things in: {', '.join(destr)} (after the backup step).\n", style="bold red")
    if any(s.reboot for s in steps):
        t.append("  ⟳ Needs a reboot; the wizard asks before it and resumes after it.\n")
    if sudo:
        t.append("  # Administrator rights: the wizard pauses for sudo's own password prompt.\n")
    t.append("\nEvery step is journalled: if anything stops it, `rocm-wizard resume` continues.\n")
    return t


class ConfirmScreen(StageScreen):
    STAGE = Stage.CONFIRM
    BINDINGS = [
        *StageScreen.BINDINGS,
        Binding("y", "yes", "Yes, run it"),
        Binding("n,escape", "move('no')", "No, back"),
    ]

    def body(self) -> ComposeResult:
        assert self.session.resolved is not None
        with Vertical(id="confirm", classes="dialog"):
            yield Static(confirm_text(self.session.resolved, self.session.machine, self.wizard.needs_sudo),
                         id="confirm-body")
            with Horizontal(classes="buttons"):
                yield Button("Yes, run it (y)", id="yes", variant="error")
                yield Button("No, back (n)", id="no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def action_yes(self) -> None:
        self.wizard.post_message(RunConfirmed())

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "yes":
            self.action_yes()
        else:
            self.move(Move.NO)
