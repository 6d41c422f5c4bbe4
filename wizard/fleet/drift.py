"""Drift against a reference (``fleet detect --reference HOST|FACTS.json``): per host, how its stack differs
from one known-good machine's, field by field, as AMD's node-scraper compares a node with a reference config.

The stack of a machine: OS, kernel, the GPUs' gfx, the amdgpu driver, ROCm, the torch versions of its Python
environments and the gfx list their wheels carry, and the runtime overrides in force (HSA_OVERRIDE_GFX_VERSION,
PYTORCH_ROCM_ARCH, visible devices, ...). A field a host's evidence cannot show (a host without the wizard shows
no Python environment and no environment variable) is ``unknown``, never a difference.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Sequence

from wizard.fleet.detect import HostFacts
from wizard.fleet.facts_io import FactsFormatError, loads
from wizard.model import Facts
from wizard.record import record

FIELDS = ("os", "kernel", "gpus", "driver", "rocm", "torch", "torch_gfx", "overrides")
UNKNOWN = "unknown"
NONE = "none"


class ReferenceError(ValueError):
    """The reference is neither a facts file nor a host with facts (one line)."""


@record
class Difference:
    field: str
    reference: str
    host: str


@record
class HostDrift:
    host: str
    status: str  # "same", "drift", or the host's detect status when it has no facts ("unreachable", ...)
    differences: tuple[Difference, ...] = ()
    unknown: tuple[str, ...] = ()  # fields its evidence cannot show
    reason: str = ""


def _join(values: Sequence[str]) -> str:
    return ", ".join(values) if values else NONE


def stack(facts: Facts, *, partial: bool = False) -> dict[str, str]:
    """Field -> one comparable text. ``partial``: the facts came from plain commands (no wizard on the host),
    so Python environments and environment variables were not read (``unknown``)."""
    gfx = Counter(g.gfx or UNKNOWN for g in facts.gpus)
    with_torch = [e for e in facts.python_envs if e.torch]
    in_force = facts.env_values  # the first assignment of a name wins; a service's own is not the shell's
    return {
        "os": " ".join(x for x in (facts.os.id, facts.os.version) if x) or UNKNOWN,
        "kernel": facts.os.kernel or UNKNOWN,
        "gpus": _join([f"{n}x {k}" for k, n in sorted(gfx.items())]),
        "driver": (" ".join(x for x in (facts.driver.kind, facts.driver.version) if x)
                   or (NONE if facts.driver.loaded is False else UNKNOWN)),
        "rocm": facts.rocm.version or NONE,
        "torch": UNKNOWN if partial else _join(sorted({e.torch or "" for e in with_torch})),
        "torch_gfx": UNKNOWN if partial else _join(sorted({t for e in with_torch for t in e.gfx_targets})),
        "overrides": UNKNOWN if partial else _join([f"{k}={v}" for k, v in sorted(in_force.items())]),
    }


def compare(reference: dict[str, str], host: HostFacts) -> HostDrift:
    if host.facts is None:
        return HostDrift(host.host, host.status, reason=host.reason)
    mine = stack(host.facts, partial=host.status == "evidence")
    diffs = tuple(Difference(f, reference[f], mine[f]) for f in FIELDS
                  if mine[f] != UNKNOWN and reference[f] != UNKNOWN and mine[f] != reference[f])
    unknown = tuple(f for f in FIELDS if UNKNOWN in (mine[f], reference[f]) and mine[f] != reference[f])
    return HostDrift(host.host, "drift" if diffs else "same", diffs, unknown)


def reference_stack(spec: str, hosts: Sequence[HostFacts]) -> tuple[str, dict[str, str]]:
    """(what the reference is, its stack). ``spec``: an existing facts file (``rocm-wizard fleet facts`` of a
    known-good machine, or a fleet directory's ``hosts/HOST/facts.json``), else a host of the inventory."""
    path = Path(spec).expanduser()
    if path.is_file():
        try:
            facts = loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, FactsFormatError) as exc:
            raise ReferenceError(f"--reference {spec}: not a facts file ({exc}); write one with "
                                 "`rocm-wizard fleet facts > FILE` on the reference machine") from None
        return str(path), stack(facts)
    ref = next((h for h in hosts if h.host == spec), None)
    if ref is None:
        raise ReferenceError(f"--reference {spec}: neither a facts file nor a host of the inventory")
    if ref.facts is None:
        raise ReferenceError(f"--reference {spec}: the reference host could not be read ({ref.status}: {ref.reason})")
    return spec, stack(ref.facts, partial=ref.status == "evidence")


def drift(spec: str, hosts: Sequence[HostFacts]) -> tuple[str, dict[str, str], list[HostDrift]]:
    """(the reference, its stack, each host's drift). Raises ReferenceError. The reference host itself is
    listed too (``same``)."""
    name, ref = reference_stack(spec, hosts)
    return name, ref, [compare(ref, h) for h in hosts]


def to_json(name: str, ref: dict[str, str], rows: Sequence[HostDrift]) -> dict[str, object]:
    return {"reference": {"source": name, "stack": ref},
            "hosts": [{"host": r.host, "status": r.status, "reason": r.reason or None,
                       "differences": [{"field": d.field, "reference": d.reference, "host": d.host}
                                       for d in r.differences],
                       "unknown": list(r.unknown)} for r in rows]}


def table_lines(rows: Sequence[HostDrift]) -> list[list[str]]:
    """Cells: host, state, field, reference, this host; one line per difference."""
    out: list[list[str]] = []
    for r in rows:
        if not r.differences:
            note = r.reason or (f"unknown: {', '.join(r.unknown)}" if r.unknown else "")
            out.append([r.host, r.status, "", "", note])
            continue
        for i, d in enumerate(r.differences):
            out.append([r.host if i == 0 else "", r.status if i == 0 else "", d.field, d.reference, d.host])
    return out


COLUMNS = ("host", "state", "differs in", "reference", "this host")
