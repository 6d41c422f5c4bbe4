"""One row per host of a fleet: what ``fleet detect`` prints (and ``--json``), which machines are alike."""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

from wizard.fleet.detect import HostFacts
from wizard.model import Facts

SEVERITIES = ("critical", "error", "warning", "info")


def host_row(h: HostFacts) -> dict[str, Any]:
    row: dict[str, Any] = {"host": h.host, "status": h.status, "reason": h.reason or None}
    f = h.facts
    if f is None:
        return row
    from wizard.diagnose import diagnose

    gfx = Counter(g.gfx or "unknown" for g in f.gpus)
    findings = Counter(x.severity for x in diagnose(f))
    row.update({
        "os": " ".join(x for x in (f.os.id, f.os.version) if x) or None,
        "gpus": [{"gfx": k, "count": n} for k, n in gfx.items()],
        "driver": " ".join(x for x in (f.driver.kind, f.driver.version) if x) or None,
        "rocm": f.rocm.version,
        "torch": [{"env": e.path or e.python or "recorded", "torch": e.torch} for e in f.python_envs if e.torch],
        "findings": {s: findings.get(s, 0) for s in SEVERITIES},
    })
    return row


def alike_key(f: Facts) -> tuple[Any, ...]:
    return (f.os.id, f.os.version, tuple(sorted(g.gfx or "" for g in f.gpus)), f.driver.kind, f.rocm.version,
            tuple(sorted(e.torch or "" for e in f.python_envs if e.torch)))


def rows(hosts: Sequence[HostFacts]) -> list[dict[str, Any]]:
    """Rows with ``alike``: hosts with the same OS, GPUs, driver, ROCm and torch share a letter."""
    labels: dict[tuple[Any, ...], str] = {}
    out = []
    for h in hosts:
        row = host_row(h)
        if h.facts is not None:
            key = alike_key(h.facts)
            labels.setdefault(key, chr(ord("A") + len(labels)) if len(labels) < 26 else f"G{len(labels) + 1}")
            row["alike"] = labels[key]
        else:
            row["alike"] = None
        out.append(row)
    return out


def table_lines(rows_: Sequence[dict[str, Any]]) -> list[list[str]]:
    """The table's cells, in columns: host, state, OS, GPUs, driver, ROCm, torch, findings, alike."""
    out = []
    for r in rows_:
        if r["status"] not in ("ok", "evidence"):
            out.append([r["host"], r["status"], r.get("reason") or "", "", "", "", "", "", ""])
            continue
        gpus = ", ".join(f"{g['count']}x {g['gfx']}" for g in r["gpus"]) or "none"
        torch = "; ".join(f"{t['env']}: {t['torch']}" for t in r["torch"]) or "none"
        found = ", ".join(f"{n} {s}" for s, n in r["findings"].items() if n) or "none"
        out.append([r["host"], r["status"], r["os"] or "?", gpus, r["driver"] or "?", r["rocm"] or "none", torch, found,
                    r["alike"] or ""])
    return out


COLUMNS = ("host", "state", "OS", "GPUs (gfx)", "driver", "ROCm", "torch per env", "findings", "alike")
