"""Derived knowledge: AMD's ROCm compatibility matrix per release, from the CSV its docs page is built from and
from the page itself.

ROCm/ROCm keeps ``docs/compatibility/compatibility-matrix-historical-6.0.csv``: one column per release from
6.0.0 on (a header cell may name two releases, ``7.0.1/7.0.0``), one row per fact, a fact listing several values
on continuation rows (first cell empty). The page ``docs/compatibility/compatibility-matrix.rst`` (kept at several
commits of ROCm/legacy-rocm-build, where ROCm/ROCm's docs moved) opens with the same table for the current
releases as an rst ``.. csv-table::`` whose ``:header: "ROCm Version", ...`` names the columns (``"7.2.4/7.2.3"``
is both releases), ``|br|`` a line break inside a cell. ``derived_compat_matrix.json`` holds per release, from
every snapshot whose table has a column for it:

* ``gfx``: the ``GPU / LLVM target`` row (footnote markers such as ``[#mi300_624-past-60]_`` stripped);
* ``architectures``: the ``Architecture`` row (CDNA3, RDNA3, ...);
* ``distributions``: the ``Operating systems & kernels`` row, each cell one distribution with its versions
  (``SLES 15 SP6, SP5`` is SLES 15 SP6 and 15 SP5);
* ``kmd_user_space``: the ``Tested user space versions`` row under the ``KMD & USER SPACE`` heading (the
  user-space release lines the kernel driver of that release was tested with, as rocm_releases.json's
  ``kmd_compat`` writes them). Later tables put another row there, ``KMD versions`` (6.4 pages) or
  ``AMD GPU Driver`` (7.x pages): the drivers that support the column's user space, the other direction
  (the 6.4.1 page gives 6.3.0 "6.4.x, 6.3.x, 6.2.x, 6.1.x" where the CSV's tested row gives "6.3.x, 6.2.x,
  6.1.x"; the 7.x cells are driver versions, 30.20.0): no ``kmd_compat`` is read from it (null).

Each fact names its source (``repo@commit:path``) and the row label it was read from. Where several snapshots
have a column for one release, each fact they give must be the same (as sets), else the derivation fails and
``kb check`` names the release, the fact and both sources; the first snapshot's values are kept (the CSV first,
then the pages in snapshots.json's order). A release whose typed
gfx list is null in rocm_releases.json reads the derived one (``KnowledgeBase.releases``); ``kb check`` fails
where a typed list disagrees with the matrix. The matrix lists the supported targets without the ones AMD
marks deprecated (gfx906 in 6.0-6.2 is on the system-requirements pages as deprecated, not in the matrix): the
typed ``official`` list less its ``deprecated`` targets must be the matrix's list. Releases the CSV has no
column for are not in the table and keep what rocm_releases.json says (null stays null).

The matrix's ``GPU / LLVM target`` list is AMD's compute list: every Instinct target, and the Radeon targets AMD
chose to name there; the pages say that for Radeon GPUs and Ryzen APUs "see the Use ROCm on Radeon and Ryzen"
pages, which list more (gfx1101, gfx1102, gfx1151 ...). So a list filled from the matrix decides only for the
Instinct (CDNA) targets: ``matrix_decides`` says so and the diagnosis reads a Radeon target missing from it as
unknown, not unsupported.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from wizard import lazy_re

from packaging.version import Version

from .families import family_of_gfx
from .ingest import IngestError, _snapshot, snapshots_of

if TYPE_CHECKING:
    from .records import Release

DERIVED_COMPAT_MATRIX = "derived_compat_matrix.json"
COMPAT_REPO = "ROCm/ROCm"
COMPAT_CSV = "docs/compatibility/compatibility-matrix-historical-6.0.csv"
PAGE_REPO = "ROCm/legacy-rocm-build"
COMPAT_PAGE = "docs/compatibility/compatibility-matrix.rst"
TESTED_ROW = "Tested user space versions"  # the one KMD row that lists user-space lines (kmd_compat's direction)
# the families whose targets the matrix lists in full: Instinct (CDNA) only; Radeon and Ryzen targets it defers to
# the "Use ROCm on Radeon and Ryzen" pages
MATRIX_DECIDES = ("CDNA1", "CDNA2", "CDNA3", "CDNA4")
GFX_ROW = "GPU / LLVM target"
ARCH_ROW = "Architecture"
OS_ROW = "Operating systems & kernels"
KMD_SECTION = "USER SPACE"  # the heading "KMD & USER SPACE" (later "DRIVER & USER SPACE") over the KMD row
FACTS = ("gfx", "architectures", "distributions", "kmd_user_space")

_FOOTNOTE = lazy_re.compile(r"\s*\[#[^\]\s]*\]_")
_BR = lazy_re.compile(r"\s*\|br\|\s*")  # the rst pages' line break inside a cell
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
    text = _BR.sub(" ", text)
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


def page_table(text: str, where: str) -> list[list[str]]:
    """The rows of an rst page's ``.. csv-table::`` whose ``:header:`` starts with "ROCm Version": the header's
    cells, then the table's CSV lines (the lines indented under the directive, up to the next line that is not)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() != ".. csv-table::":
            continue
        indent = len(line) - len(line.lstrip())
        j, header = i + 1, None
        while j < len(lines) and lines[j].strip().startswith(":"):
            option = lines[j].strip()
            if option.startswith(":header:"):
                header = next(csv.reader([option[len(":header:"):].strip()], skipinitialspace=True), [])
            j += 1
        if not header or header[0].strip() != "ROCm Version":
            continue
        body = []
        for raw in lines[j:]:
            if raw.strip() and len(raw) - len(raw.lstrip()) <= indent:
                break
            if raw.strip():
                body.append(raw)
        return [header] + list(csv.reader(body))
    raise IngestError(f"{where}: no csv-table with a 'ROCm Version' header")


