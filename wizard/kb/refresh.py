"""``rocm-wizard kb refresh``: compare the knowledge base with the live sources and write a reviewable report.

Sources (all derived from the knowledge base itself, so a new index or release is read once it is listed):

* each download.pytorch.org ROCm index's ``torch/`` page (PEP 691 JSON; PEP 503 HTML accepted), and the
  root ``whl/torch/`` page for ROCm local labels no listed index has;
* each AMD wheel index's root (its ``rocm-sdk-device-*`` / ``amd-torch-device-*`` projects) and, for the
  stable ones, its ``torch/`` page (AMD's own torch builds);
* repo.radeon.com's ``amdgpu-install/`` and ``rocm/apt/`` directory listings (Apache style) and the
  ``ubuntu/<codename>/`` listings of recent amdgpu-install directories;
* repo.amd.com's / stable.repo.amd.com's tarball and package-repository listings (nginx style);
* the Docker Hub tags endpoint for rocm/pytorch (``/v2/namespaces/rocm/repositories/pytorch/tags``).

Nothing is written unless asked: :func:`apply` adds only what a source shows (new rows, new keys), each with
the URL it was read from, and only what the release's own facts allow (an amdgpu-install URL for a
distribution in its list; a note the addition would make false is rewritten with it); each addition is
applied on its own and kept only if ``check`` still passes. It never removes a row; contradictions are
reported, not fixed. A source read only in part (a tags page missing after the first) is named in the
report's ``incomplete`` list and nothing is judged vanished from it.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.version import InvalidVersion, Version

from .sources import (
    Page,
    Reader,
    docker_tags,
    listing_entries,
    parse_wheel_filename,
    simple_files,
    simple_projects,
)

from wizard import lazy_re
from wizard.record import field, record


if TYPE_CHECKING:
    from . import KnowledgeBase
    from .records import Release, WheelIndex

PYTORCH_ROOT = "https://download.pytorch.org/whl/torch/"
PYTORCH_INDEX_BASE = "https://download.pytorch.org/whl/"
AMDGPU_INSTALL_ROOT = "https://repo.radeon.com/amdgpu-install/"
ROCM_APT_ROOT = "https://repo.radeon.com/rocm/apt/"
# Docker Hub's documented endpoint (ListRepositoryTags): page and page_size only; tags are filtered here
DOCKER_TAGS = "https://hub.docker.com/v2/namespaces/rocm/repositories/pytorch/tags?page_size=100"
DOCKER_MAX_PAGES = 200
# amdgpu-install directories whose per-codename listings are checked: recent legacy lines and the Core SDK
VERIFY_LEGACY_FROM = Version("7.0")

_TAG = lazy_re.compile(r"^rocm(?P<rocm>\d+(?:\.\d+)+)_ubuntu(?P<ubuntu>\d+\.\d+)_py(?P<py>\d+\.\d+)_pytorch(?:_release)?_"
                  r"(?P<torch>\d+(?:\.\d+)+)$")
_DEVICE = lazy_re.compile(r"^(?:rocm-sdk-device|amd-torch-device)-(gfx[0-9a-f]+)$")
_TARBALL = lazy_re.compile(r"^therock-dist-linux-(?P<family>.+)-(?P<version>\d+\.\d+\.\d+)\.tar\.gz$")


class Kind(str, Enum):
    """What a difference is; the report's sections, in this order."""

    NEW_TORCH = "new-torch-version"
    NEW_INDEX = "new-index"
    NEW_AMD_TORCH = "new-amd-torch"
    DEVICE_PACKAGES = "undocumented-device-packages"
    NEW_RELEASE = "new-rocm-release"
    NEW_AMDGPU_INSTALL = "new-amdgpu-install"
    NEW_REPO = "new-package-repository"
    NEW_TAG = "new-docker-tag"
    VANISHED_TAG = "vanished-docker-tag"
    CONTRADICTION = "contradiction"


TITLES = {
    Kind.NEW_TORCH: "New torch versions per index (with their Python tags)",
    Kind.NEW_INDEX: "ROCm indexes the knowledge base does not list",
    Kind.NEW_AMD_TORCH: "New AMD torch builds",
    Kind.DEVICE_PACKAGES: "Device packages an index carries beyond the documented extras",
    Kind.NEW_RELEASE: "New ROCm releases",
    Kind.NEW_AMDGPU_INSTALL: "New amdgpu-install directories and files",
    Kind.NEW_REPO: "New package-repository directories",
    Kind.NEW_TAG: "Docker tags that appeared",
    Kind.VANISHED_TAG: "Docker tags that vanished",
    Kind.CONTRADICTION: "Knowledge-base rows the sources contradict",
}


