"""A fleet run's or verify's rows as JUnit XML (``junit.xml`` beside ``report.json``) for CI dashboards: one
test suite per command, one test case per host. A host that failed is a ``failure`` (its failed step and error);
one that could not be reached or read is an ``error``; a refused host, and a verify a host cannot run (a real
root has no GPU), is ``skipped`` with why; a verify that found failed checks is a ``failure`` listing them."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any, Sequence


def outcome(kind: str, row: dict[str, Any]) -> tuple[str, str, str]:
    """(``pass`` | ``failure`` | ``error`` | ``skipped``, message, detail) of one host's row."""
    failed = row.get("failed")
    verify = row.get("verify") or {}
    if failed:
        text = f"{failed.get('status')} at {failed.get('task')}: {failed.get('message')}"
        kind_ = "error" if failed.get("status") in ("unreachable", "garbage") or failed.get("task") == "detect" else "failure"
        return kind_, text, str(row.get("next") or "")
    if row.get("refused"):
        return "skipped", "the plan does not fit this host", "\n".join(row["refused"])
    if verify.get("status") == "fail":
        return "failure", "verify failed", "\n".join(verify.get("findings") or [])
    if verify.get("status") == "skipped" and kind == "verify":
        return "skipped", f"verify skipped: {verify.get('reason') or ''}".rstrip(": "), ""
    return "pass", "", ""


def render(kind: str, title: str, rows: Sequence[dict[str, Any]], timestamp: str) -> str:
    counts = {"failure": 0, "error": 0, "skipped": 0}
    cases = []
    for row in rows:
        what, message, detail = outcome(kind, row)
        case = ET.Element("testcase", {"classname": f"rocm-wizard.fleet.{kind}", "name": str(row["host"]), "time": "0"})
        if what != "pass":
            counts[what] += 1
            el = ET.SubElement(case, what, {"message": message[:500]})
            if detail:
                el.text = detail
        out = _summary(row)
        if out:
            ET.SubElement(case, "system-out").text = out
        cases.append(case)
    suites = ET.Element("testsuites", {"name": "rocm-wizard fleet"})
    suite = ET.SubElement(suites, "testsuite", {"name": title, "tests": str(len(rows)), "failures": str(counts["failure"]),
                                                "errors": str(counts["error"]), "skipped": str(counts["skipped"]),
                                                "timestamp": timestamp})
    suite.extend(cases)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def _summary(row: dict[str, Any]) -> str:
    parts = []
    if "steps" in row and not row.get("refused"):
        parts.append(f"steps done {row.get('steps_done')}/{row.get('steps')}")
    if row.get("reboot") not in (None, "-"):
        parts.append(f"reboot {row['reboot']}")
    v = row.get("verify") or {}
    if v.get("status") not in (None, "-"):
        parts.append(f"verify {v['status']}" + (f" ({v['reason']})" if v.get("reason") else ""))
    return ", ".join(parts)
