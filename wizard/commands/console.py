"""The CLI's view of a run: engine events printed as they come (step headers and results through
rich, output lines as plain text), and the yes/no question a run asks once before the first change."""

from __future__ import annotations

import sys

from wizard import binding, exit_codes
from wizard.runner import events as ev
from wizard.runner.records import RunState


def first_line(shown: str, width: int = 110) -> str:
    """A command as one line: its first line, cut at ``width``, marked where more follows (the log has it all)."""
    head, _, rest = shown.partition("\n")
    if len(head) > width:
        head, rest = head[: width - 1], "more"
    return head + (" …" if rest else "")


class ConsoleView:
    """Prints engine events; every string that came from the plan or the machine is escaped, so rich
    markup never eats a ``[...]`` in a command or a path. The events are folded first into the same
    ``RunProgress`` the TUI shows (steps, the verify step, why it was skipped); this prints what each adds.

    One line per action (what it does) and one per step result; the commands themselves (scripts, manifests)
    and their output go to the step log, and to the console only with ``verbose`` (``-v``). ``cli`` is the
    command that names this machine (``rocm-wizard --sandbox DIR``), for every "what next" line."""

    def __init__(self, quiet_output: bool = False, *, verbose: bool = False,
                 cli: tuple[str, ...] | list[str] = ("rocm-wizard",)) -> None:
        from rich.console import Console

        from wizard.session import RunProgress
        from wizard.verify.view import VerifyOutput

        self.console = Console(highlight=False, soft_wrap=True)  # a pasted log keeps its paths whole
        self.quiet_output = quiet_output  # not even the verify step's table of checks
        self.verbose = verbose
        self.cli = " ".join(cli)
        self.run = RunProgress()
        self.verify = VerifyOutput()

    @property
    def total(self) -> int:
        return len(self.run.steps)

    @property
    def verify_step(self) -> int | None:
        return self.run.verify_step

    @property
    def verify_skipped(self) -> str | None:
        """Why the verify step did not run."""
        return self.run.verify_skipped

    def __call__(self, e: ev.Event) -> None:
        from rich.markup import escape

        self.run.apply(e)
        c = self.console
        if isinstance(e, ev.RunStarted):
            c.print(f"[bold]{'Resuming' if e.resumed else 'Running'} {escape(e.plan)}[/] (run {escape(e.run_id)}; "
                    f"logs in {escape(e.log_dir)})")
        elif isinstance(e, ev.StepStarted):
            c.print(f"[bold cyan]== step {e.index + 1}/{e.total}: {escape(e.title)}[/] ({e.kind})")
            if e.kind == "verify":
                from wizard.verify.view import VerifyOutput

                self.verify = VerifyOutput()
        elif isinstance(e, ev.StepDoneEarlier):
            c.print(f"[dim]== step {e.index + 1}/{self.total}: {escape(e.title)}: done before ({e.outcome.value})[/]")
        elif isinstance(e, ev.StepDrift):
            c.print(f"[bold yellow]!! step {e.index + 1}/{self.total}: {escape(e.title)}: DRIFT: recorded as done, "
                    f"but the machine says otherwise (checked: {escape(e.check)}: no): running it again[/]")
        elif isinstance(e, ev.StepSkipped):
            if e.kind == "verify":
                c.print(f"[bold yellow]!! step {e.index + 1}: {escape(e.title)}: SKIPPED, NOT VERIFIED: "
                        f"{escape(e.reason)}[/]")
            else:
                c.print(f"[yellow]-- step {e.index + 1}: {escape(e.title)}: skipped: {escape(e.reason)}[/]")
        elif isinstance(e, ev.OutputLines) and e.step == self.verify_step and e.step is not None:
            had = bool(self.verify.checks)
            shown = [x for x in (self.verify.feed(line) for line in e.lines) if x is not None]
            if self.verify.checks and not had:
                shown.insert(0, "  status   check                  device   elapsed")
            if shown and not self.quiet_output:
                sys.stdout.write("".join(f"{x}\n" if x.startswith("  ") else f"  {x}\n" for x in shown))
                sys.stdout.flush()
        elif isinstance(e, ev.StepFinished) and e.kind == "reboot":  # after the boot: the resume passes it
            c.print(f"[bold cyan]== step {e.index + 1}/{self.total}: reboot: done, the machine has rebooted[/]")
        elif isinstance(e, ev.StepFinished) and e.index == self.verify_step:
            for line in self.verify.finish():
                c.print(escape(line), style="bold" if line.startswith("verify:") else None)
        elif isinstance(e, ev.StepFinished):
            c.print(f"   step {e.index + 1}: [green]{e.outcome.value}[/] ({e.duration:.1f}s)")
        elif isinstance(e, ev.ActionStarted) and self.verbose:
            c.print(f"[dim]$ {escape(e.shown)}[/]")
        elif isinstance(e, ev.ActionStarted):
            c.print(f"[dim]  - {escape(e.description or first_line(e.shown))}[/]")
            if e.note:  # (with -v it arrives among the action's output lines)
                c.print(f"    {escape(e.note)}")
        elif isinstance(e, ev.ActionSkipped):
            what = e.shown if self.verbose else first_line(e.shown, 70)
            c.print(f"[dim]  skip: {escape(what)} ({escape(e.reason)})[/]")
        elif isinstance(e, ev.OutputLines) and self.verbose and not self.quiet_output:
            sys.stdout.write("".join(f"  {line}\n" for line in e.lines))
            sys.stdout.flush()
        elif isinstance(e, ev.ActionFinished) and e.outcome.value != "ok":
            c.print(f"[red]  {e.outcome.value} (exit {e.exit_code}) after {e.duration:.1f}s[/]")
        elif isinstance(e, ev.RunFailed):
            what = "preflight check" if e.kind == "preflight" else f"step {e.step + 1} ({e.kind})"
            if e.check:
                what += f" {e.check}"
            if e.description:
                what += f" ({e.description})"
            c.print(f"[bold red]FAILED[/] {escape(what)}: {escape(e.message)}")
            c.print(f"  command: {escape(e.shown if self.verbose else first_line(e.shown))}\n"
                    f"  full log: {escape(e.log_path)}")
            if e.tail:
                c.print("  last lines:")
                sys.stdout.write("".join(f"  | {line}\n" for line in e.tail))
            for f in e.findings:
                c.print(f"  known issue [bold]{escape(f.id)}[/]: {escape(f.title)}\n    fix: {escape(f.fix)}")
                for s in f.sources:
                    c.print(f"    source: {escape(s)}")
            if e.kind == "preflight" and e.check == binding.NAME:  # no resume of this run can pass on this machine
                c.print(f"  nothing was changed. The plan was made for another machine: `{escape(self.cli)} abandon` "
                        f"forgets this run, then `{escape(self.cli)} --plan FILE --replan` resolves the plan again "
                        "for this one")
            elif e.kind == "preflight":
                skip = f"--skip-preflight {e.check}" if e.check else "--skip-preflight NAME"
                c.print(f"  nothing was changed. Fix the cause and run `{escape(self.cli)} resume`, or skip this check "
                        f"if you know it is wrong: `{escape(self.cli)} resume {skip}`")
            else:
                c.print(f"  choices: `{escape(self.cli)} resume` (retry), `{escape(self.cli)} rollback`, or stop here "
                        "(state kept)")
        elif isinstance(e, ev.RebootPending):
            c.print(f"[bold yellow]REBOOT[/] {escape(e.message)}")
        elif isinstance(e, ev.RollbackStarted):
            c.print(f"[bold]Rolling back[/] run {escape(e.run_id)}: {e.total} action(s)")
        elif isinstance(e, ev.RunFinished):
            colour = {RunState.DONE: "green", RunState.ROLLED_BACK: "green", RunState.FAILED: "red",
                      RunState.ROLLBACK_FAILED: "red"}.get(e.state, "yellow")
            state = e.state.value
            if e.state is RunState.DONE and self.verify_skipped is not None:
                colour, state = "yellow", "done, but NOT VERIFIED"
            c.print(f"[bold {colour}]{state}[/] (run {escape(e.run_id)})")
            if e.state is RunState.DONE and self.verify_skipped is not None:
                c.print(f"  [bold yellow]verify skipped:[/] {escape(self.verify_skipped)}")
            for s in e.skipped:
                if self.verify_skipped is not None and s.endswith(self.verify_skipped):
                    continue  # said above
                c.print(f"  [yellow]skipped:[/] {escape(s)}")
            if e.reboot_needed:
                c.print("  [bold yellow]reboot needed:[/] the kernel driver changed and is loaded only after a "
                        "reboot")


def exit_code_for(state: RunState) -> int:
    return {RunState.DONE: exit_codes.OK, RunState.ROLLED_BACK: exit_codes.OK,
            RunState.REBOOT_PENDING: exit_codes.REBOOT_PENDING}.get(state, exit_codes.FAILURE)


def ask(question: str, default: bool = False) -> bool:
    if not sys.stdin.isatty():
        return default
    try:
        answer = input(question + (" [Y/n] " if default else " [y/N] ")).strip().lower()
    except EOFError:
        return default
    return (answer in ("y", "yes")) if answer else default