@record
class Addition:
    """One thing ``--write`` may add: a new entry in a list, or a new key in an existing release's
    amdgpu_install map."""

    file: str  # "torch_wheels.json"
    section: str  # "wheels", "indexes", "vendor_wheels", "releases", "images", "amdgpu_install"
    entry: dict[str, Any] = field(compare=False, hash=False)
    release: str | None = None  # for section "amdgpu_install": the release version the key is added to


@record
class Difference:
    kind: Kind
    subject: str  # a stable key: "rocm7.2 torch 2.15.0", "rocm/pytorch:rocm7.2.4_...", "release 7.2.5"
    detail: str
    source: str  # the URL whose content shows the difference
    addition: Addition | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind.value, "subject": self.subject, "detail": self.detail,
                               "source": self.source}
        if self.addition is not None:
            out["addition"] = {"file": self.addition.file, "section": self.addition.section,
                               "release": self.addition.release, "entry": self.addition.entry}
        return out


@record
class Report:
    differences: tuple[Difference, ...]
    sources_read: tuple[str, ...]
    incomplete: tuple[str, ...] = ()  # sources read only in part: what was not judged, and why

    @property
    def additions(self) -> tuple[Difference, ...]:
        return tuple(d for d in self.differences if d.addition is not None)

    def to_json(self) -> dict[str, Any]:
        return {"differences": [d.to_json() for d in self.differences], "sources_read": list(self.sources_read),
                "counts": {k.value: sum(1 for d in self.differences if d.kind is k) for k in Kind},
                "incomplete": list(self.incomplete)}

    def markdown(self) -> str:
        lines = ["# Knowledge-base refresh report", "",
                 f"{len(self.differences)} differences ({len(self.additions)} can be added with --write) from "
                 f"{len(self.sources_read)} sources read.", ""]
        for kind in Kind:
            items = [d for d in self.differences if d.kind is kind]
            if not items:
                continue
            lines += [f"## {TITLES[kind]} ({len(items)})", ""]
            for d in items:
                mark = " [--write adds]" if d.addition is not None else ""
                lines.append(f"- {d.subject}: {d.detail} ({d.source}){mark}")
            lines.append("")
        if self.incomplete:
            lines += [f"## Sources read only in part ({len(self.incomplete)})", ""]
            lines += [f"- {line}" for line in self.incomplete] + [""]
        if not self.differences:
            lines += ["No differences: the knowledge base matches every source read.", ""]
        return "\n".join(lines)


def _v(text: str | None) -> Version | None:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def _pyorder(p: str) -> tuple[Version, str]:
    return (_v(p.rstrip("t")) or Version("0"), p)


def _dir_url(url: str) -> str:
    return url.rsplit("/", 1)[0] + "/"


