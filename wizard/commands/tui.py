"""`rocm-wizard` with no sub-command: the Textual wizard. Textual is imported only inside ``run``."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wizard.commands import Context


def add_arguments(parser: argparse.ArgumentParser) -> None:  # not a sub-command; kept for symmetry
    return None


def run(args: argparse.Namespace, ctx: Context) -> int:
    from wizard.commands import CommandError
    from wizard import exit_codes

    if not sys.stdin.isatty() or not sys.stdout.isatty():
        raise CommandError("the interactive wizard needs a terminal; for scripts use "
                           "`rocm-wizard --plan NAME --yes` or `--dry-run`", exit_codes.USAGE)
    from wizard.tui.app import make_app
    from wizard.tui.services import Services

    app = make_app(Services(ctx))  # the command line's machine session, as the CLI's commands use it
    code = app.run()
    return int(code if code is not None else (app.return_code or 0))
