"""What a migration leaves in a real root, read from the host side: the dpkg database, the ROCm version
files, the venvs, the apt sources and the groups. Two roots that end equal here ended the same way
(the crash-consistency benchmark and the real-root tests compare these)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def dpkg_status(root: Path) -> dict[str, str]:
    """package -> "version status" for every package dpkg knows (any state, half-installed included)."""
    try:
        text = (root / "var/lib/dpkg/status").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    out: dict[str, str] = {}
    for para in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in para.splitlines():
            if line and not line.startswith(" ") and ":" in line:
                k, v = line.split(":", 1)
                fields[k] = v.strip()
        if "Package" in fields:
            out[fields["Package"]] = f"{fields.get('Version', '')} {fields.get('Status', '')}".strip()
    return out


def end_state(root: Path) -> dict[str, Any]:
    venvs: dict[str, Any] = {}
    for site in sorted(root.glob("home/*/*/lib/python*/site-packages")):
        venvs[str(site.relative_to(root))] = sorted(p.name for p in site.iterdir()
                                                    if not p.name.startswith(".") and p.name != "__pycache__")
    for act in sorted(root.glob("home/*/*/bin/activate")):
        venvs[str(act.relative_to(root))] = act.read_text()
    sources = root / "etc/apt/sources.list.d"
    return {
        "dpkg": dpkg_status(root),
        "rocm": {str(p.relative_to(root)): p.read_text() for p in sorted(root.glob("opt/rocm*/.info/version"))},
        "venvs": venvs,
        "apt": {p.name: p.read_text() for p in sorted(sources.glob("*"))} if sources.is_dir() else {},
        "groups": sorted(line for line in (root / "etc/group").read_text().splitlines()
                         if line.split(":")[0] in ("render", "video")),
    }