class _Refresh:
    def __init__(self, kb: KnowledgeBase, reader: Reader) -> None:
        self.kb = kb
        self.reader = reader
        self.out: list[Difference] = []
        self.incomplete: list[str] = []

    def add(self, kind: Kind, subject: str, detail: str, source: str, addition: Addition | None = None) -> None:
        self.out.append(Difference(kind, subject, detail, source, addition))

    def contradiction(self, subject: str, detail: str, source: str) -> None:
        self.add(Kind.CONTRADICTION, subject, detail, source)

    # ------------------------------------------------------------------ download.pytorch.org

    def pytorch(self) -> None:
        listed = {ix.name for ix in self.kb.indexes(vendor="pytorch")}
        for ix in self.kb.indexes(vendor="pytorch"):
            self._pytorch_index(ix)
        page = self.reader.get(PYTORCH_ROOT)
        if page is None:
            self.contradiction("download.pytorch.org torch", "the root torch page is absent", PYTORCH_ROOT)
            return
        labels: dict[str, set[str]] = {}
        for f in simple_files(page):
            w = parse_wheel_filename(f)
            if w is None or w.name != "torch" or "+" not in w.version:
                continue
            public, label = w.version.split("+", 1)
            if re.fullmatch(r"rocm\d+\.\d+(\.\d+)?", label) and not (_v(public) or Version("0")).is_prerelease:
                labels.setdefault(label, set()).add(public)
        for label in sorted(set(labels) - listed, key=lambda s: _v(s[4:]) or Version("0")):
            url = PYTORCH_INDEX_BASE + label
            versions = ", ".join(sorted(labels[label], key=lambda s: _v(s) or Version("0")))
            entry = {"name": label, "url": url, "vendor": "pytorch", "channel": "stable", "rocm": label[4:],
                     "device_extras": None,
                     "uncertain": f"added by kb refresh: torch wheels +{label} are on {PYTORCH_ROOT}; the index's "
                                  "own page was not read",
                     "notes": None, "sources": [PYTORCH_ROOT]}
            self.add(Kind.NEW_INDEX, f"index {label}", f"torch {versions} published with +{label}", PYTORCH_ROOT,
                     Addition("torch_wheels.json", "indexes", entry))

    def _pytorch_index(self, ix: WheelIndex) -> None:
        url = ix.url.rstrip("/") + "/torch/"
        page = self.reader.get(url)
        if page is None:
            self.contradiction(f"index {ix.name}", "listed in the knowledge base, but its torch page is absent", url)
            return
        found: dict[str, set[str]] = {}
        for f in simple_files(page):
            w = parse_wheel_filename(f)
            if w is None or w.name != "torch":
                continue
            public, _, label = w.version.partition("+")
            pv = _v(public)
            if pv is None or pv.is_prerelease or label != ix.name:
                continue
            found.setdefault(str(pv), set())
            if w.python:
                found[str(pv)].add(w.python)
        rows = {str(_v(w.torch)): w for w in self.kb.wheels_for(index=ix.name)}
        bundles = {w.bundles_rocm for w in rows.values()}
        for v in sorted(set(found) - set(rows), key=lambda s: _v(s) or Version("0")):
            pys = sorted(found[v], key=_pyorder)
            entry = {"torch": v, "index": ix.name, "index_url": ix.url, "torchvision": None, "torchaudio": None,
                     "triton": None, "python": pys, "gfx": None, "rocm": ix.rocm,
                     "bundles_rocm": bundles.pop() if len(bundles) == 1 else None,
                     "uncertain": f"added by kb refresh from {url}: the gfx list and the torchvision/torchaudio "
                                  "versions were not read",
                     "uncertain_facts": ["gfx", "torchvision", "torchaudio"],
                     "notes": None, "sources": [url]}
            self.add(Kind.NEW_TORCH, f"{ix.name} torch {v}", f"Python {', '.join(pys) or 'none'}", url,
                     Addition("torch_wheels.json", "wheels", entry))
        for v in sorted(set(rows) - set(found), key=lambda s: _v(s) or Version("0")):
            self.contradiction(f"{ix.name} torch {v}", "the knowledge base has this row; the index has no such wheel",
                               url)
        for v in sorted(set(rows) & set(found), key=lambda s: _v(s) or Version("0")):
            kb_py, ix_py = set(rows[v].python), found[v]
            if kb_py != ix_py:
                only_kb = ", ".join(sorted(kb_py - ix_py, key=_pyorder)) or "-"
                only_ix = ", ".join(sorted(ix_py - kb_py, key=_pyorder)) or "-"
                self.contradiction(f"{ix.name} torch {v}",
                                   f"Python tags differ: only in the knowledge base {only_kb}; only on the index {only_ix}",
                                   url)

    # ------------------------------------------------------------------ AMD wheel indexes

    def amd(self) -> None:
        for ix in self.kb.indexes(vendor="amd"):
            page = self.reader.get(ix.url)
            if page is None:
                self.contradiction(f"index {ix.name}", "listed in the knowledge base, but its root page is absent",
                                   ix.url)
                continue
            projects = simple_projects(page)
            seen = {m[1] for p in projects if (m := _DEVICE.match(p))}
            documented = set(ix.device_extras or ())
            extra = sorted(seen - documented, key=lambda g: (len(g), g))
            if extra:
                self.add(Kind.DEVICE_PACKAGES, f"index {ix.name}",
                         f"device packages for {', '.join(extra)} "
                         + ("(not documented extras)" if ix.device_extras is not None else "(extras not recorded)"),
                         ix.url)
            if ix.device_extras is not None:
                missing = sorted(documented - seen, key=lambda g: (len(g), g))
                if missing:
                    self.contradiction(f"index {ix.name}",
                                       f"documented device extras without a device package: {', '.join(missing)}",
                                       ix.url)
            if ix.stable and "torch" in projects:
                self._amd_torch(ix)

    def _amd_torch(self, ix: WheelIndex) -> None:
        url = ix.url.rstrip("/") + "/torch/"
        page = self.reader.get(url)
        if page is None:
            return
        found: dict[str, set[str]] = {}
        for f in simple_files(page):
            w = parse_wheel_filename(f)
            if w is None or w.name != "torch" or "+rocm" not in w.version:
                continue
            if (_v(w.version.split("+")[0]) or Version("0")).is_prerelease:
                continue
            found.setdefault(w.version, set())
            if w.python:
                found[w.version].add(w.python)
        known = {v.torch for v in self.kb.vendor_wheels() if v.index == ix.name}
        for version in sorted(set(found) - known, key=lambda s: _v(s) or Version("0")):
            sdk = version.split("+rocm", 1)[1]
            rel = self.kb.release(sdk)
            addition = None
            if rel is not None and rel.stream == "core-sdk":
                addition = Addition("torch_wheels.json", "vendor_wheels", {
                    "sdk": rel.version, "torch": version, "torchvision": None, "torchaudio": None, "index": ix.name,
                    "device_extra_required": True,
                    "uncertain": f"added by kb refresh from {url}: torchvision/torchaudio versions not read; the "
                                 "device extra is required as for AMD's other torch builds on this index",
                    "notes": None, "sources": [url]})
            pys = ", ".join(sorted(found[version], key=_pyorder)) or "none"
            self.add(Kind.NEW_AMD_TORCH, f"{ix.name} torch {version}",
                     f"Python {pys}" + ("" if addition else f" (ROCm {sdk} is not a Core SDK release in the "
                                                           "knowledge base)"), url, addition)
        for version in sorted(known - set(found), key=lambda s: _v(s) or Version("0")):
            self.contradiction(f"{ix.name} torch {version}", "the knowledge base lists this AMD build; the index has "
                               "no such wheel", url)

    # ------------------------------------------------------------------ repo.radeon.com

    def rocm_apt(self) -> None:
        page = self.reader.get(ROCM_APT_ROOT)
        if page is None:
            self.contradiction("repo.radeon.com rocm/apt", "the listing is absent", ROCM_APT_ROOT)
            return
        legacy = [r for r in self.kb.releases("legacy")]
        oldest = min((_v(r.version) or Version("0") for r in legacy), default=Version("0"))
        known = {_v(r.version) for r in self.kb.releases()}
        for name in listing_entries(page):
            v = _v(name.rstrip("/")) if re.fullmatch(r"\d+\.\d+(\.\d+)*/?", name) else None
            if v is None or v < oldest or v in known:
                continue
            version = ".".join(str(x) for x in (v.release + (0, 0))[:max(3, len(v.release))])  # 7.2.3.1 stays itself
            self.add(Kind.NEW_RELEASE, f"release {version}", f"repo.radeon.com/rocm/apt/{name} (legacy stream)",
                     ROCM_APT_ROOT, Addition("rocm_releases.json", "releases", _new_release(version, "legacy",
                                                                                             ROCM_APT_ROOT)))

    def amdgpu_install(self) -> None:
        page = self.reader.get(AMDGPU_INSTALL_ROOT)
        if page is None:
            self.contradiction("repo.radeon.com amdgpu-install", "the listing is absent", AMDGPU_INSTALL_ROOT)
            return
        dirs = [e.rstrip("/") for e in listing_entries(page) if e.endswith("/")]
        by_dir: dict[str, list[Release]] = {}
        for r in self.kb.releases():
            for u in r.amdgpu_install.values():
                by_dir.setdefault(u.split("/amdgpu-install/", 1)[1].split("/", 1)[0], []).append(r)
            if r.driver_version:
                by_dir.setdefault(r.driver_version, []).append(r)
        for d in dirs:
            rels = list(dict.fromkeys(by_dir.get(d, [])))
            if not rels:
                if re.fullmatch(r"\d+(\.\d+)+", d):
                    self._new_amdgpu_dir(d)
                continue
            for r in rels:
                v = _v(r.version) or Version("0")
                if r.stream == "core-sdk" or v >= VERIFY_LEGACY_FROM:
                    self._check_amdgpu_dir(d, r)

    def _new_amdgpu_dir(self, d: str) -> None:
        base = f"{AMDGPU_INSTALL_ROOT}{d}/ubuntu/"
        page = self.reader.get(base)
        codenames = [e.rstrip("/") for e in listing_entries(page) if e.endswith("/")] if page else []
        files = []
        for c in codenames:
            sub = self.reader.get(f"{base}{c}/")
            files += [f"{c}/{f}" for f in (listing_entries(sub) if sub else []) if f.endswith(".deb")]
        self.add(Kind.NEW_AMDGPU_INSTALL, f"amdgpu-install {d}",
                 "new directory" + (f": ubuntu/{', ubuntu/'.join(files)}" if files else ""), AMDGPU_INSTALL_ROOT)

    def _check_amdgpu_dir(self, d: str, r: Release) -> None:
        base = f"{AMDGPU_INSTALL_ROOT}{d}/ubuntu/"
        page = self.reader.get(base)
        if page is None:
            if any("/ubuntu/" in u for u in r.amdgpu_install.values()):
                self.contradiction(f"release {r.version}", f"amdgpu-install {d}/ubuntu/ is absent", base)
            return
        codenames = [e.rstrip("/") for e in listing_entries(page) if e.endswith("/")]
        for c in codenames:
            url = f"{base}{c}/"
            sub = self.reader.get(url)
            debs = [f for f in (listing_entries(sub) if sub else []) if f.startswith("amdgpu-install") and f.endswith(".deb")]
            have = r.amdgpu_install.get(c)
            if have is not None:
                if have.rsplit("/", 1)[1] not in debs:
                    self.contradiction(f"release {r.version} {c}",
                                       f"{have.rsplit('/', 1)[1]} is not in the listing ({', '.join(debs) or 'empty'})",
                                       url)
            elif len(debs) == 1:
                why = _amdgpu_install_refusal(r, c)
                self.add(Kind.NEW_AMDGPU_INSTALL, f"release {r.version} {c}",
                         f"{d}/ubuntu/{c}/{debs[0]}" + (f" (not added: {why})" if why else ""), url,
                         None if why else Addition("rocm_releases.json", "amdgpu_install",
                                                   {"key": c, "url": url + debs[0]}, release=r.version))
            elif debs:
                self.add(Kind.NEW_AMDGPU_INSTALL, f"release {r.version} {c}",
                         f"several packages, none chosen: {', '.join(debs)}", url)
        for c, u in sorted(r.amdgpu_install.items()):
            if f"/{d}/ubuntu/{c}/" in u and c not in codenames:
                self.contradiction(f"release {r.version} {c}", f"amdgpu-install {d}/ubuntu/{c}/ is absent", base)

    # ------------------------------------------------------------------ repo.amd.com

    def core_sdk(self) -> None:
        tar_dirs: dict[str, list[Release]] = {}
        repo_dirs: dict[str, set[str]] = {}
        for r in self.kb.releases("core-sdk"):
            routes = r.routes
            if routes is None:
                continue
            if routes.tarball:
                tar_dirs.setdefault(_dir_url(routes.tarball), []).append(r)
            for repos in ((routes.apt.repos if routes.apt else {}), (routes.rpm.repos if routes.rpm else {})):
                for key, u in repos.items():
                    parent = u.rstrip("/")
                    parent = parent[:parent.rindex(f"/{key}")] + "/"
                    repo_dirs.setdefault(parent, set()).add(key)
        known = {_v(r.version) for r in self.kb.releases()}
        for url, rels in sorted(tar_dirs.items()):
            page = self.reader.get(url)
            if page is None:
                self.contradiction(f"tarballs {url}", "listing is absent", url)
                continue
            versions: dict[str, set[str]] = {}
            for name in listing_entries(page):
                m = _TARBALL.match(name)
                if m and not (_v(m["version"]) or Version("0")).is_prerelease:
                    versions.setdefault(m["version"], set()).add(m["family"])
            for version in sorted(versions, key=lambda s: _v(s) or Version("0")):
                if _v(version) in known:
                    continue
                fams = ", ".join(sorted(versions[version]))
                self.add(Kind.NEW_RELEASE, f"release {version}", f"Core SDK tarballs ({fams})", url,
                         Addition("rocm_releases.json", "releases", _new_release(version, "core-sdk", url)))
            for r in rels:
                if r.version not in versions:
                    self.contradiction(f"release {r.version}", "its tarball route points at a listing with no "
                                       f"{r.version} tarball", url)
        for url, keys in sorted(repo_dirs.items()):
            page = self.reader.get(url)
            if page is None:
                self.contradiction(f"packages {url}", "listing is absent", url)
                continue
            present = {e.rstrip("/") for e in listing_entries(page) if e.endswith("/")}
            for d in sorted(present - keys - {"gpg"}):
                self.add(Kind.NEW_REPO, f"{url}{d}/", "a distro directory no Core SDK route names", url)
            for d in sorted(keys - present):
                self.contradiction(f"{url}{d}/", "a Core SDK route names it; the listing does not have it", url)

    # ------------------------------------------------------------------ Docker Hub

    def docker(self) -> None:
        url: str | None = DOCKER_TAGS
        hub: dict[str, str] = {}  # tag -> the page that lists it
        pages = 0
        complete = True
        while url and pages < DOCKER_MAX_PAGES:
            page = self.reader.get(url)
            if page is None:
                if pages == 0:
                    self.contradiction("rocm/pytorch", "the Docker Hub tags API answered 404", DOCKER_TAGS)
                    return
                complete = False
                self.incomplete.append(f"rocm/pytorch tags: page {pages + 1} ({url}) is absent after {pages} read: "
                                       "tags not seen there are not judged vanished")
                break
            names, nxt = docker_tags(page)
            hub.update((n, url) for n in names if _TAG.match(n) and n not in hub)
            url = nxt
            pages += 1
        if url and complete:
            complete = False
            self.incomplete.append(f"rocm/pytorch tags: stopped after {DOCKER_MAX_PAGES} pages: tags not seen are "
                                   "not judged vanished")
        kb_tags = {im.tag.split(":", 1)[1]: im for im in self.kb.docker_images() if im.tag.startswith("rocm/pytorch:")}
        for tag in sorted(set(hub) - set(kb_tags)):
            m = _TAG.match(tag)
            assert m is not None
            entry = {"tag": f"rocm/pytorch:{tag}", "exists": True, "rocm": m["rocm"], "torch": m["torch"],
                     "ubuntu": m["ubuntu"], "python": m["py"], "confidence": "medium",
                     "note": "listed by Docker Hub (added by kb refresh)", "sources": [hub[tag]]}
            self.add(Kind.NEW_TAG, f"rocm/pytorch:{tag}", f"ROCm {m['rocm']}, torch {m['torch']}, Ubuntu "
                     f"{m['ubuntu']}, Python {m['py']}", hub[tag], Addition("docker_images.json", "images", entry))
        for tag, im in sorted(kb_tags.items()):
            if complete and im.exists is True and tag not in hub and _TAG.match(tag):
                self.add(Kind.VANISHED_TAG, im.tag, "the knowledge base lists it as existing; Docker Hub does not",
                         DOCKER_TAGS)
            if im.exists is False and tag in hub:
                self.contradiction(im.tag, "the knowledge base marks it as non-existent; Docker Hub lists it",
                                   hub[tag])


