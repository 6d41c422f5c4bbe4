"""The history an operator keeps: every ``fleet detect``, ``run``, ``verify`` and ``rollback`` adds one entry to
``RESULTS/history/`` (its rows, and each host's stack as the controller knew it then: wizard.fleet.drift's fields),
and ``fleet report`` lists the runs and which hosts changed stack since the entry before."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any, Sequence

from wizard.fleet import drift
from wizard.fleet.detect import HostFacts, saved

HISTORY = "history"


def stacks(fleet_dir: Path, hosts: Sequence[str]) -> dict[str, dict[str, str]]:
    """Each host's stack from the facts the fleet directory holds for it (those the command read)."""
    return stacks_of([hf for h in hosts for hf in [saved(fleet_dir, h)] if hf is not None])


def stacks_of(hosts: Sequence[HostFacts]) -> dict[str, dict[str, str]]:
    """Each host's stack, for the hosts with facts."""
    return {h.host: drift.stack(h.facts, partial=h.status == "evidence") for h in hosts if h.facts is not None}


def add(results: Path, kind: str, rows: Sequence[dict[str, Any]], host_stacks: dict[str, dict[str, str]],
        plan: str | None = None) -> Path:
    now = datetime.datetime.now(datetime.timezone.utc)
    d = results / HISTORY
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{now.strftime('%Y%m%dT%H%M%S.%fZ')}-{kind}.json"
    path.write_text(json.dumps({"kind": kind, "plan": plan, "written": now.isoformat(timespec="seconds"),
                                "hosts": list(rows), "stacks": host_stacks}, indent=1) + "\n", encoding="utf-8")
    return path


def entries(results: Path) -> list[dict[str, Any]]:
    """The history, oldest first; an unreadable entry is left out."""
    out = []
    for p in sorted((results / HISTORY).glob("*.json")):
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and isinstance(doc.get("hosts"), list) and isinstance(doc.get("stacks"), dict):
            doc["file"] = str(p)
            out.append(doc)
    return out


def changes(history: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per host of the newest entry that knew it: the fields of its stack that changed since the entry before
    that knew it (``since``: that entry's time; a host never seen before is ``new``)."""
    out: list[dict[str, Any]] = []
    newest: dict[str, int] = {}
    for i, e in enumerate(history):
        for h in e["stacks"]:
            newest[h] = i
    for host, i in newest.items():
        now = history[i]["stacks"][host]
        before = next((e for e in reversed(history[:i]) if host in e["stacks"]), None)
        if before is None:
            out.append({"host": host, "state": "new", "since": None, "differences": []})
            continue
        old = before["stacks"][host]
        diffs = [{"field": f, "before": old.get(f, drift.UNKNOWN), "now": now.get(f, drift.UNKNOWN)}
                 for f in drift.FIELDS if old.get(f) != now.get(f)]
        out.append({"host": host, "state": "changed" if diffs else "same", "since": before["written"],
                    "differences": diffs})
    return out


def runs(history: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per entry: when, what, how many hosts passed, failed or were skipped."""
    from wizard.fleet.junit import outcome

    out = []
    for e in history:
        count = {"pass": 0, "failure": 0, "error": 0, "skipped": 0}
        if e["kind"] == "detect":
            for r in e["hosts"]:
                count["pass" if r.get("status") in ("ok", "evidence") else "error"] += 1
        else:
            for r in e["hosts"]:
                count[outcome(e["kind"], r)[0]] += 1
        out.append({"written": e["written"], "kind": e["kind"], "plan": e.get("plan"), "hosts": len(e["hosts"]),
                    "passed": count["pass"], "failed": count["failure"] + count["error"], "skipped": count["skipped"]})
    return out
