"""Failed checks -> the diagnoser's findings; throughput against the card's expected band.

Every failed, timed-out or crashed check is handed to ``wizard.diagnose.diagnose_error_text`` with
its error text. That text is torch's own exception plus the tail of the check's stderr, or one of
the suite's synthetic phrases, which the knowledge base has signatures for:

* ``verify: <check> timed out after <S> s (hang or stall)`` (a conv2d timeout is usually MIOpen's
  first-call kernel search);
* ``verify: matmul wrong results (...)``, ``verify: conv2d wrong results (...)``,
  ``verify: autocast wrong results (...)``, ``verify: tensor elementwise wrong results (...)``; NaNs
  are wrong results too: ``verify: matmul wrong results (NaN/Inf in the float16 127x255x63 product ...)``;
* ``verify: training loss did not fall (...)``, ``verify: training produced NaN/Inf loss (...)``;
* ``verify: cuda:N (<name>) reports gfxNNNN, which is not among the GPU targets of this torch build (...)``;
* ``verify: <check> check process died without a result (killed by SIGABRT)``;
* ``verify: matmul throughput far below expected (X of about Y TFLOP/s)`` (a flag, not a failure);
* ``verify: torch <v> is a CPU build, not a ROCm build`` / ``... is a CUDA build, not a ROCm build``
  (a note from the import check).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Sequence

from wizard.record import replace
from wizard.verify.results import CheckFindings, CheckResult

FAR_BELOW = 0.25  # flagged when the matmul rate is under this fraction of the card's stated peak
DiagnoseText = Callable[..., Sequence[Any]]


def load_diagnoser() -> tuple[DiagnoseText | None, str | None]:
    """(diagnose_error_text, None), or (None, why) when the diagnoser cannot be loaded."""
    try:
        from wizard.diagnose import diagnose_error_text
    except ImportError as exc:
        return None, f"the diagnoser is not available ({exc})"
    return diagnose_error_text, None


def texts_for(check: CheckResult) -> list[str]:
    """What to ask the diagnoser about one check (empty when nothing is wrong with it)."""
    out = []
    if check.bad:
        out.append(check.error or f"verify: {check.name} {check.status} on {check.device}")
    flag = check.metrics.get("flag") if isinstance(check.metrics, dict) else None
    if flag:
        out.append(str(flag))
    return out


def diagnose_checks(checks: Iterable[CheckResult], *, facts: Any = None,
                    diagnose_text: DiagnoseText | None = None) -> tuple[CheckFindings, ...]:
    """One CheckFindings per failed/timed-out/flagged check, in check order."""
    out = []
    for c in checks:
        for text in texts_for(c):
            found: tuple[Any, ...] = ()
            if diagnose_text is not None:
                try:
                    found = tuple(diagnose_text(text, facts))
                except Exception as exc:  # noqa: BLE001 - a diagnoser bug must not hide the results
                    found = ()
                    text = f"{text}\n(diagnoser failed: {type(exc).__name__}: {exc})"
            out.append(CheckFindings(c.name, c.device, c.status, text, found))
    return tuple(out)


def diagnose_notes(checks: Iterable[CheckResult], *, facts: Any = None,
                   diagnose_text: DiagnoseText | None = None) -> tuple[CheckFindings, ...]:
    """A CPU or CUDA torch is a finding only on a machine with an AMD GPU (facts say so): ask then."""
    if diagnose_text is None or not getattr(facts, "gpus", ()):
        return ()
    out = []
    for c in checks:
        if c.name != "import":
            continue
        for w in c.metrics.get("warnings") or ():
            if "not a ROCm build" not in str(w):
                continue
            try:
                found = tuple(diagnose_text(str(w), facts))
            except Exception:  # noqa: BLE001 - a note, never worth hiding the results for
                found = ()
            if found:
                out.append(CheckFindings(c.name, c.device, "note", str(w), found))
    return tuple(out)


def build_notes(checks: Sequence[CheckResult]) -> tuple[str, ...]:
    """Warnings the import check raised (a CUDA or CPU wheel) and the throughput flags."""
    notes: list[str] = []
    for c in checks:
        if c.name == "import":
            notes.extend(str(w) for w in c.metrics.get("warnings") or ())
        if c.metrics.get("flag"):
            notes.append(f"{c.device}: {c.metrics['flag']}")
    return tuple(dict.fromkeys(notes))


# --------------------------------------------------------------------------- expected throughput


def _norm_name(name: str) -> str:
    s = re.sub(r"\(.*?\)", " ", name.lower())
    s = re.sub(r"\b(amd|ati|radeon|graphics|tm|r)\b", " ", s)
    return " ".join(re.sub(r"[^a-z0-9]+", " ", s).split())


def _device_names(checks: Sequence[CheckResult]) -> dict[str, str]:
    names: dict[str, str] = {}
    imp = next((c for c in checks if c.name == "import"), None)
    for d in (imp.metrics.get("devices") if imp else None) or ():
        if isinstance(d, dict) and d.get("name") is not None:
            names[f"cuda:{d.get('index')}"] = str(d["name"])
    for c in checks:
        if c.name == "devices" and c.metrics.get("name"):
            names.setdefault(c.device, str(c.metrics["name"]))
    return names


def expected_peak(device: str, name: str | None, *, kb: Any = None, facts: Any = None) -> tuple[float, str] | None:
    """(peak TFLOP/s, what it was matched by) from the knowledge base, when it has one for this card."""
    if kb is None:
        return None
    index = int(device.split(":")[1]) if device.startswith("cuda:") and device[5:].isdigit() else None
    if facts is not None and index is not None:
        gpus = [g for g in getattr(facts, "gpus", ()) if getattr(g, "hip_index", None) == index]
        for g in gpus:
            info = kb.gpu_by_pci(g.pci_id) if getattr(g, "pci_id", None) else None
            if info is not None and info.peak_tflops:
                return float(info.peak_tflops), f"{info.name} ({g.pci_id})"
    if not name:
        return None
    want = _norm_name(name)
    peaks = {}
    for info in kb.gpus():
        if not info.peak_tflops:
            continue
        if any(_norm_name(part) == want for part in info.name.split(" / ")):
            peaks[float(info.peak_tflops)] = info.name
    if len(peaks) == 1:  # one stated figure for this name; several would be a guess
        (peak, label), = peaks.items()
        return peak, label
    return None


def flag_throughput(checks: Sequence[CheckResult], *, kb: Any = None, facts: Any = None) -> tuple[CheckResult, ...]:
    """Add the expected band to each throughput result; flag (not fail) a rate far below it."""
    names = _device_names(checks)
    out = []
    for c in checks:
        tflops = c.metrics.get("matmul_tflops") if c.name == "throughput" and c.status == "pass" else None
        found = expected_peak(c.device, names.get(c.device), kb=kb, facts=facts) if tflops else None
        if found is None or tflops is None:
            out.append(c)
            continue
        peak, label = found
        rate = float(tflops)
        m = dict(c.metrics, expected_peak_tflops=peak, expected_from=label, fraction_of_peak=round(rate / peak, 3))
        if rate < FAR_BELOW * peak:
            m["flag"] = (f"verify: matmul throughput far below expected ({rate:.1f} of about "
                         f"{peak:g} TFLOP/s stated for {label})")
        out.append(replace(c, metrics=m))
    return tuple(out)