def _amdgpu_install_refusal(rel: Release, codename: str) -> str | None:
    """Why a listed amdgpu-install package may not be added to a release (None: it may): the release's own
    distribution list must name the codename, and file names AMD's page printed are not mixed with others."""
    if rel.distros is None:
        return f"ROCm {rel.version} records no distributions, so {codename} is not known to be supported"
    if not any(d.codename == codename for d in rel.distros):
        return f"{codename} is not among ROCm {rel.version}'s distributions"
    if rel.filename_verified is True:
        return (f"ROCm {rel.version}'s file names come from AMD's install page; this one only from the listing")
    return None


def _new_release(version: str, stream: str, source: str) -> dict[str, Any]:
    return {"version": version, "stream": stream, "date": None, "amdgpu_install": {}, "filename_verified": None,
            "distros": None, "kernels": None, "gfx": None, "kmd_compat": None, "install_path": None, "packages": [],
            "uncertain": f"added by kb refresh: only the listing {source} was read", "notes": None,
            "sources": [source]}


def refresh(kb: KnowledgeBase, reader: Reader) -> Report:
    """Read every source and list each difference with the knowledge base (raises SourceError)."""
    r = _Refresh(kb, reader)
    r.pytorch()
    r.amd()
    r.rocm_apt()
    r.amdgpu_install()
    r.core_sdk()
    r.docker()
    order = {k: i for i, k in enumerate(Kind)}
    diffs = sorted(dict.fromkeys(r.out), key=lambda d: (order[d.kind], d.subject, d.detail))
    return Report(tuple(diffs), tuple(dict.fromkeys(reader.read)), tuple(r.incomplete))


