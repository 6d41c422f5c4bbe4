"""Glue shared by the run/resume/status/rollback commands: where state lives, the lock, the
privilege, the resume command line, and a plain console view of engine events."""

from __future__ import annotations

import sys
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from wizard.model import Action
from wizard.runner import events as ev
from wizard.runner import paths
from wizard.runner.privilege import Privilege, PrivilegeError
from wizard.runner.resume_unit import wizard_command


def is_sandbox(ctx: Any) -> bool:
    return bool(getattr(ctx, "sandbox", None))


def state_roots(ctx: Any) -> tuple[Path, Path, str]:
    """(state dir, log dir, the state dir as the *machine* sees it: what plans write into)."""
    if ctx.state_dir:
        s = paths.state_dir(ctx.state_dir)
        return s, paths.log_dir(ctx.state_dir), str(s)
    if is_sandbox(ctx):
        root = Path(ctx.host.root)
        return paths.state_dir(machine_root=root), paths.log_dir(machine_root=root), paths.ROOT_STATE
    s = paths.state_dir()
    return s, paths.log_dir(), str(s)


def privilege(ctx: Any) -> Privilege:
    if is_sandbox(ctx):
        return Privilege(is_root=False)  # the sandbox's user; root actions go through its sudo stand-in
    return Privilege.detect()


@contextmanager
def root_rights(priv: Privilege, actions: Sequence[Action], ctx: Any, *, yes: bool) -> Iterator[None]:
    """Where ``actions`` need root that this process lacks: ask sudo once (``--yes``: never prompt)
    or fail with a one-line CommandError, then keep the ticket alive while the block runs."""
    from wizard import exit_codes
    from wizard.commands import CommandError

    needed = priv.needs_sudo(actions)
    if needed:
        try:
            priv.authenticate(yes=yes, environ=ctx.host.environ)
        except PrivilegeError as exc:
            raise CommandError(str(exc), exit_codes.FAILURE) from None
    with priv.kept_alive(ctx.host.environ) if needed else nullcontext():
        yield


def resume_command(ctx: Any) -> list[str]:
    cmd = [*wizard_command(), "resume", "--yes"]
    if is_sandbox(ctx):
        cmd += ["--sandbox", str(Path(ctx.sandbox).absolute())]
    if ctx.state_dir:
        cmd += ["--state-dir", str(Path(ctx.state_dir).absolute())]
    return cmd


class ConsoleView:
    """Prints engine events: step headers and results through rich, output lines as plain text."""

    def __init__(self, quiet_output: bool = False) -> None:
        from rich.console import Console

        self.console = Console(highlight=False)
        self.quiet_output = quiet_output
        self.total = 0

    def __call__(self, e: ev.Event) -> None:
        c = self.console
        if isinstance(e, ev.RunStarted):
            self.total = e.total_steps
            c.print(f"[bold]{'Resuming' if e.resumed else 'Running'} {e.plan}[/] (run {e.run_id}; logs in {e.log_dir})")
        elif isinstance(e, ev.StepStarted):
            c.print(f"[bold cyan]== step {e.index + 1}/{e.total}: {e.title}[/] ({e.kind})")
        elif isinstance(e, ev.StepDoneEarlier):
            c.print(f"[dim]== step {e.index + 1}/{self.total}: {e.title}: done before ({e.outcome})[/]")
        elif isinstance(e, ev.StepSkipped):
            c.print(f"[yellow]-- step {e.index + 1}: {e.title}: skipped: {e.reason}[/]")
        elif isinstance(e, ev.ActionStarted):
            c.print(f"[dim]$ {e.shown}[/]")
        elif isinstance(e, ev.ActionSkipped):
            c.print(f"[dim]  skip: {e.shown} ({e.reason})[/]")
        elif isinstance(e, ev.OutputLines) and not self.quiet_output:
            sys.stdout.write("".join(f"  {line}\n" for line in e.lines))
        elif isinstance(e, ev.ActionFinished) and e.outcome != "ok":
            c.print(f"[red]  {e.outcome} (exit {e.exit_code}) after {e.duration:.1f}s[/]")
        elif isinstance(e, ev.RunFailed):
            c.print(f"[bold red]FAILED[/] step {e.step + 1} ({e.kind}): {e.message}")
            c.print(f"  command: {e.shown}\n  full log: {e.log_path}")
            if e.tail:
                c.print("  last lines:")
                sys.stdout.write("".join(f"  | {line}\n" for line in e.tail))
            for f in e.findings:
                c.print(f"  known issue [bold]{f.id}[/]: {f.title}\n    fix: {f.fix}")
                for s in f.sources:
                    c.print(f"    source: {s}")
            c.print("  choices: `rocm-wizard resume` (retry), `rocm-wizard rollback`, or stop here (state kept)")
        elif isinstance(e, ev.RebootPending):
            c.print(f"[bold yellow]REBOOT[/] {e.message}")
        elif isinstance(e, ev.RunFinished):
            colour = {"done": "green", "failed": "red"}.get(e.state, "yellow")
            c.print(f"[bold {colour}]{e.state}[/] (run {e.run_id})")
            for s in e.skipped:
                c.print(f"  [yellow]skipped:[/] {s}")


def exit_code_for(state: str) -> int:
    from wizard import exit_codes

    return {"done": exit_codes.OK, "reboot-pending": exit_codes.REBOOT_PENDING}.get(state, exit_codes.FAILURE)


def ask(question: str, default: bool = False) -> bool:
    if not sys.stdin.isatty():
        return default
    try:
        answer = input(question + (" [Y/n] " if default else " [y/N] ")).strip().lower()
    except EOFError:
        return default
    return (answer in ("y", "yes")) if answer else default


Asker = Callable[[str], bool]
