"""The running wizard as wheels a fleet host installs offline: its own wheel and those of its pure-Python
dependencies, with one build id that names exactly this set (``fleet run --engine``).

The wizard's wheel: an editable install (a checkout) is built with ``pip wheel --no-deps`` of its project
directory, once per state of its sources (kept in the fleet directory); an installed wizard, like each
dependency, is packed again from its installed files (the ``RECORD`` pip wrote: the package's files and its
``.dist-info``, without pip's own ``INSTALLER``, ``REQUESTED`` and ``direct_url.json``; the console scripts come
back from ``entry_points.txt`` when the host's pip installs it). A dependency with compiled files (not
``Root-Is-Purelib``, or a platform tag) is refused, naming it: a host could not use the controller's build.
The zip is written with fixed times in sorted order, so the same installed files make the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.utils import canonicalize_name

from wizard.fleet import FleetError
from wizard.record import record

DIST = "rocm-wizard"
_SKIP_META = ("INSTALLER", "REQUESTED", "direct_url.json", "RECORD")
_EPOCH = (1980, 1, 1, 0, 0, 0)
SOURCES = ("pyproject.toml", "README.md", "wizard", "steps", "plans")  # what a wheel of a checkout is built from


@record
class WheelSet:
    version: str  # the wizard's version
    build: str  # sha256 of the wheels' names and bytes: what a host's install is compared with
    directory: Path
    files: tuple[str, ...]  # wheel file names in ``directory``


def _wheel_name(name: str) -> str:
    """A distribution's name as a wheel's file name spells it (the PEP 503 name, ``-`` written ``_``)."""
    return canonicalize_name(name).replace("-", "_")


def _installed(name: str) -> metadata.Distribution:
    """The distribution ``name`` as an installer put it in an environment (a ``.dist-info`` with its RECORD), not
    the ``.egg-info`` a build leaves in a source checkout, which shadows it on ``sys.path`` when the wizard is
    started from that checkout."""
    for dist in metadata.distributions(name=name):
        if dist.read_text("RECORD") is not None:
            return dist
    raise metadata.PackageNotFoundError(name)


def wheel_set(cache: Path) -> WheelSet:
    """The wizard's wheel and its dependencies' in ``cache/<build>/`` (built or packed once per state)."""
    try:
        dist = _installed(DIST)
    except metadata.PackageNotFoundError:
        raise FleetError(f"the running wizard is not an installed distribution ({DIST}): pip install it, then run "
                         "the fleet command again") from None
    staging = Path(tempfile.mkdtemp(prefix="wheels-", dir=_mkdir(cache)))
    try:
        own = _own_wheel(dist, cache, staging)
        files = [own]
        for dep in _requirements(staging / own):
            files.append(_pack_installed(dep, staging))
        files = sorted(set(files))
        h = hashlib.sha256()
        for f in files:
            h.update(f.encode() + b"\0" + (staging / f).read_bytes())
        build = h.hexdigest()[:16]
        final = cache / build
        if not (final / "wheels.json").is_file():
            final.mkdir(parents=True, exist_ok=True)
            for f in files:
                os.replace(staging / f, final / f)
            (final / "wheels.json").write_text(json.dumps({"version": dist.version, "files": files}) + "\n")
        return WheelSet(dist.version, build, final, tuple(files))
    finally:
        for p in staging.iterdir():
            p.unlink()
        staging.rmdir()


def _mkdir(d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    return d


def _editable_project(dist: metadata.Distribution) -> Path | None:
    text = dist.read_text("direct_url.json")
    if not text:
        return None
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    url = doc.get("url", "") if isinstance(doc, dict) else ""
    if not (isinstance(doc.get("dir_info"), dict) and doc["dir_info"].get("editable")) or not url.startswith("file://"):
        return None
    return Path(url[len("file://"):])


def _own_wheel(dist: metadata.Distribution, cache: Path, staging: Path) -> str:
    project = _editable_project(dist)
    if project is None:
        return _pack_installed(DIST, staging)
    digest = _source_digest(project)
    built = cache / "built" / digest
    found = sorted(built.glob("*.whl")) if built.is_dir() else []
    if not found:
        tmp = Path(tempfile.mkdtemp(prefix="build-", dir=_mkdir(cache)))
        src = tmp / "src"  # a copy: the build leaves build/ and an .egg-info where it runs, never in the checkout
        src.mkdir()
        for rel in SOURCES:
            if (project / rel).is_dir():
                shutil.copytree(project / rel, src / rel, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(project / rel, src / rel)
        res = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-q",
                              "-w", str(tmp), str(src)], capture_output=True, text=True, timeout=900)
        shutil.rmtree(src, ignore_errors=True)
        found = sorted(tmp.glob("*.whl"))
        if res.returncode != 0 or len(found) != 1:
            last = (res.stderr.strip().splitlines() or ["no wheel was written"])[-1]
            raise FleetError(f"cannot build the wizard's wheel from {project} (pip wheel --no-deps): {last}")
        built.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp, built)
        found = sorted(built.glob("*.whl"))
    (staging / found[0].name).write_bytes(found[0].read_bytes())
    return found[0].name


def _source_digest(project: Path) -> str:
    """The digest of what a wheel of the checkout is built from (``SOURCES``)."""
    h = hashlib.sha256()
    paths: list[Path] = []
    for rel in SOURCES:
        top = project / rel
        paths += [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    for p in paths:
        h.update(str(p.relative_to(project)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


def _requirements(wheel: Path) -> list[str]:
    """The installed distributions the wheel needs, transitively (markers evaluated here; an extra a requirement
    names brings that distribution's requirements for it)."""
    from packaging.requirements import InvalidRequirement, Requirement

    seen: dict[str, str] = {}
    todo = [(r, "") for r in _requires_of(wheel)]
    while todo:
        text, extra = todo.pop()
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        key = canonicalize_name(req.name)
        try:
            dep = _installed(req.name)
        except metadata.PackageNotFoundError:
            raise FleetError(f"the wizard needs {req.name}, which is not installed beside it") from None
        if key not in seen:
            seen[key] = dep.metadata["Name"]
            todo += [(r, "") for r in dep.requires or ()]
        todo += [(r, x) for x in req.extras for r in dep.requires or () if "extra" in r]
    seen.pop(canonicalize_name(DIST), None)
    return sorted(seen.values())


def _requires_of(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        name = next((n for n in z.namelist() if re.match(r"^[^/]+\.dist-info/METADATA$", n)), None)
        text = z.read(name).decode("utf-8", "replace") if name else ""
    return [m.strip() for m in re.findall(r"^Requires-Dist:(.+)$", text, re.M)]


def _pack_installed(name: str, out: Path) -> str:
    """The installed distribution ``name`` as a wheel in ``out``; its file name."""
    dist = _installed(name)
    wheel_meta = dist.read_text("WHEEL") or ""
    tags = re.findall(r"^Tag:\s*(\S+)$", wheel_meta, re.M)
    if not re.search(r"^Root-Is-Purelib:\s*true", wheel_meta, re.M | re.I) or not tags or any(
            not t.endswith("-none-any") for t in tags):
        raise FleetError(f"{name} {dist.version} is not a pure-Python wheel ({', '.join(tags) or 'no tag'}): a host "
                         "cannot install the controller's build of it")
    pythons = ".".join(dict.fromkeys(t.split("-")[0] for t in tags))
    files = [f for f in dist.files or () if not str(f).startswith("..") and "__pycache__" not in f.parts
             and not str(f).endswith(".pyc")]
    info = next((f.parts[0] for f in files if f.parts[0].endswith(".dist-info")), None)
    if info is None:
        raise FleetError(f"{name}: its installed files name no .dist-info")
    keep = [f for f in files if not (f.parts[0] == info and f.name in _SKIP_META)]
    body = sorted((str(f) for f in keep if f.parts[0] != info))
    meta = sorted(str(f) for f in keep if f.parts[0] == info)
    fname = f"{_wheel_name(dist.metadata['Name'])}-{dist.version}-{pythons}-none-any.whl"
    record_lines = []
    with zipfile.ZipFile(out / fname, "w", zipfile.ZIP_DEFLATED) as z:
        for rel in [*body, *meta]:
            data = Path(str(dist.locate_file(rel))).read_bytes()
            zi = zipfile.ZipInfo(rel, _EPOCH)
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record_lines.append(f"{rel},sha256={digest},{len(data)}")
        rec = f"{info}/RECORD"
        zi = zipfile.ZipInfo(rec, _EPOCH)
        zi.external_attr = 0o644 << 16
        zi.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(zi, "\n".join([*record_lines, f"{rec},,"]) + "\n")
    return fname


__all__ = ["DIST", "WheelSet", "wheel_set"]
