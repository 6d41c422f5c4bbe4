"""Build the whole rehearsal mirror tree from the knowledge base (never downloads anything).

The tree copies the upstream URL paths under one directory per host, so that the mirror rewrite
``ORIGIN=BASE_URL/ORIGIN`` maps every upstream URL 1:1::

    ROOT/repo.radeon.com/amdgpu-install/6.2.4/ubuntu/jammy/amdgpu-install_6.2.60204-1_all.deb
    ROOT/repo.radeon.com/rocm/apt/6.2.4/{dists,pool}/...        ROOT/repo.radeon.com/amdgpu/6.2.4/ubuntu/...
    ROOT/repo.amd.com/rocm/packages-multi-arch/debian12/...     ROOT/download.pytorch.org/whl/rocm6.2/...
    ROOT/keys/rehearsal.gpg (the test key, binary)             ROOT/manifest.json

The packages' lists name ``BASE_URL`` (the server's address), so build after the server has its port:
``with MirrorServer(root) as srv: build_mirror(root, srv.base_url)``.
"""

from __future__ import annotations

import json
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterable, Sequence
from urllib.parse import urlsplit

from wizard.kb import KnowledgeBase, Wheel, load_kb
from wizard.mirror import catalogue as cat
from wizard.mirror.apt_repo import AptRepo, add_to_pool, write_indexes
from wizard.mirror.config import KNOWN_ORIGINS, REGISTRY_ORIGINS, Mirror, MirrorConfig
from wizard.mirror.debs import DebSpec, build_deb
from wizard.mirror.driver_catalogue import amdgpu_install_package, driver_packages, driver_releases
from wizard.mirror.keys import SigningKey, signing_key
from wizard.mirror.simple_index import IndexedFile, write_index
from wizard.mirror.wheels import build_wheel
from wizard.record import field, record

KEYRING = "keys/rehearsal.gpg"


@record
class ExtraDeb:
    """A package a test adds to one of the mirror's repositories (e.g. a big one to interrupt dpkg in)."""
    repo_url: str  # upstream URL of the repository ("https://repo.radeon.com/rocm/apt/6.2.4")
    suite: str
    spec: DebSpec
    compression: str = "gzip"  # dpkg-deb -Z: "none" builds a big test payload fast


@record
class MirrorManifest:
    root: Path
    base_url: str  # "http://127.0.0.1:PORT"
    key_fingerprint: str
    legacy: tuple[cat.LegacyRelease, ...]
    core_sdk: tuple[cat.CoreSdkRelease, ...]
    apt_repos: tuple[AptRepo, ...]
    indexes: tuple[tuple[str, tuple[IndexedFile, ...]], ...]  # (upstream index URL, files)
    seconds: float = field(default=0.0, compare=False)

    @property
    def keyring(self) -> Path:
        return self.root / KEYRING

    def config(self) -> MirrorConfig:
        """The mirror configuration that sends every known origin to this mirror."""
        return mirror_config(self.base_url)

    def url(self, upstream: str) -> str:
        return self.config().rewrite(upstream)

    def path(self, upstream: str) -> Path:
        """The file in the tree that serves ``upstream``."""
        return self.root / cat.index_path(upstream)

    def index_files(self, upstream_index: str) -> tuple[IndexedFile, ...]:
        return dict(self.indexes).get(upstream_index.rstrip("/"), ())

    def repo(self, upstream_url: str, suite: str) -> AptRepo:
        base = self.path(upstream_url)
        for r in self.apt_repos:
            if r.base == base and r.suite == suite:
                return r
        raise KeyError(f"{upstream_url} {suite}: not a repository of this mirror")


def mirror_config(base_url: str) -> MirrorConfig:
    base = base_url.rstrip("/")
    return MirrorConfig(tuple(Mirror(o, f"{base}/{o}", "rehearsal mirror") for o in KNOWN_ORIGINS
                              if o not in REGISTRY_ORIGINS))


