"""Detect and Diagnose: what the machine is, and what is wrong with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from wizard.session import Move, Stage
from wizard.tui.screens.base import PENDING_KEY, StageScreen
from wizard.tui.widgets.rendered_once import RenderedOnce

if TYPE_CHECKING:
    from wizard.runner.service import PendingRun

SEVERITIES = ("critical", "error", "warning", "info")
SEV_MARK = {"critical": "‼ CRITICAL", "error": "✘ ERROR", "warning": "! WARNING", "info": "i INFO"}


def no_gpu_text(machine: str, can_rehearse: bool, real_root_unavailable: str | None = None) -> Text:
    t = Text()
    t.append("No AMD GPU was found on this machine", style="bold")
    t.append(f" ({machine}).\n")
    t.append("There is nothing here to migrate. ")
    if can_rehearse:
        t.append("Press r to rehearse on a built-in sandbox machine (seed-7900xt: two RX 7900 XT, Ubuntu 22.04, "
                 "ROCm 6.2, or another profile): every step runs there, visibly, and nothing touches this machine.\n")
        if real_root_unavailable is None:
            t.append("Press d to rehearse on a real Debian 12 root instead: the real apt, dpkg and pip install "
                     "from a local mirror (built with mmdebstrap on first use).")
        else:
            t.append(f"A rehearsal on a real Debian 12 root (real apt, dpkg, pip) is not available here: "
                     f"{real_root_unavailable}.")
    return t


def conflicts_text(facts: object) -> Text | None:
    conflicts = getattr(facts, "conflicts", ())
    if not conflicts:
        return None
    t = Text()
    t.append(f"⚠ {len(conflicts)} conflict(s) between views of this machine:\n", style="bold yellow")
    for c in conflicts:
        t.append(f"  ⚠ {c.message}\n")
    return t


def pending_banner(p: PendingRun) -> Text:
    """After "Later": the run is still unfinished, and the key that offers it again."""
    t = Text()
    t.append(f"⟳ Run {p.run_id} ({p.plan}) is unfinished ({p.state.value}); a new plan cannot start.\n", style="bold")
    t.append("u resumes it, rolls it back or abandons it.")
    return t


class DetectScreen(StageScreen):
    STAGE = Stage.DETECT
    BINDINGS = [
        *StageScreen.BINDINGS,
        PENDING_KEY,
        Binding("n,enter", "move('next')", "Diagnose"),
        Binding("e", "toggle_evidence", "Evidence"),
        Binding("r", "rehearse", "Rehearse"),
        Binding("d", "rehearse_real", "Rehearse on Debian 12"),
        Binding("q", "app.quit_wizard", "Quit"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.evidence = False

    def body(self) -> ComposeResult:
        with VerticalScroll(id="facts"):
            if self.session.pending is not None and self.session.can(Move.PENDING):
                yield Static(pending_banner(self.session.pending), id="pending", classes="banner")
            if not self.session.has_amd_gpu:
                yield Static(no_gpu_text(self.session.machine, self.wizard.can_rehearse,
                                         self.wizard.real_root_unavailable if self.wizard.can_rehearse else None),
                             id="no-gpu", classes="banner")
            c = conflicts_text(self.session.facts)
            if c is not None:
                yield Static(c, id="conflicts", classes="warn")
            yield Static(self._facts(), id="facts-body")

    def _facts(self) -> RenderedOnce:
        from wizard.render import facts_renderables

        return RenderedOnce(Group(*facts_renderables(self.session.facts, evidence=self.evidence)))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("rehearse", "rehearse_real"):
            return self.wizard.can_rehearse
        return super().check_action(action, parameters)

    def action_rehearse(self) -> None:
        self.wizard.action_rehearse()

    def action_rehearse_real(self) -> None:
        self.wizard.action_rehearse(real=True)

    def action_toggle_evidence(self) -> None:
        self.evidence = not self.evidence
        self.query_one("#facts-body", Static).update(self._facts())
        self.notify("evidence shown: where each GPU fact came from" if self.evidence else "evidence hidden")


def findings_summary(findings: list[object]) -> Text:
    from wizard.render import split_findings

    causes, to_check, shown_failures = split_findings(findings)
    checks, shown = len(to_check), len(shown_failures)
    counts = {s: sum(1 for f in causes if getattr(f, "severity", None) == s) for s in SEVERITIES}
    t = Text()
    if not causes and shown:
        t.append(f"No cause is established: {shown} failure(s) shown", style="yellow")
    elif not causes:
        t.append("✔ No known problem matches this machine.", style="green")
    else:
        t.append(f"{len(causes)} finding(s): ", style="bold")
        t.append(", ".join(f"{n} {s}" for s, n in counts.items() if n))
    if checks:
        t.append(f"; {checks} to check" if causes or shown else f" {checks} to check.")
    return t


class DiagnoseScreen(StageScreen):
    STAGE = Stage.DIAGNOSE
    BINDINGS = [
        *StageScreen.BINDINGS,
        PENDING_KEY,
        Binding("n,enter", "move('next')", "Choose a plan"),
        Binding("p", "paste", "Paste an error…"),
        Binding("b,escape", "move('back')", "Back"),
        Binding("q", "app.quit_wizard", "Quit"),
    ]

    def action_paste(self) -> None:
        from wizard.tui.screens.modals import PasteModal

        def pasted(text: str | None) -> None:
            if text and text.strip():
                self.wizard.diagnose_text(text)

        self.app.push_screen(PasteModal(), pasted)

    def body(self) -> ComposeResult:
        from wizard.render import findings_renderables

        order = {s: i for i, s in enumerate(SEVERITIES)}
        findings = sorted(self.wizard.findings(), key=lambda f: order.get(f.severity, 9))
        with VerticalScroll(id="findings"):
            yield Static(findings_summary(findings), id="summary")
            # the summary above says whether a known problem matches: the findings without their own headline
            yield Static(Group(*findings_renderables(findings, headline=False)), id="findings-body")

