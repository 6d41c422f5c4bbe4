"""``fleet run`` and ``fleet verify``: the exported playbook (or the verify suite alone) run by
``ansible-playbook`` on every host, then one row per host: plan, steps done, reboot, verify result
and what to do about a failed host.

A run lives in ``FLEET/runs/PLAN/``: the export (``export/``), ``run.json`` (which hosts resolved to
which group, which were refused) and ``results/HOST/verify.json``. Running the same plan again reuses
that export, as ``rocm-wizard resume`` reuses a run's plan.json: each host continues from its own
progress file (a finished host changes nothing; a host that failed at step K starts at step K).
``--replan`` detects and resolves again (for a new host, or a changed inventory).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Sequence

from wizard import binding, lazy_re
from wizard.fleet import FleetError
from wizard.fleet.ansible_run import Event, PlaybookResult, run_playbook, write_playbook
from wizard.fleet.detect import AS_GPU_USER, CAPTURE, HostFacts, detect, forget
from wizard.fleet.export import BY_EVENTS, MARKER, available, export, unavailable
from wizard.fleet.host_engine import PYTHON as ENGINE_PYTHON
from wizard.fleet.plan import plan_fleet
from wizard.fleet.yaml_text import Template as T, in_template
from wizard.model import NEEDS_GPU
from wizard.record import record

DONE = lazy_re.compile(r"^step (\d+)/(\d+) (\S+): done$", re.I)
REBOOT = lazy_re.compile(r"^step (\d+)/\d+ reboot: reboot$", re.I)
STEP = lazy_re.compile(r"^step (\d+)/\d+ ", re.I)  # a step's include, skipped as a whole when done in an earlier run
STEPS = lazy_re.compile(r"^steps (\d+)-(\d+): ", re.I)  # the include of steps A..B, skipped when all are done
EARLIER = "' not in "  # ... its skip names the progress read: "'K' not in ROLE_progress.stdout_lines" was false


@record
class RunRecord:
    plan: str
    playbook: Path
    groups: tuple[tuple[tuple[str, ...], tuple[int, ...], int | None], ...]  # hosts, step numbers, reboot step
    refused: tuple[tuple[str, tuple[str, ...]], ...]
    unknown: tuple[tuple[str, str, str], ...]  # host, status, reason


def run_dir(fleet_dir: Path, spec: str) -> Path:
    return fleet_dir / "runs" / re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(spec).stem if spec.endswith(".toml") else spec)


CANARY: list[int | str] = [1, "10%", "100%"]  # fleet run's batches unless --serial: one host, a tenth, the rest
Serial = int | list[int | str]


def prepare(spec: str, inventory: str, fleet_dir: Path, *, limit: str | None, serial: Serial | None,
            max_fail: int | None, replan: bool, progress: bool = False) -> RunRecord:
    """The run's export: the saved one, or detect + plan + export now."""
    d = run_dir(fleet_dir, spec)
    saved = d / "run.json"
    if saved.is_file() and (d / "export" / MARKER).is_file() and not replan:
        return _load(saved)
    from wizard.fleet import realroots

    hosts = detect(inventory, fleet_dir, limit=limit, progress=progress)
    fp = plan_fleet(spec, hosts, realroots.mirrors(realroots.hosts(inventory, limit, fleet_dir)))
    unknown = tuple((h.host, h.status, h.reason) for h in fp.unknown)
    if not fp.groups:
        lines = [f"{h}: refused: {'; '.join(r)}" for h, r in fp.refused] + [f"{h}: {s}: {r}" for h, s, r in unknown]
        raise FleetError(f"plan {spec} applies to no host\n" + "\n".join(lines))
    # commands only: a rehearsal host (the sandbox connection) acts through commands alone, and its verify is the
    # host's wizard; the module form is the standalone export's (--export ansible, fleet plan --export)
    book = export(fp.groups, d / "export", serial=serial if isinstance(serial, int) else None, max_fail=max_fail,
                  modules=False)
    groups = tuple((g.hosts, tuple(k for k, s in enumerate(g.plan.steps, 1) if not s.skipped_reason and s.kind != "verify"),
                    next((k for k, s in enumerate(g.plan.steps, 1) if s.reboot and not s.skipped_reason), None))
                   for g in fp.groups)
    rec = RunRecord(fp.name, book, groups, fp.refused, unknown)
    saved.write_text(json.dumps({"plan": rec.plan, "playbook": str(book), "groups": [list(map(list, (g[0], g[1]))) + [g[2]]
                                                                                      for g in groups],
                                 "refused": [[h, list(r)] for h, r in rec.refused],
                                 "unknown": [list(u) for u in unknown]}, indent=1))
    return rec


