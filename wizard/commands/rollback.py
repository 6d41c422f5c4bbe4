"""`rocm-wizard rollback [--yes]`: restore what the current run's backup allows.

Lists what it cannot restore before it starts; without --yes it asks once.
"""

from __future__ import annotations

import argparse

from wizard import exit_codes
from wizard.commands import CommandError, hold_run_lock


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--yes", action="store_true", help="unattended: no questions")


def run(args: argparse.Namespace, ctx) -> int:
    from wizard.runner import cli_support as cs
    from wizard.runner import runs
    from wizard.runner.engine import Engine
    from wizard.runner.rollback import build, execute

    if ctx.read_only:
        raise CommandError("error: --from names a recorded machine; nothing can be rolled back", exit_codes.USAGE)
    state, logs, _ = cs.state_roots(ctx)
    lock = hold_run_lock(state)
    try:
        run_ = runs.current(state, logs)
        if run_ is None:
            raise CommandError(f"no run to roll back (state dir {state})", exit_codes.FAILURE)
        view = run_.view()
        if view.state == "rolled-back":
            print(f"run {run_.id} is already rolled back")
            return exit_codes.OK
        plan = run_.plan()
        rb = build(ctx.host, plan, view)
        for c in rb.cannot:
            print(f"cannot restore: {c}")
        if not rb.actions:
            print("nothing to restore")
            return exit_codes.OK if not rb.cannot else exit_codes.FAILURE
        for why, a in rb.actions:
            print(f"will: {why}: {a.shown()}")
        if not args.yes and not cs.ask("Roll back now?"):
            print("nothing was changed")
            return exit_codes.OK
        priv = cs.privilege(ctx)
        with cs.root_rights(priv, [a for _, a in rb.actions], ctx, yes=bool(args.yes)):
            engine = Engine(ctx.host, plan, run_, privilege=priv, on_event=cs.ConsoleView(), yes=bool(args.yes))
            out = execute(engine, run_, rb)
        print(out.message)
        return exit_codes.OK if out.state == "rolled-back" and not rb.cannot else exit_codes.FAILURE
    finally:
        lock.release()
