"""`rocm-wizard status [--json]`: where the current (or last) run stands.

JSON: {"run_id", "plan", "step", "total_steps", "state", "journal", "plan_file", "logs", "next",
"skipped", "reboot_needed", "message", "verify", "drift"}; ``step`` is 1-based (the step running, failed or next),
null when none; ``skipped`` maps a 1-based step to why it was skipped (never counted as passed);
``verify`` is {"state": "passed"|"failed"|"skipped"|"not run"|"no verify step", "summary"} from the verify
step's log; ``drift`` maps a 1-based step the journal records as done to the check that fails on the machine
now (``resume`` runs it again).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from wizard.commands import Context, run_error


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def status_dict(ctx: Context) -> dict[str, Any]:
    from wizard.runner.service import RunError

    try:
        st = ctx.runs.status()
    except RunError as exc:
        raise run_error(exc) from None
    return {"run_id": st.run_id, "plan": st.plan, "step": st.step, "total_steps": st.total_steps,
            "state": st.state.value, "journal": st.journal, "plan_file": st.plan_file, "logs": list(st.logs),
            "next": st.next, "skipped": {str(k): r for k, r in st.skipped}, "reboot_needed": st.reboot_needed,
            "message": st.message, "verify": verify_result(st.plan_file, st.logs, dict(st.skipped)),
            "drift": {str(k): c for k, c in st.drift}}


def verify_result(plan_file: str | None, logs: tuple[str, ...], skipped: dict[int, str]) -> dict[str, str | None]:
    """What the run's verify step said: its summary line from its log, or why it did not run."""
    from wizard.verify.view import summary_from_log
    from wizard.runner import planfile

    index = None
    if plan_file:
        try:
            plan = planfile.load(plan_file)
        except (planfile.PlanFileError, OSError):
            plan = None
        if plan is not None:
            index = next((i + 1 for i, s in enumerate(plan.steps) if s.kind == "verify"), None)
    if index is None:
        return {"state": "no verify step", "summary": None}
    if index in skipped:
        return {"state": "skipped", "summary": f"verify: skipped, NOT verified: {skipped[index]}"}
    log = next((p for p in logs if p.endswith(f"/{index:02d}-verify.log")), None)
    summary = summary_from_log(log) if log else None
    if summary is None:
        return {"state": "not run", "summary": None}
    return {"state": "passed" if summary.startswith("verify: OK") else "failed", "summary": summary}


def run(args: argparse.Namespace, ctx: Context) -> int:
    d = status_dict(ctx)
    if args.json:
        print(json.dumps(d, indent=1))
        return 0
    if d["run_id"] is None:
        print(d["next"])
        return 0
    step = f"step {d['step']} of {d['total_steps']}" if d["step"] else f"{d['total_steps']} steps"
    n_skip = len(d["skipped"])
    if d["state"] == "done":
        step += f": {d['total_steps'] - n_skip} done, {n_skip} skipped"
    elif n_skip:
        step += f", {n_skip} skipped"
    print(f"run {d['run_id']}: plan {d['plan']}, {step}, state {d['state']}")
    if d["message"]:
        print(f"last: {d['message']}")
    print(f"journal: {d['journal']}\nplan file: {d['plan_file']}")
    for p in d["logs"]:
        print(f"log: {p}")
    for k, r in d["skipped"].items():
        print(f"step {k} skipped (not passed): {r}")
    for k, c in d["drift"].items():
        print(f"step {k} DRIFT: recorded as done, but the machine says otherwise (checked: {c}: no)")
    v = d["verify"]
    if v["state"] == "skipped":
        print("verify: skipped, NOT verified (the skipped step above)")
    elif v["state"] != "no verify step":
        print(v["summary"] or f"verify: {v['state']}")
    if d["reboot_needed"]:
        print("reboot needed: the kernel driver changed and is loaded only after a reboot")
    print(f"next: {d['next']}")
    return 0
