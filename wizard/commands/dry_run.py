"""`rocm-wizard --plan NAME|FILE --dry-run`: print the resolved plan as a bash script; change nothing.

Exit 0 with the script on stdout; 5 when the plan is refused for this machine (each reason on its
own stderr line); 2 for an unknown plan or a malformed plan file (one line: file, key, problem).
"""

from __future__ import annotations

import argparse
import sys

from wizard import exit_codes
from wizard.commands import CommandError


def add_arguments(parser: argparse.ArgumentParser) -> None:  # top-level options only (wizard/cli.py)
    return None


def run(args: argparse.Namespace, ctx) -> int:
    from wizard.planner import PlanError, PlanRefused, resolve_plan
    from wizard.script import render

    state_dir = ctx.state_dir
    try:  # the state dir as the machine sees it: the same paths the runner's run would use
        from wizard.runner.cli_support import state_roots

        state_dir = state_roots(ctx)[2]
    except ImportError:
        pass
    try:
        plan = resolve_plan(args.plan, ctx.facts, state_dir=state_dir)
    except PlanError as exc:
        raise CommandError(exc.message, exit_codes.USAGE) from None
    except PlanRefused as exc:
        for reason in exc.reasons:
            print(f"rocm-wizard: refused: {reason}", file=sys.stderr)
        return exit_codes.REFUSED
    sys.stdout.write(render(plan, ctx.facts))
    sys.stdout.flush()
    return exit_codes.OK
