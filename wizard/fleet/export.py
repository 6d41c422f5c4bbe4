"""A resolved plan as an Ansible playbook and role a person can review and run with plain
``ansible-playbook`` (``rocm-wizard --plan NAME --export ansible DIR``, ``fleet plan ... --export``).

Nothing here imports Ansible: the export is text. What it writes, for plan NAME:

* ``DIR/NAME.yml``: one play; each group of hosts that resolve to the same actions has its own role,
  run on those hosts only (a single-machine export has one role for ``all``), ``gather_facts: false`` (the wizard's own detection planned it),
  ``serial`` and ``max_fail_percentage`` from the extra vars ``rocm_wizard_serial`` /
  ``rocm_wizard_max_fail`` (defaults: the values given at export, else every host at once and 100 %);
* ``DIR/roles/<role>/tasks/main.yml``: the plan's steps in order, each a block tagged ``step-K`` and
  with its kind, skipped when the host's progress file (the dry-run script's, beside the plan's
  backup, read as root for a system state dir; one that cannot be read or does not parse fails the host)
  says the step is done and the step's own check (``StepPlan.check``, the one the engine and the script
  run) still passes on the machine, else reported as drift and run again; marked done at its end: a
  re-run continues where the host stopped and a finished host changes nothing. Each step's block is its own
  ``step-K.yml`` behind one ``include_tasks``, and the steps that run only while unfinished sit behind one more,
  ``steps-A-B.yml`` (a finished host skips one task for all of them: ``split_steps``). The preflight's machine
  check is an assert per host ahead of every destructive task (``wizard.binding``). Each action that one of
  Ansible's own modules expresses is that module (wizard.fleet.modules: file, copy, apt, get_url, user, uri), so
  ``--check --diff`` reports what it would change; any other an ``ansible.builtin.command`` with ``argv`` (never a
  shell string); ``become: true`` exactly where the action needs root, its environment, its timeout and its
  accepted exit codes; an action with a done-check runs the check first (in check mode too, never counted as a
  change) and runs only when the check fails; the preflight's read-only checks run in check mode too. The reboot
  is ``ansible.builtin.reboot`` with a timeout; the verify step runs the suite file (``files/``: the standard
  library and torch only) copied to the host with the venv's python, and its JSON comes back to
  ``rocm_wizard_results`` (default ``DIR/results``) ``/HOST/verify.json`` on the controller. An action that
  needs what a host cannot provide (``rocm_wizard_unavailable``, host -> requirement -> reason: a real
  root has no GPU) is skipped there, and the verify JSON says ``{"skipped": REASON}``.

The planner already puts the backup before anything destructive; the export checks it again and
refuses a plan whose destructive action comes first.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any, Sequence

from wizard import binding
from wizard import lazy_re
from wizard.downloads.shell import is_fetch
from wizard.model import PREFLIGHT, Action, ResolvedPlan, StepPlan
from wizard.record import record
from wizard.verify.launch import AMD_DOCKER_FLAGS, CONTAINER_SUITE, SUITE_PATH, SuiteOptions
from wizard.script import READ_RECORD, STEP_LINE, _shell_path, progress_path
from wizard.steps import system_path

from wizard.fleet.downloads import fetch_tasks
from wizard.fleet.lock import LOCKED, holder, refused, task_locks
from wizard.fleet.modules import module_task
from wizard.fleet.collection import plan_vars
from wizard.fleet.safety import GPU_HOLDERS, retry_keywords, retryable
from wizard.fleet.yaml_text import Literal, Template as T, document

CAPTURE = "rocm_wizard_capture"  # the events callback records the whole output of a task tagged so (wizard.fleet.detect)
# set by fleet run: each host's verify.json is written by the controller from the play's events, not by a module per host
BY_EVENTS = "rocm_wizard_results_by_events"
MARKER = ".rocm-wizard-export"  # DIR holds an export: a later export may overwrite it
REBOOT_TIMEOUT = 1800
RESULTS = T("{{ rocm_wizard_results | default(playbook_dir + '/results') }}")
VERIFY_KIND = "verify"
# records a finished step in the host's progress file, as the dry-run script's mark_done does (the
# same file and format: the script and the playbook continue each other's runs)
MARK_DONE = ("sh", "-c", 'mkdir -p "$(dirname "$1")" && { grep -qx "$2" "$1" 2>/dev/null || echo "$2" >>"$1"; }', "sh")

class ExportError(Exception):
    """The export cannot be written (one line)."""


_NAMED = lazy_re.compile(r"^[A-Za-z0-9_.:-]+$")  # host names and requirements, which the export writes into conditionals


def _check_names(g: PlanGroup) -> None:
    for name in (*g.hosts, *(r for s in g.plan.steps for a in s.actions for r in a.requires)):
        if not _NAMED.match(name):
            raise ExportError(f"{name!r}: not a name an export can hold (letters, digits and . _ : - only)")


@record
class PlanGroup:
    """Hosts that resolve to the same actions (none: every host of the inventory)."""

    plan: ResolvedPlan
    hosts: tuple[str, ...] = ()
    machine: tuple[str, ...] = ()  # a summary of the machine it was resolved for (comments)


def role_name(plan: ResolvedPlan, index: int | None = None) -> str:
    base = "rocm_wizard_" + re.sub(r"[^a-z0-9]+", "_", plan.name.lower()).strip("_")
    return base if index is None else f"{base}_{index}"


def export(groups: Sequence[PlanGroup], out_dir: str | Path, *, serial: int | None = None,
           max_fail: int | None = None, modules: bool = True) -> Path:
    """Write the playbook and its roles into ``out_dir``; return the playbook's path. ``modules``: each action that
    one of Ansible's own modules expresses is that module (wizard.fleet.modules) and verify runs the suite file the
    role copies to the host; False (fleet run, whose rehearsal hosts act through commands only): every action a
    command and verify the host's ``python3 -m wizard verify``."""
    if not groups:
        raise ExportError("nothing to export: no host has an applicable plan")
    names = {g.plan.name for g in groups}
    if len(names) != 1:
        raise ExportError(f"one plan per export, not {', '.join(sorted(names))}")
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).is_file())):
        raise ExportError(f"{out}: exists and is not an earlier rocm-wizard export; give a new or empty directory")
    files: dict[Path, str] = {}
    keys: dict[str, str] = {}  # host -> its group's name (group_by)
    roles: list[str] = []
    for i, g in enumerate(groups, 1):
        _check_names(g)
        role = role_name(g.plan, i if len(groups) > 1 else None)
        header = [f"rocm-wizard plan {g.plan.name}: {g.plan.title}", *g.machine,
                  "target: " + ", ".join(f"{k} {v}" for k, v in g.plan.target)]
        main, steps = split_steps(role_tasks(g.plan, role, modules=modules))
        files[Path("roles", role, "tasks", "main.yml")] = document(main, header)
        for name, body in steps.items():
            files[Path("roles", role, "tasks", name)] = document(body, header[:1])
        if modules and any(s.kind == VERIFY_KIND and not s.skipped_reason for s in g.plan.steps):
            files[Path("roles", role, "files", SUITE_FILE)] = SUITE_PATH.read_text(encoding="utf-8")
        used = "\n".join(files[Path("roles", role, "tasks", n)] for n in ("main.yml", *steps))
        files[Path("roles", role, "vars", "main.yml")] = document({k: v for k, v in lock_vars(g.plan, role).items()
                                                                    if "{{ %s }}" % k in used}, [
            header[0], "the wizard's locks (its flocks on the lock files the wizard takes for this plan), taken by each task "
            "that changes the host, all of them as root (_lock), a user's own as that user (_user_lock): "
            "sh -c LOCK rocm-wizard-lock change|read COMMAND [ARG...] (wizard/fleet/lock.py: LOCKED)"])
        files[Path("roles", role, "tasks", DRAIN)] = document(drain_tasks(role, any(a.root for st in g.plan.steps for a in st.actions)), header[:1])
        files[Path("plan_vars", f"{role}.yml")] = document(plan_vars(g.plan), [
            *header, "this plan as data, for the role rocm_wizard.fleet.rocm_wizard (rocm-wizard fleet collection)"])
        keys.update({h: role for h in g.hosts})
        roles.append(role)
    default = role_name(groups[0].plan) if len(groups) == 1 and not groups[0].hosts else NEW_HOSTS
    plays = [_play(groups[0].plan, roles, keys, default, serial, max_fail, modules)]
    plan = groups[0].plan
    book = Path(f"{plan.name}.yml")
    files[book] = document(plays, [
        f"rocm-wizard plan {plan.name}: {plan.title}",
        f"why: {plan.why}",
        f"run: ansible-playbook -i INVENTORY {book} -e rocm_wizard_hosts=PATTERN [--check] [--limit HOSTS] [--tags step-K]",
        "      [-e rocm_wizard_serial=N] [-e rocm_wizard_max_fail=PCT] [-e rocm_wizard_results=DIR]",
        "      [-e rocm_wizard_gpu_user=USER] [-e rocm_wizard_drain=CMD] [-e rocm_wizard_undrain=CMD]",
        "connect as the machine's user, or as an admin with sudo and rocm_wizard_gpu_user naming the venvs' owner: root",
        "actions use become, user actions become rocm_wizard_gpu_user",
        "each host records finished steps in its progress file: a re-run continues where it stopped",
    ])
    out.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        p = out / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    (out / MARKER).write_text(f"plan {plan.name}\n", encoding="utf-8")
    # ansible-lint's syntax check renders hosts: the play's hosts come from -e rocm_wizard_hosts=PATTERN, never a default
    (out / ".ansible-lint").write_text("---\nprofile: production\nextra_vars:\n  rocm_wizard_hosts: all\n", encoding="utf-8")
    return out / book


