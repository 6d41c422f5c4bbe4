"""Verify and Report: the checks as they finish, then the summary and where everything is."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from wizard.runner.records import RunState
from wizard.session import Move, Session, Stage, VerifyRow
from wizard.tui.screens.base import StageScreen
from wizard.tui.screens.run import _LiveRun
from wizard.tui.widgets.log_pane import LogPane
from wizard.tui.widgets.step_list import duration_text, state_text

VERDICT = {"pass": "✔ pass", "fail": "✘ FAIL", "timeout": "⧗ TIMEOUT", "skip": "– skip", "error": "✘ ERROR"}


def verify_cells(r: VerifyRow) -> tuple[Text, Text, Text, Text, Text]:
    """Literal cells (a str cell of a DataTable is parsed as markup)."""
    err = (r.error or "").strip()
    extra = r.throughput or (err.splitlines()[0][:60] if err else "")
    return (Text(r.name), Text(r.device), Text(VERDICT.get(r.status, r.status)), Text(f"{r.seconds:.2f}s"), Text(extra))


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
            yield Static(id="verify-clock")
            yield Static(id="run-status")
            yield LogPane(id="live-log")

    def on_mount(self) -> None:
        t = self.query_one("#checks", DataTable)
        for c in ("check", "device", "result", "time", "throughput / error"):
            t.add_column(c)
        self.last_result = self.wizard.services.clock()  # when the last check finished (or the suite started)
        super().on_mount()
        self.set_interval(1.0, self.tick)
        self.tick()

    def refresh_run(self) -> None:
        super().refresh_run()
        t = self.query_one("#checks", DataTable)
        rows = self.session.run.verify
        if len(rows) > t.row_count:
            self.last_result = self.wizard.services.clock()
        for r in rows[t.row_count:]:
            t.add_row(*verify_cells(r))

    def tick(self) -> None:
        """The check in progress and how long it has run: a hanging conv is seen hanging."""
        run = self.session.run
        step = (run.steps[run.verify_step] if run.verify_step is not None and run.verify_step < len(run.steps)
                else None)
        if step is None or step.state != "running":
            self.query_one("#verify-clock", Static).update("")
            return
        waited = max(0.0, self.wizard.services.clock() - self.last_result)
        self.query_one("#verify-clock", Static).update(Text(
            f"▶ check {len(run.verify) + 1} running for {waited:.0f} s (its own timeout ends a hang)", style="bold yellow" if waited >= 60 else "bold"))


def report_text(s: Session, plan_file: str | None, exported: str | None, cli: str = "rocm-wizard") -> Text:
    """The report; ``cli`` names this machine in every "what next" line (``rocm-wizard --sandbox DIR``)."""
    run = s.run
    t = Text()
    verdict = {RunState.DONE: "✔ Finished", RunState.STOPPED: "■ Stopped", RunState.FAILED: "✘ Failed",
               RunState.ROLLED_BACK: "↶ Rolled back", RunState.ROLLBACK_FAILED: "✘ Rollback failed",
               RunState.ROLLING_BACK: f"■ Rollback stopped (`{cli} rollback` continues it)",
               RunState.REBOOT_PENDING: "⟳ Reboot pending"}.get(run.state, run.state.value) if run.state else "-"
    unverified = next((r for r in run.steps if r.kind == "verify" and r.state == "skipped"), None)
    if run.state is RunState.DONE and unverified is not None:
        verdict = "✔ Finished, NOT VERIFIED"
    t.append(f"{verdict}: {run.plan or s.chosen or '-'} on {s.machine}\n", style="bold")
    if run.state is RunState.DONE and unverified is not None:
        t.append(f"⚠ verify skipped: {unverified.note or 'no torch to verify with'}\n", style="bold yellow")
    if run.state is RunState.STOPPED:
        t.append(f"The journal is consistent: `{cli} resume` continues where it stopped.\n")
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


def activate_hint(s: Session) -> str | None:
    """How to use what the plan set up: the venv's activate line. A rehearsal's venv is inside its machine's
    root, not the user's: said so, with the path on this computer."""
    venv = dict(s.resolved.target).get("venv") if s.resolved is not None else None
    if not venv:
        return None
    root = s.machine.partition(":")[2]
    if is_rehearsal(s) and root:
        return (f"{venv} is the rehearsal machine's ({root.rstrip('/')}{venv} here); a real run makes it on "
                f"your machine, then `source {venv}/bin/activate`")
    return f"source {venv}/bin/activate"