def _load(path: Path) -> RunRecord:
    d = json.loads(path.read_text())
    return RunRecord(d["plan"], Path(d["playbook"]), tuple((tuple(g[0]), tuple(g[1]), g[2]) for g in d["groups"]),
                     tuple((h, tuple(r)) for h, r in d["refused"]), tuple((u[0], u[1], u[2]) for u in d["unknown"]))


def fleet_run(spec: str, inventory: str, fleet_dir: Path, *, limit: str | None = None, serial: Serial | None = None,
              max_fail: int | None = None, replan: bool = False, progress: bool = False,
              results: Path | None = None) -> list[dict[str, Any]]:
    """``results``: where each host's verify.json goes (default: the run's own ``results/``). ``serial``: Ansible's
    batches (default CANARY), ``max_fail``: its max_fail_percentage (default 0: a failure stops the batches after)."""
    rec = prepare(spec, inventory, fleet_dir, limit=limit, serial=serial, max_fail=max_fail, replan=replan,
                  progress=progress)
    results = results or run_dir(fleet_dir, spec) / "results"
    extra: dict[str, Any] = {"rocm_wizard_results": str(results), "rocm_wizard_hosts": "all", BY_EVENTS: True}
    extra["rocm_wizard_serial"] = CANARY if serial is None else serial
    extra["rocm_wizard_max_fail"] = 0 if max_fail is None else max_fail
    res = run_playbook(rec.playbook, inventory, fleet_dir, limit=limit, extra_vars=extra, progress=progress)
    for e in res.events:  # each host's verify JSON (or why it cannot run it), from the play's events
        if e.stdout is not None and (m := STEP.match(e.task)) and e.task[m.end():].startswith("verify: "):
            (results / e.host).mkdir(parents=True, exist_ok=True)
            (results / e.host / "verify.json").write_text(e.stdout, encoding="utf-8")
    for host in {e.host for e in res.events if e.status == "changed" and (m := DONE.match(e.task))
                 and m.group(3) != "verify"}:
        forget(fleet_dir, host)  # its stack changed: the next fleet plan detects it again
    return run_rows(rec, res, results, inventory, limit)


def _done_earlier(ev: Sequence[Event], steps: Sequence[int]) -> set[int]:
    """The steps a host finished in an earlier run: a step's include, or the include of steps A..B, skipped because
    the progress it read says so."""
    out: set[int] = set()
    for e in ev:
        if e.status != "skipped" or EARLIER not in e.message or "_progress.stdout_lines" not in e.message:
            continue
        if (m := STEPS.match(e.task)) is not None:
            out.update(k for k in steps if int(m.group(1)) <= k <= int(m.group(2)))
        elif (m := STEP.match(e.task)) is not None:
            out.add(int(m.group(1)))
    return out