# --------------------------------------------------------------------------- --write


def _load(directory: Path, name: str) -> Any:
    return json.loads((directory / name).read_text(encoding="utf-8"))


def _dump(directory: Path, name: str, doc: Any) -> None:
    (directory / name).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _insert_release(releases: list[dict[str, Any]], entry: dict[str, Any]) -> None:
    v = _v(entry["version"]) or Version("0")
    at = len(releases)
    same = [i for i, r in enumerate(releases) if r.get("stream") == entry["stream"]]
    if same:
        at = same[-1] + 1
        for i in same:
            if (_v(releases[i].get("version")) or Version("0")) > v:
                at = i
                break
    releases.insert(at, entry)


@record
class Applied:
    """What ``--write`` did: one line per addition written, and one per addition left out with the reason."""

    added: tuple[str, ...]
    refused: tuple[str, ...]


def _add(docs: dict[str, Any], d: Difference) -> None:
    """One addition into the loaded documents (a note it would make false is rewritten with it)."""
    a = d.addition
    assert a is not None
    doc = docs[a.file]
    if a.section == "amdgpu_install":
        rel = next(r for r in doc["releases"] if r["version"] == a.release)
        rel["amdgpu_install"][a.entry["key"]] = a.entry["url"]
        listing = _dir_url(a.entry["url"])
        rel["sources"] = list(dict.fromkeys([*rel["sources"], listing]))
        kept = [c for c in re.split(r";\s*", rel.get("uncertain") or "") if c and "no URL is recorded" not in c]
        kept.append(f"amdgpu-install {a.entry['key']} added by kb refresh from {listing}: its file name was read "
                    "from the listing, not from AMD's install page")
        rel["uncertain"] = "; ".join(kept)
    elif a.section == "releases":
        _insert_release(doc["releases"], a.entry)
    elif a.section == "images":
        images = doc["images"]
        at = next((i for i, im in enumerate(images) if im.get("exists") is False), len(images))
        images.insert(at, a.entry)
    else:
        doc.setdefault(a.section, []).append(a.entry)


