"""gfx target -> GPU family, by the processor tables of LLVM's AMDGPU back end.

Source: https://llvm.org/docs/AMDGPUUsage.html#processors (GFX9 / GFX10.1 / GFX10.3 / GFX11 /
GFX11.5 / GFX12 rows and the products named there). CDNA parts are the GFX9 targets gfx908
(MI100, CDNA1), gfx90a (MI200, CDNA2), gfx940/941/942 (MI300, CDNA3) and gfx950 (MI350, CDNA4);
the remaining GFX9 targets are Vega (GCN5), as docs/contracts.md lists them.
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
