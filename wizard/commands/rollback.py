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
    import time

    from wizard.runner import cli_support as cs
    from wizard.runner import runs
    from wizard.runner.engine import Engine
    from wizard.runner.privilege import PrivilegeError
    from wizard.runner.rollback import build

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
        if priv.needs_sudo([a for _, a in rb.actions]):
            try:
                priv.authenticate(yes=bool(args.yes), environ=ctx.host.environ)
            except PrivilegeError as exc:
                raise CommandError(str(exc), exit_codes.FAILURE) from None
        engine = Engine(ctx.host, plan, run_, privilege=priv, on_event=cs.ConsoleView(), yes=bool(args.yes))
        j = run_.journal
        j.append("rollback-start", actions=len(rb.actions), cannot=rb.cannot)
        log_path = run_.logs / "rollback.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "ab") as log:
            for n, (why, a) in enumerate(rb.actions):
                log.write(f"=== [{time.strftime('%H:%M:%S')}] {why}: {a.shown()}\n".encode())
                j.append("rollback-action-start", action=n, argv=a.shown())
                res, sink = engine._exec(a, log, -1, n)
                ok = res.exit_code in a.ok_codes and not res.timed_out
                j.append("rollback-action-end", action=n, exit_code=res.exit_code, outcome="ok" if ok else "failed")
                if not ok:
                    j.append("run-end", state="failed", message=f"rollback: {why} failed")
                    print(f"rollback failed at: {why} (exit {res.exit_code}); log: {log_path}")
                    for line in sink.tail:
                        print(f"  | {line}")
                    return exit_codes.FAILURE
        j.append("run-end", state="rolled-back")
        print(f"rolled back run {run_.id}" + (f" ({len(rb.cannot)} item(s) could not be restored)" if rb.cannot else ""))
        return exit_codes.OK if not rb.cannot else exit_codes.FAILURE
    finally:
        lock.release()
