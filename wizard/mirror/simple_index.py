"""PEP 503 (HTML) and PEP 691 (JSON) simple repository pages for a directory of wheel files.

Layout, as download.pytorch.org serves its indexes (files beside the project pages)::

    INDEX/index.html, INDEX/index.json              the project list
    INDEX/<project>/index.html, index.json          one project's files, linked as ../<file>#sha256=...
    INDEX/<file>.whl

The server answers a directory with ``index.json`` when the client asks for
``application/vnd.pypi.simple.v1+json`` (pip does, first) and with ``index.html`` otherwise.
``write_index(d, core_metadata=True)`` also serves PEP 658/714 metadata, as PyPI does: ``INDEX/<file>.metadata``
beside each wheel, announced with its sha256 (``core-metadata`` in JSON, ``data-core-metadata`` in HTML).
"""

from __future__ import annotations

import hashlib
import html
import json
import zipfile
from pathlib import Path
from urllib.parse import quote

from packaging.utils import canonicalize_name

from wizard.record import record


JSON_TYPE = "application/vnd.pypi.simple.v1+json"
HTML_TYPE = "application/vnd.pypi.simple.v1+html"


@record
class IndexedFile:
    project: str  # normalised (PEP 503)
    filename: str
    sha256: str
    requires_python: str | None


def _read_wheel(path: Path) -> IndexedFile:
    data = path.read_bytes()
    name = requires = None
    with zipfile.ZipFile(path) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        for line in zf.read(meta).decode("utf-8").splitlines():
            if not line:
                break
            key, _, value = line.partition(": ")
            if key == "Name":
                name = value
            elif key == "Requires-Python":
                requires = value
    if name is None:
        raise ValueError(f"{path.name}: METADATA has no Name")
    return IndexedFile(canonicalize_name(name), path.name, hashlib.sha256(data).hexdigest(), requires)


def _core_metadata(wheel: Path) -> str:
    """Write ``<wheel>.metadata`` (the wheel's METADATA, PEP 658); its sha256."""
    with zipfile.ZipFile(wheel) as zf:
        data = zf.read(next(n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")))
    wheel.with_name(wheel.name + ".metadata").write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def write_index(index_dir: Path, *, core_metadata: bool = False) -> tuple[IndexedFile, ...]:
    """(Re)write every page of one index from the wheels in ``index_dir``; returns what it lists.
    ``core_metadata``: serve each wheel's METADATA beside it too (PEP 658)."""
    files = tuple(sorted((_read_wheel(p) for p in index_dir.glob("*.whl")), key=lambda f: (f.project, f.filename)))
    meta = {f.filename: _core_metadata(index_dir / f.filename) for f in files} if core_metadata else {}
    projects = sorted({f.project for f in files})
    links = "".join(f'    <a href="{p}/">{p}</a><br/>\n' for p in projects)
    _page(index_dir / "index.html", "Simple index", links)
    (index_dir / "index.json").write_text(json.dumps(
        {"meta": {"api-version": "1.0"}, "projects": [{"name": p} for p in projects]}, indent=1) + "\n")
    for p in projects:
        mine = [f for f in files if f.project == p]
        rows = []
        for f in mine:
            attr = f' data-requires-python="{html.escape(f.requires_python)}"' if f.requires_python else ""
            if f.filename in meta:
                attr += f' data-core-metadata="sha256={meta[f.filename]}"'
            rows.append(f'    <a href="../{quote(f.filename)}#sha256={f.sha256}"{attr}>{html.escape(f.filename)}</a>'
                        "<br/>\n")
        d = index_dir / p
        d.mkdir(exist_ok=True)
        _page(d / "index.html", f"Links for {p}", "".join(rows))
        (d / "index.json").write_text(json.dumps({
            "meta": {"api-version": "1.0"}, "name": p,
            "files": [{"filename": f.filename, "url": f"../{quote(f.filename)}", "hashes": {"sha256": f.sha256},
                       **({"requires-python": f.requires_python} if f.requires_python else {}),
                       **({"core-metadata": {"sha256": meta[f.filename]}} if f.filename in meta else {})}
                      for f in mine],
        }, indent=1) + "\n")
    return files


def _page(path: Path, title: str, body: str) -> None:
    path.write_text('<!DOCTYPE html>\n<html>\n  <head>\n    <meta name="pypi:repository-version" content="1.0">\n'
                    f"    <title>{html.escape(title)}</title>\n  </head>\n  <body>\n    <h1>{html.escape(title)}</h1>\n"
                    f"{body}  </body>\n</html>\n", encoding="utf-8")
