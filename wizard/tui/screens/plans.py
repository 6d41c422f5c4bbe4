"""Choose, Review and Confirm: every plan, every command, and the one question before changes."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Collapsible, Input, Label, OptionList, Static, TextArea
from textual.widgets._collapsible import CollapsibleTitle
from textual.widgets.option_list import Option

from wizard.model import PREFLIGHT, Facts, ResolvedPlan, StepPlan
from wizard.session import Move, PlanOption, Stage
from wizard.tui.messages import PlanChosen, RunConfirmed
from wizard.tui.screens.base import PENDING_KEY, StageScreen
from wizard.tui.widgets.steady_cursor import steady_cursor


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
    for n in o.notes:
        t.append("ℹ ", style="bold")
        t.append(n + "\n")
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
            yield steady_cursor(Input(placeholder="path/to/my-plan.toml", id="plan-path"))
            yield Label("Enter opens it, Escape cancels.", classes="hint")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)


class PlanList(OptionList):
    """The plans: Enter (which the list itself takes) is named in the footer for what it does here."""

    BINDINGS = [Binding("enter", "select", "Review this plan")]


class ChooseScreen(StageScreen):
    STAGE = Stage.CHOOSE
    BINDINGS = [
        *StageScreen.BINDINGS,
        PENDING_KEY,
        Binding("enter", "choose", "Review this plan"),
        Binding("o", "open_file", "Open plan file"),
        Binding("c", "channel", "Stable/nightly"),
        Binding("b,escape", "move('back')", "Back"),
        Binding("q", "app.quit_wizard", "Quit"),
    ]

    def body(self) -> ComposeResult:
        opts = self.wizard.plan_options()
        if self.session.blocked:
            offered = self.session.pending is not None and self.session.can(Move.PENDING)
            yield Static(blocked_text(self.session.blocked, offered), id="blocked", classes="banner")
        if self.session.resolve_error:
            yield refusal_banner(self.session.refused, self.session.resolve_error)
        if self.wizard.services.channel == "nightly":
            yield Static(NIGHTLY_WARNING, id="nightly", classes="banner")
        with Horizontal(id="choose"):
            yield PlanList(*[Option(option_label(o), id=o.name) for o in opts], id="plans")
            with VerticalScroll(id="plan-detail-box"):
                yield Static(option_detail(opts[0]) if opts else Text("No plan is shipped."), id="plan-detail")

    def on_mount(self) -> None:
        ol = self.query_one(OptionList)
        ol.focus()
        if ol.option_count:
            ol.highlighted = 0

    def show_refusal(self) -> None:
        """The plan just opened was refused: say why in the refusal banner, above the plans."""
        s = self.session
        shown = self.query("#refused-text")
        if shown:
            shown.first(Static).update(refused_text(s.refused, s.resolve_error))
        else:
            self.mount(refusal_banner(s.refused, s.resolve_error), before=self.query_one("#choose"))

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

    def action_channel(self) -> None:
        """Stable (each plan's own channel) or nightly: AMD's nightly indexes may serve the plans (--channel)."""
        svc = self.wizard.services
        svc.channel = None if svc.channel == "nightly" else "nightly"
        self.session.options = []  # resolved again for the channel
        self.refresh(recompose=True)

    def action_open_file(self) -> None:
        def opened(path: str | None) -> None:
            if path:
                self.wizard.post_message(PlanChosen(path))

        self.app.push_screen(OpenPlanModal(), opened)


NIGHTLY_WARNING = Text.assemble(
    ("Nightly channel: ", "bold yellow"),
    "AMD's nightly builds are not releases; they may be broken or withdrawn. c goes back to stable.")


def refused_text(spec: str | None, reasons: tuple[str, ...]) -> Text:
    t = Text()
    t.append(f"✘ {spec or 'This plan'} cannot run on this machine:\n", style="bold red")
    for r in reasons:
        t.append(f"  - {r}\n")
    return t


def refusal_banner(spec: str | None, reasons: tuple[str, ...]) -> VerticalScroll:
    """The refusal, at most a few rows high (it scrolls): the plans stay in sight below it."""
    return VerticalScroll(Static(refused_text(spec, reasons), id="refused-text"), id="refused", classes="banner")


def blocked_text(why: str, offered: bool = False) -> Text:
    """``offered``: the run is this TUI's pending run, which u offers to resume, roll back or abandon here."""
    t = Text()
    t.append("✘ A new plan cannot start: another run is unfinished.\n", style="bold red")
    t.append(why + "\n")
    if offered:
        t.append("u here resumes it, rolls it back or abandons it.\n", style="bold")
    return t


def step_line(i: int, s: StepPlan) -> str:
    """One collapsed line per step, the facts first so a narrow screen keeps them: root or as the user,
    undo (its own, from the backup, or none), how many commands, ⚠ destructive, ⟳ reboot; then the title."""
    if s.kind == PREFLIGHT:
        return f"Step {i} · {len(s.actions)} checks, nothing changes: {s.title}"
    if s.skipped_reason:
        return f"Step {i} · skipped: {s.title} ({s.skipped_reason})"
    who = "root" if any(a.root for a in s.actions) else "user"
    undo = "undo" if any(a.undo for a in s.actions) else ("undo from backup" if s.destructive else "no undo")
    n = len(s.actions)
    marks = (" ⚠" if s.destructive else "") + (" ⟳" if s.reboot else "")
    return f"Step {i} · {who} · {undo} · {n} command{'s' if n != 1 else ''}{marks}: {s.title}"


def step_commands(s: StepPlan) -> Text:
    t = Text()
    for n in s.notes:
        t.append(f"note: {n}\n", style="italic")
    for a in s.actions:
        if s.kind == PREFLIGHT:
            t.append(f"? {a.name or 'check'}: {a.description}\n")
            t.append(f"    {'#' if a.root else '$'} {a.shown()}\n", style="dim")
            continue
        mark = "⚠ " if a.destructive else ""
        t.append(f"{mark}{'#' if a.root else '$'} {a.shown()}\n", style="red" if a.destructive else "")
        if a.description:
            t.append(f"    {a.description}\n", style="dim")
        if a.undo:
            t.append("    undo: " + " ".join(a.undo) + "\n", style="dim")
    return t


def review_head(plan: ResolvedPlan, read_only: bool, facts: Facts | None = None) -> Text:
    t = Text()
    t.append(f"{plan.title}\n", style="bold")
    target = ", ".join(f"{k} {v}" for k, v in plan.target if k not in ("index_url", "venv"))
    t.append(f"Target: {target}\n")
    venv = dict(plan.target).get("venv")
    if venv:
        from wizard.planner import venv_roles

        roles = venv_roles(plan, facts) if facts is not None else None
        t.append("Venv: ", style="bold")
        t.append(f"{venv}  ", style="bold")
        if roles is not None and roles.new:
            t.append("new" + (f", beside {roles.beside} " if roles.beside else " "))
        t.append("(v changes it)\n", style="dim")
        if roles is not None and roles.left_alone:
            t.append("Left alone: ", style="bold")
            t.append(", ".join(roles.left_alone) + "\n")
    n_destr = sum(1 for s in plan.steps for a in s.actions if a.destructive or s.destructive)
    t.append(f"{plan.size}, {n_destr} destructive (⚠; ⟳ reboots). Enter opens a "
             "step, s shows the whole script; # runs as root", style="dim")
    if read_only:
        t.append("\nThis is a recorded machine: review and export only (x writes the script).", style="bold")
    return t


class ReviewScreen(StageScreen):
    STAGE = Stage.REVIEW
    BINDINGS = [
        *StageScreen.BINDINGS,
        Binding("c", "confirm", "Confirm…"),
        Binding("v", "venv", "Venv…"),
        Binding("s", "script", "Full script"),
        Binding("x", "export", "Export…"),
        Binding("b,escape", "move('back')", "Back"),
        Binding("q", "app.quit_wizard", "Quit"),
        # before the scrolling list takes them: the arrows go from step to step (the list follows the focus)
        Binding("up", "step(-1)", "Previous step", show=False, priority=True),
        Binding("down", "step(1)", "Next step", show=False, priority=True),
    ]

    def body(self) -> ComposeResult:
        plan = self.session.resolved
        assert plan is not None
        yield Static(review_head(plan, self.session.read_only, self.session.facts), id="review-head")
        with VerticalScroll(id="review"):
            for i, s in enumerate(plan.steps, 1):
                with Collapsible(title=step_line(i, s), collapsed=True, classes="step"):
                    yield Static(step_commands(s))

    def on_mount(self) -> None:
        first = self.query(Collapsible)
        if first:
            first.first().query_one(CollapsibleTitle).focus()

    def action_step(self, by: int) -> None:
        """Focus the step ``by`` steps away from the focused one (the first one when none is focused)."""
        titles = list(self.query(CollapsibleTitle))
        if not titles:
            return
        if self.focused in titles:
            to = max(0, min(len(titles) - 1, titles.index(self.focused) + by))
        else:
            to = 0 if by > 0 else len(titles) - 1
        titles[to].focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "confirm" and not self.session.can(Move.CONFIRM):
            return None
        if action == "venv" and not dict(self.session.resolved.target if self.session.resolved else ()).get("venv"):
            return None
        return True

    def action_confirm(self) -> None:
        self.move(Move.CONFIRM)

    def action_script(self) -> None:
        s = self.session
        if s.resolved is not None:
            self.app.push_screen(ScriptModal(s.resolved.name, self.wizard.services.script(s.resolved)))

    def action_export(self) -> None:
        s = self.session
        if s.resolved is None:
            return
        default = str(self.wizard.services.export_dir / f"rocm-wizard-{s.resolved.name}.sh")

        def chosen(path: str | None) -> None:
            if path:
                self.wizard.export_to(path)

        self.app.push_screen(ExportModal(default), chosen)

    def action_venv(self) -> None:
        s = self.session
        if s.resolved is None:
            return
        from wizard.planner import ranked_venvs

        envs = [e.path for e in ranked_venvs(s.facts) if e.path] if s.facts else []

        def chosen(answer: str | None) -> None:
            if answer is not None:
                self.wizard.choose_venv(answer or None)

        self.app.push_screen(VenvModal(str(dict(s.resolved.target).get("venv")), s.resolved.name, envs), chosen)


NEW_BESIDE = "__new_beside__"
TYPE_PATH = "__type_path__"


class VenvModal(ModalScreen[str | None]):
    """Where the torch stack goes: a new venv beside the old one (the default), a detected one, or a path.
    Dismissed with "" for the default, a path, or None (cancelled)."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, current: str, plan: str, envs: list[str]) -> None:
        super().__init__()
        self.current, self.plan, self.envs = current, plan, envs

    def compose(self) -> ComposeResult:
        from wizard.planner import beside_venv

        beside = beside_venv(self.plan, self.envs) if self.envs else None
        new = (f"a new venv beside the old one: {beside} (safe default: the old one stays untouched)" if beside
               else "a new venv at the default place (safe default)")
        opts = [Option(new, id=NEW_BESIDE)]
        opts += [Option(f"reuse {p} (its torch stack is replaced; the backup can restore it)", id=p)
                 for p in self.envs if p != beside]
        opts.append(Option("type a path…", id=TYPE_PATH))
        with Vertical(classes="dialog"):
            yield Label(f"The venv this plan fills (now: {self.current}):")
            yield OptionList(*opts, id="venv-choices")
            yield steady_cursor(Input(placeholder="/home/you/venvs/rocm", id="venv-path", classes="hidden"))
            yield Label("Enter chooses, Escape cancels.", classes="hint")

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        oid = event.option.id or ""
        if oid == NEW_BESIDE:
            self.dismiss("")
        elif oid == TYPE_PATH:
            box = self.query_one("#venv-path", Input)
            box.remove_class("hidden")
            box.focus()
        else:
            self.dismiss(oid)

    @on(Input.Submitted)
    def _typed(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text.startswith(("/", "~/")):
            self.notify("give an absolute path (or ~/...)", severity="warning")
            return
        self.dismiss(text)


class ExportModal(ModalScreen[str | None]):
    """Where to write a file (the dry-run script, an evidence bundle); Enter writes it there."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, default: str, question: str = "Write the dry-run script to:") -> None:
        super().__init__()
        self.default, self.question = default, question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question)
            yield steady_cursor(Input(value=self.default, id="export-path"))
            yield Label("Enter writes it (an existing file is replaced), Escape cancels.", classes="hint")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)


