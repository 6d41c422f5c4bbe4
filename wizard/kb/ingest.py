"""Derived knowledge: tables generated from upstream's own machine-readable records, never typed.

Snapshots of upstream files live under ``upstream/<owner>/<repo>/<path>`` beside the knowledge files, and
``upstream/snapshots.json`` records each one's repository, commit and path. ``python -m wizard.kb ingest``
regenerates every derived table from them; ``python -m wizard.kb check`` fails when a derived table
differs from what its snapshots give. Every derived table carries the provenance of each input.

Derived now:

* ``derived_devices.json``: TheRock's device packages per ``whl-next`` release stream and target
  (``rocm_whl_next_ownership.yaml``), with each target's Linux status (``SUPPORTED_GPUS.md``);
* ``derived_build_matrix.json``: PyTorch's ROCm wheel channels with their Python versions, pip requirement,
  build path and gfx list (``.github/scripts/generate_binary_build_matrix.py`` with ``build.sh``;
  ``ingest_matrix``);
* ``derived_install_pages.json``: per release, the amdgpu-install directory, package version and distributions
  AMD's install pages print (ROCm/rocm-install-on-linux ``docs/conf.py`` per docs branch; ``ingest_install``);
* ``derived_compat_matrix.json``: per release of AMD's compatibility matrix, the GPU / LLVM targets,
  architectures, distributions and kernel-driver user-space window (ROCm/ROCm
  ``docs/compatibility/compatibility-matrix-historical-6.0.csv`` and the csv-table of
  ROCm/legacy-rocm-build ``docs/compatibility/compatibility-matrix.rst`` at each kept commit; ``ingest_compat``);
* ``derived_wheel_gfx.json``: the gfx targets PyTorch's ROCm wheel builds compile in, per build path
  (``.ci/docker/manywheel/build.sh``: the TheRock-pip path ``rocm_final``, the OS-package path
  ``rocm_final_legacy``); every wheel row that cites that file at that commit must carry that list.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from wizard import lazy_re

if TYPE_CHECKING:
    from .records import Wheel

DERIVED_DEVICES = "derived_devices.json"
DERIVED_WHEEL_GFX = "derived_wheel_gfx.json"
PYTORCH = "pytorch/pytorch"
BUILD_SH = ".ci/docker/manywheel/build.sh"
SNAPSHOTS = "upstream/snapshots.json"
THEROCK = "ROCm/TheRock"
OWNERSHIP = "build_tools/packaging/python/rocm_whl_next_ownership.yaml"
SUPPORTED = "SUPPORTED_GPUS.md"
# the device packages a TheRock torch install takes for one target (torch[device-X], rocm[device-X])
DEVICE_PACKAGES = ("amd-torch-device-", "rocm-sdk-device-")
_GFX = lazy_re.compile(r"^gfx\d{2,4}[a-f]?$")  # one target: gfx1031, gfx90a (not the family packages gfx110x, gfx12-0)
_ARCH = lazy_re.compile(r'^PYTORCH_ROCM_ARCH="([^"]*)"$')
_TARGET = lazy_re.compile(r"^TARGET=(\S+)$")
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


def py_literals(source: str, names: Sequence[str], where: str) -> dict[str, Any]:
    """The module-level assignments of ``names`` in a Python file, each a literal (``ast.literal_eval``): the
    file is parsed, never executed. A name missing or not a literal is an IngestError."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise IngestError(f"{where}: not Python (line {exc.lineno})") from None
    out: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id in names:
            try:
                out[target.id] = ast.literal_eval(value)
            except ValueError:
                raise IngestError(f"{where}: {target.id} is not a literal") from None
    missing = [n for n in names if n not in out]
    if missing:
        raise IngestError(f"{where}: no literal {', '.join(missing)}")
    return out


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


def rocm_case_lines(script: str) -> Iterator[tuple[str, str, int]]:
    """(line stripped, its first word, the if-depth inside it) of each line of the ``manylinux2_28-builder:rocm*``
    case of PyTorch's manywheel build.sh; an ``if`` line counts its own level, a ``fi`` line the level it closes to."""
    inside = False
    depth = 0
    for line in script.splitlines():
        s = line.strip()
        if not inside:
            inside = s.startswith("manylinux2_28-builder:rocm") and s.endswith(")")
            continue
        if s == ";;":
            return
        word = s.split(" ", 1)[0]
        depth += (word == "if") - (word == "fi")
        yield s, word, depth


def rocm_arch_lists(script: str, where: str) -> dict[str, list[str]]:
    """{docker build target: PYTORCH_ROCM_ARCH} of the ``manylinux2_28-builder:rocm*`` case of PyTorch's
    manywheel build.sh. The case sets a common list, then each branch of its if/elif/else sets its TARGET and
    may extend the list (``${PYTORCH_ROCM_ARCH}``); every branch starts from the common list."""
    out: dict[str, list[str]] = {}
    common: list[str] = []
    current: list[str] = []
    target: str | None = None
    for s, word, depth in rocm_case_lines(script):
        if word == "if":
            if depth == 1:
                current, target = list(common), None
            continue
        if word == "fi":
            continue
        if word in ("elif", "else") and depth == 1:
            current, target = list(common), None
            continue
        arch = _ARCH.match(s)
        if arch:
            current = [g for g in arch.group(1).replace("${PYTORCH_ROCM_ARCH}", ";".join(current)).split(";") if g]
            if depth == 0:
                common = list(current)
            if target is not None:
                out[target] = list(current)
            continue
        tm = _TARGET.match(s)
        if tm:
            target = tm.group(1)
            out[target] = list(current)
    if not out or not all(out.values()):
        raise IngestError(f"{where}: no PYTORCH_ROCM_ARCH per TARGET in the manylinux2_28-builder:rocm* case")
    return out


