"""The fleet report, in the results directory (``--results DIR``, default the fleet directory): ``report.json``,
a self-contained ``report.html`` (no scripts, no external files) with the table and each host's findings,
``junit.xml`` for CI dashboards, and an entry of the history ``fleet report`` reads."""

from __future__ import annotations

import html
import json
import time
from pathlib import Path
from typing import Any, Sequence


def write(results: Path, kind: str, rows: Sequence[dict[str, Any]], *, fleet_dir: Path,
          plan: str | None = None) -> tuple[Path, Path]:
    from wizard.fleet import history, junit

    doc = {"kind": kind, "written": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "hosts": list(rows)}
    results.mkdir(parents=True, exist_ok=True)
    j = results / "report.json"
    j.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    h = results / "report.html"
    h.write_text(render_html(doc), encoding="utf-8")
    title = f"rocm-wizard fleet {kind}" + (f" {plan}" if plan else "")
    (results / "junit.xml").write_text(junit.render(kind, title, rows, time.strftime("%Y-%m-%dT%H:%M:%S%z")),
                                       encoding="utf-8")
    history.add(results, kind, rows, history.stacks(fleet_dir, [str(r["host"]) for r in rows]), plan)
    return j, h


def _cell(v: Any) -> str:
    if isinstance(v, dict):
        return html.escape(str(v.get("status", "")))
    if isinstance(v, list):
        return html.escape("; ".join(map(str, v)))
    return html.escape("" if v is None else str(v))


def render_html(doc: dict[str, Any]) -> str:
    rows = doc["hosts"]
    cols = [c for c in ("host", "plan", "state", "steps_done", "steps", "reboot", "verify", "python", "next")
            if any(c in r for r in rows)]
    out = ["<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
           f"<title>rocm-wizard fleet {html.escape(doc['kind'])}</title>",
           "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
           "td,th{border:1px solid #999;padding:4px 8px;text-align:left;vertical-align:top}"
           ".fail{background:#fdd}.pass{background:#dfd}</style></head><body>",
           f"<h1>rocm-wizard fleet {html.escape(doc['kind'])}</h1><p>{html.escape(doc['written'])}</p>",
           "<table><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in cols) + "</tr>"]
    for r in rows:
        bad = r.get("failed") or r.get("refused") or r.get("verify", {}).get("status") == "fail"
        cls = "fail" if bad else "pass"
        out.append(f"<tr class=\"{cls}\">" + "".join(f"<td>{_cell(r.get(c))}</td>" for c in cols) + "</tr>")
    out.append("</table><h2>Findings per host</h2>")
    for r in rows:
        items = []
        if r.get("failed"):
            f = r["failed"]
            items.append(f"{f['status']} at {f['task']}: {f['message']}")
        items += [f"refused: {x}" for x in r.get("refused") or []]
        items += [f"verify: {x}" for x in r.get("verify", {}).get("findings") or []]
        out.append(f"<h3>{html.escape(r['host'])}</h3>")
        out.append("<ul>" + "".join(f"<li>{html.escape(i)}</li>" for i in items) + "</ul>" if items else "<p>none</p>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