def is_rehearsal(s: Session) -> bool:
    """The session's machine is a rehearsal (a sandbox or a real root), not the user's."""
    return s.machine.partition(":")[0] in ("sandbox", "realroot")


def exit_summary(s: Session, verified: str | None) -> str | None:
    """What stays on the terminal after the app exits from the Report."""
    run = s.run
    if run.state is None or run.run_id is None:
        return None
    lines = [report_text(s, None, None).plain.splitlines()[0]]
    unverified = next((r for r in run.steps if r.kind == "verify" and r.state == "skipped"), None)
    if unverified is not None:
        lines.append(f"verify skipped, NOT verified: {unverified.note or 'no torch to verify with'}")
    elif verified:
        lines.append(verified)
    elif run.verify:
        bad = [v for v in run.verify if v.status in ("fail", "timeout", "error")]
        lines.append(f"verify: {len(run.verify) - len(bad)} of {len(run.verify)} checks passed or skipped"
                     + (f", {len(bad)} FAILED" if bad else ""))
    hint = activate_hint(s)
    if hint and run.state is RunState.DONE:
        lines.append(f"{'rehearsed' if is_rehearsal(s) else 'use it'}: {hint}")
    lines.append(f"journal: {run.journal}  logs: {run.log_dir}")
    return "\n".join(f"rocm-wizard: {x}" for x in lines)


class ReportScreen(StageScreen):
    STAGE = Stage.REPORT
    BINDINGS = [
        *StageScreen.BINDINGS,
        Binding("v", "verify_again", "Verify again"),
        Binding("r", "rollback", "Roll back…"),
        Binding("w", "bundle", "Write bundle…"),
        Binding("q,enter", "app.quit_wizard", "Quit"),
    ]

    def body(self) -> ComposeResult:
        with VerticalScroll(id="report"):
            yield Static(self._text(), id="report-body")

    def _text(self) -> Text:
        t = report_text(self.session, self.wizard.plan_file(), self.session.exported,
                        self.wizard.services.relaunch_hint)
        hint = activate_hint(self.session)
        if hint and self.session.run.state is RunState.DONE:
            t.append("\nRehearsed: " if is_rehearsal(self.session) else "\nUse it: ", style="bold")
            t.append(hint + "\n")
        if self.wizard.verified:
            t.append("\nVerified again: ", style="bold")
            t.append(self.wizard.verified + "\n")
        return t

    def show(self) -> None:
        self.query_one("#report-body", Static).update(self._text())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        s = self.session
        if action == "rollback" and (not s.can(Move.ROLLBACK) or s.run.state is not RunState.DONE):
            return None
        if action == "verify_again" and (s.read_only or s.run.state is not RunState.DONE):
            return None
        if action == "bundle" and s.read_only:
            return None
        return True

    def action_rollback(self) -> None:
        from wizard.tui.messages import RollbackRequested

        self.wizard.post_message(RollbackRequested(self.session.run.run_id))

    def action_verify_again(self) -> None:
        self.wizard.verify_again()

    def action_bundle(self) -> None:
        from pathlib import Path

        from wizard.tui.screens.plans import ExportModal

        default = str(Path(self.wizard.services.export_dir) / "rocm-wizard-evidence.tar.gz")

        def chosen(path: str | None) -> None:
            if path:
                self.wizard.write_bundle(path)

        self.app.push_screen(ExportModal(default, "Write this machine's evidence bundle (redacted) to:"), chosen)
