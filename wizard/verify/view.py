"""The verify step as people read it: one line per check as it finishes, one summary line.

``verify --json`` writes each finished check as a JSON line (``{"type": "check", ...}``) on stderr while
the suite runs, then the whole report on stdout. A run's view (the CLI's ``resume`` and ``--plan``,
``status``) turns those into :func:`check_text` lines and hides the report document behind
:func:`summary_text`; the TUI folds the same lines (``wizard.session.RunProgress``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wizard.record import field, record


STATUS_ORDER = ("pass", "fail", "timeout", "error", "skip")


def check_json_line(check: dict[str, Any]) -> str:
    """The line ``verify --json`` streams for a finished check (``CheckResult.to_json()``)."""
    return json.dumps({"type": "check", **check}, default=str)


def check_text(d: dict[str, Any]) -> str:
    """``  pass     matmul      cuda:0    1.2 s  <first line of the error>``"""
    err = str(d.get("error") or "").strip().splitlines()
    try:
        secs = float(d.get("seconds") or 0.0)
    except (TypeError, ValueError):
        secs = 0.0
    status = str(d.get("status", "?"))
    line = f"  {status.upper() if status in ('fail', 'timeout', 'error') else status:<8} " \
           f"{str(d.get('name', '?')):<22} {str(d.get('device', '?')):<8} {secs:6.1f} s"
    return line + (f"  {err[0]}" if err else "")


def summary_text(doc: dict[str, Any]) -> str:
    """One line from the report's ``summary``: ``verify: OK: 11 pass, 2 skip (13 checks) in 21.4 s``."""
    s = doc.get("summary") if isinstance(doc.get("summary"), dict) else {}
    assert isinstance(s, dict)
    counts = ", ".join(f"{s.get(k)} {k}" for k in STATUS_ORDER if s.get(k))
    verdict = "OK" if s.get("ok") else "FAILED"
    secs = s.get("seconds")
    text = f"verify: {verdict}: {counts or 'no check ran'} ({s.get('total', 0)} checks)"
    if isinstance(secs, (int, float)):
        text += f" in {secs:.1f} s"
    if s.get("torch"):
        text += f", torch {s.get('torch')}"
    if s.get("problem"):
        text += f"; the suite did not finish: {s.get('problem')}"
    return text


def parse_check_line(line: str) -> dict[str, Any] | None:
    s = line.strip()
    if not (s.startswith("{") and s.endswith("}") and '"check"' in s):
        return None
    try:
        d = json.loads(s)
    except ValueError:
        return None
    return d if isinstance(d, dict) and d.get("type") == "check" else None


@record(frozen=False)
class VerifyOutput:
    """Feed the verify step's output lines; get back what to print. The report document is kept, not
    printed, and becomes one summary line at the end."""

    checks: list[dict[str, Any]] = field(default_factory=list)
    _doc: list[str] = field(default_factory=list)

    def feed(self, line: str) -> str | None:
        if self._doc:
            self._doc.append(line)
            return None
        d = parse_check_line(line)
        if d is not None:
            self.checks.append(d)
            return check_text(d)
        if line.rstrip() == "{":  # the report document starts
            self._doc.append(line)
            return None
        return line

    def report(self) -> dict[str, Any] | None:
        return report_from_text("\n".join(self._doc)) if self._doc else None

    def finish(self) -> list[str]:
        """Lines to print when the step ends: checks the stream did not show (an older wizard in the
        target), then the summary."""
        doc = self.report()
        if doc is None:
            return []
        out = []
        if not self.checks:
            out = [check_text(c) for c in doc.get("checks", []) if isinstance(c, dict)]
        return [*out, summary_text(doc)]


def report_from_text(text: str) -> dict[str, Any] | None:
    """The last verify report document (``{"checks": ..., "summary": ...}``) in a text, or None."""
    start = text.rfind('\n{\n  "checks"')
    start = start + 1 if start >= 0 else (0 if text.startswith('{\n  "checks"') else -1)
    if start < 0:
        return None
    try:
        doc, _ = json.JSONDecoder().raw_decode(text[start:])
    except ValueError:
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("summary"), dict) else None


def summary_from_log(path: str | Path) -> str | None:
    """The summary line of a verify step's log, or None when it holds no report."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    doc = report_from_text(text)
    return summary_text(doc) if doc is not None else None