def derive_wheel_gfx(kb_dir: Path) -> dict[str, Any]:
    script, src = _snapshot(kb_dir, PYTORCH, BUILD_SH)
    return {
        "_generated": "by 'python -m wizard.kb ingest' from the snapshot named in provenance; do not edit",
        "provenance": src,
        "targets": rocm_arch_lists(script, BUILD_SH),
        "rows": "wheel rows citing provenance.url: bundles_rocm true (OS-package ROCm) carry rocm_final_legacy, "
                "bundles_rocm false (TheRock's rocm pip packages) carry rocm_final",
    }


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
    found = snapshots_of(kb_dir, repo, path)
    if not found:
        raise IngestError(f"{SNAPSHOTS}: no snapshot of {repo} {path}")
    return found[0]


def snapshots_of(kb_dir: Path, repo: str, path: str) -> list[tuple[str, dict[str, str]]]:
    """(text, provenance) of every snapshot of ``repo``'s ``path``, in the order snapshots.json lists them. One
    commit's file lives at upstream/<repo>/<path>; where several commits of one path are kept, each row names
    its own file under upstream/ ("file": "<repo>/<commit>/<path>")."""
    out = []
    for row in _snapshots(kb_dir):
        if row["repo"] != repo or row["path"] != path:
            continue
        if not re.fullmatch(r"[0-9a-f]{40}", row["commit"]):
            raise IngestError(f"{SNAPSHOTS}: {repo}/{path}: commit must be 40 hex digits")
        rel = str(row.get("file") or f"{repo}/{path}")
        try:
            text = (kb_dir / "upstream" / rel).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise IngestError(f"upstream/{rel}: snapshot file missing") from None
        out.append((text, {"repo": repo, "commit": row["commit"], "path": path,
                           "url": f"https://github.com/{repo}/blob/{row['commit']}/{path}"}))
    return out


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


def derivations() -> tuple[tuple[str, Callable[[Path], dict[str, Any]]], ...]:
    """Every derived table: (file name, how it is derived from the snapshots)."""
    from .ingest_compat import DERIVED_COMPAT_MATRIX, derive_compat_matrix
    from .ingest_install import DERIVED_INSTALL_PAGES, derive_install_pages
    from .ingest_matrix import DERIVED_BUILD_MATRIX, derive_build_matrix

    return ((DERIVED_DEVICES, derive_devices), (DERIVED_WHEEL_GFX, derive_wheel_gfx),
            (DERIVED_BUILD_MATRIX, derive_build_matrix), (DERIVED_INSTALL_PAGES, derive_install_pages),
            (DERIVED_COMPAT_MATRIX, derive_compat_matrix))


def ingest(kb_dir: Path) -> list[str]:
    """Write every derived table from its snapshots; the names of the files that changed."""
    changed = []
    for name, derive in derivations():
        text = render(derive(kb_dir))
        out = kb_dir / name
        if not out.exists() or out.read_text(encoding="utf-8") != text:
            out.write_text(text, encoding="utf-8")
            changed.append(name)
    return changed


def derived_problems(kb_dir: Path) -> list[str]:
    """A derived table that its snapshots no longer give, one line each. Nothing to check where no derived
    table is kept, or no upstream/ directory (a copy of the knowledge files alone takes the tables as they are)."""
    out: list[str] = []
    if not (kb_dir / "upstream").is_dir():
        return out
    for name, derive in derivations():
        path = kb_dir / name
        if not path.exists():
            continue
        try:
            want = render(derive(kb_dir))
        except IngestError as exc:
            out.append(f"{name}: cannot be checked against its snapshots: {exc}")
            continue
        if path.read_text(encoding="utf-8") != want:
            out.append(f"{name}: differs from what its snapshots give (run 'python -m wizard.kb ingest')")
    return out


def wheel_gfx_problems(table: dict[str, Any], wheels: Sequence[Wheel]) -> list[str]:
    """Wheel rows that cite the build script the table derives from but carry another gfx list."""
    url = str((table.get("provenance") or {}).get("url") or "")
    targets = table.get("targets") or {}
    out = []
    for w in wheels:
        if not url or url not in w.sources:
            continue
        want = targets.get("rocm_final_legacy" if w.bundles_rocm else "rocm_final")
        if want is None or set(w.gfx or ()) != set(want):
            have = ", ".join(sorted(w.gfx or ())) or "none"
            out.append(f"torch_wheels.json: wheels ({w.torch} {w.index}): gfx ({have}) is not what its source "
                       f"{url} builds ({', '.join(want or ()) or 'unknown'}; {DERIVED_WHEEL_GFX})")
    return out