class ScriptModal(ModalScreen[None]):
    """The whole plan as the dry-run script, read-only."""

    BINDINGS = [Binding("escape,q,s", "dismiss", "Close")]

    def __init__(self, name: str, text: str) -> None:
        super().__init__()
        self.name_, self.text = name, text

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide tall"):
            yield Label(f"The whole plan {self.name_} as a bash script (x on Review exports it)")
            yield TextArea(self.text, read_only=True, language=None, show_line_numbers=True, id="script-text")
            yield Label("Escape closes.", classes="hint")


def confirm_text(plan: ResolvedPlan, machine: str, sudo: bool, cli: str = "rocm-wizard") -> Text:
    """What Confirm asks, whole in an 80x24 terminal with its buttons: steps by number (Review names them)."""
    steps = plan.steps
    destr = [str(i + 1) for i, s in enumerate(steps) if s.destructive or any(a.destructive for a in s.actions)]
    t = Text()
    t.append(f"Run “{plan.title}” on {machine}?\n\n", style="bold")
    t.append(f"  {plan.size} (Review shows them).\n")
    if destr:
        t.append(f"  ⚠ Steps {', '.join(destr)} remove or replace things (after the backup).\n", style="bold red")
    if any(s.reboot for s in steps):
        t.append("  ⟳ Needs a reboot; the wizard asks before it.\n")
    if sudo:
        t.append("  # Needs administrator rights: sudo asks for its own password.\n")
    t.append(f"\nJournalled: if anything stops it, `{cli} resume` continues.")
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
            yield Static(confirm_text(self.session.resolved, self.session.machine, self.wizard.needs_sudo,
                                      self.wizard.services.relaunch_hint),
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