def apply(directory: Path, report: Report) -> Applied:
    """Add the sourced additions of ``report`` to the knowledge files in ``directory``, each on its own: an
    addition is kept only if the knowledge base with it still passes ``check``; one that would not is left
    out and named with the first problem it causes. The files are written once, at the end."""
    import copy

    from . import KnowledgeBase

    additions = [d for d in report.differences if d.addition is not None]
    if not additions:
        return Applied((), ())
    with tempfile.TemporaryDirectory(prefix="kb-refresh-") as tmp:
        work = Path(tmp)
        for f in directory.glob("*.json"):
            shutil.copy2(f, work / f.name)
        docs: dict[str, Any] = {}
        added: list[str] = []
        refused: list[str] = []
        for d in additions:
            a = d.addition
            assert a is not None
            docs.setdefault(a.file, _load(work, a.file))
            before = copy.deepcopy(docs[a.file])
            _add(docs, d)
            _dump(work, a.file, docs[a.file])
            problems = KnowledgeBase(work).problems()
            if problems:
                docs[a.file] = before
                _dump(work, a.file, before)
                refused.append(f"{a.file}: {a.section}: {d.subject}: {problems[0]}")
                continue
            added.append(f"{a.file}: {a.section}: {d.subject} (source: {d.source})")
        for name in docs:
            shutil.copy2(work / name, directory / name)
    return Applied(tuple(added), tuple(refused))
