"""`rocm-wizard fleet detect|plan|run|verify|rollback -i INVENTORY`: many machines through Ansible (wizard.fleet).

Needs Ansible (`pip install 'rocm-wizard[fleet]'`); without it: one line, exit 1. Every host's
facts, exports, results and the report go to the fleet directory (`--fleet-dir`, default
`<state>/fleet`). Exit codes: 0 every host answered (plan: the plan fits at least one host; run and
verify: every host finished and passed; detect --reference: besides, no host drifts from the reference), 1 some
host failed, could not be read or drifts, 2 bad usage, an unreadable inventory or reference, 5 the plan fits no
host. `fleet report` reads the history kept in the results directory (`--results`, default the fleet
directory): exit 0, or 1 when nothing is recorded. `fleet rollback`: 0 every host's run is rolled back, 1 a host
failed, could not be reached or could not restore everything. `fleet facts` and `fleet engine` are the host side:
this machine's facts as the controller reads them, and the plan run by this machine's wizard (fleet run --engine).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from wizard import exit_codes
from wizard.commands.options import whole_number


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="fleet_command", metavar="ACTION", required=True, parser_class=type(p))

    def dirs(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--fleet-dir", metavar="DIR", help="where facts, exports, results and the report go "
                                                            "(default: <state>/fleet)")
        sp.add_argument("--results", metavar="DIR", help="where report.json, report.html, junit.xml, each host's "
                                                         "verify.json and the history go (default: the fleet directory)")
        sp.add_argument("--json", action="store_true", help="print the table as JSON")

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("-i", "--inventory", required=True, metavar="INVENTORY", help="an Ansible inventory")
        sp.add_argument("--limit", metavar="PATTERN", help="only these hosts (Ansible's --limit)")
        dirs(sp)
        sp.add_argument("--progress", action="store_true",
                        help="one line per host and task on stderr (the wizard's stdout callback instead of yours)")

    def batches(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--serial", type=serial_batches, metavar="N|LIST",
                        help="hosts per batch (Ansible's serial): a number, or batches such as 1,10%%,100%% "
                             "(default: 1,10%%,100%%, a canary first)")
        sp.add_argument("--max-fail", type=whole_number("percentage", 0, 100), metavar="PCT",
                        help="stop when more than PCT %% of a batch fail (default 0: the first failure stops "
                             "the hosts after it)")

    d = sub.add_parser("detect", help="every host's GPUs, driver, ROCm, torch and findings; which are alike")
    common(d)
    d.add_argument("--reference", metavar="HOST|FACTS.json",
                   help="list per host how its stack differs from this host's or facts file's "
                        "(exit 1 when any host drifts)")
    pl = sub.add_parser("plan", help="resolve a plan per host, group the hosts with the same actions, list refusals")
    pl.add_argument("plan", metavar="NAME|FILE")
    common(pl)
    pl.add_argument("--export", nargs=2, metavar=("FORMAT", "DIR"), help="write the groups as an Ansible playbook")
    pl.add_argument("--redetect", action="store_true",
                    help="detect every host again instead of reusing the facts of the last fleet detect")
    r = sub.add_parser("run", help="run a plan on every host it fits through ansible-playbook")
    r.add_argument("plan", metavar="NAME|FILE")
    common(r)
    batches(r)
    r.add_argument("--replan", action="store_true", help="detect and resolve again instead of continuing the saved run")
    r.add_argument("--engine", action="store_true",
                   help="install this wizard on every host (/opt/rocm-wizard/venv) and run the plan with its engine "
                        "there: journal, lock, preflight and rollback local to each host")
    rb = sub.add_parser("rollback", help="roll back each host's wizard run (rocm-wizard rollback on every host, "
                                         "canary first)")
    common(rb)
    batches(rb)
    v = sub.add_parser("verify", help="run only the verification suite on every host")
    common(v)
    rp = sub.add_parser("report", help="the runs kept in the results directory; which hosts changed stack since the last")
    dirs(rp)
    c = sub.add_parser("collection", help="build the Galaxy collection rocm_wizard.fleet (the role, the callbacks) "
                                          "into DIR with ansible-galaxy")
    c.add_argument("dir", metavar="DIR", help="where the tarball goes (made if missing)")
    c.add_argument("--repository", metavar="URL", help="the repository URL galaxy.yml names (Galaxy wants one to publish)")
    sub.add_parser("facts")  # internal (no help: argparse lists only subcommands given one)
    e = sub.add_parser("engine")  # the host side of fleet run --engine; internal: no help, so not listed
    e.add_argument("plan_file", metavar="PLAN.json")
    e.add_argument("--decide", action="store_true",
                   help="only say what the run would do ({\"move\": \"start\"|\"resume\"|\"none\"}): changes nothing")
    e.add_argument("--user", default="", metavar="USER",
                   help="the GPU user the plan's user actions run as (empty: the owner of the plan's venv; never "
                        "SUDO_USER, which Ansible's become sets to the account it connects as)")
    e.add_argument("--unavailable", default="{}", metavar="JSON",
                   help="what this host cannot provide, {requirement: reason} (the controller's "
                        "rocm_wizard_unavailable): the steps needing it are skipped and reported so")


def serial_batches(text: str) -> int | list[int | str]:
    """``--serial``: ``N`` (hosts per batch), or a comma-separated list of batch sizes, each ``N`` or ``P%``."""
    items: list[int | str] = []
    for part in text.split(","):
        p = part.strip()
        number = p[:-1] if p.endswith("%") else p
        if not number.isdigit() or int(number) < 1 or (p.endswith("%") and int(number) > 100):
            raise argparse.ArgumentTypeError(f"not a batch size (N, or P% from 1% to 100%): {part!r}")
        items.append(f"{int(number)}%" if p.endswith("%") else int(number))
    return items[0] if len(items) == 1 and isinstance(items[0], int) else items


def run(args: argparse.Namespace, ctx) -> int:  # type: ignore[no-untyped-def]
    from wizard.commands import CommandError
    from wizard.fleet import FleetError

    if args.fleet_command == "facts":
        from wizard.fleet.facts_io import dumps

        sys.stdout.write(dumps(ctx.facts) + "\n")
        return exit_codes.OK
    if args.fleet_command == "collection":
        from wizard.fleet.collection import build

        try:
            print(build(args.dir, repository=args.repository))
        except FleetError as exc:
            raise CommandError(f"error: {exc}", exit_codes.FAILURE) from None
        return exit_codes.OK
    if args.fleet_command == "engine":
        return _engine_here(args, ctx)
    fleet_dir = _fleet_dir(args)
    try:
        _private(fleet_dir)
        if args.fleet_command == "detect":
            return _detect(args, fleet_dir)
        if args.fleet_command == "plan":
            return _plan(args, fleet_dir)
        if args.fleet_command == "run":
            return _run(args, fleet_dir)
        if args.fleet_command == "rollback":
            return _rollback(args, fleet_dir)
        if args.fleet_command == "report":
            return _report(args, fleet_dir)
        return _verify(args, fleet_dir)
    except FleetError as exc:
        lines = str(exc).splitlines()
        code = exit_codes.REFUSED if "applies to no host" in lines[0] else (
            exit_codes.USAGE if "inventory" in lines[0] else exit_codes.FAILURE)
        raise CommandError("\n".join(lines), code) from None


def _private(fleet_dir: Path) -> None:
    """The fleet directory is 0700: it holds every host's facts (users, paths, overrides), Ansible's events and the
    exports, which may carry mirror credentials (the files in it are written by Ansible, under the hosts' umask)."""
    from wizard.fleet import FleetError

    try:
        fleet_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(fleet_dir, 0o700)
    except OSError as exc:
        raise FleetError(f"{fleet_dir}: cannot make the fleet directory private ({exc.strerror or exc})") from None


def _fleet_dir(args: argparse.Namespace) -> Path:
    if args.fleet_dir:
        return Path(args.fleet_dir).expanduser().absolute()
    from wizard import paths

    return paths.state_dir(getattr(args, "state_dir", None)) / "fleet"


def _results(args: argparse.Namespace, fleet_dir: Path) -> Path:
    return Path(args.results).expanduser().absolute() if args.results else fleet_dir


def _print_table(title: str, columns: Sequence[str], cells: Sequence[Sequence[str]]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table()
    for c in columns:
        t.add_column(c)
    for row in cells:
        t.add_row(*row)
    console = Console(width=200)
    console.print(title, soft_wrap=True, markup=False, highlight=False)  # whole, however long its paths (a table
    console.print(t)  # title wraps at the table's width)


def _detect(args: argparse.Namespace, fleet_dir: Path) -> int:
    from wizard.commands import CommandError
    from wizard.fleet import drift, history
    from wizard.fleet.detect import detect
    from wizard.fleet.summary import COLUMNS, rows, table_lines

    if args.reference is not None and Path(args.reference).expanduser().is_file():
        try:  # a bad facts file is refused before any host is asked
            drift.reference_stack(args.reference, [])
        except drift.ReferenceError as exc:
            raise CommandError(f"error: {exc}", exit_codes.USAGE) from None
    hosts = detect(args.inventory, fleet_dir, limit=args.limit, progress=args.progress)
    rs = rows(hosts)
    doc: dict[str, Any] = {"fleet_dir": str(fleet_dir), "hosts": rs}
    drifts: list[drift.HostDrift] = []
    if args.reference is not None:
        try:
            name, ref, drifts = drift.drift(args.reference, hosts)
        except drift.ReferenceError as exc:
            raise CommandError(f"error: {exc}", exit_codes.USAGE) from None
        doc["drift"] = drift.to_json(name, ref, drifts)
    if args.json:
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_table(f"fleet: {len(hosts)} hosts ({fleet_dir})", COLUMNS, table_lines(rs))
        if args.reference is not None:
            _print_table(f"drift against {doc['drift']['reference']['source']}", drift.COLUMNS,
                         drift.table_lines(drifts))
    history.add(_results(args, fleet_dir), "detect", rs, history.stacks_of(hosts))
    read = all(h.facts is not None for h in hosts)
    return exit_codes.OK if read and not any(d.status == "drift" for d in drifts) else exit_codes.FAILURE


def _plan(args: argparse.Namespace, fleet_dir: Path) -> int:
    from wizard.commands import CommandError, usage_error
    from wizard.fleet.export import ExportError, export
    from wizard.fleet.reuse import known
    from wizard.fleet import realroots
    from wizard.fleet.plan import PlanError, plan_fleet

    if args.export and args.export[0] != "ansible":
        raise usage_error(f"--export {args.export[0]}: unknown format (formats: ansible)")
    found = known(args.inventory, fleet_dir, limit=args.limit, redetect=args.redetect, progress=args.progress)
    for note in found.notes():
        print(note, file=sys.stderr)
    hosts = list(found.hosts)
    try:
        fp = plan_fleet(args.plan, hosts, realroots.mirrors(realroots.hosts(args.inventory, args.limit, fleet_dir)))
    except PlanError as exc:
        raise CommandError(exc.message, exit_codes.USAGE) from None
    doc: dict[str, Any] = {
        "plan": fp.name,
        "groups": [{"group": i, "hosts": list(g.hosts), "title": g.plan.title,
                    "steps": [s.kind for s in g.plan.steps if not s.skipped_reason],
                    "actions": sum(len(s.actions) for s in g.plan.steps)} for i, g in enumerate(fp.groups, 1)],
        "refused": [{"host": h, "reasons": list(r)} for h, r in fp.refused],
        "unknown": [{"host": h.host, "status": h.status, "reason": h.reason} for h in fp.unknown],
    }
    if args.export and fp.groups:
        try:
            doc["export"] = str(export(fp.groups, args.export[1]))
        except ExportError as exc:
            raise CommandError(f"error: {exc}", exit_codes.USAGE) from None
    if args.json:
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        cells = [[f"group {g['group']}", ", ".join(g["hosts"]), f"{len(g['steps'])} steps, {g['actions']} commands: "
                  + " > ".join(g["steps"])] for g in doc["groups"]]
        cells += [["refused", r["host"], "; ".join(r["reasons"])] for r in doc["refused"]]
        cells += [[u["status"], u["host"], u["reason"]] for u in doc["unknown"]]
        _print_table(f"plan {fp.name} on {len(hosts)} hosts", ("group", "hosts", "plan"), cells)
        if "export" in doc:
            print(f"playbook: {doc['export']}")
    if not fp.groups:
        return exit_codes.REFUSED
    return exit_codes.OK if not fp.unknown else exit_codes.FAILURE


def _run(args: argparse.Namespace, fleet_dir: Path) -> int:
    from wizard.fleet import engine, report
    from wizard.fleet.run import all_ok, fleet_run

    rows = (engine.fleet_run if args.engine else fleet_run)(
        args.plan, args.inventory, fleet_dir, limit=args.limit, serial=args.serial, max_fail=args.max_fail,
        replan=args.replan, progress=args.progress,
        results=args.results and _results(args, fleet_dir) / ("hosts" if args.engine else "verify"))
    j, h = report.write(_results(args, fleet_dir), "run", rows, fleet_dir=fleet_dir,
                        plan=rows[0]["plan"] if rows else args.plan)
    _show(args, rows, j, h, ("host", "plan", "steps done", "reboot", "verify", "failed", "what to do"),
          lambda r: [r["host"], r["plan"], f"{r['steps_done']}/{r['steps']}" if not r.get("refused") else "refused",
                     r["reboot"], _verify_cell(r["verify"]), _failed_cell(r), r.get("next") or ""])
    return exit_codes.OK if all_ok(rows) else exit_codes.FAILURE


def _rollback(args: argparse.Namespace, fleet_dir: Path) -> int:
    from wizard.fleet import report
    from wizard.fleet.engine import all_rolled_back, fleet_rollback

    rows = fleet_rollback(args.inventory, fleet_dir, limit=args.limit, serial=args.serial, max_fail=args.max_fail,
                          progress=args.progress, results=args.results and _results(args, fleet_dir) / "rollback")
    j, h = report.write(_results(args, fleet_dir), "rollback", rows, fleet_dir=fleet_dir)
    _show(args, rows, j, h, ("host", "plan", "run", "state", "cannot restore", "failed", "what to do"),
          lambda r: [r["host"], r.get("plan") or "", r.get("run_id") or "", r.get("state") or "",
                     "; ".join(r["cannot"]), _failed_cell(r), r.get("next") or ""])
    return exit_codes.OK if all_rolled_back(rows) else exit_codes.FAILURE


def _engine_here(args: argparse.Namespace, ctx) -> int:  # type: ignore[no-untyped-def]
    """The host side of ``fleet run --engine``: this machine's wizard runs (or continues) the resolved plan the
    play copied here; a reboot step stops the run for the caller's reboot. Progress goes to stderr, the run
    report (JSON) to stdout. Exit codes as ``--plan``'s: 0 done, 1 failed, 3 reboot pending, 4 locked, 5 refused."""
    from contextlib import redirect_stdout

    from wizard.commands import CommandError, resolve_plan_or_fail, run_error
    from wizard.commands.console import ConsoleView, exit_code_for
    from wizard.commands.status import status_dict
    from wizard.fleet import host_engine
    from wizard.runner import planfile
    from wizard.runner.records import RunState
    from wizard.runner.service import RunError

    if ctx.read_only:
        raise CommandError("error: --from names a recorded machine; nothing runs there", exit_codes.USAGE)
    if ctx.sandbox and not ctx.verify_python:  # a rehearsal host: the CPU torch its connection gives plays torch
        from wizard.sandbox.executor import SANDBOX_VERIFY_PYTHON

        ctx.verify_python = os.environ.get(SANDBOX_VERIFY_PYTHON) or None
    if not planfile.is_plan_file(args.plan_file):
        raise CommandError(f"error: {args.plan_file}: not a resolved plan file (fleet run --engine copies one)",
                           exit_codes.USAGE)
    declared = _declared(args.unavailable)
    plan = resolve_plan_or_fail(args.plan_file, ctx)
    service = ctx.runs
    decision = host_engine.decide(service, plan)
    if args.decide:
        print(json.dumps({"move": decision.move.value, "run_id": decision.run_id, "state": decision.state.value}))
        return exit_codes.OK
    host_engine.adopt(service.machine.executor, user=args.user or None, unavailable=declared)
    state, message, code = decision.state, "this plan's run is done here: nothing to do", exit_codes.OK
    out = None
    if decision.move is not host_engine.Move.NONE:
        with redirect_stdout(sys.stderr):
            view = ConsoleView(verbose=bool(getattr(args, "verbose", False)), cli=service.machine.cli)
            try:
                if decision.move is host_engine.Move.START:
                    out = service.start(plan, on_event=view, yes=False, ask_reboot=lambda: False)
                else:
                    out = service.resume(run_id=decision.run_id, on_event=view, yes=False, ask_reboot=lambda: False)
            except RunError as exc:
                err = run_error(exc)
                message, code = err.message, err.code
    status = status_dict(ctx)
    if out is not None:
        state, message, code = out.state, out.message, exit_code_for(out.state)
    elif decision.move is not host_engine.Move.NONE:  # refused before it began: the run as it stands
        state = RunState(status["state"])
    print(json.dumps(host_engine.report(decision, out is not None, state, message, service, status)))
    return code


def _declared(text: str) -> dict[str, str]:
    """``--unavailable``: a JSON object of requirement -> reason (strings); anything else is a usage error."""
    from wizard.commands import CommandError

    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or not all(isinstance(k, str) and isinstance(v, str) and v for k, v in doc.items()):
        raise CommandError(f"error: --unavailable: not a JSON object of requirement -> reason: {text[:80]!r}",
                           exit_codes.USAGE)
    return doc


def _verify(args: argparse.Namespace, fleet_dir: Path) -> int:
    from wizard.fleet import report
    from wizard.fleet.run import all_ok, fleet_verify

    rows = fleet_verify(args.inventory, fleet_dir, limit=args.limit, progress=args.progress,
                        results=args.results and _results(args, fleet_dir) / "verify")
    j, h = report.write(_results(args, fleet_dir), "verify", rows, fleet_dir=fleet_dir)
    _show(args, rows, j, h, ("host", "python", "verify", "failed", "what to do"),
          lambda r: [r["host"], r.get("python") or "", _verify_cell(r["verify"]), _failed_cell(r), r.get("next") or ""])
    return exit_codes.OK if all_ok(rows) else exit_codes.FAILURE


def _report(args: argparse.Namespace, fleet_dir: Path) -> int:
    from wizard.commands import CommandError
    from wizard.fleet import history

    results = _results(args, fleet_dir)
    past = history.entries(results)
    if not past:
        raise CommandError(f"error: no fleet runs recorded in {results / history.HISTORY} (fleet detect, run, "
                           "verify and rollback add them)", exit_codes.FAILURE)
    runs, changed = history.runs(past), history.changes(past)
    doc = {"results": str(results), "runs": runs, "changed": changed}
    if args.json:
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return exit_codes.OK
    _print_table(f"fleet runs ({results})", ("written", "command", "plan", "hosts", "passed", "failed", "skipped"),
                 [[r["written"], r["kind"], r["plan"] or "", *(str(r[k]) for k in ("hosts", "passed", "failed", "skipped"))]
                  for r in runs])
    _print_table("stack since the entry before", ("host", "stack", "since", "what changed"),
                 [[c["host"], c["state"], c["since"] or "", "; ".join(f"{d['field']}: {d['before']} -> {d['now']}"
                                                                      for d in c["differences"])]
                  for c in changed])
    return exit_codes.OK


def _show(args: argparse.Namespace, rows: Sequence[dict[str, Any]], j: Path, h: Path, columns: Sequence[str],
          cells: Any) -> None:
    if args.json:
        json.dump({"report": str(j), "html": str(h), "hosts": list(rows)}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    _print_table(f"fleet {args.fleet_command}", columns, [cells(r) for r in rows])
    print(f"report: {j} and {h}")


def _verify_cell(v: dict[str, Any]) -> str:
    if v["status"] == "fail":
        return "fail: " + "; ".join(v.get("findings") or [])[:200]
    if v["status"] == "skipped":
        return "skipped: " + str(v.get("reason") or "")[:200]
    return str(v["status"])


def _failed_cell(r: dict[str, Any]) -> str:
    if r.get("refused"):
        return "; ".join(r["refused"])
    f = r.get("failed")
    return f"{f['status']} at {f['task']}: {f['message']}" if f else ""
