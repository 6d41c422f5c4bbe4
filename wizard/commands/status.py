"""`rocm-wizard status [--json]`: where the current (or last) run stands.

JSON: {"run_id", "plan", "step", "total_steps", "state", "journal", "plan_file", "logs", "next"};
``step`` is 1-based (the step running, failed or next), null when none.
"""

from __future__ import annotations

import argparse
import json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output")


NEXT = {
    "done": "nothing: the run finished",
    "rolled-back": "nothing: the run was rolled back",
    "reboot-pending": "reboot, then `rocm-wizard resume` continues (automatic after boot when started with --yes)",
    "failed": "`rocm-wizard resume` retries the failed action, `rocm-wizard rollback` undoes the run",
    "interrupted": "`rocm-wizard resume` continues where the run was interrupted",
    "stopped": "`rocm-wizard resume` continues, `rocm-wizard rollback` undoes the run",
    "not-started": "`rocm-wizard resume` starts it",
}


def status_dict(ctx) -> dict:
    from wizard.runner import cli_support as cs
    from wizard.runner import runs

    state, logs, _ = cs.state_roots(ctx)
    run_ = runs.current(state, logs)
    if run_ is None:
        return {"run_id": None, "plan": None, "step": None, "total_steps": 0, "state": "none", "journal": None,
                "plan_file": None, "logs": [], "next": "no run yet: `rocm-wizard plans` lists what can run"}
    v = run_.view()
    step = None
    if v.state == "failed" and v.last_failure:
        step = v.last_failure.get("step")
    elif v.state == "reboot-pending" and v.reboot_step is not None:
        step = v.reboot_step
    elif not v.finished:
        step = v.next_step
    log_files = sorted(str(p) for p in run_.logs.glob("*.log")) if run_.logs.is_dir() else []
    return {
        "run_id": run_.id, "plan": v.plan, "step": None if step is None else step + 1, "total_steps": v.total_steps,
        "state": v.state, "journal": str(run_.journal.path), "plan_file": str(run_.plan_path), "logs": log_files,
        "next": NEXT.get(v.state, "`rocm-wizard resume`"),
        "skipped": {str(k + 1): r for k, r in v.skipped_steps.items()},
    }


def run(args: argparse.Namespace, ctx) -> int:
    d = status_dict(ctx)
    if args.json:
        print(json.dumps(d, indent=1))
        return 0
    if d["run_id"] is None:
        print(d["next"])
        return 0
    step = f"step {d['step']} of {d['total_steps']}" if d["step"] else f"{d['total_steps']} steps"
    print(f"run {d['run_id']}: plan {d['plan']}, {step}, state {d['state']}")
    print(f"journal: {d['journal']}\nplan file: {d['plan_file']}")
    for p in d["logs"]:
        print(f"log: {p}")
    for k, r in d["skipped"].items():
        print(f"step {k} skipped (not passed): {r}")
    print(f"next: {d['next']}")
    return 0
