"""Run, Failed, Reboot and Resume: the plan executing, and every way out of a stop."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Log, Static

from wizard.model import Action
from wizard.runner.service import PendingRun
from wizard.session import Move, RunProgress, Stage
from wizard.tui.messages import ResumeRequested, RetryRequested, RollbackRequested, RunUpdated
from wizard.tui.screens.base import StageScreen
from wizard.tui.screens.modals import LogModal
from wizard.tui.widgets.log_pane import LogPane, normalise
from wizard.tui.widgets.step_list import StepList, duration_text


def status_text(run: RunProgress) -> Text:
    done = sum(1 for r in run.steps if r.state in ("ok", "unchanged"))
    skipped = sum(1 for r in run.steps if r.state == "skipped")
    t = Text()
    t.append(f"{done}/{len(run.steps) - skipped} steps done" + (f", {skipped} skipped" if skipped else ""),
             style="bold")
    if run.current is not None and run.current < len(run.steps):
        t.append(f" · step {run.current + 1}: {run.steps[run.current].title}")
    if run.current_action:
        head, _, more = run.current_action.partition("\n")  # a script's first line; the log pane has it all
        t.append(f"\n$ {head[:200]}{' …' if more or len(head) > 200 else ''}", style="dim")
    t.append(f"\n{run.lines:,} lines of output", style="dim")
    return t


class _LiveRun(StageScreen):
    """A screen that shows the run's step list and the live log."""

    def step_list(self) -> StepList:
        return self.query_one(StepList)

    def on_mount(self) -> None:
        self.refresh_run()

    def run_updated(self, update: RunUpdated) -> None:
        if update.lines:
            self.add_lines(list(update.lines))
        self.refresh_run()

    def add_lines(self, lines: list[str]) -> None:
        for pane in self.query(LogPane):
            pane.add(lines)

    def refresh_run(self) -> None:
        run = self.session.run
        for sl in self.query(StepList):
            sl.show(run.steps)
            if run.current is not None and run.current != getattr(self, "_followed", None):
                self._followed = run.current  # follow the running step until the user moves
                sl.move_cursor(row=run.current)
        for st in self.query("#run-status"):
            assert isinstance(st, Static)
            st.update(status_text(run))
        for pane in self.query(LogPane):
            if run.current is not None and run.current < len(run.steps):
                pane.log_path = run.steps[run.current].log_path

    def action_full_log(self) -> None:
        run = self.session.run
        sl = self.query(StepList)
        idx = sl.first().cursor_row if sl else run.current
        if idx is None or not (0 <= idx < len(run.steps)) or not run.steps[idx].log_path:
            idx = run.current
        if idx is None or not run.steps[idx].log_path:
            self.notify("this step has no log yet", severity="warning")
            return
        row = run.steps[idx]
        self.app.push_screen(LogModal(f"Step {idx + 1}: {row.title}", row.log_path or ""))


class RunScreen(_LiveRun):
    STAGE = Stage.RUN
    BINDINGS = [
        *StageScreen.BINDINGS,
        Binding("l", "full_log", "Full log of step"),
        Binding("ctrl+c", "app.interrupt", "Stop safely", priority=True),
    ]

    def body(self) -> ComposeResult:
        with Vertical(id="run"):
            yield StepList(id="steps")
            yield Static(id="run-status")
            yield LogPane(id="live-log")