NEW_HOSTS = "rocm_wizard_new_hosts"  # the group_by key of a host no plan was resolved for
DRAIN = "drain.yml"


SANDBOX = "rocm_wizard_sandbox"  # the rehearsal connection: only commands act inside the sandbox


def _play(plan: ResolvedPlan, roles: Sequence[str], keys: dict[str, str], default: str, serial: int | None,
          max_fail: int | None, modules: bool = False) -> dict[str, Any]:
    """One play for the hosts of ``-e rocm_wizard_hosts=PATTERN``: each host into its plan group (``group_by`` on the
    group key; a host no plan was resolved for, new to the inventory, fails here by name before anything runs on
    it), then each group's role included on its own hosts only (a host skips one include per other group, never
    another group's tasks). Batches count the whole fleet: a canary first (one host, a tenth, the rest) and the first
    failure stops the batches after it, unless the extra vars say otherwise."""
    return {
        "name": f"Plan {plan.name} (rocm-wizard)",
        "hosts": T("{{ rocm_wizard_hosts }}"),
        "gather_facts": False,
        "serial": T("{{ rocm_wizard_serial | default(%s) }}" % (serial if serial else "[1, '10%', '100%']")),
        "max_fail_percentage": T("{{ rocm_wizard_max_fail | default(%d) }}" % (max_fail or 0)),
        "vars": {"rocm_wizard_groups": keys},
        "tasks": [*([{
            # the sandbox connection runs commands inside the sandbox, but a module that edits files (file, copy,
            # apt) would act on the controller's own paths: a rehearsal is fleet run's, whose export has commands only
            "name": "Refuse a rehearsal sandbox host (its modules would act on the controller's own files)",
            "ansible.builtin.fail": {"msg": T("{{ inventory_hostname }} is a rocm-wizard sandbox: this playbook's "
                                              "modules would change the controller's own files; rehearse it with "
                                              "rocm-wizard fleet run (commands only), or --check")},
            "when": [f"ansible_connection | default('') == '{SANDBOX}'", "not ansible_check_mode"],
            "tags": ["always"],
        }] if modules else []), {
            "name": "Put the host into its plan group",
            "ansible.builtin.group_by": {"key": T("{{ rocm_wizard_groups.get(inventory_hostname, '%s') }}" % default)},
            "changed_when": False,
            "tags": ["always"],
        }, {
            "name": "Stop a host no plan was resolved for",
            "ansible.builtin.fail": {"msg": T("{{ inventory_hostname }} is new to the inventory: no plan was resolved "
                                              "for it (fleet run --replan, or fleet plan with it)")},
            "when": f"rocm_wizard_groups.get(inventory_hostname, '{default}') == '{NEW_HOSTS}'",
            "tags": ["always"],
        }, *[{
            "name": f"Plan group {role}",
            "ansible.builtin.include_role": {"name": role},
            "when": f"'{role}' in group_names",
            "tags": ["always"],
        } for role in roles]],
    }


