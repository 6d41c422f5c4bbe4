"""``fleet detect``: every host's facts through Ansible, gathered into the fleet directory.

Each host runs its own wizard (``python3 -m wizard fleet facts``, or the argv in the host variable
``rocm_wizard_command``) and the facts come back to ``FLEET/hosts/HOST/facts.json``. A host where the
wizard cannot run gives its evidence by plain read-only commands instead (the bundle files of
``rocm-wizard report``: os-release, uname, lspci, rocminfo, the KFD topology, packages, ...), brought back
to ``FLEET/hosts/HOST/bundle/`` and read by the controller's own detection as a recorded machine. The
controller diagnoses every host with its own knowledge base. A host that cannot be reached, or answers
something that is not a facts document, is listed as such with Ansible's or the host's own words; the
others go on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wizard.fleet.ansible_run import PlaybookResult, inventory_hosts, run_playbook, write_playbook
from wizard.fleet.facts_io import FactsFormatError, loads
from wizard.fleet.yaml_text import Template as T, in_template
from wizard.model import Facts
from wizard.record import record

WIZARD_FACTS = T("{{ rocm_wizard_command | default(['python3', '-m', 'wizard']) + ['fleet', 'facts'] }}")
HOSTS = "hosts"
BUNDLE = "bundle"
KFD = 'for f in /sys/class/kfd/kfd/topology/nodes/*/properties; do echo "==> $f <=="; cat "$f"; done'


def evidence_commands() -> list[dict[str, Any]]:
    """Bundle file -> the plain command that prints it on a host without the wizard (wizard.evidence's own
    list, first candidate of each, plus the files it reads directly)."""
    from wizard.evidence import COMMANDS

    out: list[dict[str, Any]] = [{"file": "os-release.txt", "argv": ["cat", "/etc/os-release"]},
                                 {"file": "rocm-version.txt", "argv": ["cat", "/opt/rocm/.info/version"]},
                                 {"file": "kfd-properties.txt", "argv": ["sh", "-c", KFD]},
                                 {"file": "dpkg.txt", "argv": ["dpkg", "-l"]}]
    out += [{"file": name, "argv": argvs[0]} for name, argvs in COMMANDS.items()]
    return out


@record
class HostFacts:
    host: str
    status: str  # "ok", "evidence" (no wizard: plain commands), "unreachable", "failed", "garbage"
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
            "name": "Facts of this host (rocm-wizard fleet facts)",
            "ansible.builtin.command": {"argv": WIZARD_FACTS},
            "register": "rocm_wizard_facts",
            "changed_when": False,
            "failed_when": False,
            "check_mode": False,
        }, {
            "name": "The controller's directory for this host",
            "ansible.builtin.file": {"path": T(f"{in_template(fleet_dir)}/{HOSTS}/{{{{ inventory_hostname }}}}/{BUNDLE}"),
                                     "state": "directory", "mode": "0755"},
            "delegate_to": "localhost",
        }, {
            "name": "Bring the facts back",
            "ansible.builtin.copy": {"content": T("{{ rocm_wizard_facts.stdout }}"),
                                     "dest": T(f"{in_template(fleet_dir)}/{HOSTS}/{{{{ inventory_hostname }}}}/facts.json"),
                                     "mode": "0644"},
            "delegate_to": "localhost",
            "when": "rocm_wizard_facts.rc == 0",
        }, {
            "name": "Without the wizard: evidence by plain commands",
            "ansible.builtin.command": {"argv": T("{{ item.argv }}")},
            "loop": evidence_commands(),
            "loop_control": {"label": T("{{ item.file }}")},
            "register": "rocm_wizard_evidence",
            "changed_when": False,
            "failed_when": False,
            "check_mode": False,
            "when": "rocm_wizard_facts.rc != 0",
        }, {
            "name": "Bring the evidence back",
            "ansible.builtin.copy": {"content": T("{{ item.stdout }}\n"),
                                     "dest": T(f"{in_template(fleet_dir)}/{HOSTS}/{{{{ inventory_hostname }}}}/"
                                               f"{BUNDLE}/{{{{ item.item.file }}}}"),
                                     "mode": "0644"},
            "loop": T("{{ rocm_wizard_evidence.results | default([]) }}"),
            "loop_control": {"label": T("{{ item.item.file }}")},
            "delegate_to": "localhost",
            "when": "rocm_wizard_facts.rc != 0 and item.stdout is defined and item.stdout | length > 0",
        }],
    }], ["rocm-wizard fleet detect: written by the wizard; each host's facts into the fleet directory"])


def detect(inventory: str, fleet_dir: Path, *, limit: str | None = None) -> list[HostFacts]:
    import shutil

    hosts = inventory_hosts(inventory, limit, fleet_dir)
    for h in hosts:
        facts_path(fleet_dir, h).unlink(missing_ok=True)
        shutil.rmtree(facts_path(fleet_dir, h).parent / BUNDLE, ignore_errors=True)
    result = run_playbook(detect_playbook(fleet_dir), inventory, fleet_dir, limit=limit)
    return [_host(h, fleet_dir, result) for h in hosts]


def _host(host: str, fleet_dir: Path, result: PlaybookResult) -> HostFacts:
    events = result.of(host)
    down = next((e for e in events if e.status == "unreachable"), None)
    if down is not None:
        return HostFacts(host, "unreachable", reason=_last_line(down.message) or "unreachable")
    failed = next((e for e in events if e.status == "failed"), None)
    if failed is not None:
        return HostFacts(host, "failed", reason=_last_line(failed.message) or f"{failed.task} failed")
    path = facts_path(fleet_dir, host)
    if path.is_file():
        try:
            return HostFacts(host, "ok", facts=loads(path.read_text(encoding="utf-8")))
        except (OSError, FactsFormatError) as exc:
            return HostFacts(host, "garbage", reason=f"answered something else than facts: {exc}")
    bundle = path.parent / BUNDLE
    if bundle.is_dir() and any(bundle.iterdir()):
        from wizard.host import BundleHost
        from wizard.probes import detect as probe

        facts = probe(BundleHost(bundle))
        if not facts.os.id and not facts.gpus:
            return HostFacts(host, "garbage", reason="no wizard, and its plain commands showed no OS and no GPU")
        return HostFacts(host, "evidence", facts=facts,
                         reason="no wizard on the host: read from plain commands (what they cannot show is unknown)")
    return HostFacts(host, "unreachable", reason="no answer (the play did not reach this host)")


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""
