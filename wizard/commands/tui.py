"""`rocm-wizard` with no sub-command: the Textual wizard. Textual is imported only inside ``run``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:  # not a sub-command; kept for symmetry
    return None


def relaunch_hint(ctx: Any) -> str:
    if ctx.sandbox:
        return f"rocm-wizard --sandbox {ctx.sandbox}"
    if ctx.state_dir:
        return f"rocm-wizard --state-dir {ctx.state_dir}"
    return "rocm-wizard"


def run(args: argparse.Namespace, ctx: Any) -> int:
    from wizard.commands import CommandError
    from wizard import exit_codes

    if not sys.stdin.isatty() or not sys.stdout.isatty():
        raise CommandError("the interactive wizard needs a terminal; for scripts use "
                           "`rocm-wizard --plan NAME --yes` or `--dry-run`", exit_codes.USAGE)
    from wizard.tui.app import make_app
    from wizard.tui.services import Services

    host = ctx.host
    runs = None if ctx.read_only else ctx.runs
    services = Services(
        host=host, read_only=ctx.read_only, pythons=tuple(ctx.pythons), runs=runs,
        verify_python=ctx.verify_python, state_dir=ctx.plan_state_dir, relaunch_hint=relaunch_hint(ctx),
        facts=ctx.facts, venv=ctx.venv, machine_args=("--sandbox", ctx.sandbox) if ctx.sandbox else (),
        wizard_python=runs.machine.wizard_python if runs is not None else None, user_state_dir=ctx.user_state_dir,
        channel=ctx.channel, mirrors=ctx.site_mirrors,
    )
    if ctx.state_dir:
        services.rehearsal_root = Path(ctx.state_dir).absolute() / "rehearsal"
    app = make_app(services)
    code = app.run()
    return int(code if code is not None else (app.return_code or 0))
