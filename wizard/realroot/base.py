"""The base userland: Debian 12 made by mmdebstrap, cached once per machine as a tarball.

The cache lives in ``/var/cache/rocm-wizard/roots`` for root and ``$XDG_CACHE_HOME/rocm-wizard/roots``
(``~/.cache`` when unset) otherwise; ``ROCM_WIZARD_ROOT_CACHE`` overrides both. A tarball's name carries
a key computed from everything that shapes it (suite, variant, package set, excludes, format), so a
different package set is a different tarball and an old one is never reused by mistake. Builds are
serialised by a lock file in the cache directory and land by rename, so a killed build leaves no
half tarball.

The package set is the rehearsal's: what the wizard's migrations call for real (python3 with venv and
pip, wget, ca-certificates, gnupg, apt-utils) plus Debian's own python3-packaging, python3-distro and
python3-rich, which ``python3 -m wizard detect`` imports.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Mapping

from wizard.record import field, record


FORMAT = 1  # bump when the way a base is made changes
PACKAGES = ("python3", "python3-venv", "python3-pip", "wget", "ca-certificates", "gnupg", "apt-utils",
            "python3-packaging", "python3-distro", "python3-rich")
# Documentation, man pages and translations are not installed (as Debian's slim images do); copyright files are.
DPKG_OPTS = ("path-exclude=/usr/share/doc/*", "path-include=/usr/share/doc/*/copyright",
             "path-exclude=/usr/share/man/*", "path-exclude=/usr/share/locale/*", "path-exclude=/usr/share/info/*")


class RealRootError(RuntimeError):
    """A real root cannot be made or used here; the message is one line and says what to do."""


@record
class BaseSpec:
    suite: str = "bookworm"
    variant: str = "minbase"
    packages: tuple[str, ...] = PACKAGES
    dpkg_opts: tuple[str, ...] = DPKG_OPTS
    mirror: str | None = None  # Debian archive URL; None: mmdebstrap's default (deb.debian.org)
    architecture: str = "amd64"

    def key(self) -> str:
        data = {"format": FORMAT, "suite": self.suite, "variant": self.variant, "arch": self.architecture,
                "packages": sorted(self.packages), "dpkg": list(self.dpkg_opts)}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def filename(self) -> str:
        return f"debian-{self.suite}-{self.variant}-{self.key()}.tar"


@record
class BaseTarball:
    path: Path
    built: bool  # False: taken from the cache
    seconds: float = field(default=0.0, compare=False)


def cache_dir(environ: Mapping[str, str] | None = None, uid: int | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get("ROCM_WIZARD_ROOT_CACHE"):
        return Path(env["ROCM_WIZARD_ROOT_CACHE"])
    if (os.geteuid() if uid is None else uid) == 0:
        return Path("/var/cache/rocm-wizard/roots")
    xdg = env.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "rocm-wizard" / "roots"
    return Path(env.get("HOME", "/nonexistent")) / ".cache" / "rocm-wizard" / "roots"


def mmdebstrap() -> str | None:
    return shutil.which("mmdebstrap")


def require_host() -> None:
    """Building and entering a real root needs root and mmdebstrap; a one-line reason otherwise."""
    if os.geteuid() != 0:
        raise RealRootError("a real root needs root on the host (mmdebstrap, unshare --mount, chroot); "
                            "run as root or use the stand-in sandbox")
    if mmdebstrap() is None:
        raise RealRootError("mmdebstrap is not installed: apt-get install mmdebstrap (Debian/Ubuntu), "
                            "or use the stand-in sandbox")
    missing = [t for t in ("unshare", "chroot", "mount", "tar") if shutil.which(t) is None]
    if missing:
        raise RealRootError(f"{', '.join(missing)} not found on the host (util-linux, coreutils, tar)")


def ensure_base(spec: BaseSpec = BaseSpec(), *, cache: Path | None = None, log: Path | None = None) -> BaseTarball:
    """The cached tarball for ``spec``, built with mmdebstrap on first use."""
    require_host()
    directory = cache or cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / spec.filename
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_file():
            return BaseTarball(target, built=False)
        started = time.monotonic()
        partial = directory / f".{spec.filename}.{os.getpid()}.partial"
        argv = ["mmdebstrap", f"--variant={spec.variant}", f"--architectures={spec.architecture}", "--format=tar",
                "--mode=root", f"--include={','.join(spec.packages)}",
                *(f"--dpkgopt={o}" for o in spec.dpkg_opts), spec.suite, str(partial)]
        if spec.mirror:
            argv.append(spec.mirror)
        try:
            with open(log or os.devnull, "w") as out:
                proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                      timeout=3600, env={**os.environ, "LC_ALL": "C"})
            if proc.returncode != 0:
                raise RealRootError(f"mmdebstrap {spec.suite} failed (exit {proc.returncode})"
                                    + (f"; its log: {log}" if log else "; pass a log path to see why"))
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
        return BaseTarball(target, built=True, seconds=time.monotonic() - started)


def unpack(tarball: Path, dest: Path) -> None:
    """Unpack a base tarball into an empty ``dest`` (owners, modes and device nodes kept)."""
    if dest.exists() and any(dest.iterdir()):
        raise RealRootError(f"{dest}: exists and is not empty; give a new or empty directory")
    dest.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["tar", "--extract", "--file", str(tarball), "--directory", str(dest), "--numeric-owner",
                           "--same-permissions", "--same-owner"], capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RealRootError(f"unpacking {tarball.name} into {dest}: {last}")


def copy(src: Path, dest: Path) -> None:
    """Copy a root (a session's unpacked base, a seeded profile) to an empty ``dest``, hard links and
    device nodes included (``cp -a``; reflinks where the file system has them)."""
    if dest.exists() and any(dest.iterdir()):
        raise RealRootError(f"{dest}: exists and is not empty; give a new or empty directory")
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        dest.rmdir()
    proc = subprocess.run(["cp", "-a", "--reflink=auto", "--", str(src), str(dest)], capture_output=True, text=True,
                          timeout=1800)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RealRootError(f"copying {src} to {dest}: {last}")
