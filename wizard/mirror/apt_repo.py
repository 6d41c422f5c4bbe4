"""A signed apt repository: ``pool/`` plus ``dists/<suite>/`` indexes written by ``apt-ftparchive``.

Layout (what a ``deb URL SUITE main`` line reads)::

    BASE/pool/SUITE/main/<first letter>/<name>/<name>_<version>_<arch>.deb
    BASE/dists/SUITE/main/binary-amd64/Packages{,.gz}
    BASE/dists/SUITE/Release, InRelease (clear-signed), Release.gpg (detached)

``Origin`` and ``Label`` are the origin's host (``repo.radeon.com``), as in AMD's own ``InRelease``
(https://github.com/ROCm/legacy-rocm-build/issues/5625 quotes one), so the 600 pin the steps write
(``Pin: release o=repo.radeon.com``) applies to the mirror too.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
from pathlib import Path

from wizard.mirror.keys import SigningKey
from wizard.record import record


class RepoBuildError(RuntimeError):
    """apt-ftparchive failed; one line."""


@record
class AptRepo:
    base: Path  # the directory the deb line's URL points at
    suite: str  # "jammy", "stable"
    origin: str  # "repo.radeon.com"
    description: str
    component: str = "main"
    architectures: tuple[str, ...] = ("amd64",)

    @property
    def dists(self) -> Path:
        return self.base / "dists" / self.suite

    @property
    def pool(self) -> str:
        """The pool of this suite, relative to the base (suites of one base keep their own files)."""
        return f"pool/{self.suite}/{self.component}"


def pool_path(repo: AptRepo, deb_name: str) -> Path:
    """Where a package file goes in the pool (Debian's layout: first letter, or lib + letter)."""
    pkg = deb_name.split("_", 1)[0]
    prefix = pkg[:4] if pkg.startswith("lib") else pkg[:1]
    return repo.base / repo.pool / prefix / pkg / deb_name


def add_to_pool(repo: AptRepo, deb: Path) -> Path:
    dst = pool_path(repo, deb.name)
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.exists():
        dst.unlink()
    try:
        os.link(deb, dst)
    except OSError:
        shutil.copy2(deb, dst)
    return dst


def _ftparchive(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["apt-ftparchive", *args], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "LC_ALL": "C"})
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RepoBuildError(f"apt-ftparchive {args[0]} in {cwd}: {last}")
    return proc.stdout


def write_indexes(repo: AptRepo, key: SigningKey | None) -> None:
    """Packages, Release and (with a key) InRelease and Release.gpg for everything in the pool."""
    packages = _ftparchive(repo.base, "packages", repo.pool) if (repo.base / repo.pool).is_dir() else ""
    for arch in repo.architectures:
        d = repo.dists / repo.component / f"binary-{arch}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "Packages").write_text(packages, encoding="utf-8")
        (d / "Packages.gz").write_bytes(gzip.compress(packages.encode("utf-8"), compresslevel=6, mtime=0))
    for stale in ("Release", "InRelease", "Release.gpg"):
        (repo.dists / stale).unlink(missing_ok=True)
    opts = {
        "Origin": repo.origin, "Label": repo.origin, "Suite": repo.suite, "Codename": repo.suite,
        "Architectures": " ".join(repo.architectures), "Components": repo.component,
        "Description": repo.description,
    }
    args = [f"-oAPT::FTPArchive::Release::{k}={v}" for k, v in opts.items()]
    release = _ftparchive(repo.dists, *args, "release", ".")
    (repo.dists / "Release").write_text(release, encoding="utf-8")
    if key is not None:
        sign_release(repo, key)


def sign_release(repo: AptRepo, key: SigningKey) -> None:
    """(Re)sign ``Release``: ``InRelease`` and ``Release.gpg`` by ``key``."""
    key.clearsign(repo.dists / "Release", repo.dists / "InRelease")
    key.detach_sign(repo.dists / "Release", repo.dists / "Release.gpg")


def unsign(repo: AptRepo) -> None:
    """Remove the signatures, leaving an unsigned ``Release`` (what apt refuses without trusted=yes)."""
    for name in ("InRelease", "Release.gpg"):
        (repo.dists / name).unlink(missing_ok=True)
