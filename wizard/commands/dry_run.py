"""`rocm-wizard --plan NAME|FILE --dry-run`: print the resolved plan as a bash script; change nothing.

Exit 0 with the script on stdout; 5 when the plan is refused for this machine (each reason on its
own stderr line); 2 for an unknown plan or a malformed plan file (one line: file, key, problem).
"""

from __future__ import annotations

import argparse
import sys

from wizard import exit_codes
from wizard.commands import Context, resolve_plan_or_fail


def add_arguments(parser: argparse.ArgumentParser) -> None:  # top-level options only (wizard/cli.py)
    return None


def run(args: argparse.Namespace, ctx: Context) -> int:
    # the state dir as the machine sees it: the script shows the same paths a real run uses
    plan = resolve_plan_or_fail(args.plan, ctx)
    sys.stdout.write(ctx.script(plan))
    sys.stdout.flush()
    return exit_codes.OK
