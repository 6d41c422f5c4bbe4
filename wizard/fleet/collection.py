"""The Galaxy collection ``rocm_wizard.fleet`` (``rocm-wizard fleet collection DIR``): a role that runs any resolved
plan given to it as data, the fleet's callback plugins and a README, built by ``ansible-galaxy collection build``
into DIR (its tarball, installed with ``ansible-galaxy collection install``).

The role ``rocm_wizard.fleet.rocm_wizard`` holds nothing of a machine: the plan comes in ``rocm_wizard_plan``
(``plan_vars/ROLE.yml`` of an export, written by :func:`plan_vars`: every string from the plan ``!unsafe``, so
Ansible never renders a path or a URL as a template), everything else from variables with defaults
(``defaults/main.yml``, checked by ``meta/argument_specs.yml``). Per host it reads the progress file the export
and the dry-run script keep (the same format: each continues the others' runs), checks the steps recorded as
done with each step's own check (drift runs the step again), refuses while a process holds the GPU, runs the
drain hook before the first change, every step not done (one skipped include per finished step), the verify
suite, the undrain hook, and reports a summary per host through ``set_stats`` (AWX/AAP show it as the job's
artifacts).

It takes the wizard's locks as the exported role does (wizard.fleet.lock: LOCKED, held in ``vars/main.yml``): the
progress read, each changing action and each done mark run under the flocks the engine and the dry-run script take
for the plan (wizard.fleet.lock.task_locks): a task run as root under all of them (``rocm_wizard_plan.lock``, one a
line), one run as a user under the ones a user can take (``rocm_wizard_plan.user_lock``: the user's own), with the
engine's holder record naming this role and the plan (``rocm_wizard_plan.holder``); a task refuses, with the dry-run
script's line, while another run holds one of them (exit 4) or a run of the wizard is not finished in a state dir
taken (exit 1).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from wizard import __version__
from wizard.downloads.shell import is_fetch, script_lines
from wizard.fleet import PLUGINS, FleetError, ansible_program
from wizard.fleet.lock import LOCKED, holder, refused, task_locks
from wizard.fleet.safety import DEFAULT_DELAY, DEFAULT_RETRIES, GPU_HOLDERS, retryable
from wizard.fleet.yaml_text import Literal, Template as T, document
from wizard.model import PREFLIGHT, ResolvedPlan
from wizard.script import READ_RECORD, STEP_LINE, progress_path
from wizard.steps import system_path

NAMESPACE, NAME, ROLE = "rocm_wizard", "fleet", "rocm_wizard"
FQCN = f"{NAMESPACE}.{NAME}.{ROLE}"
VERSION = __version__  # the wizard's own: the collection ships with it
CALLBACKS = ("rocm_wizard_events.py", "rocm_wizard_progress.py")
VERIFY_KIND = "verify"


def plan_vars(plan: ResolvedPlan) -> dict[str, Any]:
    """The plan as the role's ``rocm_wizard_plan``: each step to run with its actions as argv lists (the
    wheelhouse fetch as the dry-run script's bash: the host needs no wizard), the wizard's lock files a task run as
    root takes (``lock``, one a line: the engine's and the dry-run script's, wizard.fleet.lock.task_locks), those a
    task run as a user takes (``user_lock``: the non-system ones, none for a plan that changes nothing of a user's)
    and the holder record the role writes into each."""
    from wizard.fleet.export import MARK_DONE

    progress = progress_path(plan)
    locks, user = task_locks(plan)
    steps: list[dict[str, Any]] = []
    for k, step in enumerate(plan.steps, 1):
        if step.skipped_reason:
            continue
        actions = []
        for a in step.actions:
            argv = list(a.argv)
            if is_fetch(argv):
                argv = ["bash", "-c", "set -euo pipefail\n" + "\n".join(script_lines(argv))]
            actions.append({
                "name": Literal(a.name or a.description or a.argv[0]),
                "argv": [Literal(x) for x in argv],
                "env": {k2: Literal(v) for k2, v in a.env},
                "root": a.root,
                "user": a.as_user,
                "check": [Literal(x) for x in a.check or ()],
                "ok_codes": list(a.ok_codes),
                "timeout": int(a.timeout or 0),
                "secret": bool(a.redact),
                "requires": [Literal(r) for r in a.requires],
                "retry": retryable(a),
                "changes": step.kind not in (PREFLIGHT, VERIFY_KIND),
            })
        check = None
        if step.check is not None and not step.reboot and step.kind != VERIFY_KIND:
            check = {"argv": [Literal(x) for x in step.check.command()], "root": step.check.root,
                     "user": step.check.as_user}
        steps.append({"number": k, "kind": step.kind, "title": Literal(" ".join(step.title.split())),
                      "reboot": step.reboot, "verify": step.kind == VERIFY_KIND, "check": check, "actions": actions})
    return {"rocm_wizard_plan": {
        "name": Literal(plan.name), "title": Literal(plan.title),
        "progress": Literal(progress), "root_progress": bool(plan.state_dir) and system_path(plan.state_dir or ""),
        "lock": Literal("\n".join(locks)), "user_lock": Literal("\n".join(user)),
        "holder": Literal(holder(FQCN, plan.name)),
        "mark_done": [Literal(x) for x in MARK_DONE], "steps": steps}}


# --- the role --------------------------------------------------------------------------------------------------

_UNAVAILABLE = ("(rocm_wizard_unavailable.get(inventory_hostname) or {}) | dict2items | selectattr('value') "
                "| map(attribute='key') | list")
_DRIFTED = ("rocm_wizard_drift.results | default([]) | selectattr('rc', 'defined') | rejectattr('rc', 'equalto', 0) "
            "| map(attribute='rocm_wizard_step.number') | map('string') | list")
_AS = {  # root actions become root; user actions become the GPU user when one is named, else run as who connects
    "become": T("{{ %(a)s.root or (%(a)s.user and rocm_wizard_gpu_user | length > 0) }}"),
    "become_user": T("{{ 'root' if %(a)s.root else (rocm_wizard_gpu_user or 'root') }}"),
}


def _as(var: str) -> dict[str, Any]:
    return {k: T(v % {"a": var}) for k, v in _AS.items()}


# the role's vars/main.yml: the lock script (wizard.fleet.lock), and the argv that runs a command under it:
# rocm_wizard_locked + [MODE] + COMMAND (MODE change, or read: a missing state dir is not made), root's locks; and
# rocm_wizard_user_locked, a user's (plan data exported before ``user_lock`` names the one lock it has)
LOCK_VARS: dict[str, Any] = {
    "rocm_wizard_lock_script": Literal(LOCKED),
    "rocm_wizard_locked": T("{{ ['sh', '-c', rocm_wizard_lock_script, 'rocm-wizard-lock', rocm_wizard_plan.lock, "
                            "rocm_wizard_plan.holder] }}"),
    "rocm_wizard_user_locked": T("{{ ['sh', '-c', rocm_wizard_lock_script, 'rocm-wizard-lock', "
                                 "rocm_wizard_plan.user_lock | default(rocm_wizard_plan.lock), rocm_wizard_plan.holder] }}"),
}
# which locks an action takes when it changes the host (as the exported role's: wizard.fleet.export.lock_var): a root
# action root's; one run as the GPU user a user's (its own lock: the root run of the plan and the user's own run both
# take it); one run as whoever connects a user's where the plan's state dir is not a system one (there such an action
# is a read-only look, and takes none). Plan data without ``user_lock`` keeps its rule: the one lock for a root action,
# and for any other where the state dir is not a system one, except one that becomes the GPU user.
_ROOT_LOCKS = "{a}.changes and {a}.root"
_USER_LOCKS = ("{a}.changes and not {a}.root and ((({a}.user or not rocm_wizard_plan.root_progress) "
               "and rocm_wizard_plan.user_lock | length > 0) if rocm_wizard_plan.user_lock is defined else "
               "(not rocm_wizard_plan.root_progress and not ({a}.user and rocm_wizard_gpu_user | length > 0)))")
# the progress read and each done mark run as the state dir's owner: root's locks for a system state dir, else a user's
_PROGRESS_LOCKED = "(rocm_wizard_locked if rocm_wizard_plan.root_progress else rocm_wizard_user_locked)"


DEFAULTS: dict[str, Any] = {
    "rocm_wizard_plan": {},
    "rocm_wizard_gpu_user": "",
    "rocm_wizard_reboot": True,
    "rocm_wizard_reboot_timeout": 1800,
    "rocm_wizard_drain": "",
    "rocm_wizard_undrain": "",
    "rocm_wizard_hook_host": "",
    "rocm_wizard_gpu_idle_check": True,
    "rocm_wizard_retries": DEFAULT_RETRIES,
    "rocm_wizard_retry_delay": DEFAULT_DELAY,
    "rocm_wizard_results": "",
    "rocm_wizard_unavailable": {},
}

OPTIONS: dict[str, tuple[str, str]] = {  # name -> (type, description)
    "rocm_wizard_plan": ("dict", "The resolved plan to run, as data: plan_vars/ROLE.yml of `rocm-wizard --plan NAME "
                                 "--export ansible DIR` or of `rocm-wizard fleet plan NAME --export ansible DIR`. "
                                 "The venv, the mirrors and the versions are the plan's (resolve it with the venv and "
                                 "mirror settings you want)."),
    "rocm_wizard_gpu_user": ("str", "The GPU user, who owns the venv: user actions (venv, pip, activate script) "
                                    "run as this user through become_user. Empty: as the connecting user."),
    "rocm_wizard_reboot": ("bool", "Reboot policy: true reboots a host when a step needs it (ansible.builtin.reboot); "
                                   "false stops the host there, to be rebooted by you and run again."),
    "rocm_wizard_reboot_timeout": ("int", "Seconds ansible.builtin.reboot waits for the host to come back."),
    "rocm_wizard_drain": ("str", "A command run before the first change on a host with steps left (Slurm: scontrol "
                                 "update nodename=NODE state=drain reason=rocm-wizard; Kubernetes: kubectl drain NODE "
                                 "--ignore-daemonsets). Empty: none."),
    "rocm_wizard_undrain": ("str", "A command run after the verify step (scontrol update nodename=NODE state=resume; "
                                   "kubectl uncordon NODE). Empty: none."),
    "rocm_wizard_hook_host": ("str", "Where the hooks run (localhost for kubectl). Empty: the host itself."),
    "rocm_wizard_gpu_idle_check": ("bool", "Refuse while a process holds /dev/kfd or a /dev/dri/renderD* node "
                                           "(read-only, in check mode too)."),
    "rocm_wizard_retries": ("int", "More tries of the network actions (apt updates and installs, downloads, pip)."),
    "rocm_wizard_retry_delay": ("int", "Seconds between those tries."),
    "rocm_wizard_results": ("str", "The controller's directory for each host's verify.json. Empty: "
                                   "the playbook's directory/results."),
    "rocm_wizard_unavailable": ("dict", "host -> requirement -> reason: an action needing what the host cannot "
                                        "provide (gpu) is skipped there."),
}

_RESULTS = T("{{ rocm_wizard_results or (playbook_dir + '/results') }}/{{ inventory_hostname }}")


def main_tasks() -> list[dict[str, Any]]:
    return [{
        "name": "Check that a plan is given",
        "ansible.builtin.assert": {"that": ["rocm_wizard_plan.steps is defined", "rocm_wizard_plan.progress is defined"],
                                   "fail_msg": "rocm_wizard_plan is not set: give the plan_vars/ROLE.yml of a "
                                               "rocm-wizard export (vars_files)",
                                   "quiet": True},
    }, {
        "name": "Check that the plan names the wizard's lock",
        "ansible.builtin.assert": {"that": ["rocm_wizard_plan.lock is defined", "rocm_wizard_plan.holder is defined"],
                                   "fail_msg": "rocm_wizard_plan names no lock file: it was exported by an older "
                                               "rocm-wizard; export the plan again",
                                   "quiet": True},
    }, {
        "name": "Read this host's progress (the steps rocm-wizard finished)",
        "ansible.builtin.command": {"argv": [
            Literal("sh"), "-c", T("{{ rocm_wizard_lock_script }}"), Literal("rocm-wizard-lock"),
            T("{{ rocm_wizard_plan.lock if rocm_wizard_plan.root_progress else rocm_wizard_plan.user_lock "
              "| default(rocm_wizard_plan.lock) }}"), T("{{ rocm_wizard_plan.holder }}"), Literal("read"),
            Literal("sh"), "-c", Literal(READ_RECORD), Literal("sh"), T("{{ rocm_wizard_plan.progress }}"),
            Literal(STEP_LINE)]},
        "become": T("{{ rocm_wizard_plan.root_progress }}"),
        "register": "rocm_wizard_progress",
        "changed_when": False,
        "check_mode": False,
    }, {
        "name": "Check on the machine that the steps recorded as done are still done",
        "ansible.builtin.command": {"argv": T("{{ rocm_wizard_step.check.argv }}")},
        **_as("rocm_wizard_step.check"),
        "loop": T("{{ rocm_wizard_plan.steps | selectattr('check') | list }}"),
        "loop_control": {"loop_var": "rocm_wizard_step", "label": T("{{ rocm_wizard_step.title }}")},
        "when": "(rocm_wizard_step.number | string) in rocm_wizard_progress.stdout_lines",
        "register": "rocm_wizard_drift",
        "changed_when": False,
        "failed_when": False,
        "check_mode": False,
    }, {
        "name": "Run each step not done yet",
        "ansible.builtin.include_tasks": "step.yml",
        "loop": T("{{ rocm_wizard_plan.steps }}"),
        "loop_control": {"loop_var": "rocm_wizard_step", "label": T("{{ rocm_wizard_step.number }} {{ rocm_wizard_step.kind }}")},
        "vars": {"rocm_wizard_done": T("{{ rocm_wizard_progress.stdout_lines | difference(%s) }}" % _DRIFTED)},
        "when": "rocm_wizard_step.verify or (rocm_wizard_step.number | string) not in rocm_wizard_done",
    }, {
        "name": "Undrain the host after verify",
        "ansible.builtin.command": {"argv": ["sh", "-c", T("{{ rocm_wizard_undrain }}")]},
        "delegate_to": T("{{ rocm_wizard_hook_host or inventory_hostname }}"),
        "changed_when": True,
        "when": "rocm_wizard_undrain | length > 0 and rocm_wizard_drained is defined",
    }, {
        "name": "Report this host's result to AWX/AAP",
        "ansible.builtin.set_stats": {"data": {"rocm_wizard": T(
            "{{ {inventory_hostname: {'plan': rocm_wizard_plan.name, 'steps': rocm_wizard_plan.steps | rejectattr('verify') "
            "| list | length, 'steps_run': rocm_wizard_ran | default([]), "
            "'verify': rocm_wizard_verify_status | default('not run')}} }}")}, "aggregate": True},
    }]


def drain_tasks() -> list[dict[str, Any]]:
    """Before the first change on a host: no process may hold the GPU (read-only, in check mode too), then the drain
    hook; undrained after verify."""
    return [{
        "name": "Refuse while a process holds the GPU",
        "ansible.builtin.command": {"argv": [Literal(x) for x in GPU_HOLDERS]},
        "become": True,
        "changed_when": False,
        "check_mode": False,
        "when": "rocm_wizard_gpu_idle_check | bool",
    }, {
        "name": "Drain the host before the first change",
        "ansible.builtin.command": {"argv": ["sh", "-c", T("{{ rocm_wizard_drain }}")]},
        "delegate_to": T("{{ rocm_wizard_hook_host or inventory_hostname }}"),
        "changed_when": True,
        "when": "rocm_wizard_drain | length > 0",
    }, {
        "name": "Remember the host is drained",
        "ansible.builtin.set_fact": {"rocm_wizard_drained": True},
    }]


def step_tasks() -> list[dict[str, Any]]:
    return [{
        "name": "Make the GPU idle and drain the host before the first change",
        "ansible.builtin.include_tasks": "drain.yml",
        "when": "rocm_wizard_drained is not defined and not rocm_wizard_step.verify and rocm_wizard_step.kind != 'preflight'",
    }, {
        "name": "Reboot for the step",
        "ansible.builtin.reboot": {"msg": T("rocm-wizard plan {{ rocm_wizard_plan.name }}: {{ rocm_wizard_step.title }}"),
                                   "reboot_timeout": T("{{ rocm_wizard_reboot_timeout | int }}"),
                                   "test_command": "id"},
        "become": True,
        "when": "rocm_wizard_step.reboot and rocm_wizard_reboot | bool",
    }, {
        "name": "Stop the host, a reboot is needed",
        "ansible.builtin.fail": {"msg": T("step {{ rocm_wizard_step.number }} needs a reboot and rocm_wizard_reboot is "
                                          "false: reboot the host, then run again")},
        "when": "rocm_wizard_step.reboot and not rocm_wizard_reboot | bool",
    }, {
        "name": "Run the step's actions",
        "ansible.builtin.include_tasks": "action.yml",
        "loop": T("{{ rocm_wizard_step.actions }}"),
        "loop_control": {"loop_var": "rocm_wizard_action", "label": T("{{ rocm_wizard_action.name }}")},
    }, {
        "name": "Record the step as done",
        "ansible.builtin.command": {"argv": T("{{ %s + ['change'] + rocm_wizard_plan.mark_done + "
                                              "[rocm_wizard_plan.progress, rocm_wizard_step.number | string] }}"
                                              % _PROGRESS_LOCKED)},
        "become": T("{{ rocm_wizard_plan.root_progress }}"),
        "changed_when": True,
        "when": "not rocm_wizard_step.verify",
    }, {
        "name": "Remember the step ran",
        "ansible.builtin.set_fact": {"rocm_wizard_ran": T("{{ rocm_wizard_ran | default([]) + [rocm_wizard_step.number] }}")},
        "when": "not rocm_wizard_step.verify",
    }]


def action_tasks() -> list[dict[str, Any]]:
    a = "rocm_wizard_action"
    runs = f"{a}.requires | intersect({_UNAVAILABLE}) | length == 0"
    return [{
        "name": "Check whether the action is already done",
        "ansible.builtin.command": {"argv": T("{{ %s.check }}" % a)},
        "environment": T("{{ %s.env }}" % a),
        **_as(a),
        "register": "rocm_wizard_done_check",
        "changed_when": False,
        "failed_when": False,
        "check_mode": False,
        "when": f"{a}.check | length > 0",
    }, {
        "name": "Run the action",
        "ansible.builtin.command": {"argv": T("{{ (rocm_wizard_locked + ['change'] + %s.argv) if %s else "
                                              "(rocm_wizard_user_locked + ['change'] + %s.argv) if %s else %s.argv }}"
                                              % (a, _ROOT_LOCKS.format(a=a), a, _USER_LOCKS.format(a=a), a))},
        "environment": T("{{ %s.env }}" % a),
        **_as(a),
        "timeout": T("{{ %s.timeout }}" % a),
        "no_log": T("{{ %s.secret }}" % a),
        "register": "rocm_wizard_result",
        "retries": T("{{ rocm_wizard_retries if %s.retry else 0 }}" % a),
        "delay": T("{{ rocm_wizard_retry_delay }}"),
        "until": f"rocm_wizard_result is skipped or rocm_wizard_result.rc in {a}.ok_codes",
        "failed_when": f"(rocm_wizard_result.rc is defined and rocm_wizard_result.rc not in {a}.ok_codes "
                       f"or {refused('rocm_wizard_result')}) and not rocm_wizard_step.verify",
        "changed_when": f"{a}.changes",
        "when": [runs, f"{a}.check | length == 0 or rocm_wizard_done_check.rc != 0"],
    }, {
        "name": "Bring the verify suite's answer back to the controller",
        "when": "rocm_wizard_step.verify",
        "delegate_to": "localhost",
        "block": [{
            "name": "Make the host's results directory",
            "ansible.builtin.file": {"path": _RESULTS, "state": "directory", "mode": "0755"},
            "check_mode": False,
        }, {
            "name": "Write verify.json",
            "ansible.builtin.copy": {"content": T("{{ rocm_wizard_result.stdout if rocm_wizard_result.stdout is defined "
                                                  "else {'skipped': rocm_wizard_unavailable[inventory_hostname][%s.requires | intersect(%s) | first]} "
                                                  "| to_json }}" % (a, _UNAVAILABLE)),
                                     "dest": T(_RESULTS + "/verify.json"), "mode": "0644"},
        }, {
            "name": "Note the verify result",
            "ansible.builtin.set_fact": {"rocm_wizard_verify_status": T(
                "{{ 'skipped' if rocm_wizard_result.rc is not defined else ('pass' if rocm_wizard_result.rc == 0 "
                "else 'fail') }}")},
        }, {
            "name": "Check that the suite passed",
            "ansible.builtin.assert": {"that": ["rocm_wizard_result.rc is not defined or rocm_wizard_result.rc == 0"],
                                       "fail_msg": T("verify failed (exit {{ rocm_wizard_result.rc | default('-') }}): see "
                                                     "{{ rocm_wizard_results or 'results' }}/{{ inventory_hostname }}/verify.json"),
                                       "quiet": True},
        }],
    }]


def argument_specs() -> dict[str, Any]:
    options: dict[str, Any] = {}
    for name, (kind, desc) in OPTIONS.items():
        options[name] = {"type": kind, "description": desc, "default": DEFAULTS[name]}
    return {"argument_specs": {"main": {
        "short_description": "Run a plan resolved by rocm-wizard (ROCm + PyTorch on AMD GPUs) on each host",
        "description": ["Steps a host finished are skipped with one task each; a step whose check fails on the "
                        "machine runs again.",
                        "Takes rocm-wizard's own locks (the flocks the wizard takes for the plan: the system "
                        "state dir's and the GPU user's STATE/lock) for each task that changes the host; refuses "
                        "while a wizard run holds one or is not finished.",
                        "Refuses while a process holds the GPU; drain and undrain hooks around the change."],
        "author": ["rocm-wizard"],
        "options": options}}}


README = f"""# rocm_wizard.fleet

The role `rocm_wizard.fleet.rocm_wizard` runs a plan that rocm-wizard resolved (ROCm and a
PyTorch venv on AMD GPUs) on each host of an inventory, and the callback plugins of `rocm-wizard fleet`
(`rocm_wizard.fleet.rocm_wizard_events`, `rocm_wizard.fleet.rocm_wizard_progress`).

## Install

    rocm-wizard fleet collection dist/
    ansible-galaxy collection install dist/{NAMESPACE}-{NAME}-{VERSION}.tar.gz

## Use

The plan is data: `rocm-wizard fleet plan upgrade-6.4 -i INVENTORY --export ansible DIR` (or
`rocm-wizard --plan upgrade-6.4 --export ansible DIR` on one machine) writes `DIR/plan_vars/ROLE.yml`, one per
group of hosts that resolve to the same actions.

```yaml
- name: ROCm 6.4 on the GPU nodes
  hosts: gpu_nodes
  serial: [1, "10%", "100%"]
  max_fail_percentage: 0
  gather_facts: false
  vars_files:
    - DIR/plan_vars/rocm_wizard_upgrade_6_4.yml
  vars:
    rocm_wizard_gpu_user: alice            # user actions (venv, pip) become this user
    rocm_wizard_drain: "scontrol update nodename={{{{ inventory_hostname }}}} state=drain reason=rocm-wizard"
    rocm_wizard_undrain: "scontrol update nodename={{{{ inventory_hostname }}}} state=resume"
  roles:
    - rocm_wizard.fleet.rocm_wizard
```

Connect as an admin account with sudo: root actions use become, user actions become `rocm_wizard_gpu_user`.

Kubernetes nodes: drain from the controller:

```yaml
    rocm_wizard_hook_host: localhost
    rocm_wizard_drain: "kubectl drain {{{{ inventory_hostname }}}} --ignore-daemonsets --delete-emptydir-data"
    rocm_wizard_undrain: "kubectl uncordon {{{{ inventory_hostname }}}}"
```

Each task that changes a host (and the first, which reads its progress) takes rocm-wizard's own locks, the flocks
on the `STATE/lock` files that `rocm-wizard` and its dry-run script take for the plan (`flock`, util-linux, on the
hosts): a task run as root takes them all (`rocm_wizard_plan.lock`: the system state dir's, then the GPU user's where
the plan changes that user's venv), a task run as the GPU user takes that user's own (`rocm_wizard_plan.user_lock`),
which the user's own `rocm-wizard` run of the venv takes too. While a run of the wizard holds one, or one is not
finished on the host, the host fails with the wizard's line (exit 4, naming the holder and the lock file, or 1
naming `rocm-wizard resume`, `rollback` and `abandon`); run the play again afterwards. A plan_vars file written
before the role took the lock names no lock file and is refused: export the plan again.

Every variable, its type and default: `roles/{ROLE}/meta/argument_specs.yml`. Each host's result (plan, steps run,
verify) is reported with `set_stats` under `rocm_wizard` (AWX/AAP: the job's artifacts); its `verify.json` goes
to `rocm_wizard_results` on the controller.
"""


def sources(repository: str | None = None) -> dict[Path, str]:
    """The collection's files (relative path -> text), as ``ansible-galaxy collection build`` reads them."""
    role = Path("roles", ROLE)
    files = {
        Path("galaxy.yml"): document({
            "namespace": NAMESPACE, "name": NAME, "version": VERSION, "readme": "README.md",
            "authors": ["rocm-wizard"],
            "description": "Run rocm-wizard's resolved plans (ROCm + PyTorch on AMD GPUs) on a fleet",
            "license": ["MIT"], "tags": ["linux", "tools", "infrastructure"],
            "dependencies": {}, "build_ignore": [], **({"repository": repository} if repository else {}),
        }),
        Path("meta", "runtime.yml"): document({"requires_ansible": ">=2.16.0"}),
        Path("README.md"): README,
        Path("CHANGELOG.md"): f"# Changelog\n\n## {VERSION}\n\n- The role and the fleet callbacks of rocm-wizard {__version__}.\n",
        role / "defaults" / "main.yml": document(DEFAULTS, ["every variable: meta/argument_specs.yml"]),
        role / "vars" / "main.yml": document(LOCK_VARS, [
            "the wizard's lock (its flock on the plan's state dir's lock file), taken by each task that changes the "
            "host: rocm_wizard_locked + [change|read] + COMMAND (wizard/fleet/lock.py: LOCKED)"]),
        role / "meta" / "main.yml": document({"galaxy_info": {
            "author": "rocm-wizard", "description": "Run a plan resolved by rocm-wizard on each host",
            "license": "MIT", "min_ansible_version": "2.16",
            "platforms": [{"name": "Ubuntu", "versions": ["jammy", "noble"]},
                          {"name": "Debian", "versions": ["bookworm"]}],
            "galaxy_tags": ["rocm", "pytorch", "gpu", "amd"]}, "dependencies": []}),
        role / "meta" / "argument_specs.yml": document(argument_specs()),
        role / "tasks" / "main.yml": document(main_tasks()),
        role / "tasks" / "step.yml": document(step_tasks()),
        role / "tasks" / "drain.yml": document(drain_tasks()),
        role / "tasks" / "action.yml": document(action_tasks()),
    }
    for name in CALLBACKS:
        files[Path("plugins", "callback", name)] = (PLUGINS / "callback" / name).read_text(encoding="utf-8")
    return files


def build(out_dir: str | Path, *, repository: str | None = None) -> Path:
    """Write the collection's sources to a temporary directory, build it with ``ansible-galaxy collection build``
    into ``out_dir`` (made if missing; an earlier tarball of the same version is replaced); return the tarball."""
    out = Path(out_dir).expanduser().absolute()
    if out.exists() and not out.is_dir():
        raise FleetError(f"{out}: exists and is not a directory")
    galaxy = ansible_program("ansible-galaxy")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rocm-wizard-collection-") as tmp:
        src = Path(tmp) / "src"
        for rel, text in sources(repository).items():
            p = src / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, encoding="utf-8")
        res = subprocess.run([galaxy, "collection", "build", "--force", "--output-path", str(out), str(src)],
                             capture_output=True, text=True, timeout=300,
                             env={**os.environ, "ANSIBLE_HOME": str(Path(tmp) / ".ansible"),
                                  "ANSIBLE_LOCAL_TEMP": str(Path(tmp) / ".tmp")})
        if res.returncode != 0:
            lines = [ln for ln in (res.stderr or res.stdout).splitlines() if ln.strip()]
            raise FleetError("ansible-galaxy collection build failed: " + (lines[-1] if lines else f"exit {res.returncode}"))
    tarball = out / f"{NAMESPACE}-{NAME}-{VERSION}.tar.gz"
    if not tarball.is_file():
        raise FleetError(f"ansible-galaxy collection build wrote no {tarball.name} into {out}")
    return tarball


__all__ = ["build", "plan_vars", "sources"]