class FailedScreen(_LiveRun):
    STAGE = Stage.FAILED
    BINDINGS = [
        *StageScreen.BINDINGS,
        Binding("r", "retry", "Retry"),
        Binding("u", "rollback", "Roll back…"),
        Binding("s", "move('stop')", "Stop"),
        Binding("l", "full_log", "Full log of step"),
    ]

    def failure_text(self) -> Text:
        """What failed, why, its known issue and the choices (the run's failure as it is folded now)."""
        f = self.session.run.failure
        t = Text()
        refused = self.wizard.start_refused
        if f is None:
            t.append(f"✘ The run could not go on: {self.session.run.error or 'unknown error'}\n", style="bold red")
            if refused:
                t.append("  Nothing was changed: no run was started, and the machine's runs are as they were.\n",
                         style="bold")
        else:
            what = "A preflight check" if f.kind == "preflight" else f"Step {f.step + 1} ({f.kind})"
            t.append(f"✘ {what} FAILED: {f.message}\n", style="bold red")
            if f.kind == "preflight":
                t.append("  Nothing was changed: the run stops before the first change.\n", style="bold")
            t.append(f"  $ {f.shown}\n")
            t.append(f"  exit code {f.exit_code}; full log: {f.log_path}\n")
            for k in f.findings:
                t.append(f"\nKnown issue: {k.title}", style="bold")
                t.append(f" ({k.id})\n")
                t.append(f"  Fix: {k.fix}\n")
                for s in k.sources:
                    t.append(f"  {s}\n", style="dim")
            if not f.findings:
                t.append("\nNo known issue matches this output.\n", style="italic")
        if refused:
            t.append("\nr tries to start the plan again · s stops here\n")
        else:
            t.append("\nr retries the step · u rolls back what the run did (asks first, listing it) · s stops here "
                     f"(the state is kept; `{self.wizard.services.relaunch_hint} resume` continues later)\n")
        return t

    def body(self) -> ComposeResult:
        with Vertical(id="failed"):
            yield StepList(id="steps")
            with VerticalScroll(id="failure-box"):
                yield Static(self.failure_text(), id="failure")
            yield Log(id="tail", max_lines=200)
            with Horizontal(classes="buttons"):
                yield Button("Retry (r)", id="retry", variant="primary")
                yield Button("Roll back (u)", id="rollback", variant="warning", disabled=self.wizard.start_refused)
                yield Button("Stop (s)", id="stop")

    def on_mount(self) -> None:
        # anchored: the failure's last lines show at every layout (below its text, whose height settles later),
        # not only if the output was written after the box was laid out
        self.query_one("#tail", Log).anchor()
        super().on_mount()
        self.query_one("#retry", Button).focus()

    def refresh_run(self) -> None:
        """The failure's text and output, whenever the folded failure is new: the screen may be mounted
        before the run update that carries it has been handled."""
        super().refresh_run()
        f = self.session.run.failure
        if f is None or f is getattr(self, "_shown_failure", None) or not self.query("#failure"):
            return  # nothing new, or the screen's widgets are already gone (the app exits as it mounts)
        self._shown_failure = f
        self.query_one("#failure", Static).update(self.failure_text())
        tail = self.query_one("#tail", Log)
        tail.clear()
        tail.write_lines([normalise(x) for x in f.tail] or ["(no output)"])

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        moves = {"retry": Move.RETRY, "rollback": Move.ROLLBACK, "move": None}
        if action in moves:
            mv = moves[action] or (Move(str(parameters[0])) if parameters else None)
            if mv is not None and not self.session.can(mv):
                return None
            if action == "rollback" and self.wizard.start_refused:  # no run was started: nothing to undo
                return None
        return True

    def action_retry(self) -> None:
        if self.session.can(Move.RETRY):
            self.wizard.post_message(RetryRequested(self.session.run.run_id))

    def action_rollback(self) -> None:
        if self.session.can(Move.ROLLBACK) and not self.wizard.start_refused:
            self.wizard.post_message(RollbackRequested(self.session.run.run_id))

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "retry":
            self.action_retry()
        elif event.button.id == "rollback":
            self.action_rollback()
        elif event.button.id == "stop" and self.session.can(Move.STOP):
            self.move(Move.STOP)


def rollback_text(actions: list[tuple[str, Action]], cannot: list[str]) -> Text:
    t = Text()
    t.append("↶ Roll back this run?\n\n", style="bold")
    if actions:
        t.append("It will, in this order:\n", style="bold")
        for n, (why, a) in enumerate(actions, 1):
            t.append(f"  {n}. {why}\n")
            t.append(f"     {'#' if a.root else '$'} {a.shown()}\n", style="dim")
    else:
        t.append("No step of the run changed anything a rollback restores: nothing is undone; the run is closed as "
                 "rolled back, so a new plan can start.\n")
    if cannot:
        t.append("\nIt cannot restore:\n", style="bold yellow")
        for c in cannot:
            t.append(f"  ✘ {c}\n")
    t.append("\ny rolls back · n or Escape keeps everything as it is\n")
    return t


class RollbackModal(ModalScreen[bool]):
    """The confirmation before a rollback: what it will undo, and what it cannot restore."""

    BINDINGS = [Binding("y", "dismiss_yes", "Yes, roll back"), Binding("n,escape", "dismiss(False)", "No")]

    def __init__(self, text: Text, can_run: bool) -> None:
        super().__init__()
        self.text, self.can_run = text, can_run

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog wide", id="rollback-ask"):
            yield Static(self.text, id="rollback-body")
            with Horizontal(classes="buttons"):
                yield Button("Yes, roll back (y)", id="yes", variant="error", disabled=not self.can_run)
                yield Button("No (n)", id="no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def action_dismiss_yes(self) -> None:
        self.dismiss(self.can_run)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes" and self.can_run)


def reboot_question(plan_title: str, step_title: str, resume_hint: str) -> Text:
    t = Text()
    t.append(f"⟳ {step_title}\n\n", style="bold")
    t.append("What happens next:\n", style="bold")
    t.append("  1. The journal records this boot; the run is marked reboot-pending.\n")
    t.append("  2. The machine reboots (now, or when you choose).\n")
    t.append(f"  3. After the boot, start `{resume_hint}` again: it offers to resume “{plan_title}” at the "
             "next step (a login notice reminds you).\n\n")
    t.append("n reboots now · l reboots later (the wizard exits; nothing else runs until you resume)\n")
    return t


class RebootModal(ModalScreen[bool]):
    BINDINGS = [Binding("n", "dismiss(True)", "Reboot now"), Binding("l,escape", "dismiss(False)", "Later")]

    def __init__(self, text: Text) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="reboot-ask"):
            yield Static(self.text)
            with Horizontal(classes="buttons"):
                yield Button("Reboot now (n)", id="now", variant="warning")
                yield Button("Later (l)", id="later", variant="primary")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "now")