def run_rows(rec: RunRecord, res: PlaybookResult, results: Path, inventory: str,
             limit: str | None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    again = f"rocm-wizard fleet run {rec.plan} -i {inventory}"
    for hosts, steps, reboot_step in rec.groups:
        for host in hosts:
            ev = res.of(host)
            if limit is not None and not ev:
                continue
            earlier = _done_earlier(ev, steps)
            done = earlier | {int(m.group(1)) for e in ev if e.status in ("ok", "changed") for m in [DONE.match(e.task)] if m}
            failed = next((e for e in ev if e.status in ("failed", "unreachable")), None)
            # the reboot task changed: rebooted now; its step skipped as done: earlier (the step's include, named after
            # the step's title, may match REBOOT too: only a change counts)
            reboot = "not needed" if reboot_step is None else "rebooted" if any(
                e.status == "changed" and REBOOT.match(e.task) for e in ev) else "earlier" if reboot_step in earlier \
                else "not reached"
            verify = verify_result(results / host / "verify.json")
            row: dict[str, Any] = {"host": host, "plan": rec.plan, "steps_done": len(done & set(steps)),
                                   "steps": len(steps), "reboot": reboot, "verify": verify, "failed": None,
                                   "next": None}
            if failed is not None:
                step = re.match(r"^step (\d+)/\d+ (\S+)", failed.task, re.I)
                row["failed"] = {"task": failed.task, "status": failed.status,
                                 "message": _last_line(failed.message)}
                where = f" (continues at step {step.group(1)}, {step.group(2)})" if step else ""
                row["next"] = (f"reach the host, then: {again} --limit {host}" if failed.status == "unreachable" else
                               f"the host is not the machine the plan was made for: {again} --replan"
                               if binding.SAYS in failed.task else
                               f"fix the cause above, then: {again} --limit {host}{where}")
            elif verify["status"] == "fail":
                row["next"] = f"see the verify findings: {results / host / 'verify.json'}"
            rows.append(row)
    known = {h for hosts, _s, _r in rec.groups for h in hosts} | {h for h, _r in rec.refused} | {u[0] for u in rec.unknown}
    for host in sorted({e.host for e in res.events if e.host not in known and e.status in ("failed", "unreachable")}):
        failed = next(e for e in res.of(host) if e.status in ("failed", "unreachable"))
        rows.append({"host": host, "plan": rec.plan, "state": "new", "steps_done": 0, "steps": 0, "reboot": "-",
                     "verify": {"status": "-"}, "failed": {"task": failed.task, "status": failed.status,
                                                           "message": _last_line(failed.message)},
                     "next": f"new to the inventory, no plan resolved for it: {again} --replan"})
    return rows + unplanned_rows(rec.plan, rec.refused, rec.unknown, again)


def unplanned_rows(plan: str, refused: Sequence[tuple[str, Sequence[str]]], unknown: Sequence[tuple[str, str, str]],
                   again: str) -> list[dict[str, Any]]:
    """The rows of the hosts a run did not give the plan: refused ones (with why) and those detect could not read."""
    rows: list[dict[str, Any]] = []
    for host, reasons in refused:
        rows.append({"host": host, "plan": plan, "refused": list(reasons), "steps_done": 0, "steps": 0,
                     "reboot": "-", "verify": {"status": "-"}, "failed": None,
                     "next": "the plan does not fit this machine: `rocm-wizard plans` on it lists the ones that do"})
    for host, status, reason in unknown:
        rows.append({"host": host, "plan": plan, "state": status, "steps_done": 0, "steps": 0, "reboot": "-",
                     "verify": {"status": "-"}, "failed": {"task": "detect", "status": status, "message": reason},
                     "next": f"make the host answer, then: {again} --replan"})
    return rows


def verify_result(path: Path) -> dict[str, Any]:
    """pass / fail (with the failed checks and the finding each names) / skipped (with why the host cannot
    run it) / none, from the suite's JSON."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {"status": "none"}
    try:
        doc = json.loads(text)
    except ValueError:
        doc = _suite_lines(text)  # the suite file run on the host (a standalone export): its JSON lines
        if doc is None:
            return {"status": "fail", "findings": [f"{path.name} is not the suite's JSON"]}
    if isinstance(doc, dict) and isinstance(doc.get("skipped"), str) and doc["skipped"]:
        return {"status": "skipped", "reason": doc["skipped"]}  # the host cannot run it (a real root: no GPU)
    checks = doc.get("checks") if isinstance(doc, dict) else None
    if not isinstance(checks, list):
        return {"status": "fail", "findings": [f"{path.name} holds no checks"]}
    bad = [c for c in checks if isinstance(c, dict) and c.get("status") in ("fail", "timeout", "error")]
    findings = [f"{c.get('name')}: {c.get('status')}: {c.get('error') or ''}".rstrip(": ") for c in bad]
    return {"status": "fail" if bad else "pass", "checks": len(checks), "findings": findings}


def _suite_lines(text: str) -> dict[str, Any] | None:
    """suite.py's ``--json`` output (one JSON object a line; its checks are those of type ``check``) as
    ``{"checks": [...]}``, or None when a line is not JSON."""
    checks = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            return None
        if isinstance(rec, dict) and rec.get("type") == "check":
            checks.append(rec)
    return {"checks": checks} if checks else None


def fleet_verify(inventory: str, fleet_dir: Path, *, limit: str | None = None,
                 progress: bool = False, results: Path | None = None) -> list[dict[str, Any]]:
    """The verification suite alone on every host, with the first Python env that has torch; each host's
    verify.json into ``results/HOST/`` (default: ``FLEET/verify``)."""
    hosts = detect(inventory, fleet_dir, limit=limit, progress=progress)
    args = {h.host: _verify_args(h) for h in hosts if h.facts is not None}
    results = results or fleet_dir / "verify"
    book = write_playbook(fleet_dir / "playbooks" / "verify.yml", verify_playbook_doc(args, results),
                          ["rocm-wizard fleet verify: written by the wizard"])
    for h in hosts:
        (results / h.host).mkdir(parents=True, exist_ok=True)
        (results / h.host / "verify.json").unlink(missing_ok=True)
    answered = [h.host for h in hosts if h.facts is not None]
    res = run_playbook(book, inventory, fleet_dir, limit=":".join(answered) if answered else limit,
                       progress=progress)
    for e in res.events:
        if e.task == "verify: the suite" and e.stdout is not None and e.host in answered:
            (results / e.host / "verify.json").write_text(e.stdout, encoding="utf-8")
    rows: list[dict[str, Any]] = []
    for h in hosts:
        if h.facts is None:
            rows.append({"host": h.host, "verify": {"status": "-"}, "failed": {"task": "detect", "status": h.status,
                                                                              "message": h.reason}, "next": None})
            continue
        failed = next((e for e in res.of(h.host) if e.status in ("failed", "unreachable")), None)
        v = verify_result(results / h.host / "verify.json")
        rows.append({"host": h.host, "python": (args[h.host] or ["(default)", "python3"])[-1], "verify": v,
                     "failed": None if failed is None else {"task": failed.task, "status": failed.status,
                                                            "message": _last_line(failed.message)},
                     "next": None if v["status"] in ("pass", "skipped") else "rocm-wizard diagnose on the host, with the findings"})
    return rows


def verify_playbook_doc(args: dict[str, list[str]], results: Path) -> list[dict[str, Any]]:
    """The suite on every host that can run it, through the host's wizard (``args``: host -> its verify arguments)."""
    return [{
        "name": "rocm-wizard fleet verify",
        "hosts": "all",
        "gather_facts": False,
        "vars": {"rocm_wizard_verify_args": args},
        "tasks": [{
            "name": "verify: the wizard fleet run --engine installed on this host",
            "ansible.builtin.stat": {"path": ENGINE_PYTHON},
            "register": "rocm_wizard_engine_python",
            "check_mode": False,
            "when": available(NEEDS_GPU),
        }, {
            # rocm_wizard_command when the inventory names the wizard's command; else the one fleet run --engine
            # installed; else python3 -m wizard. As the GPU user when the play names one: its venv, its groups.
            "name": "verify: the suite",
            "ansible.builtin.command": {"argv": T(
                "{{ rocm_wizard_command | default(['%s', '-m', 'wizard'] if rocm_wizard_engine_python.stat.exists "
                "else ['python3', '-m', 'wizard']) + ['verify', '--json'] + "
                "rocm_wizard_verify_args[inventory_hostname] }}" % ENGINE_PYTHON)},
            **AS_GPU_USER,
            "register": "rocm_wizard_verify",
            "changed_when": False,
            "failed_when": False,
            "check_mode": False,
            "when": available(NEEDS_GPU),
            "tags": [CAPTURE],  # its JSON comes back in the play's events: the controller writes verify.json
        }, {
            "name": "verify: the controller records that this host cannot run it",
            "ansible.builtin.copy": {"content": T("{{ {'skipped': %s} | to_json }}" % unavailable(NEEDS_GPU)),
                                     "dest": T(f"{in_template(results)}/{{{{ inventory_hostname }}}}/verify.json"),
                                     "mode": "0644"},
            "delegate_to": "localhost",
            "when": f"{unavailable(NEEDS_GPU)} | length > 0",
        }],
    }]


def _verify_args(h: HostFacts) -> list[str]:
    assert h.facts is not None
    env = next((e for e in h.facts.python_envs if e.torch and e.python), None)
    return ["--python", env.python] if env is not None and env.python else []


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def all_ok(rows: Sequence[dict[str, Any]]) -> bool:
    """Every host the plan fits finished and passed (a refused host is reported, not a failure; a verify the
    host cannot run, a real root's, is reported as skipped)."""
    return all(r.get("failed") is None and r["verify"]["status"] in ("pass", "skipped", "-") for r in rows)
