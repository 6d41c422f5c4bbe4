"""`rocm-wizard --plan NAME|FILE [--yes]`: run a plan for real (or in a --sandbox).

Without --yes it shows the plan and asks once before the first change. FILE may be a plan .toml
or a resolved-plan .json written by an earlier run (runs/<id>/plan.json), which replays exactly.
Exit codes: 0 done, 1 failed, 2 unknown/malformed plan, 3 reboot pending, 4 locked, 5 refused.
"""

from __future__ import annotations

import argparse

from wizard import exit_codes
from wizard.commands import CommandError, hold_run_lock, resolve_plan_or_fail


def add_arguments(parser: argparse.ArgumentParser) -> None:  # top-level options only (wizard/cli.py)
    return None


def run(args: argparse.Namespace, ctx) -> int:
    from wizard.runner import cli_support as cs
    from wizard.runner import planfile, runs
    from wizard.runner.engine import Engine
    from wizard.runner.privilege import PrivilegeError

    if ctx.read_only:
        raise CommandError("error: --from names a recorded machine: it can be planned for (--dry-run), "
                           "never changed", exit_codes.USAGE)
    state, logs, machine_state = cs.state_roots(ctx)
    if planfile.is_plan_file(args.plan):
        try:
            plan = planfile.load(args.plan)
        except planfile.PlanFileError as exc:
            raise CommandError(str(exc), exit_codes.USAGE) from None
    else:
        plan = resolve_plan_or_fail(args.plan, ctx.facts, machine_state)
    lock = hold_run_lock(state)
    try:
        prev = runs.current(state, logs)
        if prev is not None:
            v = prev.view()
            if v.state in ("interrupted", "reboot-pending", "failed", "running"):
                raise CommandError(f"run {prev.id} ({v.plan}) is {v.state}: `rocm-wizard resume` continues it, "
                                   "`rocm-wizard rollback` undoes it", exit_codes.FAILURE)
        priv = cs.privilege(ctx)
        actions = [a for s in plan.steps for a in s.actions]
        if not args.yes:
            n = sum(1 for s in plan.steps if s.skipped_reason is None)
            print(f"{plan.title}: {n} steps, {len(actions)} commands (see them with --dry-run).")
            if not cs.ask("Start now? This changes the machine" + (" (sandbox)" if cs.is_sandbox(ctx) else "")):
                print("nothing was changed")
                return exit_codes.OK
        with cs.root_rights(priv, actions, ctx, yes=bool(args.yes)):
            run_ = runs.create(state, logs, plan)
            engine = Engine(ctx.host, plan, run_, privilege=priv, on_event=cs.ConsoleView(), yes=bool(args.yes),
                            verify_python=getattr(args, "verify_python", None), resume_command=cs.resume_command(ctx),
                            ask_reboot=None if args.yes else (lambda: cs.ask("Reboot now?", default=False)))
            out = engine.execute(mode="start")
        print(f"replayable plan: {run_.plan_path}")
        return cs.exit_code_for(out.state)
    finally:
        lock.release()
