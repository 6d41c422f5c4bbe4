"""The dialogs, opened on demand: help, the full log of a step, the pasted error, the rehearsal's questions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual import on
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Log, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from wizard.tui.widgets.steady_cursor import steady_cursor

HELP_INTRO = """\
Detect › Diagnose › Choose › Review › Confirm › Run › Verify › Report
Nothing changes on the machine before Confirm; Review shows it all."""
GLOBAL_KEYS = (("?, F1", "this help"), ("Escape", "back, or close a dialog"), ("Ctrl+T", "dark / light theme"),
               ("Ctrl+C", "stop safely (the journal stays consistent) and quit"))
HELP_END = """\
States: · planned  ▶ running  ✔ ok  = already done  – skipped
        ✘ FAILED  ⟳ reboot  ■ stopped
After a reboot or a stop, `{cli} resume` goes on from there."""


def help_keys(keys: list[tuple[str, str]]) -> Table:
    """One two-column table: this screen's keys, then the keys every screen has (it fits 80 columns)."""
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False, padding=(0, 2, 0, 0))
    table.add_column("key", no_wrap=True)
    table.add_column("on this screen")
    for key, desc in keys:
        table.add_row(Text(key), Text(desc))
    table.add_row(Text(""), Text("everywhere", style="bold"))
    for key, desc in GLOBAL_KEYS:
        table.add_row(Text(key), Text(desc))
    return table


class HelpModal(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "Close")]

    def __init__(self, keys: list[tuple[str, str]], cli: str = "rocm-wizard") -> None:
        super().__init__()
        self.keys = [(k, d) for k, d in keys if d != "Help"]  # "?" is among the keys every screen has
        self.cli = cli  # the command that names this machine (``rocm-wizard --sandbox DIR``)

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog wide", id="help"):
            end = Text(HELP_END.format(cli=self.cli))
            yield Static(Group(Text(HELP_INTRO), Text(""), help_keys(self.keys), Text(""), end),
                         id="help-body")
            yield Label("Escape closes.", classes="hint")


def tail_lines(path: str, n: int = 5000) -> list[str]:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return [f"cannot read {path}: {exc.strerror}"]
    lines = data.decode("utf-8", "replace").splitlines()
    if len(lines) > n:
        return [f"... {len(lines) - n:,} earlier lines in {path}", *lines[-n:]]
    return lines


class LogModal(ModalScreen[None]):
    BINDINGS = [Binding("escape,q", "dismiss", "Close")]

    def __init__(self, title: str, path: str) -> None:
        super().__init__()
        self.title_text, self.path = title, path

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide tall"):
            yield Label(Text(f"{self.title_text} — {self.path}"), id="log-title")
            yield Log(max_lines=6000, id="full-log")
            yield Label("Escape closes.", classes="hint")

    def on_mount(self) -> None:
        from wizard.tui.widgets.log_pane import normalise

        log = self.query_one(Log)
        log.write_lines([normalise(x) for x in tail_lines(self.path)])


class RehearsalModal(ModalScreen["str | None"]):
    """Which built-in machine to rehearse on, and where each one lives."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, services: Any, *, real: bool = False) -> None:
        super().__init__()
        self.services, self.real = services, real

    def compose(self) -> ComposeResult:
        from wizard.profiles import PROFILES

        opts = []
        for name, prof in PROFILES.items():
            where = self.services.rehearsal_dir(name, real=self.real)
            state = "used: a run was started there" if self.services.rehearsal_used(name, real=self.real) else (
                "laid, no run yet" if where.is_dir() else "new")
            opts.append(Option(Text.assemble((name, "bold"), f"  {prof.description}\n", (f"  {where} ({state})", "dim")),
                               id=name))
        with Vertical(classes="dialog wide", id="rehearse"):
            yield Label("Rehearse on which machine? (nothing here is touched)" if not self.real else
                        "Rehearse on which machine, as a real Debian 12 root? (nothing here is touched)")
            yield OptionList(*opts, id="profiles")
            yield Label("Enter chooses, Escape cancels. Each plan, the reboot included, can run there.",
                        classes="hint")

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)


def verify_torch_text(commands: list[list[str]]) -> Text:
    import shlex

    t = Text()
    t.append("No torch to verify with.\n", style="bold yellow")
    t.append("This rehearsal's Verify step (matmul and convolution) needs a torch to play the venv's; without one "
             "it is skipped and the rehearsal is NOT verified.\n\n")
    t.append("m  make a CPU torch now (minutes: PyTorch's CPU wheel is a few hundred MB; PyPI's torch, a CUDA "
             "build that also runs on the CPU, brings several GB). It makes a venv, then tries each source in "
             "turn until one works (the site mirror, your pip configuration, PyTorch's CPU index):\n")
    for argv in commands:
        t.append(f"     {shlex.join(argv)}\n", style="green")
    t.append("s  rehearse without verifying (or start with --verify-python PATH)\n")
    t.append("Escape  cancel")
    return t


class VerifyTorchModal(ModalScreen["str | None"]):
    """The rehearsal has no CPU torch: make one, or rehearse saying loudly that nothing will be verified."""

    BINDINGS = [Binding("m", "dismiss('make')", "Make a CPU torch"), Binding("s", "dismiss('skip')", "Skip verify"),
                Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, commands: list[list[str]]) -> None:
        super().__init__()
        self.commands = commands

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog wide"):
            yield Static(verify_torch_text(self.commands), id="verify-torch-body")


class StartOverModal(ModalScreen["str | None"]):
    """A rehearsal machine that was used: continue it, or start over from the profile."""

    BINDINGS = [Binding("c", "dismiss('continue')", "Continue it"), Binding("s", "dismiss('reset')", "Start over"),
                Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, profile: str, where: str) -> None:
        super().__init__()
        self.profile, self.where = profile, where

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text.assemble((f"The rehearsal machine {self.profile} was used before.\n", "bold"),
                                       f"It lives in {self.where}.\n\n",
                                       "c  continue it as it is (a pending run is offered to resume)\n",
                                       "s  start over: delete it and lay the profile fresh\n",
                                       "Escape  cancel"), id="start-over-body")


class PasteModal(ModalScreen[str | None]):
    """The error text the user hit (a traceback, a terminal scrollback), for the diagnosis."""

    BINDINGS = [Binding("ctrl+s", "done", "Diagnose with it"), Binding("escape", "dismiss(None)", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide tall"):
            yield Label("Paste the error you hit (a traceback, a log, a terminal scrollback):")
            yield steady_cursor(TextArea(id="paste-text", soft_wrap=True))
            yield Label("Ctrl+S diagnoses with it, Escape cancels.", classes="hint")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_done(self) -> None:
        self.dismiss(self.query_one(TextArea).text)
