"""`rocm-wizard abandon [--yes]`: forget an unfinished run so that a new plan can start.

Nothing on the machine changes: what the run did stays done (use `rollback` to undo it instead). The
journal records the abandonment; its logs and backup stay where they are.
"""

from __future__ import annotations

import argparse

from wizard import exit_codes
from wizard.commands import CommandError, Context, run_error


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--yes", action="store_true", help="no question")


def run(args: argparse.Namespace, ctx: Context) -> int:
    from wizard.commands.console import ask
    from wizard.runner.service import RunError

    if ctx.read_only:
        raise CommandError("error: --from names a recorded machine; it has no runs", exit_codes.USAGE)
    service = ctx.runs
    try:
        service.ensure_unlocked()
        st = service.status()
        if st.run_id is None or st.state.finished:
            print(f"no unfinished run: {st.next}")
            return exit_codes.OK
        print(f"run {st.run_id} ({st.plan}) is {st.state.value}; abandoning it changes nothing on the machine "
              "(`rocm-wizard rollback` undoes a run instead)")
        if not args.yes and not ask("Abandon it?"):
            print("nothing was changed")
            return exit_codes.OK
        print(service.abandon(st.run_id))
    except RunError as exc:
        raise run_error(exc) from None
    return exit_codes.OK
