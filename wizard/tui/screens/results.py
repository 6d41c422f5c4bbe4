"""Verify and Report: the checks as they finish, then the summary and where everything is."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from wizard.runner.records import RunState
from wizard.session import Session, Stage, VerifyRow
from wizard.tui.screens.base import StageScreen
from wizard.tui.screens.run import _LiveRun
from wizard.tui.widgets.log_pane import LogPane
from wizard.tui.widgets.step_list import duration_text, state_text

VERDICT = {"pass": "✔ pass", "fail": "✘ FAIL", "timeout": "⧗ TIMEOUT", "skip": "– skip", "error": "✘ ERROR"}


def verify_cells(r: VerifyRow) -> tuple[str, str, str, str, str]:
    err = (r.error or "").strip()
    extra = r.throughput or (err.splitlines()[0][:60] if err else "")
    return (r.name, r.device, VERDICT.get(r.status, r.status), f"{r.seconds:.2f}s", extra)


class VerifyScreen(_LiveRun):
    STAGE = Stage.VERIFY
    BINDINGS = [
        *StageScreen.BINDINGS,
        Binding("l", "full_log", "Full log"),
        Binding("ctrl+c", "app.interrupt", "Stop safely", priority=True),
    ]

    def body(self) -> ComposeResult:
        with Vertical(id="verify"):
            yield Static(Text("Verify: each check runs in its own process; results appear as they finish.",
                              style="bold"), id="verify-head")
            yield DataTable(id="checks", cursor_type="row")
            yield Static(id="run-status")
            yield LogPane(id="live-log")

    def on_mount(self) -> None:
        t = self.query_one("#checks", DataTable)
        for c in ("check", "device", "result", "time", "throughput / error"):
            t.add_column(c)
        super().on_mount()

    def refresh_run(self) -> None:
        super().refresh_run()
        t = self.query_one("#checks", DataTable)
        rows = self.session.run.verify
        for r in rows[t.row_count:]:
            t.add_row(*verify_cells(r))


def report_text(s: Session, plan_file: str | None, exported: str | None) -> Text:
    run = s.run
    t = Text()
    verdict = {RunState.DONE: "✔ Finished", RunState.STOPPED: "■ Stopped", RunState.FAILED: "✘ Failed",
               RunState.ROLLED_BACK: "↶ Rolled back", RunState.ROLLBACK_FAILED: "✘ Rollback failed",
               RunState.ROLLING_BACK: "■ Rollback stopped (`rocm-wizard rollback` continues it)",
               RunState.REBOOT_PENDING: "⟳ Reboot pending"}.get(run.state, run.state.value) if run.state else "-"
    t.append(f"{verdict}: {run.plan or s.chosen or '-'} on {s.machine}\n", style="bold")
    if run.state is RunState.STOPPED:
        t.append("The journal is consistent: `rocm-wizard resume` continues where it stopped.\n")
    if run.state is RunState.ROLLBACK_FAILED:
        t.append(f"{run.message}\n")
    if run.reboot_needed:
        t.append("⟳ Reboot needed: the kernel driver (amdgpu) changed and is loaded only after a reboot.\n",
                 style="bold yellow")
    t.append("Where things are:\n", style="bold")
    t.append(f"  journal:            {run.journal or '-'}\n")
    t.append(f"  step logs:          {run.log_dir or '-'}\n")
    t.append(f"  replayable plan:    {plan_file or '-'}  (rocm-wizard --plan FILE --yes)\n")
    if exported:
        t.append(f"  dry-run script:     {exported}\n")
    t.append("Steps:\n", style="bold")
    for r in run.steps:
        line = Text("  ")
        line.append_text(state_text(r.state))
        line.append(f"  {r.index + 1}. {r.title}  {duration_text(r.duration)}")
        if r.note and r.state in ("skipped", "failed", "stopped"):
            line.append(f"  ({r.note})", style="dim")
        t.append_text(line)
        t.append("\n")
    if run.verify:
        bad = [v for v in run.verify if v.status in ("fail", "timeout", "error")]
        t.append(f"\nVerify: {len(run.verify) - len(bad)} of {len(run.verify)} checks passed or skipped"
                 + (f", {len(bad)} FAILED" if bad else "") + "\n", style="bold")
        for v in run.verify:
            t.append(f"  {VERDICT.get(v.status, v.status):<10} {v.name:<14} {v.device:<8} {v.throughput}\n")
    return t


class ReportScreen(StageScreen):
    STAGE = Stage.REPORT
    BINDINGS = [*StageScreen.BINDINGS, Binding("q,enter", "app.quit_wizard", "Quit")]

    def body(self) -> ComposeResult:
        with VerticalScroll(id="report"):
            yield Static(report_text(self.session, self.wizard.plan_file(), self.session.exported), id="report-body")
