"""`rocm-wizard resume [--yes]`: continue the current run (after a reboot, a failure or a crash).

Done steps are skipped from the journal; every other action's done-check is re-probed first.
"""

from __future__ import annotations

import argparse

from wizard import exit_codes
from wizard.commands import CommandError, Context, run_error


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--yes", action="store_true", help="unattended: no questions")
    parser.add_argument("--verify-python", metavar="PATH", default=argparse.SUPPRESS,
                        help="in a sandbox, run verify with this CPU torch")
    parser.add_argument("--skip-preflight", metavar="NAME", action="append", default=argparse.SUPPRESS,
                        help="skip this preflight check (repeatable; journalled)")


def run(args: argparse.Namespace, ctx: Context) -> int:
    from wizard.commands.console import ConsoleView, ask, exit_code_for
    from wizard.runner.service import RunError

    if ctx.read_only:
        raise CommandError("error: --from names a recorded machine; nothing can be resumed there", exit_codes.USAGE)
    try:
        view = ConsoleView(verbose=bool(getattr(args, "verbose", False)), cli=ctx.runs.machine.cli)
        out = ctx.runs.resume(on_event=view, yes=bool(args.yes),
                              skip_preflight=tuple(getattr(args, "skip_preflight", None) or ()),
                              ask_reboot=None if args.yes else (lambda: ask("Reboot now?", default=False)))
    except RunError as exc:
        raise run_error(exc) from None
    if out.state.finished and not out.failure and "already" in out.message:
        print(out.message)
    return exit_code_for(out.state)
