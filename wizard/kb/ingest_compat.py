"""Derived knowledge: AMD's ROCm compatibility matrix per release, from the CSV its docs page is built from.

ROCm/ROCm keeps ``docs/compatibility/compatibility-matrix-historical-6.0.csv``: one column per release from
6.0.0 on (a header cell may name two releases, ``7.0.1/7.0.0``), one row per fact, a fact listing several values
on continuation rows (first cell empty). ``derived_compat_matrix.json`` holds per release column:

* ``gfx``: the ``GPU / LLVM target`` row (footnote markers such as ``[#mi300_624-past-60]_`` stripped);
* ``architectures``: the ``Architecture`` row (CDNA3, RDNA3, ...);
* ``distributions``: the ``Operating systems & kernels`` row, each cell one distribution with its versions
  (``SLES 15 SP6, SP5`` is SLES 15 SP6 and 15 SP5);
* ``kmd_user_space``: the row under the ``KMD & USER SPACE`` heading (the user-space release lines the kernel
  driver of that release was tested with, as rocm_releases.json's ``kmd_compat`` writes them).

Each fact names its source (``repo@commit:path``) and the CSV row label it was read from. A release whose typed
gfx list is null in rocm_releases.json reads the derived one (``KnowledgeBase.releases``); ``kb check`` fails
where a typed list disagrees with the matrix. The matrix lists the supported targets without the ones AMD
marks deprecated (gfx906 in 6.0-6.2 is on the system-requirements pages as deprecated, not in the matrix): the
typed ``official`` list less its ``deprecated`` targets must be the matrix's list. Releases the CSV has no
column for are not in the table and keep what rocm_releases.json says (null stays null).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from wizard import lazy_re

from .ingest import IngestError, _snapshot

if TYPE_CHECKING:
    from .records import Release

DERIVED_COMPAT_MATRIX = "derived_compat_matrix.json"
COMPAT_REPO = "ROCm/ROCm"
COMPAT_CSV = "docs/compatibility/compatibility-matrix-historical-6.0.csv"
GFX_ROW = "GPU / LLVM target"
ARCH_ROW = "Architecture"
OS_ROW = "Operating systems & kernels"
KMD_SECTION = "USER SPACE"  # the heading "KMD & USER SPACE" (later "DRIVER & USER SPACE") over the KMD row
FACTS = ("gfx", "architectures", "distributions", "kmd_user_space")

_FOOTNOTE = lazy_re.compile(r"\s*\[#[^\]\s]*\]_")
_ROLE_LINK = lazy_re.compile(r":(?:doc|ref):`([^`<]*?)\s*<[^`>]*>`")  # :doc:`Label <target>`
_WEB_LINK = lazy_re.compile(r"`([^`<]*?)\s*<[^`>]*>`_")  # `Label <https://...>`_
_RELEASE = lazy_re.compile(r"^\d+\.\d+\.\d+$")
_GFX = lazy_re.compile(r"^gfx\d{2,4}[a-f]?$")
_ARCH = lazy_re.compile(r"^(?:CDNA|RDNA|GCN)\d*$")
_DISTRO = lazy_re.compile(r"^([A-Za-z][A-Za-z ]*?) (\d.*)$")  # "Ubuntu 24.04.2"; "SLES 15 SP6": SLES, 15 SP6
_SLES_SP = lazy_re.compile(r"^(\d+) SP\d+$")  # a SLES service pack: the next cells write "SP5" for "15 SP5"
_KMD = lazy_re.compile(r"^\d+\.\d+\.x$")
# the matrix's distribution names -> os-release IDs as rocm_releases.json's distros write them
OS_IDS = {"Ubuntu": "ubuntu", "RHEL": "rhel", "SLES": "sles", "Oracle Linux": "ol", "Debian": "debian",
          "Azure Linux": "azurelinux", "CentOS": "centos", "Rocky Linux": "rocky"}


def clean(cell: str) -> str:
    """A cell as the page shows it: links reduced to their text, footnote markers and outer spaces dropped."""
    text = _ROLE_LINK.sub(r"\1", cell)
    text = _WEB_LINK.sub(r"\1", text)
    return _FOOTNOTE.sub("", text).strip()


def _columns(header: list[str], where: str) -> list[list[str]]:
    """The releases of each column of the "ROCm Version" header row ("7.0.1/7.0.0" names two)."""
    if not header or header[0].strip() != "ROCm Version":
        raise IngestError(f"{where}: the first row is not the 'ROCm Version' header")
    out = []
    for cell in header[1:]:
        names = [n.strip() for n in cell.split("/")]
        if not all(_RELEASE.match(n) for n in names):
            raise IngestError(f"{where}: header column {cell.strip()!r} is not a release (X.Y.Z)")
        out.append(names)
    return out


def matrix_rows(text: str, where: str) -> tuple[list[list[str]], dict[str, list[list[str]]]]:
    """(the releases of each column, {row label: its value rows}) of the CSV. A labelled row and the unlabelled
    rows after it are one fact; a row whose values are a ``.. _anchor:`` or empty is a heading (its label, if
    any, heads the rows below: the KMD row is labelled "<heading> / <label>")."""
    reader = list(csv.reader(text.splitlines()))
    if not reader:
        raise IngestError(f"{where}: empty")
    columns = _columns(reader[0], where)
    rows: dict[str, list[list[str]]] = {}
    current: str | None = None
    heading = ""
    for raw in reader[1:]:
        cells = (raw + [""] * (len(columns) + 1))[:len(columns) + 1]
        label, values = clean(cells[0]), [clean(c) for c in cells[1:]]
        if any(v.startswith(".. _") for v in values) or (label and not any(values)):
            heading, current = (label or heading), None
            continue
        if not label and not any(values):
            current = None
            continue
        if label:
            current = f"{heading} / {label}" if KMD_SECTION in heading else label
            heading = "" if KMD_SECTION in heading else heading
            while current in rows:  # a label written twice: the second is another row (never one read here)
                current += " (again)"
            rows[current] = []
        if current is None:
            raise IngestError(f"{where}: a continuation row without a labelled row above it: {raw[:3]}")
        rows[current].append(values)
    return columns, rows


def _distribution(cell: str, where: str) -> dict[str, Any]:
    """{"name", "versions"} of one cell: "RHEL 9.5, 9.4"; "SLES 15 SP6, SP5" is 15 SP6 and 15 SP5."""
    first, *rest = [p.strip() for p in cell.split(",")]
    mo = _DISTRO.match(first)
    if mo is None:
        raise IngestError(f"{where}: {cell!r} is not '<distribution> <version>[, <version>...]'")
    name, version = mo.group(1), mo.group(2)
    versions = [version]
    sp = _SLES_SP.match(version)
    for v in rest:
        versions.append(f"{sp.group(1)} {v}" if sp is not None and v.startswith("SP") else v)
    if not all(v[:1].isdigit() for v in versions):
        raise IngestError(f"{where}: {cell!r}: a version that does not start with a digit")
    return {"name": name, "versions": versions}


def _row(rows: dict[str, list[list[str]]], label: str, where: str) -> tuple[str, list[list[str]]]:
    found = [k for k in rows if k == label or (label == KMD_SECTION and KMD_SECTION in k.split(" / ")[0])]
    if len(found) != 1:
        raise IngestError(f"{where}: no single {label!r} row")
    return found[0], rows[found[0]]


def compat_releases(text: str, where: str, source: str) -> list[dict[str, Any]]:
    """One entry per release the CSV has a column for, newest column first, each fact with its source and row."""
    columns, rows = matrix_rows(text, where)
    picked = {"gfx": _row(rows, GFX_ROW, where), "architectures": _row(rows, ARCH_ROW, where),
              "distributions": _row(rows, OS_ROW, where), "kmd_user_space": _row(rows, KMD_SECTION, where)}
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, names in enumerate(columns):
        facts: dict[str, Any] = {}
        for fact, (label, value_rows) in picked.items():
            cells = [r[i] for r in value_rows if r[i]]
            values: list[Any]
            if fact == "gfx":
                values = cells
                bad = [v for v in values if not _GFX.match(v)]
            elif fact == "architectures":
                values = cells
                bad = [v for v in values if not _ARCH.match(v)]
            elif fact == "distributions":
                values = [_distribution(c, f"{where}: {label} ({names[0]})") for c in cells]
                bad = []
            else:
                values = [v.strip() for c in cells for v in c.split(",")]
                bad = [v for v in values if not _KMD.match(v)]
            if bad:
                raise IngestError(f"{where}: {label} ({'/'.join(names)}): not what this row holds: {bad}")
            facts[fact] = {"values": values, "row": label, "source": source} if values else None
        for name in names:
            if name in seen:
                raise IngestError(f"{where}: release {name} has two columns")
            seen.add(name)
            out.append({"release": name, "column": "/".join(names), **facts})
    if not out:
        raise IngestError(f"{where}: no release column")
    return out


def derive_compat_matrix(kb_dir: Path) -> dict[str, Any]:
    text, src = _snapshot(kb_dir, COMPAT_REPO, COMPAT_CSV)
    source = f"{src['repo']}@{src['commit']}:{src['path']}"
    return {
        "_generated": "by 'python -m wizard.kb ingest' from the snapshot named in provenance; do not edit",
        "provenance": src,
        "note": "per release column of AMD's historical compatibility matrix: the GPU / LLVM targets, the "
                "architectures, the distributions with versions and the user-space lines the release's kernel "
                "driver was tested with; footnote markers stripped; null where the column is empty. A release "
                "the CSV has no column for is not here.",
        "releases": compat_releases(text, COMPAT_CSV, source),
    }


def matrix_gfx(table: dict[str, Any]) -> dict[str, tuple[tuple[str, ...], str]]:
    """{release: (its targets, "source, row 'label'")} of the releases whose column lists targets."""
    out = {}
    for row in table.get("releases") or []:
        fact = row.get("gfx") if isinstance(row, dict) else None
        if isinstance(fact, dict) and fact.get("values"):
            out[str(row["release"])] = (tuple(str(g) for g in fact["values"]),
                                        f"{fact.get('source')}, row '{fact.get('row')}'")
    return out


def compat_matrix_problems(table: dict[str, Any], releases: Sequence[Release]) -> list[str]:
    """Typed releases whose gfx list (less its deprecated targets) or kernel-driver window is not the matrix's, or
    whose distros lack one the matrix lists, and matrix releases rocm_releases.json lacks. ``releases`` are the
    typed ones, as rocm_releases.json writes them (not filled from the table)."""
    by_version = {r.version: r for r in releases}
    out = []
    for row in table.get("releases") or []:
        where = f"rocm_releases.json: releases ({row['release']})"
        rel = by_version.get(row["release"])
        src = (table.get("provenance") or {}).get("url", "")
        if rel is None:
            out.append(f"{where}: missing, although AMD's compatibility matrix has a column for it ({src})")
            continue
        gfx = row.get("gfx")
        if rel.gfx is not None and isinstance(gfx, dict):
            want = set(gfx["values"])
            listed = set(rel.gfx.official) - set(rel.gfx.deprecated)
            if listed != want:
                out.append(f"{where}: gfx official (less deprecated) {sorted(listed)} is not what AMD's "
                           f"compatibility matrix lists {sorted(want)} ({gfx['source']}, row '{gfx['row']}'; "
                           f"{DERIVED_COMPAT_MATRIX})")
        os_fact = row.get("distributions")
        if rel.distros is not None and isinstance(os_fact, dict):
            typed = {(d.id, d.version) for d in rel.distros}
            lacking = [f"{d['name']} {v}" for d in os_fact["values"] for v in d["versions"]
                       if _distro_key(d["name"], v) not in typed]
            if lacking:
                out.append(f"{where}: distros lack what AMD's compatibility matrix lists: {', '.join(lacking)} "
                           f"({os_fact['source']}, row '{os_fact['row']}'; {DERIVED_COMPAT_MATRIX})")
        kmd = row.get("kmd_user_space")
        if rel.kmd_compat is not None and isinstance(kmd, dict) and set(rel.kmd_compat) != set(kmd["values"]):
            out.append(f"{where}: kmd_compat {sorted(rel.kmd_compat)} is not what AMD's compatibility matrix "
                       f"lists {sorted(kmd['values'])} ({kmd['source']}, row '{kmd['row']}'; {DERIVED_COMPAT_MATRIX})")
    return out


def _distro_key(name: str, version: str) -> tuple[str, str]:
    """(os id, version) as a typed distros entry writes a matrix cell's version: Ubuntu by its major.minor
    (24.04.2 is 24.04), SLES by major.service-pack (15 SP6 is 15.6), the rest as written."""
    os_id = OS_IDS.get(name, name.lower())
    if os_id == "ubuntu":
        version = ".".join(version.split(".")[:2])
    sp = _SLES_SP.match(version)
    if sp is not None:
        version = f"{sp.group(1)}.{version.rsplit('SP', 1)[1]}"
    return os_id, version
