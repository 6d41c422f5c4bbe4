"""`rocm-wizard --plan NAME|FILE --export ansible DIR`: write the resolved plan as an Ansible playbook and
role (wizard.fleet.export); change nothing on the machine. Works from live facts, --from or --sandbox.

Exit 0 with the playbook's path on stdout; 5 refused (each reason on its own stderr line); 2 for an
unknown plan, a malformed plan file, an unknown export format or a DIR that is not an earlier export.
"""

from __future__ import annotations

import argparse

from wizard import exit_codes
from wizard.commands import Context, resolve_plan_or_fail, usage_error

FORMATS = ("ansible",)


def add_arguments(parser: argparse.ArgumentParser) -> None:  # top-level options only (wizard/cli.py)
    return None


def run(args: argparse.Namespace, ctx: Context) -> int:
    fmt, out_dir = args.export
    if fmt not in FORMATS:
        raise usage_error(f"--export {fmt}: unknown format (formats: {', '.join(FORMATS)})")
    plan = resolve_plan_or_fail(args.plan, ctx)
    print(ctx.export_ansible(plan, out_dir))
    return exit_codes.OK
