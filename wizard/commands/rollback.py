"""`rocm-wizard rollback [--yes]`: undo exactly what the current run did, as far as its backup allows.

Lists what it will undo and what it cannot restore before it starts; without --yes it asks once. A
rollback that was interrupted or failed continues where it stopped.
"""

from __future__ import annotations

import argparse

from wizard import exit_codes
from wizard.commands import CommandError, Context, run_error


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--yes", action="store_true", help="unattended: no questions")


def run(args: argparse.Namespace, ctx: Context) -> int:
    from wizard.commands.console import ConsoleView, ask, exit_code_for
    from wizard.runner.records import RunState
    from wizard.runner.service import RunError

    if ctx.read_only:
        raise CommandError("error: --from names a recorded machine; nothing can be rolled back", exit_codes.USAGE)
    service = ctx.runs
    try:
        service.ensure_unlocked()
        run_, rb = service.rollback_plan()
        state = run_.view().state
        if state is RunState.ROLLED_BACK:
            print(f"run {run_.id} is already rolled back")
            return exit_codes.OK
        for c in rb.cannot:
            print(f"cannot restore: {c}")
        if not rb.actions:
            print("nothing to undo: no step of the run changed anything a rollback restores; the run is closed as "
                  "rolled back")
        for why, a in rb.actions:
            print(f"will: {why}: {a.shown()}")
        if not args.yes and not ask("Roll back now?"):
            print("nothing was changed")
            return exit_codes.OK
        view = ConsoleView(verbose=bool(getattr(args, "verbose", False)), cli=ctx.runs.machine.cli)
        out = service.rollback(run_id=run_.id, on_event=view, yes=bool(args.yes))
    except RunError as exc:
        raise run_error(exc) from None
    print(out.message)
    if out.state is RunState.ROLLED_BACK and rb.cannot:
        return exit_codes.FAILURE
    return exit_code_for(out.state)
