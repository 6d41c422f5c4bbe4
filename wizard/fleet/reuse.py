"""The facts an earlier ``fleet detect`` saved, reused by ``fleet plan`` (``--redetect`` reads every host again).

A host's saved facts are reused only while they still tell its stack: they exist, its inventory variables
are the ones they were read under, they are younger than MAX_AGE, and no ``fleet run`` changed the host since
(run.py forgets those). Every other host of the inventory (a new one, one that could not be read before, one
whose facts are stale) is detected now, so a host is never silently left out of a plan.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from wizard.fleet.detect import HostFacts, detect, facts_path, host_vars, saved, stamp_path
from wizard.record import record

MAX_AGE = 24 * 3600  # seconds: facts older than a day are read again


@record
class Known:
    hosts: tuple[HostFacts, ...]  # in the inventory's order
    reused: tuple[str, ...]
    detected: tuple[tuple[str, str], ...]  # (host, why it was detected now)

    def notes(self) -> list[str]:
        out = []
        if self.reused:
            out.append(f"reused the saved facts of {len(self.reused)} host(s) (--redetect reads them again)")
        out += [f"{h}: detected now: {why}" for h, why in self.detected]
        return out


def stale(fleet_dir: Path, host: str, hostvars: str, now: float) -> str | None:
    """Why the host's saved facts cannot be reused, or None."""
    if not facts_path(fleet_dir, host).parent.is_dir():
        return "new in the inventory"
    try:
        stamp = json.loads(stamp_path(fleet_dir, host).read_text(encoding="utf-8"))
        when, digest = float(stamp["time"]), str(stamp["hostvars"])
    except (OSError, ValueError, KeyError, TypeError):
        return "no facts saved by an earlier detect (or a run changed it since)"
    if digest != hostvars:
        return "its inventory variables changed since it was detected"
    if now - when > MAX_AGE:
        return f"its facts are older than {MAX_AGE // 3600} h"
    return None


def known(inventory: str, fleet_dir: Path, *, limit: str | None = None, redetect: bool = False,
          now: float | None = None, progress: bool = False) -> Known:
    """Every host of the inventory (after ``limit``) with its facts: saved ones reused, the rest detected now."""
    from wizard.fleet.ansible_run import hosts_of, read_inventory

    if redetect:
        every = detect(inventory, fleet_dir, limit=limit, progress=progress)
        return Known(tuple(every), (), tuple((h.host, "--redetect") for h in every))
    doc = read_inventory(inventory, limit, fleet_dir)
    names = hosts_of(doc, inventory, limit)
    clock = time.time() if now is None else now
    reused: dict[str, HostFacts] = {}
    again: list[tuple[str, str]] = []
    for h in names:
        why = stale(fleet_dir, h, host_vars(doc, h), clock)
        hf = saved(fleet_dir, h) if why is None else None
        if hf is not None and hf.facts is not None:
            reused[h] = hf
        else:
            again.append((h, why or "its saved facts cannot be read"))
    fresh = {hf.host: hf for hf in detect(inventory, fleet_dir, limit=",".join(h for h, _ in again),
                                                  progress=progress)} if again else {}
    hosts = tuple(reused.get(h) or fresh.get(h) or HostFacts(h, "unreachable", reason="not detected") for h in names)
    return Known(hosts, tuple(reused), tuple(again))