def abandon_question(p: PendingRun) -> Text:
    t = Text()
    t.append(f"Abandon run {p.run_id} ({p.plan})?\n\n", style="bold")
    t.append("The journal records that it was abandoned and a new plan can start. Nothing on the machine "
             "changes: what the run did stays done (roll it back instead to undo it); its logs and backup stay.\n\n")
    t.append("y abandons it · n or Escape keeps it pending")
    return t


class AbandonModal(ModalScreen[bool]):
    BINDINGS = [Binding("y", "dismiss(True)", "Yes, abandon it"), Binding("n,escape", "dismiss(False)", "No")]

    def __init__(self, text: Text) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="abandon-ask"):
            yield Static(self.text, id="abandon-body")
            with Horizontal(classes="buttons"):
                yield Button("Yes, abandon it (y)", id="yes", variant="warning")
                yield Button("No (n)", id="no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class RebootScreen(_LiveRun):
    STAGE = Stage.REBOOT
    BINDINGS = [*StageScreen.BINDINGS, Binding("q,enter", "app.quit_wizard", "Exit")]

    def body(self) -> ComposeResult:
        run = self.session.run
        t = Text()
        t.append("⟳ Reboot pending\n\n", style="bold")
        t.append((run.reboot_message or "reboot, then resume") + "\n\n")
        t.append(f"To continue after the reboot: {self.wizard.services.relaunch_hint}\n", style="bold")
        t.append(f"Journal: {run.journal}\n", style="dim")
        with Vertical(id="reboot"):
            yield StepList(id="steps")
            yield Static(t, id="reboot-body")


def pending_text(p: PendingRun, hint: str) -> Text:
    """The resume offer, whole in an 80x24 terminal with its buttons."""
    t = Text()
    t.append("A migration is waiting to be finished.\n", style="bold")
    t.append(f"  {p.plan}, run {p.run_id}: {p.state.value}\n")
    if p.next_step is not None:
        title = p.step_titles[p.next_step] if p.next_step < len(p.step_titles) else "?"
        t.append(f"  next: step {p.next_step + 1} of {p.total_steps}: {title}\n")
    if p.state.value == "reboot-pending":
        t.append("  ✔ the machine has rebooted since\n" if p.rebooted
                 else "  ! the machine has NOT rebooted yet since the reboot step\n")
    t.append(f"  journal: {p.journal}\n", style="dim")
    if p.state.resumable:
        t.append("r resumes it now · ")
    if p.state.can_roll_back:
        t.append("u rolls it back · ")
    t.append("a abandons it · l later: it stays pending and blocks a new plan; u on the first screen or "
             f"`{hint}` offers it again")
    return t


class ResumeScreen(StageScreen):
    STAGE = Stage.RESUME
    BINDINGS = [
        *StageScreen.BINDINGS,
        Binding("r", "resume", "Resume"),
        Binding("u", "rollback", "Roll back…"),
        Binding("a", "abandon", "Abandon…"),
        Binding("l", "move('later')", "Later"),
        Binding("q", "app.quit_wizard", "Quit"),
    ]

    def body(self) -> ComposeResult:
        assert self.session.pending is not None
        with Vertical(id="resume", classes="dialog"):
            yield Static(pending_text(self.session.pending, self.wizard.services.relaunch_hint), id="resume-body")
            with Horizontal(classes="buttons"):
                yield Button("Resume (r)", id="resume", variant="primary",
                             disabled=not self.session.pending.state.resumable)
                yield Button("Later (l)", id="later")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        p = self.session.pending
        if action == "resume" and (not self.session.can(Move.RESUME) or p is None or not p.state.resumable):
            return None
        if action == "rollback" and (not self.session.can(Move.ROLLBACK) or p is None or not p.state.can_roll_back):
            return None
        if action == "abandon" and (self.session.read_only or p is None):
            return None
        return True

    def action_resume(self) -> None:
        p = self.session.pending
        if p is not None and p.state.resumable and self.session.can(Move.RESUME):
            self.wizard.post_message(ResumeRequested(p.run_id))

    def action_rollback(self) -> None:
        p = self.session.pending
        if p is not None and p.state.can_roll_back and self.session.can(Move.ROLLBACK):
            self.wizard.post_message(RollbackRequested(p.run_id))

    def action_abandon(self) -> None:
        p = self.session.pending
        if p is None or self.session.read_only:
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.wizard.abandon(p.run_id)

        self.app.push_screen(AbandonModal(abandon_question(p)), answered)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "resume":
            self.action_resume()
        elif event.button.id == "later":
            self.move(Move.LATER)


__all__ = ["AbandonModal", "FailedScreen", "RebootModal", "RebootScreen", "ResumeScreen", "RollbackModal", "RunScreen",
           "duration_text", "reboot_question", "rollback_text"]
