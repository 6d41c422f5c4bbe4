"""`rocm-wizard resume [--yes]`: continue the current run (after a reboot, a failure or a crash).

Done steps are skipped from the journal; every other action's done-check is re-probed first.
"""

from __future__ import annotations

import argparse

from wizard import exit_codes
from wizard.commands import CommandError, hold_run_lock


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--yes", action="store_true", help="unattended: no questions")
    parser.add_argument("--verify-python", metavar="PATH", default=argparse.SUPPRESS,
                        help="in a sandbox, run verify with this CPU torch")


def run(args: argparse.Namespace, ctx) -> int:
    from wizard.runner import cli_support as cs
    from wizard.runner import runs
    from wizard.runner.engine import Engine
    from wizard.runner.privilege import PrivilegeError

    if ctx.read_only:
        raise CommandError("error: --from names a recorded machine; nothing can be resumed there", exit_codes.USAGE)
    state, logs, _ = cs.state_roots(ctx)
    lock = hold_run_lock(state)
    try:
        run_ = runs.current(state, logs)
        if run_ is None:
            raise CommandError(f"no run to resume (state dir {state})", exit_codes.FAILURE)
        view = run_.view()
        if view.finished:
            print(f"run {run_.id} ({view.plan}) is already {view.state}; nothing to resume")
            return exit_codes.OK
        plan = run_.plan()
        priv = cs.privilege(ctx)
        yes = bool(args.yes) or view.yes
        with cs.root_rights(priv, [a for s in plan.steps for a in s.actions], ctx, yes=bool(args.yes)):
            engine = Engine(ctx.host, plan, run_, privilege=priv, on_event=cs.ConsoleView(), yes=yes,
                            verify_python=getattr(args, "verify_python", None),
                            resume_command=cs.resume_command(ctx),
                            ask_reboot=None if args.yes else (lambda: cs.ask("Reboot now?", default=False)))
            out = engine.execute(mode="retry" if view.state == "failed" else "resume")
        return cs.exit_code_for(out.state)
    finally:
        lock.release()
