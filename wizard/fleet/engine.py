"""``fleet run --engine`` and ``fleet rollback``: the wizard itself runs the plan on each host.

Ansible installs the controller's exact wizard on every host (its wheels, wizard/fleet/wheels.py, copied and
installed offline into the root-owned venv ``/opt/rocm-wizard/venv``; a host whose venv reports the same version
and build is left as it is), copies the plan resolved for the host (bound to the machine it was resolved for,
wizard.binding: on another machine its preflight stops before any change) and runs it there with become
(``rocm-wizard fleet engine PLAN.json``, wizard/fleet/host_engine.py): the journal, lock, preflight and rollback
are the host's. When the wizard stops for a reboot, ``ansible.builtin.reboot`` reboots the host and the play
resumes the run. Each host's run report (its JSON, with ``status --json`` inside) comes back in the play's events
and is written to ``RESULTS/HOST/run.json``. ``fleet rollback`` runs ``rocm-wizard rollback --yes`` on each host
in the same batches, canary first.

A run lives in ``FLEET/runs/PLAN/engine/``: ``engine.json`` (which hosts got the plan, which were refused),
``plans/HOST.json`` and the playbooks. Running it again reuses the saved plans (``--replan`` resolves them
again): each host's wizard continues its own run, and a host whose run of this plan is done changes nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from wizard.fleet import FleetError
from wizard.fleet.ansible_run import Event, PlaybookResult, run_playbook, write_playbook
from wizard.fleet.detect import CAPTURE, detect, forget
from wizard.fleet.export import DRAIN, REBOOT_TIMEOUT, drain_tasks, undrain_task
from wizard.fleet.host_engine import ENGINE_DIR, PYTHON, VENV
from wizard.fleet.plan import plan_fleet
from wizard.fleet.run import CANARY, Serial, _last_line, run_dir, unplanned_rows
from wizard.fleet.wheels import WheelSet, wheel_set
from wizard.fleet.yaml_text import Template as T, in_template
from wizard.record import record
from wizard.runner import planfile

BUILD_FILE = f"{VENV}/rocm-wizard.build"  # the build id of the wheels installed there
WHEELS = f"{ENGINE_DIR}/wheels"
PLANS = f"{ENGINE_DIR}/plans"  # 0700: a plan may carry mirror credentials
ROLE = "rocm_wizard_engine"  # the prefix of the play's registered variables and facts
DRAINED = f"{ROLE}_drained"  # set by the drain tasks: this run drained the host

DECIDE_TASK = "Wizard: what this host's run would do"
RUN_TASK = "Wizard: run the plan on this host"
RESUME_TASK = "Wizard: resume the run after the reboot"
REBOOT_TASK = "Wizard: reboot (the wizard stopped for it)"
ROLLBACK_TASK = "Wizard: roll back this host's run"
STATUS_TASK = "Wizard: this host's run after the rollback"


@record
class EngineRun:
    plan: str
    hosts: tuple[tuple[str, bool], ...]  # host, whether its plan has a reboot step
    refused: tuple[tuple[str, tuple[str, ...]], ...]
    unknown: tuple[tuple[str, str, str], ...]  # host, status, reason


def engine_dir(fleet_dir: Path, spec: str) -> Path:
    return run_dir(fleet_dir, spec) / "engine"


def prepare(spec: str, inventory: str, fleet_dir: Path, *, limit: str | None, replan: bool,
            progress: bool = False) -> EngineRun:
    """The saved plans of this run, or detect + resolve now: one plan file per host, resolved from its own facts
    with the wizard steps run by the venv's python."""
    d = engine_dir(fleet_dir, spec)
    saved = d / "engine.json"
    if saved.is_file() and not replan:
        return _load(saved)
    from wizard.fleet import realroots

    hosts = detect(inventory, fleet_dir, limit=limit, progress=progress)
    fp = plan_fleet(spec, hosts, realroots.mirrors(realroots.hosts(inventory, limit, fleet_dir)), wizard_python=PYTHON)
    unknown = tuple((h.host, h.status, h.reason) for h in hosts if h.facts is None)
    if not fp.groups:
        lines = [f"{h}: refused: {'; '.join(r)}" for h, r in fp.refused] + [f"{h}: {s}: {r}" for h, s, r in unknown]
        raise FleetError(f"plan {spec} applies to no host\n" + "\n".join(lines))
    plans = d / "plans"
    plans.mkdir(parents=True, exist_ok=True, mode=0o700)
    for old in plans.glob("*.json"):
        old.unlink()
    placed: list[tuple[str, bool]] = []
    for g in fp.groups:
        text = planfile.dumps(g.plan)
        for host in g.hosts:
            fd = os.open(plans / f"{host}.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            placed.append((host, any(s.reboot and not s.skipped_reason for s in g.plan.steps)))
    rec = EngineRun(fp.name, tuple(placed), fp.refused, unknown)
    saved.write_text(json.dumps({"plan": rec.plan, "hosts": [list(h) for h in rec.hosts],
                                 "refused": [[h, list(r)] for h, r in rec.refused],
                                 "unknown": [list(u) for u in unknown]}, indent=1) + "\n", encoding="utf-8")
    return rec


def _load(path: Path) -> EngineRun:
    d = json.loads(path.read_text(encoding="utf-8"))
    return EngineRun(d["plan"], tuple((h, bool(r)) for h, r in d["hosts"]),
                     tuple((h, tuple(r)) for h, r in d["refused"]), tuple((u[0], u[1], u[2]) for u in d["unknown"]))


def _identity(wheels: WheelSet) -> str:
    return f"rocm-wizard {wheels.version}\n{wheels.build}"


def _wizard(*args: str) -> list[str]:
    return [PYTHON, "-m", "wizard", *args]


def install_tasks(wheels: WheelSet) -> list[dict[str, Any]]:
    """The controller's wizard in the host's venv, unless the venv already reports its version and build."""
    have = "rocm_wizard_engine_have"
    read = ["sh", "-c", 'if [ -x "$1" ]; then "$1" -m wizard --version && cat "$2"; fi', "sh", PYTHON, BUILD_FILE]
    wanted = _identity(wheels)
    return [{
        "name": "Wizard: the version installed on this host",
        "ansible.builtin.command": {"argv": read},
        "register": have,
        "changed_when": False,
        "failed_when": False,
        "check_mode": False,
    }, {
        "name": f"Wizard: install the controller's rocm-wizard {wheels.version} (build {wheels.build})",
        "when": f"{have}.stdout != {json.dumps(wanted)}",
        "become": True,
        "block": [{
            "name": "Wizard: its directories",
            "ansible.builtin.command": {"argv": ["sh", "-c", 'install -d -m 0755 "$1" "$2" && install -d -m 0700 "$3"',
                                                 "sh", ENGINE_DIR, WHEELS, PLANS]},
            "changed_when": True,
        }, {
            "name": "Wizard: its wheels and those of its dependencies",
            "ansible.builtin.copy": {"src": T(f"{in_template(wheels.directory)}/{{{{ item }}}}"),
                                     "dest": T(f"{WHEELS}/{{{{ item }}}}"), "mode": "0644"},
            "loop": list(wheels.files),
        }, {
            "name": "Wizard: its venv",
            "ansible.builtin.command": {"argv": ["python3", "-m", "venv", VENV], "creates": PYTHON},
        }, {
            "name": "Wizard: install it offline from the copied wheels",
            "ansible.builtin.command": {"argv": [PYTHON, "-m", "pip", "install", "--disable-pip-version-check",
                                                 "--no-input", "--no-index", "--find-links", WHEELS, "--force-reinstall",
                                                 f"rocm-wizard=={wheels.version}"]},
            "changed_when": True,
        }, {
            "name": "Wizard: record the build installed",
            "ansible.builtin.command": {"argv": ["sh", "-c", 'printf "%s\\n" "$2" > "$1"', "sh", BUILD_FILE,
                                                 wheels.build]},
            "changed_when": True,
        }, {
            "name": "Wizard: the version installed now",
            "ansible.builtin.command": {"argv": read},
            "register": f"{have}_now",
            "changed_when": False,
            "check_mode": False,
        }, {
            "name": "Wizard: the host runs the controller's wizard",
            "ansible.builtin.assert": {"that": [f"{have}_now.stdout == {json.dumps(wanted)}"],
                                       "fail_msg": T("the wizard in %s reports {{ %s_now.stdout | default('nothing') }}, "
                                                     "not %s" % (VENV, have, wanted.replace("\n", " build "))),
                                       "quiet": True},
        }],
    }]


def run_playbook_doc(rec: EngineRun, wheels: WheelSet, plans: Path) -> list[dict[str, Any]]:
    """Install the wizard, copy the host's plan, ask its wizard what the run would do; where it would change
    something: the GPU-idle check and the drain hook first (wizard/fleet/safety.py, as the standalone export does),
    then the run, Ansible's reboot and the resume, and the undrain hook once the run is done (verify is its last
    step). A host whose run is done changes nothing and is never drained."""
    plan_file = f"{PLANS}/{rec.plan}.json"
    reg = "rocm_wizard_engine_run"
    # the GPU user the play names (empty: the venv's owner) and what the controller knows this host lacks
    run = _wizard("fleet", "engine", plan_file, "--user", T("{{ rocm_wizard_gpu_user | default('') }}"),
                  "--unavailable", T("{{ (rocm_wizard_unavailable | default({}))[inventory_hostname] "
                                     "| default({}) | to_json }}"))
    decide = f"{reg}_decision"
    return [{
        "name": f"Plan {rec.plan} through each host's own wizard (rocm-wizard fleet run --engine)",
        "hosts": ":".join(h for h, _ in rec.hosts),
        "gather_facts": False,
        "serial": T("{{ rocm_wizard_serial | default([1, '10%', '100%']) }}"),
        "max_fail_percentage": T("{{ rocm_wizard_max_fail | default(0) }}"),
        "tasks": [*install_tasks(wheels), {
            "name": "Wizard: the plan resolved for this host",
            "ansible.builtin.copy": {"src": T(f"{in_template(plans)}/{{{{ inventory_hostname }}}}.json"),
                                     "dest": plan_file, "mode": "0600"},
            "become": True,
        }, {
            "name": DECIDE_TASK,
            "ansible.builtin.command": {"argv": _wizard("fleet", "engine", plan_file, "--decide")},
            "become": True,
            "register": decide,
            "changed_when": False,
            "check_mode": False,
        }, {
            "name": "Wizard: the GPU is idle and the host drained before the run changes it",
            "ansible.builtin.include_tasks": DRAIN,
            "when": f"({decide}.stdout | from_json).move != 'none'",
        }, {
            "name": RUN_TASK,
            "ansible.builtin.command": {"argv": run},
            "become": True,
            "register": reg,
            "changed_when": f"'\"changed\": true' in {reg}.stdout",
            "failed_when": f"{reg}.rc not in [0, 3]",
            "tags": [CAPTURE],  # its JSON report comes back in the play's events
        }, {
            "name": REBOOT_TASK,
            "ansible.builtin.reboot": {"msg": f"rocm-wizard plan {rec.plan}: the run continues after the boot",
                                       "reboot_timeout": REBOOT_TIMEOUT, "test_command": "id",
                                       "reboot_command": T("{{ rocm_wizard_reboot_command | default(omit) }}")},
            "become": True,
            "when": f"{reg}.rc == 3",
        }, {
            "name": RESUME_TASK,
            "ansible.builtin.command": {"argv": run},
            "become": True,
            "register": f"{reg}_resumed",
            "changed_when": True,
            "failed_when": f"{reg}_resumed.rc != 0",
            "when": f"{reg}.rc == 3",
            "tags": [CAPTURE],
        }, undrain_task(DRAINED)],
    }]


def drain_files(play: Path) -> None:
    """The drain tasks the engine's play includes, beside it (the same as the standalone export's)."""
    write_playbook(play.parent / DRAIN, drain_tasks(ROLE, True), ["rocm-wizard fleet run --engine: the GPU-idle "
                                                                  "check and the drain hook, before a run changes the host"])


def fleet_run(spec: str, inventory: str, fleet_dir: Path, *, limit: str | None = None, serial: Serial | None = None,
              max_fail: int | None = None, replan: bool = False, progress: bool = False,
              results: Path | None = None) -> list[dict[str, Any]]:
    rec = prepare(spec, inventory, fleet_dir, limit=limit, replan=replan, progress=progress)
    d = engine_dir(fleet_dir, spec)
    wheels = wheel_set(fleet_dir / "wheels")
    book = write_playbook(d / "run.yml", run_playbook_doc(rec, wheels, d / "plans"),
                          [f"rocm-wizard fleet run --engine {rec.plan}: written by the wizard"])
    drain_files(book)
    results = results or d / "results"
    extra = {"rocm_wizard_serial": CANARY if serial is None else serial,
             "rocm_wizard_max_fail": 0 if max_fail is None else max_fail}
    res = run_playbook(book, inventory, fleet_dir, limit=limit, extra_vars=extra, progress=progress)
    rows = run_rows(rec, res, results, inventory, limit)
    for r in rows:
        if r.get("changed"):
            forget(fleet_dir, r["host"])  # its stack changed: the next fleet plan detects it again
    return rows


def _report(res: PlaybookResult, host: str, tasks: tuple[str, ...]) -> dict[str, Any] | None:
    """The host's last JSON run report among ``tasks``' captured outputs."""
    out = None
    for e in res.of(host):
        if e.task in tasks and e.stdout:
            try:
                doc = json.loads(e.stdout)
            except ValueError:
                continue
            if isinstance(doc, dict):
                out = doc
    return out


def _verify(status: dict[str, Any]) -> dict[str, Any]:
    got = status.get("verify")
    v: dict[str, Any] = got if isinstance(got, dict) else {}
    state, summary = v.get("state"), v.get("summary") or ""
    if state == "passed":
        return {"status": "pass", "summary": summary}
    if state == "failed":
        return {"status": "fail", "findings": [summary]}
    if state == "skipped":
        return {"status": "skipped", "reason": summary}
    return {"status": "-" if state == "no verify step" else "none"}


def run_rows(rec: EngineRun, res: PlaybookResult, results: Path, inventory: str,
             limit: str | None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    again = f"rocm-wizard fleet run {rec.plan} -i {inventory} --engine"
    for host, has_reboot in rec.hosts:
        ev = res.of(host)
        if limit is not None and not ev:
            continue
        doc = _report(res, host, (RUN_TASK, RESUME_TASK))
        if doc is not None:
            (results / host).mkdir(parents=True, exist_ok=True)
            (results / host / "run.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        status = doc.get("status", {}) if doc else {}
        failed = next((e for e in ev if e.status in ("failed", "unreachable")), None)
        rebooted = any(e.task == REBOOT_TASK and e.status == "changed" for e in ev)
        reboot = ("not needed" if not has_reboot else "rebooted" if rebooted else
                  "earlier" if doc and doc.get("state") == "done" else "not reached")
        row: dict[str, Any] = {"host": host, "plan": rec.plan, "state": doc.get("state") if doc else None,
                               "steps_done": doc.get("steps_done", 0) if doc else 0,
                               "steps": doc.get("steps", 0) if doc else 0, "reboot": reboot,
                               "verify": _verify(status) if doc else {"status": "none"}, "failed": None,
                               "next": None, "changed": bool(doc and doc.get("changed")),
                               "run_id": status.get("run_id")}
        if failed is not None:
            message = doc.get("message") if doc is not None and failed.task in (RUN_TASK, RESUME_TASK) else None
            row["failed"] = {"task": failed.task, "status": failed.status,
                             "message": _last_line(str(message or failed.message))}
            rollback = f"rocm-wizard fleet rollback -i {inventory} --limit {host}"
            row["next"] = (f"reach the host, then: {again} --limit {host}" if failed.status == "unreachable" else
                           f"the host is not the machine the plan was made for: {again} --replan"
                           if "not the machine the plan was made for" in row["failed"]["message"] else
                           f"fix the cause above, then: {again} --limit {host} (its wizard continues its run), "
                           f"or undo it: {rollback}")
        elif row["verify"]["status"] == "fail":
            row["next"] = f"see the verify findings: rocm-wizard status on the host ({results / host / 'run.json'})"
        rows.append(row)
    return rows + unplanned_rows(rec.plan, rec.refused, rec.unknown, again)


def rollback_playbook_doc() -> list[dict[str, Any]]:
    """The host's own ``rollback --yes``, then its ``status --json``; the host fails unless its run is rolled back
    (what the rollback said it cannot restore is listed, as the single machine's rollback lists it, not a failure)."""
    reg = "rocm_wizard_engine_rollback"
    return [{
        "name": "Roll back each host's rocm-wizard run (rocm-wizard fleet rollback)",
        "hosts": "all",
        "gather_facts": False,
        "serial": T("{{ rocm_wizard_serial | default([1, '10%', '100%']) }}"),
        "max_fail_percentage": T("{{ rocm_wizard_max_fail | default(0) }}"),
        "tasks": [{
            "name": ROLLBACK_TASK,
            "ansible.builtin.command": {"argv": _wizard("rollback", "--yes")},
            "become": True,
            "register": reg,
            "changed_when": f"{reg}.rc is defined and 'is already rolled back' not in {reg}.stdout",
            "failed_when": False,
            "tags": [CAPTURE],
        }, {
            "name": STATUS_TASK,
            "ansible.builtin.command": {"argv": _wizard("status", "--json")},
            "become": True,
            "register": f"{reg}_status",
            "changed_when": False,
            "failed_when": False,
            "tags": [CAPTURE],
        }, {
            "name": "Wizard: the run is rolled back",
            "ansible.builtin.assert": {
                "that": [f"{reg}_status.rc == 0 and ({reg}_status.stdout | from_json).state == 'rolled-back'"],
                "fail_msg": T("the rollback did not finish: {{ (%s.stdout_lines | default([]) + [%s.msg | default('')])"
                              " | select | last | default('no answer') }}" % (reg, reg)),
                "quiet": True,
            },
        }],
    }]


def fleet_rollback(inventory: str, fleet_dir: Path, *, limit: str | None = None, serial: Serial | None = None,
                   max_fail: int | None = None, progress: bool = False,
                   results: Path | None = None) -> list[dict[str, Any]]:
    """``rocm-wizard rollback --yes`` on every host, in batches (a canary first); each host's state after it."""
    book = write_playbook(fleet_dir / "playbooks" / "rollback.yml", rollback_playbook_doc(),
                          ["rocm-wizard fleet rollback: written by the wizard"])
    extra = {"rocm_wizard_serial": CANARY if serial is None else serial,
             "rocm_wizard_max_fail": 0 if max_fail is None else max_fail}
    res = run_playbook(book, inventory, fleet_dir, limit=limit, extra_vars=extra, progress=progress)
    results = results or fleet_dir / "rollback"
    rows: list[dict[str, Any]] = []
    again = f"rocm-wizard fleet rollback -i {inventory}"
    for host in dict.fromkeys(e.host for e in res.events if e.status != "recap" and e.host != "localhost"):
        ev = res.of(host)
        status = _report(res, host, (STATUS_TASK,)) or {}
        said = next((e for e in ev if e.task == ROLLBACK_TASK), None)
        lines = (said.stdout or "").splitlines() if said is not None else []
        if status:
            (results / host).mkdir(parents=True, exist_ok=True)
            (results / host / "status.json").write_text(json.dumps(status, indent=1) + "\n", encoding="utf-8")
        failed = next((e for e in ev if e.status in ("failed", "unreachable")), None)
        if failed is not None and failed.task != ROLLBACK_TASK and said is not None and failed.status != "unreachable":
            failed = Event(failed.host, failed.status, ROLLBACK_TASK, (said.stdout or "") + "\n" + failed.message)
        row: dict[str, Any] = {"host": host, "plan": status.get("plan"), "run_id": status.get("run_id"),
                               "state": status.get("state"), "message": _last_line("\n".join(lines)),
                               "cannot": [ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("cannot restore:")],
                               "changed": bool(said is not None and said.status == "changed"), "failed": None,
                               "next": None}
        if failed is not None:
            message = failed.message
            if "No such file" in message and VENV in message:
                message = f"no wizard in {VENV} on this host: fleet run --engine installs it"
            row["failed"] = {"task": failed.task, "status": failed.status, "message": _last_line(message)}
            row["next"] = (f"reach the host, then: {again} --limit {host}" if failed.status == "unreachable" else
                           f"see `rocm-wizard status` on the host, then: {again} --limit {host}")
        rows.append(row)
        if row["changed"]:
            forget(fleet_dir, host)
    return rows


def all_rolled_back(rows: list[dict[str, Any]]) -> bool:
    """Every host's run is rolled back, and nothing was left that the rollback could not restore."""
    return bool(rows) and all(r["failed"] is None and r["state"] == "rolled-back" and not r["cannot"] for r in rows)


__all__ = ["BUILD_FILE", "PYTHON", "VENV", "EngineRun", "all_rolled_back", "engine_dir", "fleet_rollback",
           "fleet_run", "prepare", "run_rows"]
