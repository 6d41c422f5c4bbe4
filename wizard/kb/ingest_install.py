"""Derived knowledge: what AMD's install pages print per release, from the pages' own sources.

AMD's "ROCm installation on Linux" pages (ROCm/rocm-install-on-linux) fill every version, file name and
distribution selector from data literals in ``docs/conf.py`` of each release's ``docs/X.Y.Z`` branch:
``rocm_version``, ``amdgpu_version`` (the repo.radeon.com/amdgpu-install/ directory), ``amdgpu_install_version``
(the package version in the amdgpu-install file name) and the distribution lists the install selectors offer
(``ubuntu_version_numbers``, ``rhel_version_numbers``, ``sles_version_numbers``, ``ol_version_numbers``).
``derived_install_pages.json`` is generated from one snapshot of that file per release (read with ``ast``,
never run). ``kb check`` then holds each release of rocm_releases.json to it: its amdgpu-install URLs are
exactly one per Ubuntu codename, RHEL (``el<x.y>``) and SLES (``sle<x.y>``) version the page offers, each in
the page's directory and with its package version, and those distributions are in the release's OS list.

Only the docs/6.0.2 to docs/6.2.2 branches of that repository are kept (its snapshot here ends in October
2024; later install pages moved to other repositories whose sources are not machine-readable this way).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from .ingest import IngestError, py_literals, snapshots_of

if TYPE_CHECKING:
    from .records import Release

DERIVED_INSTALL_PAGES = "derived_install_pages.json"
INSTALL_REPO = "ROCm/rocm-install-on-linux"
CONF = "docs/conf.py"
NAMES = ("rocm_version", "amdgpu_version", "amdgpu_install_version", "ubuntu_version_numbers",
         "rhel_version_numbers", "sles_version_numbers", "ol_version_numbers")


def _versions(value: Any, name: str, where: str) -> list[str]:
    """A selector list: plain versions, or (major, version) pairs as some branches write them."""
    if not isinstance(value, (list, tuple)):
        raise IngestError(f"{where}: {name} is not a list")
    out = []
    for v in value:
        if isinstance(v, (list, tuple)) and len(v) == 2:
            v = v[1]
        if not isinstance(v, str):
            raise IngestError(f"{where}: {name}: {v!r} is not a version")
        out.append(v)
    return out


def page_release(source: str, where: str) -> dict[str, Any]:
    """One release's install-page facts from its conf.py."""
    lit = py_literals(source, NAMES, where)
    version = str(lit["rocm_version"])
    parts = version.split(".")
    if not (2 <= len(parts) <= 3 and all(p.isdigit() for p in parts)):
        raise IngestError(f"{where}: rocm_version {version!r} is not X.Y or X.Y.Z")
    ubuntu = lit["ubuntu_version_numbers"]
    if not isinstance(ubuntu, list) or not all(isinstance(u, tuple) and len(u) == 2 for u in ubuntu):
        raise IngestError(f"{where}: ubuntu_version_numbers is not a list of (version, codename)")
    return {
        "release": ".".join(parts + ["0"] * (3 - len(parts))),
        "amdgpu_install_dir": str(lit["amdgpu_version"]),
        "amdgpu_install_package": str(lit["amdgpu_install_version"]),
        "ubuntu": [{"version": str(v), "codename": str(c)} for v, c in ubuntu],
        "rhel": _versions(lit["rhel_version_numbers"], "rhel_version_numbers", where),
        "sles": _versions(lit["sles_version_numbers"], "sles_version_numbers", where),
        "ol": _versions(lit["ol_version_numbers"], "ol_version_numbers", where),
    }


def derive_install_pages(kb_dir: Path) -> dict[str, Any]:
    rows = []
    for text, src in snapshots_of(kb_dir, INSTALL_REPO, CONF):
        row = page_release(text, f"{CONF}@{src['commit'][:8]}")
        row["provenance"] = src
        rows.append(row)
    if not rows:
        raise IngestError(f"no snapshot of {INSTALL_REPO} {CONF}")
    seen = [r["release"] for r in rows]
    if len(set(seen)) != len(seen):
        raise IngestError(f"{INSTALL_REPO} {CONF}: two snapshots give the same release")
    return {
        "_generated": "by 'python -m wizard.kb ingest' from the snapshots named in each row's provenance; do not edit",
        "note": "per release, what AMD's install pages print: the amdgpu-install directory and package version, and "
                "the distributions the install selectors offer (ol: not checked, the release's OS list comes from "
                "its system-requirements page)",
        "releases": rows,
    }


def install_keys(row: dict[str, Any]) -> set[str]:
    """The amdgpu-install URL keys the page offers: Ubuntu codenames, el<x.y>, sle<x.y>."""
    return ({u["codename"] for u in row["ubuntu"]} | {f"el{v}" for v in row["rhel"]}
            | {f"sle{v}" for v in row["sles"]})


def install_page_problems(table: dict[str, Any], releases: Sequence[Release]) -> list[str]:
    """Releases whose amdgpu-install URLs or OS list disagree with what their install page prints."""
    by_version = {r.version: r for r in releases}
    out = []
    for row in table.get("releases") or []:
        where = f"rocm_releases.json: releases ({row['release']})"
        src = row["provenance"]["url"]
        rel = by_version.get(row["release"])
        if rel is None:
            out.append(f"{where}: missing, although its install page is kept ({src})")
            continue
        want, have = install_keys(row), set(rel.amdgpu_install)
        if want != have:
            extra, lacking = sorted(have - want), sorted(want - have)
            out.append(f"{where}: amdgpu_install keys differ from its install page ({src}): "
                       f"not on the page {extra or 'none'}, missing {lacking or 'none'}")
        for key, url in sorted(rel.amdgpu_install.items()):
            name = url.rsplit("/", 1)[-1]
            if f"/amdgpu-install/{row['amdgpu_install_dir']}/" not in url or \
                    not name.startswith((f"amdgpu-install_{row['amdgpu_install_package']}_",
                                         f"amdgpu-install-{row['amdgpu_install_package']}.")):
                out.append(f"{where}: amdgpu_install ({key}): {url} is not in directory "
                           f"{row['amdgpu_install_dir']} with package version {row['amdgpu_install_package']} ({src})")
        distros = {(d.id, d.version) for d in rel.distros or ()}
        page = ({("ubuntu", u["version"]) for u in row["ubuntu"]} | {("rhel", v) for v in row["rhel"]}
                | {("sles", v) for v in row["sles"]})
        lacking_os = sorted(f"{i} {v}" for i, v in page - distros)
        if lacking_os:
            out.append(f"{where}: distros lack what its install page offers ({src}): {', '.join(lacking_os)}")
        if rel.filename_verified is not True:
            out.append(f"{where}: filename_verified must be true: its install page prints the file names ({src})")
    return out
