"""What a verify run produced: one CheckResult per check (parsed from suite.py's JSON lines) and the report.

The JSON the command prints (``rocm-wizard verify --json``) is ``VerifyReport.to_json()``:
``{"checks": [{"name", "device", "status", "seconds", "error", "metrics"}], "summary": {...},
"findings": [...], "notes": [...], "environment": {...}}``.
"""

from __future__ import annotations

from typing import Any, Mapping

from wizard.record import field, record


STATUSES = ("pass", "fail", "timeout", "skip", "error")
BAD = ("fail", "timeout", "error")


class SuiteOutputError(ValueError):
    """A line of suite.py output that is not what the protocol says."""


@record
class CheckResult:
    name: str  # "matmul", "conv2d", ...
    device: str  # "cpu", "cuda:0", "gpu" (GPU checks skipped), "cuda:0,cuda:1" (p2p)
    status: str  # one of STATUSES
    seconds: float
    error: str | None = None  # the error text (with the check's stderr tail) or the skip reason
    metrics: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def bad(self) -> bool:
        return self.status in BAD

    @property
    def headline(self) -> str:
        """The first line of the error: what a table shows."""
        return (self.error or "").strip().splitlines()[0] if (self.error or "").strip() else ""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "device": self.device, "status": self.status, "seconds": self.seconds,
                "error": self.error, "metrics": dict(self.metrics)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> CheckResult:
        try:
            name, device, status = str(d["name"]), str(d["device"]), str(d["status"])
            seconds = float(d.get("seconds") or 0.0)
        except (KeyError, TypeError, ValueError) as exc:
            raise SuiteOutputError(f"check record without name/device/status/seconds: {exc}") from None
        if status not in STATUSES:
            raise SuiteOutputError(f"check {name}: unknown status {status!r}")
        metrics = d.get("metrics")
        err = d.get("error")
        return cls(name, device, status, seconds, None if err is None else str(err),
                   dict(metrics) if isinstance(metrics, Mapping) else {})


@record
class CheckFindings:
    """What the diagnoser said about one failed, timed-out or flagged check."""

    check: str
    device: str
    status: str
    text: str  # the error text handed to the diagnoser
    findings: tuple[Any, ...] = ()  # wizard.diagnose.Finding objects

    def to_json(self) -> dict[str, Any]:
        from wizard.model import to_jsonable

        return {"check": self.check, "device": self.device, "status": self.status, "text": self.text,
                "findings": [f.to_json() if hasattr(f, "to_json") else to_jsonable(f) for f in self.findings]}


@record
class VerifyReport:
    checks: tuple[CheckResult, ...]
    python: str | None  # interpreter path (inside the image when image is set)
    image: str | None
    device: str  # "auto" | "cpu"
    quick: bool
    timeout: float
    seconds: float  # wall time of the whole run, as the wizard saw it
    problem: str | None = None  # the suite itself broke (no result lines, killed by the watchdog ...)
    diagnosis: tuple[CheckFindings, ...] = ()
    notes: tuple[str, ...] = ()  # flagged, not failed: throughput far below the card's band, wrong build
    diagnoser: str | None = None  # why no diagnosis was made, when it could not be

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for c in self.checks if c.status == s) for s in STATUSES}

    @property
    def ok(self) -> bool:
        """Every check that ran passed (and at least the import check ran)."""
        ran = [c for c in self.checks if c.status != "skip"]
        return self.problem is None and bool(ran) and not any(c.bad for c in self.checks)

    @property
    def exit_code(self) -> int:
        from wizard import exit_codes

        return exit_codes.OK if self.ok else exit_codes.FAILURE

    def check(self, name: str, device: str | None = None) -> CheckResult | None:
        for c in self.checks:
            if c.name == name and (device is None or c.device == device):
                return c
        return None

    @property
    def environment(self) -> dict[str, Any]:
        imp = self.check("import")
        m = dict(imp.metrics) if imp else {}
        keys = ("torch", "hip", "cuda", "build", "python", "executable", "arch_list", "devices", "overrides",
                "blas_library", "import_seconds", "warnings")
        return {k: m[k] for k in keys if k in m}

    def summary(self) -> dict[str, Any]:
        env = self.environment
        return {**self.counts(), "total": len(self.checks), "ok": self.ok, "seconds": round(self.seconds, 3),
                "python": self.python, "image": self.image, "device": self.device, "quick": self.quick,
                "timeout_s": self.timeout, "torch": env.get("torch"), "build": env.get("build"),
                "problem": self.problem}

    def to_json(self) -> dict[str, Any]:
        return {"checks": [c.to_json() for c in self.checks], "summary": self.summary(),
                "findings": [d.to_json() for d in self.diagnosis], "notes": list(self.notes),
                "environment": self.environment, "diagnoser": self.diagnoser}
