"""``fleet detect``: every host's facts through Ansible, gathered into the fleet directory.

Each host runs its own wizard (``python3 -m wizard fleet facts``, or the argv in the host variable
``rocm_wizard_command``) and the facts come back to ``FLEET/hosts/HOST/facts.json``; the controller
diagnoses them with its own knowledge base. A host that cannot be reached, has no wizard, or answers
something that is not a facts document is listed as such, with Ansible's or the host's own words;
the others go on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from wizard.fleet.ansible_run import PlaybookResult, inventory_hosts, run_playbook, write_playbook
from wizard.fleet.facts_io import FactsFormatError, loads
from wizard.model import Facts

WIZARD_FACTS = "{{ rocm_wizard_command | default(['python3', '-m', 'wizard']) + ['fleet', 'facts'] }}"
HOSTS = "hosts"


@dataclass(frozen=True)
class HostFacts:
    host: str
    status: str  # "ok", "unreachable", "no-wizard", "garbage"
    facts: Facts | None = None
    reason: str = ""


def facts_path(fleet_dir: Path, host: str) -> Path:
    return fleet_dir / HOSTS / host / "facts.json"


def detect_playbook(fleet_dir: Path) -> Path:
    return write_playbook(fleet_dir / "playbooks" / "detect.yml", [{
        "name": "rocm-wizard fleet detect",
        "hosts": "all",
        "gather_facts": False,
        "tasks": [{
            "name": "rocm-wizard facts of this host",
            "ansible.builtin.command": {"argv": WIZARD_FACTS},
            "register": "rocm_wizard_facts",
            "changed_when": False,
            "check_mode": False,
        }, {
            "name": "the controller's directory for this host",
            "ansible.builtin.file": {"path": f"{fleet_dir}/{HOSTS}/{{{{ inventory_hostname }}}}", "state": "directory",
                                     "mode": "0755"},
            "delegate_to": "localhost",
        }, {
            "name": "bring the facts back",
            "ansible.builtin.copy": {"content": "{{ rocm_wizard_facts.stdout }}",
                                     "dest": f"{fleet_dir}/{HOSTS}/{{{{ inventory_hostname }}}}/facts.json",
                                     "mode": "0644"},
            "delegate_to": "localhost",
        }],
    }], ["rocm-wizard fleet detect: written by the wizard; each host's facts into the fleet directory"])


def detect(inventory: str, fleet_dir: Path, *, limit: str | None = None) -> list[HostFacts]:
    hosts = inventory_hosts(inventory, limit, fleet_dir)
    for h in hosts:
        facts_path(fleet_dir, h).unlink(missing_ok=True)
    result = run_playbook(detect_playbook(fleet_dir), inventory, fleet_dir, limit=limit)
    return [_host(h, fleet_dir, result) for h in hosts]


def _host(host: str, fleet_dir: Path, result: PlaybookResult) -> HostFacts:
    events = result.of(host)
    down = next((e for e in events if e.status == "unreachable"), None)
    if down is not None:
        return HostFacts(host, "unreachable", reason=_last_line(down.message) or "unreachable")
    failed = next((e for e in events if e.status == "failed"), None)
    if failed is not None:
        return HostFacts(host, "no-wizard" if failed.task.startswith("rocm-wizard facts") else "failed",
                         reason=_last_line(failed.message) or f"{failed.task} failed")
    try:
        text = facts_path(fleet_dir, host).read_text(encoding="utf-8")
    except OSError:
        return HostFacts(host, "unreachable", reason="no answer (the play did not reach this host)")
    try:
        return HostFacts(host, "ok", facts=loads(text))
    except FactsFormatError as exc:
        return HostFacts(host, "garbage", reason=f"answered something else than facts: {exc}")


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""