def plan_targets() -> tuple[set[str], set[tuple[str, str]]]:
    """(ROCm releases, (torch, index) pins) the shipped plans and the sandbox profiles name."""
    from wizard.plan_file import builtin_plans
    from wizard.profiles import PROFILES

    releases: set[str] = set()
    pins: set[tuple[str, str]] = set()
    for p in builtin_plans():
        t = p.target
        if t.rocm:
            releases.add(t.rocm)
        if t.torch and t.index and t.torch != "newest" and t.index not in ("auto", "therock"):
            pins.add((t.torch, t.index))
    for prof in PROFILES.values():
        if prof.rocm:
            releases.add(prof.rocm)
        torch = dict(prof.venv_packages).get("torch")
        if torch and "+" in torch:
            pins.add((torch.split("+")[0], torch.split("+")[1]))
    return releases, pins


def default_legacy_versions(kb: KnowledgeBase) -> tuple[str, ...]:
    releases, _ = plan_targets()
    return tuple(sorted((v for v in releases if (r := kb.release(v)) is not None and r.stream == "legacy"),
                        key=cat._vkey))


def core_sdk_key_urls(kb: KnowledgeBase) -> tuple[str, ...]:
    """AMD's repository key URLs of the Core SDK releases (their ``routes``), served with the mirror's own key."""
    urls = {repo.key_url for r in kb.releases("core-sdk") if r.routes is not None
            for repo in (r.routes.apt, r.routes.rpm) if repo is not None}
    return tuple(sorted(urls))


def default_core_versions(kb: KnowledgeBase) -> tuple[str, ...]:
    """Core SDK releases the knowledge base can rehearse: an install path and AMD's apt route (10.1.0 has the
    path for detection, not the route)."""
    return tuple(r.version for r in kb.releases("core-sdk")
                 if r.install_path and r.routes is not None and r.routes.apt is not None)


