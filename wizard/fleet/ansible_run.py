"""Running Ansible for the fleet commands: the inventory as Ansible reads it (``ansible-inventory``),
and ``ansible-playbook`` with the wizard's plugins, its state kept inside the fleet directory, per-host
progress streamed, and every result recorded (plugins/callback/rocm_wizard_events.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from wizard import lazy_re
from wizard.fleet import PLUGINS, FleetError, ansible_program
from wizard.record import field, record


@record
class Event:
    host: str
    status: str  # ok, changed, failed, ignored, unreachable, skipped, recap
    task: str
    message: str = ""
    rc: int | None = None
    stdout: str | None = None  # a task tagged rocm_wizard_capture: its whole stdout
    items: tuple[tuple[Any, int | None, str], ...] = ()  # ... or, for a loop, each (item, rc, stdout)


@record
class PlaybookResult:
    rc: int
    events: tuple[Event, ...] = field(default_factory=tuple)

    def of(self, host: str) -> list[Event]:
        return [e for e in self.events if e.host == host]


def environment(fleet_dir: Path, events: Path | None = None, *, progress: bool = False) -> dict[str, str]:
    """Ansible's environment for a fleet command: its state in the fleet directory, the wizard's plugins found
    first (the operator's own plugin paths kept after them), every result recorded by the notification callback
    ``rocm_wizard_events``; the stdout callback stays the operator's unless ``progress`` asks for the wizard's
    one line per host and task (``rocm_wizard_progress``)."""
    env = dict(os.environ)
    home = fleet_dir / ".ansible"

    def path(var: str, ours: Path) -> str:
        return os.pathsep.join([str(ours)] + [p for p in env.get(var, "").split(os.pathsep) if p])

    env.update({
        "ANSIBLE_HOME": str(home),
        "ANSIBLE_LOCAL_TEMP": str(home / "tmp"),
        "ANSIBLE_CONNECTION_PLUGINS": path("ANSIBLE_CONNECTION_PLUGINS", PLUGINS / "connection"),
        "ANSIBLE_CALLBACK_PLUGINS": path("ANSIBLE_CALLBACK_PLUGINS", PLUGINS / "callback"),
        "ANSIBLE_PIPELINING": "1",
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_DEPRECATION_WARNINGS": "0",
        "ANSIBLE_PYTHON_INTERPRETER": env.get("ANSIBLE_PYTHON_INTERPRETER", "auto_silent"),
    })
    if progress:
        env["ANSIBLE_STDOUT_CALLBACK"] = "rocm_wizard_progress"
    if events is not None:
        env["ROCM_WIZARD_FLEET_EVENTS"] = str(events)
    return env


def read_inventory(inventory: str, limit: str | None, fleet_dir: Path) -> dict[str, Any]:
    """INVENTORY (after --limit) as ``ansible-inventory --list`` reads it: groups and ``_meta.hostvars``."""
    if not Path(inventory).exists():
        raise FleetError(f"{inventory}: no such inventory")
    argv = [ansible_program("ansible-inventory"), "-i", inventory, "--list"]
    if limit:
        argv += ["--limit", limit]
    fleet_dir.mkdir(parents=True, exist_ok=True)
    res = subprocess.run(argv, capture_output=True, text=True, env=environment(fleet_dir), timeout=300)
    try:
        doc = json.loads(res.stdout) if res.returncode == 0 else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        last = (res.stderr.strip().splitlines() or ["unreadable"])[-1]
        raise FleetError(f"{inventory}: Ansible cannot read this inventory: {last}")
    return doc


_HOST = lazy_re.compile(r"^[A-Za-z0-9_.:-]{1,253}$")


def inventory_hosts(inventory: str, limit: str | None, fleet_dir: Path) -> list[str]:
    """The hosts of INVENTORY (after --limit), as Ansible itself reads it."""
    return hosts_of(read_inventory(inventory, limit, fleet_dir), inventory, limit)


def hosts_of(doc: dict[str, Any], inventory: str, limit: str | None) -> list[str]:
    """The hosts of an ``ansible-inventory --list`` document, in the inventory's order."""
    hosts: list[str] = []

    def walk(group: str, seen: set[str]) -> None:
        if group in seen or not isinstance(doc.get(group), dict):
            return
        seen.add(group)
        for h in doc[group].get("hosts", []):
            if h not in hosts:
                hosts.append(h)
        for child in doc[group].get("children", []):
            walk(child, seen)

    walk("all", set())
    bad = [h for h in hosts if not _HOST.match(h) or not h.strip(".")]
    if bad:  # a host's name becomes the controller's path FLEET/hosts/NAME and a playbook's conditionals
        raise FleetError(f"{inventory}: host name {bad[0][:80]!r} is not one the fleet commands can use (letters, digits "
                         "and . _ : - only)")
    if not hosts:
        raise FleetError(f"{inventory}: no hosts" + (f" match --limit {limit}" if limit else ""))
    return hosts


def run_playbook(playbook: Path, inventory: str, fleet_dir: Path, *, limit: str | None = None,
                 extra_vars: Mapping[str, Any] | None = None, on_line: Callable[[str], None] | None = None,
                 check: bool = False, progress: bool = False) -> PlaybookResult:
    """Run ansible-playbook; each progress line goes to ``on_line`` (default: stderr, so that stdout holds
    only the table or the JSON) as it comes. The inventory's real-root hosts are served while it runs and
    what they cannot provide goes to the play as ``rocm_wizard_unavailable`` (wizard/fleet/realroots.py)."""
    from wizard.fleet import realroots

    events = fleet_dir / ".ansible" / f"events-{os.getpid()}-{playbook.stem}.jsonl"
    events.parent.mkdir(parents=True, exist_ok=True)
    events.unlink(missing_ok=True)
    roots = realroots.hosts(inventory, limit, fleet_dir)
    extra = dict(extra_vars or {})
    if roots:
        extra["rocm_wizard_unavailable"] = realroots.unavailable(roots)
    argv: list[str] = [ansible_program(), "-i", inventory, str(playbook)]
    if limit:
        argv += ["--limit", limit]
    if extra:
        argv += ["-e", json.dumps(extra)]
    if check:
        argv.append("--check")
    say = on_line or (lambda line: (sys.stderr.write(line + "\n"), sys.stderr.flush()) and None)
    with realroots.serving(roots):  # the real roots' mirrors served while the play runs
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=environment(fleet_dir, events, progress=progress),
                                stdin=subprocess.DEVNULL)
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip():
                say(line.rstrip("\n"))
        rc = proc.wait()
    return PlaybookResult(rc, tuple(_read_events(events)))


def _read_events(path: Path) -> list[Event]:
    out: list[Event] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return out
    for line in lines:
        try:
            d = json.loads(line)
            task = re.sub(r"^\S+ : ", "", str(d["task"]))  # Ansible names a role's task "ROLE : NAME"
            cap = d.get("capture") if isinstance(d.get("capture"), dict) else {}
            items = tuple((i.get("item"), i.get("rc") if isinstance(i.get("rc"), int) else None, str(i.get("stdout") or ""))
                          for i in cap.get("items") or () if isinstance(i, dict))
            out.append(Event(str(d["host"]), str(d["status"]), task, str(d.get("message") or ""),
                             d.get("rc") if isinstance(d.get("rc"), int) else None,
                             cap["stdout"] if isinstance(cap.get("stdout"), str) else None, items))
        except (ValueError, KeyError, TypeError):
            continue
    return out


def write_playbook(path: Path, plays: Sequence[dict[str, Any]], header: Sequence[str]) -> Path:
    from wizard.fleet.yaml_text import document

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document(list(plays), list(header)), encoding="utf-8")
    return path
