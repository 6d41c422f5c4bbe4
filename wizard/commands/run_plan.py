"""`rocm-wizard --plan NAME|FILE [--yes]`: run a plan for real (or in a --sandbox).

Without --yes it shows the plan and asks once before the first change. FILE may be a plan .toml
or a resolved-plan .json written by an earlier run (runs/<id>/plan.json), which replays exactly.
Step 1 is the preflight: a failed check stops the run before anything changes (exit 1).
Exit codes: 0 done, 1 failed, 2 unknown/malformed plan, 3 reboot pending, 4 locked, 5 refused.
"""

from __future__ import annotations

import argparse
import sys

from wizard import exit_codes
from wizard.commands import CommandError, Context, resolve_plan_or_fail, run_error


def add_arguments(parser: argparse.ArgumentParser) -> None:  # top-level options only (wizard/cli.py)
    return None


def run(args: argparse.Namespace, ctx: Context) -> int:
    from wizard.commands.console import ConsoleView, ask, exit_code_for
    from wizard.runner.service import RunError

    if ctx.read_only:
        raise CommandError("error: --from names a recorded machine: it can be planned for (--dry-run), "
                           "never changed", exit_codes.USAGE)
    plan = resolve_plan_or_fail(args.plan, ctx)
    if str(dict(plan.target).get("channel", "")).startswith("nightly"):
        print("warning: this plan installs AMD's nightly builds: they are not releases and may be broken or "
              "withdrawn (the constraints file pins what gets installed)", file=sys.stderr)
    service = ctx.runs
    skips = tuple(getattr(args, "skip_preflight", None) or ())
    try:
        service.check_skips(plan, skips)
        blocked = service.blocked()
        if blocked:
            raise CommandError(blocked, exit_codes.LOCKED if service.running_elsewhere() else exit_codes.FAILURE)
        if not args.yes:
            print(f"{plan.title}: {plan.size} (see them with --dry-run).")
            from wizard.planner import venv_roles

            for line in venv_roles(plan, ctx.facts).lines():
                print(f"It {line}.")
            from wizard.downloads.pin import review_lines

            for line in review_lines(plan):
                print(f"It {line}." if line.startswith("downloads") else f"Note: {line}.")
            if not ask("Start now? This changes the machine" + (" (sandbox)" if ctx.sandbox else "")):
                print("nothing was changed")
                return exit_codes.OK
        view = ConsoleView(verbose=bool(getattr(args, "verbose", False)), cli=ctx.runs.machine.cli)
        out = service.start(plan, on_event=view, yes=bool(args.yes), skip_preflight=skips,
                            ask_reboot=None if args.yes else (lambda: ask("Reboot now?", default=False)))
    except RunError as exc:
        raise run_error(exc) from None
    run = service.current()
    if run is not None:
        print(f"replayable plan: {run.plan_path}")
    return exit_code_for(out.state)