def split_steps(tasks: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """Each step's block into its own file behind one ``include_tasks``: a finished step is skipped with one task,
    not one per action. Consecutive steps that run only while unfinished (nothing between them: the progress read
    with every check folded in) go behind one more include, ``steps-A-B.yml``, run while any of them is unfinished:
    a host with nothing left to do skips one task for all of them."""
    main: list[dict[str, Any]] = []
    files: dict[str, list[dict[str, Any]]] = {}
    run: list[dict[str, Any]] = []  # consecutive includes of steps that run only while unfinished

    def close() -> None:
        if len(run) > 1:
            first, last = run[0]["tags"][0].removeprefix("step-"), run[-1]["tags"][0].removeprefix("step-")
            name = f"steps-{first}-{last}.yml"
            files[name] = list(run)
            main.append({"name": f"Steps {first}-{last}: those this host has not finished",
                         "ansible.builtin.include_tasks": name,
                         "when": " or ".join(f"({t['when']})" for t in run),
                         "tags": ["always"]})  # each step's own include inside says its tags
        else:
            main.extend(run)
        run.clear()

    for t in tasks:
        tags = t.get("tags") or []
        if "block" not in t or not tags or not str(tags[0]).startswith("step-"):
            close()
            main.append(t)
            continue
        name = f"{tags[0]}.yml"
        files[name] = t["block"]
        include = {"name": t["name"], "ansible.builtin.include_tasks": {"file": name, "apply": {"tags": tags}},
                   "tags": tags, **({"when": t["when"]} if "when" in t else {})}
        if "when" in t and tags[1:2] != [VERIFY_KIND]:  # runs only while unfinished
            run.append(include)
        else:
            close()
            main.append(include)
    close()
    return main, files


def drain_tasks(role: str, root: bool) -> list[dict[str, Any]]:
    """Before the first change on a host: no process may hold the GPU (read-only, in check mode too; as root when the
    plan has root actions, else the user's own processes, those a user-only plan's venv serves), then the drain
    hook (``rocm_wizard_drain``, a command run with sh on ``rocm_wizard_hook_host``, default the host itself)."""
    return [{
        "name": "Refuse while a process holds /dev/kfd or a render node",
        "ansible.builtin.command": {"argv": _literal(GPU_HOLDERS)},
        **({"become": True} if root else {}),
        "changed_when": False,
        "check_mode": False,
    }, {
        "name": "Drain the host (rocm_wizard_drain)",
        "ansible.builtin.command": {"argv": ["sh", "-c", T("{{ rocm_wizard_drain }}")]},
        "delegate_to": T("{{ rocm_wizard_hook_host | default(inventory_hostname, true) }}"),
        "changed_when": True,
        "when": "rocm_wizard_drain | default('') | length > 0",
    }, {
        "name": "Remember the host is drained",
        "ansible.builtin.set_fact": {f"{role}_drained": True},
    }]


def undrain_task(drained: str) -> dict[str, Any]:
    """After verify, on a host this run drained (``drained``: the fact the drain tasks set): the undrain hook."""
    return {
        "name": "Undrain the host (rocm_wizard_undrain)",
        "ansible.builtin.command": {"argv": ["sh", "-c", T("{{ rocm_wizard_undrain }}")]},
        "delegate_to": T("{{ rocm_wizard_hook_host | default(inventory_hostname, true) }}"),
        "changed_when": True,
        "when": f"{drained} is defined and rocm_wizard_undrain | default('') | length > 0",
    }


def role_tasks(plan: ResolvedPlan, role: str, *, modules: bool = True) -> list[dict[str, Any]]:
    """The role's tasks; names start with a capital and registered variables with the role's name
    (ansible-lint's name and var-naming rules)."""
    progress = progress_path(plan)
    root_progress = bool(plan.state_dir) and system_path(plan.state_dir or "")
    checks = [(k, s.check) for k, s in enumerate(plan.steps, 1)
              if s.check is not None and not s.skipped_reason and not s.reboot and s.kind != VERIFY_KIND]
    folded = bool(root_progress and checks)  # a system state dir: one root task reads the progress and checks
    # the progress read and each done mark run as the state dir's owner: root's locks for a system state dir
    mark_lock = lock_var(plan, role, root=root_progress) or f"{role}_lock"
    tasks: list[dict[str, Any]] = [{
        # as the owner of the state dir (root for /var/lib): read as the user, a 0700 dir looks like "no
        # progress" and a finished host would be migrated again; a progress that exists but cannot be read or
        # does not parse fails the host here, before any change
        "name": "Read this host's progress (the steps rocm-wizard finished)",
        "ansible.builtin.command": {"argv": locked(mark_lock, "read", ["sh", "-c", READ_RECORD, "sh", progress, STEP_LINE])},
        **({"become": True} if root_progress else {}),
        "register": f"{role}_progress",
        "changed_when": False,
        "check_mode": False,
        "tags": ["always"],
    }]
    if folded:
        tasks = [_read_and_check(tasks[0], mark_lock, progress, checks), {
            "name": "Drift: steps recorded as done that the machine says are not: they run again",
            "ansible.builtin.debug": {"msg": T("{{ %s_progress.stderr_lines | select('match', '^drift: ') | list }}" % role)},
            "changed_when": True,
            "when": f"{role}_progress.stderr_lines | select('match', '^drift: ') | list | length > 0",
            "tags": ["always"],
        }]
    done = f"{role}_progress.stdout_lines"
    n = len(plan.steps)
    backed_up = False
    for k, step in enumerate(plan.steps, 1):
        if step.skipped_reason:
            continue
        title = f"Step {k}/{n} {step.kind}"
        if step.kind == "backup":
            backed_up = True
        if not backed_up and any(a.destructive for a in step.actions):
            raise ExportError(f"plan {plan.name}: step {k} ({step.kind}) is destructive and no backup step comes "
                              "before it")
        body, ahead, after = _step_body(plan, k, title, step, role, modules)
        verify = step.kind == VERIFY_KIND
        if step.kind != PREFLIGHT and not verify:  # the first change on this host: the GPU idle, the host drained
            body.insert(0, {"name": f"{title}: the GPU is idle and the host drained before the first change",
                            "ansible.builtin.include_tasks": DRAIN, "when": f"{role}_drained is not defined"})
        drift = f"{role}_s{k}_drift"
        if step.check is not None and not step.reboot and not verify and not folded:
            tasks += _drift_tasks(k, step.kind, title, step.check, drift, done)
        if not verify:
            body.append({
                "name": f"{title}: done",
                "ansible.builtin.command": {"argv": locked(mark_lock, "change", [*MARK_DONE, progress, str(k)])},
                "register": f"{role}_s{k}_done",
                "changed_when": True,
                **({"become": True} if root_progress else {}),
            })
        block: dict[str, Any] = {"name": f"{title}: {' '.join(step.title.split())}", "tags": [f"step-{k}", step.kind]}
        if not verify:  # the verify step runs every time: it changes nothing and its result is the run's answer
            block["when"] = (f"'{k}' not in {done} or {drift}.rc | default(0) != 0" if step.check is not None
                             and not step.reboot and not folded else f"'{k}' not in {done}")
        elif step.actions and all(a.requires for a in step.actions):  # a host that cannot run it skips one include
            block["when"] = " or ".join(available(r) for a in step.actions for r in a.requires)
        block["block"] = body
        tags = [f"step-{k}", step.kind]
        tasks += [*({**t, "tags": [*tags, *t.get("tags", [])]} for t in ahead), block,
                  *({**t, "tags": [*tags, *t.get("tags", [])]} for t in after)]
    return tasks + _closing_tasks(plan, role)


def _closing_tasks(plan: ResolvedPlan, role: str) -> list[dict[str, Any]]:
    """After verify: the undrain hook on a host this run drained, then the host's result for AWX/AAP (``set_stats``,
    aggregated over the hosts under ``rocm_wizard``: the job's artifacts)."""
    ran = ", ".join(f"{k} if ({role}_s{k}_done | default({{}})) is changed else none"
                    for k, s in enumerate(plan.steps, 1) if not s.skipped_reason and s.kind != VERIFY_KIND)
    verify = next((f"{role}_s{k}_a{j}" for k, s in enumerate(plan.steps, 1) if s.kind == VERIFY_KIND
                   and not s.skipped_reason for j, _a in enumerate(s.actions, 1)), None)
    status = ("'not run'" if verify is None else
              f"'skipped' if {verify}.rc is not defined else ('pass' if {verify}.rc == 0 else 'fail')")
    return [undrain_task(f"{role}_drained"), {
        "name": "Report this host's result to AWX/AAP (set_stats)",
        "ansible.builtin.set_stats": {"data": {"rocm_wizard": T(
            "{{ {inventory_hostname: {'plan': %s_plan_name, 'group': '%s', 'steps_run': [%s] | select | list, "
            "'verify': %s}} }}" % (role, role, ran, status))}},
        "vars": {f"{role}_plan_name": Literal(plan.name)},  # the name is data, never part of the template
        "tags": ["always"],
    }]


# python3 -c CHECKED READ_RECORD FILE LINE_RE CHECKS: the progress as READ_RECORD reads it (sh), less each finished
# step whose own check (CHECKS: JSON [[K, MODE, ARGV]...]) fails on the machine now: that one is drift, said on stderr,
# and runs again. Run as root; a check of MODE user runs as the GPU user (ROCM_WIZARD_GPU_USER, else the sudo caller)
# when there is one. One task for the whole plan: a host with nothing left to do costs one command.
CHECKED = "\n".join([
    "import json, os, pwd, subprocess, sys",
    "read, path, line, checks = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])",
    "got = subprocess.run(['sh', '-c', read, 'sh', path, line], stdout=subprocess.PIPE)",
    "if got.returncode != 0:",
    "    sys.exit(got.returncode)",
    "done = got.stdout.decode().split()",
    "name = os.environ.get('ROCM_WIZARD_GPU_USER') or os.environ.get('SUDO_USER') or ''",
    "kw = {}",
    "if os.geteuid() == 0 and name and name != 'root':",
    "    try:",
    "        pw = pwd.getpwnam(name)",
    "    except KeyError:",
    "        sys.exit(f'{name}: no such user (rocm_wizard_gpu_user)')",
    "    def drop():",
    "        os.initgroups(pw.pw_name, pw.pw_gid)",
    "        os.setgid(pw.pw_gid)",
    "        os.setuid(pw.pw_uid)",
    "    kw = {'preexec_fn': drop, 'cwd': '/', 'env': {**os.environ, 'HOME': pw.pw_dir, 'USER': name, 'LOGNAME': name}}",
    "drifted = set()",
    "for k, mode, argv in checks:",
    "    if str(k) not in done:",
    "        continue",
    "    try:",
    "        rc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **(kw if mode == 'user' else {})).returncode",
    "    except OSError:",
    "        rc = 127",
    "    if rc != 0:",
    "        drifted.add(str(k))",
    "        print(f'drift: step {k} is recorded as done, but the machine says otherwise: it runs again', file=sys.stderr)",
    "print('\\n'.join(k for k in done if k not in drifted))",
])


def _read_and_check(read: dict[str, Any], var: str, progress: str, checks: Sequence[tuple[int, Action]]) -> dict[str, Any]:
    spec = json.dumps([[k, "root" if c.root else "user", list(c.command())] for k, c in checks])
    return {**read, "name": "Read this host's progress (the steps rocm-wizard finished) and check them on the machine",
            "ansible.builtin.command": {"argv": locked(var, "read", ["python3", "-c", CHECKED, READ_RECORD, progress,
                                                                      STEP_LINE, spec])},
            "environment": {"ROCM_WIZARD_GPU_USER": T("{{ rocm_wizard_gpu_user | default('') }}")}}


def _binding_tasks(title: str, a: Action, reg: str) -> list[dict[str, Any]]:
    """The plan's machine binding: the facts read on the host (in check mode too), then an assert per
    host, ahead of every destructive task, that names each difference."""
    return [{
        "name": f"{title}: read the facts the plan was made from",
        "ansible.builtin.command": {"argv": _literal(a.command())},
        "register": reg,
        "changed_when": False,
        "failed_when": False,
        "check_mode": False,
    }, {
        "name": f"{title}: {a.description}",
        "ansible.builtin.assert": {"that": [f"{reg}.rc == 0"],
                                   "fail_msg": T("{{ %s.stderr | default('the machine facts could not be read') }}" % reg),
                                   "quiet": True},
    }]


def _drift_tasks(k: int, kind: str, title: str, check: Action, reg: str, done: str) -> list[dict[str, Any]]:
    """A step the progress records as done is checked on the machine (the step's own check, the one the
    engine and the script run); when the check fails, the drift is reported and the step runs again."""
    label = check.description or check.shown()
    return [{
        "name": f"{title}: still done on the machine? {label}",
        "ansible.builtin.command": {"argv": _literal(check.command())},
        **_become(check),
        "register": reg,
        "changed_when": False,
        "failed_when": False,
        "check_mode": False,
        "when": f"'{k}' in {done}",
        "tags": [f"step-{k}", kind],
    }, {
        "name": f"{title}: drift, recorded as done but the machine says otherwise: it runs again",
        "ansible.builtin.debug": {"msg": f"drift: step {k} is recorded as done, but the machine says otherwise "
                                         f"(checked: {label}: no): running it again"},
        "changed_when": True,
        "when": f"'{k}' in {done} and {reg}.rc | default(0) != 0",
        "tags": [f"step-{k}", kind],
    }]


def _step_body(plan: ResolvedPlan, k: int, title: str, step: StepPlan, role: str,
               modules: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """The step's tasks, and those that go before and after its block (verify's: the controller's results directory,
    and what a host that cannot run it records instead; outside, so such a host skips the whole step at once)."""
    if step.reboot:
        return [{
            "name": f"{title}: reboot",
            "ansible.builtin.reboot": {
                "msg": f"rocm-wizard plan {plan.name}: {step.actions[0].description if step.actions else 'reboot'}",
                "reboot_timeout": REBOOT_TIMEOUT,
                "test_command": "id",
                "reboot_command": T("{{ rocm_wizard_reboot_command | default(omit) }}"),
            },
            "become": True,
        }], [], []
    out: list[dict[str, Any]] = []
    ahead: list[dict[str, Any]] = []  # outside the step's block, ahead of it (verify's results directory)
    after: list[dict[str, Any]] = []
    for j, a in enumerate(step.actions, 1):
        reg = f"{role}_s{k}_a{j}"
        label = a.name or a.description or a.argv[0]
        if step.kind == PREFLIGHT and a.name == binding.NAME:
            out += _binding_tasks(title, a, reg)
            continue
        if a.check:
            out.append({
                "name": f"{title}: already done? {label}",
                "ansible.builtin.command": {"argv": _literal(a.check)},
                **_env(a),
                **_become(a),
                "register": f"{reg}_done",
                "changed_when": False,
                "failed_when": False,
                "check_mode": False,
            })
        task: dict[str, Any] = {"name": f"{title}: {label}", "ansible.builtin.command": {"argv": _literal(a.argv)}}
        mt = module_task(a) if modules and step.kind != VERIFY_KIND else None
        if is_fetch(a.argv):  # the wheelhouse download as the dry-run script has it, throttled (fleet/downloads.py)
            before, task = fetch_tasks(f"{title}: {label}", a.argv, f"{reg}_done" if a.check else None)
            out += before
        elif mt is not None:
            task = {"name": f"{title}: {label}", mt.module: mt.args, **({"loop": list(mt.loop)} if mt.loop else {})}
        when = [available(r) for r in a.requires]  # a machine that cannot provide it (a real root: no GPU) skips it
        if a.check:
            when.append(f"{reg}_done.rc != 0")
        suite = _suite_run(a, reg, title, when) if modules and step.kind == VERIFY_KIND else None
        if suite is not None:
            before, task["ansible.builtin.command"]["argv"] = suite
            out += before
            when.append("not ansible_check_mode")
        if mt is not None and mt.parent:  # its program makes the file's directory when missing: so does the task
            out += _parent_tasks(title, label, a, mt.parent, f"{reg}_dir", when)
        var = lock_var(plan, role, root=a.root, as_user=a.as_user)  # root's locks, or a user's (see lock_var)
        under_lock = mt is None and "ansible.builtin.command" in task and step.kind not in (PREFLIGHT, VERIFY_KIND) and (
            var is not None)
        if under_lock and var is not None:
            task["ansible.builtin.command"]["argv"] = locked(var, "change", task["ansible.builtin.command"]["argv"])
        task.update(_env(a))
        task.update(_become(a))
        if a.timeout:
            task["timeout"] = int(a.timeout)
        if a.redact:
            task["no_log"] = True
        task["register"] = reg
        if when:
            task["when"] = when[0] if len(when) == 1 else when
        if tuple(a.ok_codes) != (0,):
            task["failed_when"] = f"{reg}.rc not in {list(a.ok_codes)}" + (
                f" or {refused(reg)}" if under_lock and {1, 4} & set(a.ok_codes) else "")
        if mt is None:
            task["changed_when"] = step.kind not in (PREFLIGHT, VERIFY_KIND)
        if step.kind == PREFLIGHT:  # read-only: it runs in --check too, and refuses there as it would for real
            task["check_mode"] = False
        if retryable(a):  # the network: again after a pause, until the exit code is accepted (a module: it succeeds)
            task.update(retry_keywords(reg, a.ok_codes))
            if mt is not None:
                task["until"] = f"{reg} is not failed or ansible_check_mode"
        if mt is not None and mt.check_mode_fails:  # in --check, what it needs was only announced by earlier tasks
            task["ignore_errors"] = T("{{ ansible_check_mode }}")
        if step.kind == VERIFY_KIND:  # its JSON comes back first, pass or fail; then a failure fails the host
            task["failed_when"] = False
            task["tags"] = [CAPTURE]  # under fleet run the JSON comes back in the play's events (no module per host)
        out.append(task)
        if suite is not None:
            out.append({
                "name": f"{title}: remove the suite's directory from the host",
                "ansible.builtin.file": {"path": T("{{ %s_tmp.path }}" % reg), "state": "absent"},
                **_become(a),
                "when": f"{reg}_tmp.path is defined",
            })
        if step.kind == VERIFY_KIND:
            standalone = f"{BY_EVENTS} is not defined"
            ahead += [{
                "name": f"{title}: the controller's results directory for this host",
                "ansible.builtin.file": {"path": T(RESULTS + "/{{ inventory_hostname }}"), "state": "directory",
                                         "mode": "0755"},
                "delegate_to": "localhost",
                "check_mode": False,
                "when": standalone,
            }]
            out += [{
                "name": f"{title}: bring the suite's JSON back to the controller",
                "ansible.builtin.copy": {"content": T("{{ %s.stdout }}" % reg),
                                         "dest": T(RESULTS + "/{{ inventory_hostname }}/verify.json"), "mode": "0644"},
                "delegate_to": "localhost",
                "when": [standalone, f"{reg}.stdout is defined"],
            }, {
                "name": f"{title}: the suite passed",
                "ansible.builtin.assert": {"that": [f"{reg}.rc is not defined or {reg}.rc == 0"],
                                           "fail_msg": T(f"verify failed (exit {{{{ {reg}.rc | default('none') }}}}): see "
                                                         "results/{{ inventory_hostname }}/verify.json"),
                                           "quiet": True},
                **({"when": " and ".join(available(r) for r in a.requires)} if a.requires else {}),
            }]
            after += [t for r in a.requires for t in ({
                "name": f"{title}: the controller records that this host cannot run it",
                "ansible.builtin.copy": {"content": T("{{ {'skipped': %s} | to_json }}" % unavailable(r)),
                                         "dest": T(RESULTS + "/{{ inventory_hostname }}/verify.json"), "mode": "0644"},
                "delegate_to": "localhost",
                "when": [standalone, f"{unavailable(r)} | length > 0"],
            }, {
                "name": f"{title}: this host cannot run it",
                "ansible.builtin.debug": {"msg": T("{{ {'skipped': %s} | to_json }}" % unavailable(r))},
                "when": [f"{BY_EVENTS} is defined", f"{unavailable(r)} | length > 0"],
                "tags": [CAPTURE],
            })]
    return out, ahead, after


SUITE_FILE = "rocm_wizard_suite.py"  # wizard/verify/suite.py in the role's files/: the standard library and torch only


def _suite_run(a: Action, reg: str, title: str, when: list[str]) -> tuple[list[dict[str, Any]], list[str]] | None:
    """The verify action as the suite file run on the host: (the tasks that copy it into a new temporary directory
    there, the argv that runs it with the venv's interpreter or inside the image as ``wizard verify`` would), or
    None for a verify command of another shape. Nothing of the wizard is needed on the host."""
    v = list(a.argv)
    tmp = f"{reg}_tmp"
    path = T("{{ %s.path }}/suite.py" % tmp)
    args = [Literal(x) for x in SuiteOptions().args()]
    if "--python" in v[:-1]:
        argv: list[str] = [Literal(v[v.index("--python") + 1]), path, *args]
    elif "--image" in v[:-1]:
        argv = [*_literal(("docker", "run", "--rm", *AMD_DOCKER_FLAGS)), "-v",
                T("{{ %s.path }}/suite.py:%s:ro" % (tmp, CONTAINER_SUITE)), "-e", "PYTHONUNBUFFERED=1",
                Literal(v[v.index("--image") + 1]), "python3", CONTAINER_SUITE, *args]
    else:
        return None
    cond = [*when, "not ansible_check_mode"]
    return [{
        "name": f"{title}: a temporary directory on the host for the suite",
        "ansible.builtin.tempfile": {"state": "directory", "prefix": "rocm-wizard-verify."},
        **_become(a),
        "register": tmp,
        "when": cond,
    }, {
        "name": f"{title}: the suite file (it needs the standard library and torch only)",
        "ansible.builtin.copy": {"src": SUITE_FILE, "dest": path, "mode": "0644"},
        **_become(a),
        "when": cond,
    }], argv


def _parent_tasks(title: str, label: str, a: Action, parent: str, reg: str, when: list[str]) -> list[dict[str, Any]]:
    """The directory of a file the action writes, made (0755) only where it is missing, as the action's own program
    makes it: an existing directory keeps its mode."""
    return [{
        "name": f"{title}: {label}: is its directory there?",
        "ansible.builtin.stat": {"path": Literal(parent)},
        **_become(a),
        "register": reg,
        **({"when": when[0] if len(when) == 1 else list(when)} if when else {}),
    }, {
        "name": f"{title}: {label}: its directory",
        "ansible.builtin.file": {"path": Literal(parent), "state": "directory", "mode": "0755"},
        **_become(a),
        "when": [*when, f"not {reg}.stat.exists"],
    }]


def unavailable(requirement: str) -> str:
    """The Jinja expression of why this host cannot provide ``requirement`` (the extra var
    ``rocm_wizard_unavailable``: host -> requirement -> reason; the fleet commands set it for real roots)."""
    return f"((rocm_wizard_unavailable | default({{}})).get(inventory_hostname) or {{}}).get('{requirement}', '')"


def available(requirement: str) -> str:
    return f"{unavailable(requirement)} | length == 0"


def lock_vars(plan: ResolvedPlan, role: str) -> dict[str, Any]:
    """The role's ``<role>_lock``: LOCKED with the lock files a task run as root takes (wizard.fleet.lock.task_locks:
    the rule's, as the dry-run script takes them; the user's XDG state dir expanded on the host when the plan names
    none) and the role as holder; ``<role>_user_lock``, where a task run as a user takes fewer: the ones a user can
    take (the user's own lock, never the system's)."""
    root, user = task_locks(plan)
    out = {f"{role}_lock": Literal(_set_locks(root, holder(role, plan.name)))}
    if user and user != root:
        out[f"{role}_user_lock"] = Literal(_set_locks(user, holder(role, plan.name)))
    return out


def _set_locks(paths: Sequence[str], who: str) -> str:
    """LOCKED with its LOCKS (one a line) and HOLDER in front of the task's MODE and COMMAND."""
    locks = _shell_path(paths[0]) if len(paths) == 1 else \
        "\"$(printf '%s\\n' " + " ".join(_shell_path(p) for p in paths) + ")\""
    return f'set -- {locks} {shlex.quote(who)} "$@"\n{LOCKED}'


def lock_var(plan: ResolvedPlan, role: str, *, root: bool, as_user: bool = False) -> str | None:
    """The role's lock variable a task takes, None: it takes none (lock_vars). ``root``: it runs as root, and takes
    every lock of the plan; ``as_user``: it runs as the GPU user (their venv, their activate script), and takes the ones
    a user can take; else it runs as whoever connects and takes them only where the plan keeps its state where a user
    can lock it (not a system state dir: there only root changes anything, and such a task is a read-only check)."""
    locks, user = task_locks(plan)
    if root or user == locks:
        return f"{role}_lock"
    if not user or (not as_user and system_path(plan.state_dir or "")):
        return None
    return f"{role}_user_lock"


def locked(var: str, mode: str, argv: Sequence[str]) -> list[str]:
    """``argv`` run under the wizard's locks (LOCKED; ``var``: the role's lock variable, see lock_var; ``mode`` change
    or read). A task run as root takes every lock of the plan, one run as a user (the GPU user's venv and activate
    script, or whoever connects) the ones a user can take; a module task takes none (Ansible runs a module, not a
    command)."""
    return [Literal("sh"), Literal("-c"), T("{{ %s }}" % var), Literal("rocm-wizard-lock"), Literal(mode),
            *(x if isinstance(x, (Literal, T)) else Literal(x) for x in argv)]


def _literal(argv: Sequence[str]) -> list[Literal]:
    return [Literal(x) for x in argv]


def _become(a: Action) -> dict[str, Any]:
    """Root actions become root; user actions (venv, pip) become ``rocm_wizard_gpu_user`` when it is set (connecting as
    an admin with sudo), else run as whoever connects."""
    if a.root:
        return {"become": True}
    if a.as_user:
        return {"become": T("{{ rocm_wizard_gpu_user | default('') | length > 0 }}"),
                "become_user": T("{{ rocm_wizard_gpu_user | default(omit) }}")}
    return {}


def _env(a: Action) -> dict[str, Any]:
    return {"environment": {k: Literal(v) for k, v in a.env}} if a.env else {}