def build_mirror(root: Path, base_url: str, *, kb: KnowledgeBase | None = None,
                 legacy_versions: Sequence[str] | None = None, codenames: Sequence[str] = ("jammy",),
                 core_versions: Sequence[str] | None = None, core_distros: Sequence[str] = ("debian12",),
                 wheel_rows: Sequence[Wheel] | None = None, extra_debs: Iterable[ExtraDeb] = (),
                 jobs: int = 4) -> MirrorManifest:
    """Build (or rebuild) the mirror under ``root`` for a server at ``base_url``."""
    started = time.monotonic()
    kb = kb or load_kb()
    root.mkdir(parents=True, exist_ok=True)
    base = base_url.rstrip("/")
    mirror_of = {f"https://{o}": f"{base}/{o}" for o in KNOWN_ORIGINS if o not in REGISTRY_ORIGINS}
    legacy = tuple(cat.legacy_release(kb, v, c) for v in (legacy_versions if legacy_versions is not None
                                                          else default_legacy_versions(kb)) for c in codenames)
    core = tuple(cat.core_sdk_release(kb, v, distro)
                 for v in (core_versions if core_versions is not None else default_core_versions(kb))
                 for distro in dict.fromkeys(core_distros) if distro in cat.core_sdk_distros(kb, v))
    with signing_key() as key, ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        keyring = key.public_keyring()
        (root / KEYRING).parent.mkdir(parents=True, exist_ok=True)
        (root / KEYRING).write_bytes(keyring)
        (root / KEYRING).with_suffix(".asc").write_text(key.public_armored())
        for key_url in core_sdk_key_urls(kb):  # the Core SDK plan fetches AMD's key from its URL: the mirror's key
            (root / cat.index_path(key_url)).parent.mkdir(parents=True, exist_ok=True)
            (root / cat.index_path(key_url)).write_bytes(keyring)
        repos: dict[tuple[Path, str], AptRepo] = {}
        jobs_list: list[tuple[AptRepo | None, Path, DebSpec, str]] = []

        def repo(url: str, suite: str, description: str) -> AptRepo:
            r = AptRepo(root / cat.index_path(url), suite, urlsplit(url).hostname or "", description)
            return repos.setdefault((r.base, suite), r)

        for rel in legacy:
            inst = root / cat.index_path(rel.install_url)
            jobs_list.append((None, inst.parent, cat.amdgpu_install_package(rel, mirror_of, keyring), "gzip"))
            rr = repo(rel.rocm_repo(), rel.codename, f"ROCm {rel.version} rehearsal repository")
            dr = repo(rel.amdgpu_repo(), rel.codename, f"AMDGPU {rel.version} rehearsal repository")
            jobs_list += [(rr, root / ".build", s, "gzip") for s in cat.legacy_rocm_packages(rel)]
            jobs_list += [(dr, root / ".build", s, "gzip") for s in cat.legacy_driver_packages(rel)]
        for drel in driver_releases(kb, tuple(codenames)):  # the Core SDK era's amdgpu-install 31.x
            inst = root / cat.index_path(drel.install_url)
            jobs_list.append((None, inst.parent, amdgpu_install_package(drel, mirror_of, keyring), "gzip"))
            drv = repo(drel.amdgpu_repo(), drel.codename, f"AMDGPU driver {drel.driver} rehearsal repository")
            jobs_list += [(drv, root / ".build", s, "gzip") for s in driver_packages(drel)]
        for crel in core:
            cr = repo(crel.repo(), crel.suite, f"ROCm Core SDK {crel.version} rehearsal repository ({crel.distro})")
            jobs_list += [(cr, root / ".build", s, "gzip") for s in cat.core_sdk_packages(crel)]
        for extra in extra_debs:
            er = repo(extra.repo_url, extra.suite, "rehearsal repository")
            jobs_list.append((er, root / ".build", extra.spec, extra.compression))

        def one(n: int, job: tuple[AptRepo | None, Path, DebSpec, str]) -> None:
            r, out, spec, compression = job
            if r is None:  # amdgpu-install's .deb, built where it is served
                build_deb(spec, out, compression)
                return
            # each job builds in its own folder: two repositories may carry one file name (a driver package
            # of two amdgpu releases), and a shared folder let one job unlink what the other was linking
            deb = build_deb(spec, out / r.suite / str(n), compression)
            add_to_pool(r, deb)
            deb.unlink()

        list(pool.map(one, range(len(jobs_list)), jobs_list))
        shutil.rmtree(root / ".build", ignore_errors=True)
        _sign_all(pool, tuple(repos.values()), key)
        indexes = _wheels(root, kb, wheel_rows, pool)
    manifest = MirrorManifest(root, base, key.fingerprint, legacy, core, tuple(repos.values()), indexes,
                              time.monotonic() - started)
    _write_manifest(manifest)
    return manifest


def _sign_all(pool: ThreadPoolExecutor, repos: tuple[AptRepo, ...], key: SigningKey) -> None:
    list(pool.map(lambda r: write_indexes(r, key), repos))


def _wheels(root: Path, kb: KnowledgeBase, rows: Sequence[Wheel] | None,
            pool: ThreadPoolExecutor) -> tuple[tuple[str, tuple[IndexedFile, ...]], ...]:
    out = []
    for ix in cat.wheel_indexes(kb, tuple(rows) if rows is not None else None):
        d = root / cat.index_path(ix.url)
        d.mkdir(parents=True, exist_ok=True)
        list(pool.map(lambda job: build_wheel(job[0], job[1], d), [(s, t) for s in ix.wheels for t in s.tags]))
        out.append((ix.url, write_index(d)))
    return tuple(out)


def _write_manifest(m: MirrorManifest) -> None:
    data = {
        "base_url": m.base_url, "key_fingerprint": m.key_fingerprint, "keyring": KEYRING,
        "legacy": [{"version": r.version, "codename": r.codename, "amdgpu_install": r.install_url,
                    "package_version": r.package_version} for r in m.legacy],
        "core_sdk": [{"version": r.version, "distro": r.distro, "repo": r.repo(), "install_path": r.install_path}
                     for r in m.core_sdk],
        "apt_repos": [{"path": str(r.base.relative_to(m.root)), "suite": r.suite} for r in m.apt_repos],
        "indexes": {url: len(files) for url, files in m.indexes},
        "seconds": round(m.seconds, 2),
    }
    (m.root / "manifest.json").write_text(json.dumps(data, indent=1) + "\n")
