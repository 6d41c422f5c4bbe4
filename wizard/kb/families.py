"""gfx target -> GPU family, by the processor tables of LLVM's AMDGPU back end.

Source: https://llvm.org/docs/AMDGPUUsage.html#processors (GFX9 / GFX10.1 / GFX10.3 / GFX11 /
GFX11.5 / GFX12 rows and the products named there). CDNA parts are the GFX9 targets gfx908
(MI100, CDNA1), gfx90a (MI200, CDNA2), gfx940/941/942 (MI300, CDNA3) and gfx950 (MI350, CDNA4);
the remaining GFX9 targets are Vega (GCN5), as docs/contracts.md lists them.

A family name is a product generation, not an instruction set: RDNA3 (gfx110x) and RDNA3.5 (gfx115x) are
both GFX11, and code for one generation's members runs on another's only where LLVM's "AMDGPU Generic
Processors" table puts both in one generic target (https://llvm.org/docs/AMDGPUUsage.html, table
amdgpu-generic-processor-table): ``GENERIC_TARGETS`` below is that table's membership.
"""

from __future__ import annotations

_EXACT = {
    "gfx900": "GCN5",
    "gfx902": "GCN5",
    "gfx904": "GCN5",
    "gfx906": "GCN5",
    "gfx909": "GCN5",
    "gfx90c": "GCN5",
    "gfx908": "CDNA1",
    "gfx90a": "CDNA2",
    "gfx940": "CDNA3",
    "gfx941": "CDNA3",
    "gfx942": "CDNA3",
    "gfx950": "CDNA4",
}

# (prefix, family): gfx101x GFX10.1, gfx103x GFX10.3, gfx110x GFX11, gfx115x GFX11.5, gfx120x GFX12.
_PREFIXES = (
    ("gfx101", "RDNA1"),
    ("gfx103", "RDNA2"),
    ("gfx110", "RDNA3"),
    ("gfx115", "RDNA3.5"),
    ("gfx120", "RDNA4"),
)


def family_of_gfx(gfx: str | None) -> str | None:
    """The family of a gfx target, or None when it is not one we know (never a guess)."""
    if not gfx:
        return None
    g = gfx.strip().lower()
    if ":" in g:  # "gfx90a:sramecc+:xnack-" -> "gfx90a"
        g = g.split(":", 1)[0]
    if g in _EXACT:
        return _EXACT[g]
    for prefix, family in _PREFIXES:
        if g.startswith(prefix) and len(g) == len(prefix) + 1:
            return family
    return None


# LLVM's generic targets and the processors each one covers (AMDGPUUsage, "AMDGPU Generic Processors").
GENERIC_TARGETS: dict[str, tuple[str, ...]] = {
    "gfx9-generic": ("gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"),
    "gfx9-4-generic": ("gfx940", "gfx941", "gfx942", "gfx950"),
    "gfx10-1-generic": ("gfx1010", "gfx1011", "gfx1012", "gfx1013"),
    "gfx10-3-generic": ("gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"),
    "gfx11-generic": ("gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"),
    "gfx12-generic": ("gfx1200", "gfx1201"),
}
_GENERIC_OF = {gfx: generic for generic, members in GENERIC_TARGETS.items() for gfx in members}


def generic_target(gfx: str | None) -> str | None:
    """The LLVM generic target that covers this processor ("gfx1151" -> "gfx11-generic"), or None."""
    if not gfx:
        return None
    return _GENERIC_OF.get(gfx.strip().lower().split(":", 1)[0])


def one_generic_target(a: str | None, b: str | None) -> bool:
    """Whether two processors are members of one LLVM generic target (one instruction-set generation)."""
    ga = generic_target(a)
    return ga is not None and ga == generic_target(b)
