"""Derived knowledge: tables generated from upstream's own machine-readable records, never typed.

Snapshots of upstream files live under ``upstream/<owner>/<repo>/<path>`` beside the knowledge files, and
``upstream/snapshots.json`` records each one's repository, commit and path. ``python -m wizard.kb ingest``
regenerates every derived table from them; ``python -m wizard.kb check`` fails when a derived table
differs from what its snapshots give. Every derived table carries the provenance of each input.

Derived now: ``derived_devices.json``, TheRock's device packages per ``whl-next`` release stream and
target (``rocm_whl_next_ownership.yaml``), with each target's Linux status (``SUPPORTED_GPUS.md``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from wizard import lazy_re

DERIVED_DEVICES = "derived_devices.json"
SNAPSHOTS = "upstream/snapshots.json"
THEROCK = "ROCm/TheRock"
OWNERSHIP = "build_tools/packaging/python/rocm_whl_next_ownership.yaml"
SUPPORTED = "SUPPORTED_GPUS.md"
# the device packages a TheRock torch install takes for one target (torch[device-X], rocm[device-X])
DEVICE_PACKAGES = ("amd-torch-device-", "rocm-sdk-device-")
_GFX = lazy_re.compile(r"^gfx\d{2,4}[a-f]?$")  # one target: gfx1031, gfx90a (not the family packages gfx110x, gfx12-0)
_ROW = lazy_re.compile(r"^\|\s*\**[^|]*?\**\s*\|\s*\**(gfx[0-9a-z]+)\**\s*\|([^|]*)\|([^|]*)\|([^|]*)\|")


class IngestError(ValueError):
    """A snapshot is missing or not in the format its reader knows. One line."""


def yaml_tree(text: str, where: str) -> dict[str, Any]:
    """The block-style YAML subset TheRock's manifest uses: nested mappings by indentation, scalar values,
    lists of scalars ("- x"), comments. Anything else (flow style, anchors, multi-line scalars) is refused."""
    root: dict[str, Any] = {}
    stack: list[tuple[int, Any]] = [(-1, root)]
    pending: tuple[int, dict[str, Any], str] | None = None  # a "key:" whose children decide mapping or list
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        body = line.strip()
        if pending is not None:
            p_indent, p_parent, p_key = pending
            pending = None
            if indent > p_indent:
                child: Any = [] if body.startswith("- ") else {}
                p_parent[p_key] = child
                stack.append((p_indent, child))
        while stack and indent <= stack[-1][0]:
            stack.pop()
        if not stack:
            raise IngestError(f"{where}: line {no}: indentation does not match any open block")
        container = stack[-1][1]
        if body.startswith("- "):
            if not isinstance(container, list):
                raise IngestError(f"{where}: line {no}: a list item outside a list")
            item = body[2:].strip()
            if ":" not in item or item[:1] in "'\"":
                container.append(_scalar(item, where, no))
                continue
            mapping: dict[str, Any] = {}  # "- key: value": a mapping item, its other keys indented below
            container.append(mapping)
            stack.append((indent, mapping))
            container, body, indent = mapping, item, indent + 2
        key, sep, value = body.partition(":")
        if not sep or not isinstance(container, dict) or not key or any(c in key for c in "{}[]&*!|>"):
            raise IngestError(f"{where}: line {no}: not a 'key: value' line of block YAML")
        value = value.strip()
        if value:
            container[key] = _scalar(value, where, no)
        else:
            container[key] = None
            pending = (indent, container, key)
    return root


def _scalar(value: str, where: str, no: int) -> str | int:
    if value[:1] in "{[&*!|>":
        raise IngestError(f"{where}: line {no}: flow or special YAML is not read here: {value[:20]}")
    if value[:1] in "'\"" and value[-1:] == value[:1]:
        return value[1:-1]
    return int(value) if value.isdigit() else value


def stream_devices(manifest: dict[str, Any], where: str) -> dict[str, dict[str, list[str]]]:
    """{stream: {gfx: [device package names]}} for the targets whose every DEVICE_PACKAGES entry is there."""
    streams = manifest.get("streams")
    indexes = manifest.get("python_indexes")
    if not isinstance(streams, dict) or not isinstance(indexes, list):
        raise IngestError(f"{where}: no 'streams' mapping or 'python_indexes' list")
    known = [str(s) for s in streams.get("known") or []]
    groups = {str(k): [str(s) for s in v or []] for k, v in (streams.get("groups") or {}).items()}
    default = groups.get(str(streams.get("default")))
    if not known or default is None:
        raise IngestError(f"{where}: streams.known or the default stream group is missing")
    published: dict[str, set[str]] = {}  # package -> streams
    for ix in indexes:
        if not isinstance(ix, dict) or ix.get("public_base") != "/rocm/whl-next":
            continue
        for name, spec in (ix.get("packages") or {}).items():
            spec = spec or {}
            if "streams" in spec:
                on = [str(s) for s in spec["streams"] or []]
            elif "stream_group" in spec:
                if str(spec["stream_group"]) not in groups:
                    raise IngestError(f"{where}: {name}: unknown stream_group {spec['stream_group']}")
                on = groups[str(spec["stream_group"])]
            else:
                on = default
            published[str(name)] = set(on)
    if not published:
        raise IngestError(f"{where}: no package of the /rocm/whl-next index")
    out: dict[str, dict[str, list[str]]] = {}
    for stream in known:
        targets: dict[str, list[str]] = {}
        gfxs = {n[len(DEVICE_PACKAGES[0]):] for n in published if n.startswith(DEVICE_PACKAGES[0])}
        for gfx in sorted(g for g in gfxs if _GFX.match(g)):
            names = [p + gfx for p in DEVICE_PACKAGES]
            if all(stream in published.get(n, ()) for n in names):
                extra = [n for n in sorted(published) if n.endswith(f"-device-{gfx}") and n not in names]
                targets[gfx] = names + [n for n in extra if stream in published[n]]
        out[stream] = targets
    return out


def linux_status(markdown: str, where: str) -> dict[str, dict[str, bool]]:
    """{gfx: {build_passing, sanity_tested, release_ready}} from the Linux tables of SUPPORTED_GPUS.md."""
    out: dict[str, dict[str, bool]] = {}
    section = ""
    for line in markdown.splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
            continue
        if "Linux" not in section:
            continue
        mo = _ROW.match(line.strip())
        if not mo:
            continue
        gfx = mo.group(1)
        marks = [("✅" in c) for c in mo.group(2, 3, 4)]
        prev = out.get(gfx)
        row = {"build_passing": marks[0], "sanity_tested": marks[1], "release_ready": marks[2]}
        out[gfx] = row if prev is None else {k: prev[k] or row[k] for k in row}  # listed twice: the better
    if not out:
        raise IngestError(f"{where}: no Linux table rows (| Architecture | LLVM target | ... |)")
    return out


def _snapshots(kb_dir: Path) -> list[dict[str, str]]:
    path = kb_dir / SNAPSHOTS
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise IngestError(f"{SNAPSHOTS}: missing in {kb_dir}") from None
    except json.JSONDecodeError as exc:
        raise IngestError(f"{SNAPSHOTS}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    rows = data.get("snapshots") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and {"repo", "commit", "path"} <= set(r)
                                             for r in rows):
        raise IngestError(f"{SNAPSHOTS}: 'snapshots' must list objects with repo, commit and path")
    return rows


def _snapshot(kb_dir: Path, repo: str, path: str) -> tuple[str, dict[str, str]]:
    for row in _snapshots(kb_dir):
        if row["repo"] == repo and row["path"] == path:
            if not re.fullmatch(r"[0-9a-f]{40}", row["commit"]):
                raise IngestError(f"{SNAPSHOTS}: {repo}/{path}: commit must be 40 hex digits")
            f = kb_dir / "upstream" / repo / path
            try:
                return f.read_text(encoding="utf-8"), {"repo": repo, "commit": row["commit"], "path": path,
                                                       "url": f"https://github.com/{repo}/blob/{row['commit']}/{path}"}
            except FileNotFoundError:
                raise IngestError(f"upstream/{repo}/{path}: snapshot file missing") from None
    raise IngestError(f"{SNAPSHOTS}: no snapshot of {repo} {path}")


def derive_devices(kb_dir: Path) -> dict[str, Any]:
    """The derived device table from the snapshots in ``kb_dir``."""
    manifest_text, manifest_src = _snapshot(kb_dir, THEROCK, OWNERSHIP)
    gpus_text, gpus_src = _snapshot(kb_dir, THEROCK, SUPPORTED)
    streams = stream_devices(yaml_tree(manifest_text, OWNERSHIP), OWNERSHIP)
    status = linux_status(gpus_text, SUPPORTED)
    return {
        "_generated": "by 'python -m wizard.kb ingest' from the snapshots named in provenance; do not edit",
        "provenance": {"streams": manifest_src, "linux_status": gpus_src},
        "index_url": "https://{stream}.repo.amd.com/rocm/whl-next/",
        "streams": streams,
        "linux_status": status,
    }


def render(table: dict[str, Any]) -> str:
    return json.dumps(table, indent=1, sort_keys=False) + "\n"


def ingest(kb_dir: Path) -> list[str]:
    """Write every derived table from its snapshots; the names of the files that changed."""
    changed = []
    text = render(derive_devices(kb_dir))
    out = kb_dir / DERIVED_DEVICES
    if not out.exists() or out.read_text(encoding="utf-8") != text:
        out.write_text(text, encoding="utf-8")
        changed.append(DERIVED_DEVICES)
    return changed


def derived_problems(kb_dir: Path) -> list[str]:
    """A derived table that its snapshots no longer give, one line each. Nothing to check where no derived
    table is kept, or no upstream/ directory (a copy of the knowledge files alone takes the tables as they are)."""
    out = kb_dir / DERIVED_DEVICES
    if not out.exists() or not (kb_dir / "upstream").is_dir():
        return []
    try:
        want = render(derive_devices(kb_dir))
    except IngestError as exc:
        return [f"{DERIVED_DEVICES}: cannot be checked against its snapshots: {exc}"]
    if out.read_text(encoding="utf-8") != want:
        return [f"{DERIVED_DEVICES}: differs from what its snapshots give (run 'python -m wizard.kb ingest')"]
    return []
