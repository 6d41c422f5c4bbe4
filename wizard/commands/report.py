"""rocm-wizard report --bundle OUT: this machine's evidence, redacted, for a bug report."""

from __future__ import annotations

import argparse
import shlex

from wizard import exit_codes
from wizard.commands import Context


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bundle", metavar="OUT", required=True,
                   help="write the evidence to OUT (a directory, or a .tar.gz when OUT ends so)")


def run(args: argparse.Namespace, ctx: Context) -> int:
    print(ctx.write_bundle(args.bundle))
    print(f"Check it with: rocm-wizard detect --from {shlex.quote(args.bundle)}")
    return exit_codes.OK