def matrix_rows(text: str, where: str, rst: bool = False) -> tuple[list[list[str]], dict[str, list[list[str]]]]:
    """(the releases of each column, {row label: its value rows}) of the CSV (of the page's csv-table with
    ``rst``). A labelled row and the unlabelled rows after it are one fact; a row whose values are a
    ``.. _anchor:`` or empty is a heading (its label, if any, heads the rows below: the KMD row is labelled
    "<heading> / <label>")."""
    reader = page_table(text, where) if rst else list(csv.reader(text.splitlines()))
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


def compat_releases(text: str, where: str, source: str, rst: bool = False) -> list[dict[str, Any]]:
    """One entry per release the CSV (the rst page's table, with ``rst``) has a column for, in column order, each
    fact with its source and row."""
    columns, rows = matrix_rows(text, where, rst)
    picked = {"gfx": _row(rows, GFX_ROW, where), "architectures": _row(rows, ARCH_ROW, where),
              "distributions": _row(rows, OS_ROW, where), "kmd_user_space": _row(rows, KMD_SECTION, where)}
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, names in enumerate(columns):
        facts: dict[str, Any] = {}
        for fact, (label, value_rows) in picked.items():
            cells = [r[i] for r in value_rows if r[i]]
            if fact == "kmd_user_space" and label.split(" / ")[-1] != TESTED_ROW:
                cells = []  # the drivers for this user space, not kmd_compat's user spaces for this driver
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


def _same(fact: str, a: list[Any], b: list[Any]) -> bool:
    """Two sources' values of one fact are the same: as sets (distributions as their (name, version) pairs)."""
    if fact == "distributions":
        return {(d["name"], v) for d in a for v in d["versions"]} == {(d["name"], v) for d in b for v in d["versions"]}
    return set(a) == set(b)


def merge_releases(per_source: Sequence[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One entry per release any source has a column for, newest release first: each fact from the first source
    that gives it. A fact two sources give differently is an IngestError naming both."""
    merged: dict[str, dict[str, Any]] = {}
    for entries in per_source:
        for entry in entries:
            have = merged.setdefault(entry["release"], dict(entry))
            for fact in FACTS:
                new, old = entry.get(fact), have.get(fact)
                if new is None:
                    continue
                if old is None:
                    have[fact] = new
                elif not _same(fact, old["values"], new["values"]):
                    raise IngestError(f"release {entry['release']}: {fact} disagree: {old['source']} row "
                                      f"'{old['row']}' gives {old['values']}, {new['source']} row '{new['row']}' "
                                      f"gives {new['values']}")
    return sorted(merged.values(), key=lambda e: Version(e["release"]), reverse=True)


def derive_compat_matrix(kb_dir: Path) -> dict[str, Any]:
    text, src = _snapshot(kb_dir, COMPAT_REPO, COMPAT_CSV)
    sources = [(text, src, False)] + [(t, s, True) for t, s in snapshots_of(kb_dir, PAGE_REPO, COMPAT_PAGE)]
    per_source = [compat_releases(t, f"{s['repo']}@{s['commit'][:8]}:{s['path']}",
                                  f"{s['repo']}@{s['commit']}:{s['path']}", rst) for t, s, rst in sources]
    return {
        "_generated": "by 'python -m wizard.kb ingest' from the snapshots named in provenance; do not edit",
        "provenance": [s for _, s, _ in sources],
        "note": "per release of AMD's compatibility matrix (the historical CSV's columns, then the current-release "
                "table of each kept compatibility-matrix.rst page; where two give one release they agree): the GPU "
                "/ LLVM targets, the architectures, the distributions with versions and the user-space lines the "
                "release's kernel driver was tested with (null where the table's KMD row lists the drivers for the "
                "release instead); footnote markers and |br| dropped; null where the column is empty. A release no "
                "snapshot has a column for is not here.",
        "releases": merge_releases(per_source),
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


def matrix_decides(gfx: str) -> bool:
    """Whether a release's list taken from the compatibility matrix decides for ``gfx``: it lists every Instinct
    (CDNA) target AMD supports, but only some of the Radeon and Ryzen targets (the rest are on the Radeon and Ryzen
    pages), so a Radeon, Ryzen or Vega target it lacks is not known to be unsupported."""
    return family_of_gfx(gfx) in MATRIX_DECIDES


def compat_matrix_problems(table: dict[str, Any], releases: Sequence[Release]) -> list[str]:
    """Typed releases whose gfx list (less its deprecated targets) or kernel-driver window is not the matrix's, or
    whose distros lack one the matrix lists, and matrix releases rocm_releases.json lacks. ``releases`` are the
    typed ones, as rocm_releases.json writes them (not filled from the table)."""
    by_version = {r.version: r for r in releases}
    out = []
    for row in table.get("releases") or []:
        where = f"rocm_releases.json: releases ({row['release']})"
        rel = by_version.get(row["release"])
        if rel is None:
            src = next((f["source"] for f in (row.get(k) for k in FACTS) if isinstance(f, dict)), DERIVED_COMPAT_MATRIX)
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
