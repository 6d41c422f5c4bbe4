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

from wizard.fleet.ansible_run import Event, PlaybookResult, hosts_of, run_playbook, write_playbook
from wizard.fleet.facts_io import FactsFormatError, loads
from wizard.fleet.yaml_text import Template as T, in_template
from wizard.model import Facts
from wizard.record import record

WIZARD_FACTS = T("{{ rocm_wizard_command | default(['python3', '-m', 'wizard']) + ['fleet', 'facts'] }}")
HOSTS = "hosts"
# the machine as the GPU user sees it (its venvs, its groups) when the play names one: an operator who connects as an
# admin account (rocm_wizard_gpu_user set) must not get a plan for the admin's own venvs and groups
AS_GPU_USER = {"become": T("{{ rocm_wizard_gpu_user | default('') | length > 0 }}"),
               "become_user": T("{{ rocm_wizard_gpu_user | default('root', true) }}")}
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


CAPTURE = "rocm_wizard_capture"  # the events callback records the whole stdout of a task tagged so
FACTS_TASK = "Facts of this host (rocm-wizard fleet facts)"
EVIDENCE_TASK = "Without the wizard: evidence by plain commands"


def detect_playbook(fleet_dir: Path) -> Path:
    """One command per host (two without the wizard); what it answers comes back in the play's events and the
    controller writes it, so no module runs on the controller per host."""
    return write_playbook(fleet_dir / "playbooks" / "detect.yml", [{
        "name": "rocm-wizard fleet detect",
        "hosts": "all",
        "gather_facts": False,
        "tasks": [{
            "name": FACTS_TASK,
            "ansible.builtin.command": {"argv": WIZARD_FACTS},
            **AS_GPU_USER,
            "register": "rocm_wizard_facts",
            "changed_when": False,
            "failed_when": False,
            "check_mode": False,
            "tags": [CAPTURE],
        }, {
            "name": EVIDENCE_TASK,
            "ansible.builtin.command": {"argv": T("{{ item.argv }}")},
            "loop": evidence_commands(),
            "loop_control": {"label": T("{{ item.file }}")},
            **AS_GPU_USER,
            "changed_when": False,
            "failed_when": False,
            "check_mode": False,
            "when": "rocm_wizard_facts.rc != 0",
            "tags": [CAPTURE],
        }],
    }], ["rocm-wizard fleet detect: written by the wizard; each host's answer comes back in the play's events"])


def detect(inventory: str, fleet_dir: Path, *, limit: str | None = None, progress: bool = False) -> list[HostFacts]:
    import shutil

    from wizard.fleet.ansible_run import read_inventory

    doc = read_inventory(inventory, limit, fleet_dir)
    hosts = hosts_of(doc, inventory, limit)
    for h in hosts:
        facts_path(fleet_dir, h).unlink(missing_ok=True)
        stamp_path(fleet_dir, h).unlink(missing_ok=True)
        shutil.rmtree(facts_path(fleet_dir, h).parent / BUNDLE, ignore_errors=True)
    result = run_playbook(detect_playbook(fleet_dir), inventory, fleet_dir, limit=limit, progress=progress)
    out = []
    for h in hosts:
        _write_answer(fleet_dir, h, result.of(h))
        hf = _host(h, fleet_dir, result)
        if hf.facts is not None:
            write_stamp(fleet_dir, h, host_vars(doc, h))
        out.append(hf)
    return out


def stamp_path(fleet_dir: Path, host: str) -> Path:
    return fleet_dir / HOSTS / host / "detected.json"


def host_vars(doc: dict[str, Any], host: str) -> str:
    """A digest of the host's inventory variables (how it is reached): facts read under others are not its."""
    import hashlib
    import json

    hv = doc.get("_meta", {}).get("hostvars", {}).get(host, {}) if isinstance(doc.get("_meta"), dict) else {}
    return hashlib.sha256(json.dumps(hv, sort_keys=True, default=str).encode()).hexdigest()


def write_stamp(fleet_dir: Path, host: str, hostvars: str) -> None:
    import json
    import time

    stamp_path(fleet_dir, host).write_text(json.dumps({"time": time.time(), "hostvars": hostvars}) + "\n",
                                           encoding="utf-8")


def forget(fleet_dir: Path, host: str) -> None:
    """The host's saved facts no longer tell its stack (a run changed it): the next plan detects it again."""
    stamp_path(fleet_dir, host).unlink(missing_ok=True)


def _write_answer(fleet_dir: Path, host: str, events: list[Event]) -> None:
    """The host's facts (``facts.json``) or, without the wizard, its evidence files (``bundle/``)."""
    path = facts_path(fleet_dir, host)
    facts = next((e for e in events if e.task == FACTS_TASK and e.stdout is not None), None)
    if facts is not None and facts.rc == 0:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(facts.stdout or "", encoding="utf-8")
        return
    files = {str(item.get("file")): out for e in events if e.task == EVIDENCE_TASK
             for item, _rc, out in e.items if isinstance(item, dict) and out}
    names = {c["file"] for c in evidence_commands()}
    for name, out in files.items():
        if name in names:  # only the bundle's own file names
            (path.parent / BUNDLE).mkdir(parents=True, exist_ok=True)
            (path.parent / BUNDLE / name).write_text(out + "\n", encoding="utf-8")


def _host(host: str, fleet_dir: Path, result: PlaybookResult) -> HostFacts:
    events = result.of(host)
    down = next((e for e in events if e.status == "unreachable"), None)
    if down is not None:
        return HostFacts(host, "unreachable", reason=_last_line(down.message) or "unreachable")
    failed = next((e for e in events if e.status == "failed"), None)
    if failed is not None:
        return HostFacts(host, "failed", reason=_last_line(failed.message) or f"{failed.task} failed")
    return saved(fleet_dir, host) or HostFacts(host, "unreachable", reason="no answer (the play did not reach this host)")


def saved(fleet_dir: Path, host: str) -> HostFacts | None:
    """What the host answered, as written in the fleet directory (its facts, or its evidence files); None when
    nothing is there."""
    path = facts_path(fleet_dir, host)
    if path.is_file():
        try:
            return HostFacts(host, "ok", facts=loads(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, FactsFormatError) as exc:
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
    return None


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""
