"""Real Debian 12 roots for tests: one cached base per machine, unpacked once per session, copied per test.

* ``rehearsal``: the session's mirror (built from the KB, served on 127.0.0.1) plus one big test package
  (``rocblas`` for ROCm 6.2.0, 128 MiB, uncompressed) to interrupt dpkg in;
* ``session_base``: the cached mmdebstrap tarball unpacked once;
* ``seeded(profile)``: a profile's root with its starting stack installed, built once per session and
  shared: a test that uses it directly may read and run things but must not change its packages;
* ``new_root(profile, stack=True)``: a fresh copy for one test that changes packages, removed afterwards.

Every test here is of the ``system`` tier: a plain ``python -m pytest`` runs only its smoke (one plan to the
reboot and back), ``python -m pytest -m system`` (or ROCM_WIZARD_REALROOT_ALL=1) all of them; tests/conftest.py
decides. Without root or mmdebstrap everything here skips, saying what to install.
The base tarball is cached where the wizard caches it (/var/cache/rocm-wizard/roots for root;
ROCM_WIZARD_ROOT_CACHE overrides), so a machine builds it once.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Callable, ContextManager, Iterator

import pytest

from tests.realroot.helpers import wizard_cli
from wizard.kb import load_kb
from wizard.mirror import catalogue as cat
from wizard.mirror.build import ExtraDeb, MirrorManifest, build_mirror
from wizard.mirror.debs import DebFile, DebSpec
from wizard.mirror.server import MirrorServer
from wizard.mirror.tools import missing_tools
from wizard.realroot import base as rb
from wizard.realroot.machine import RealRoot, build_root, open_root

TIMINGS: dict[str, float] = {}
BIG_FILES = 128  # x 1 MiB: dpkg takes long enough to unpack it that a test can kill it half-way


def host_reason() -> str | None:
    if os.geteuid() != 0:
        return "a real root needs root on the host (unshare --mount, chroot)"
    if rb.mmdebstrap() is None:
        return "mmdebstrap is not installed: apt-get install mmdebstrap (.ci/run installs it)"
    return missing_tools()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if TIMINGS:
        terminalreporter.write_sep("-", "real root timings (seconds)")
        for k, v in TIMINGS.items():
            terminalreporter.write_line(f"{k}: {v:.2f}")


@pytest.fixture(scope="session")
def timings() -> dict[str, float]:
    """Durations a test wants in the session's timing summary."""
    return TIMINGS


@pytest.fixture(scope="session")
def host_ok() -> None:
    reason = host_reason()
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def rehearsal(host_ok: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MirrorServer, MirrorManifest]]:
    rel = cat.legacy_release(load_kb(), "6.2.0", "jammy")
    big = DebSpec("rocblas", rel.package_version, "amd64", "rocBLAS (rehearsal placeholder: a big test payload)",
                  depends=(f"rocm-core (= {rel.package_version})",),
                  files=tuple(DebFile(f"{rel.prefix}/lib/rocblas/library/TensileLibrary_part{i:03d}.dat",
                                      os.urandom(1 << 20)) for i in range(BIG_FILES)))
    root = tmp_path_factory.mktemp("rehearsal-mirror")
    with MirrorServer(root, idle_timeout=3600) as srv:
        m = build_mirror(root, srv.base_url, extra_debs=[ExtraDeb(rel.rocm_repo(), "jammy", big, "none")])
        TIMINGS["mirror build (with a 128 MiB test package)"] = m.seconds
        yield srv, m


@pytest.fixture(scope="session")
def session_base(host_ok: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    started = time.monotonic()
    log = tmp_path_factory.mktemp("mmdebstrap") / "mmdebstrap.log"
    tar = rb.ensure_base(log=log)
    TIMINGS["base tarball (built)" if tar.built else "base tarball (cached)"] = time.monotonic() - started
    dest = tmp_path_factory.mktemp("base") / "root"
    started = time.monotonic()
    rb.unpack(tar.path, dest)
    TIMINGS["unpack the cached base"] = time.monotonic() - started
    yield dest
    shutil.rmtree(dest, ignore_errors=True)


@pytest.fixture(scope="session")
def seeded(session_base: Path, rehearsal: tuple[MirrorServer, MirrorManifest],
           tmp_path_factory: pytest.TempPathFactory,
           outside_timeout: Callable[[], ContextManager[None]]) -> Iterator[Callable[[str], RealRoot]]:
    built: dict[str, RealRoot] = {}

    def get(profile: str) -> RealRoot:
        if profile not in built:
            started = time.monotonic()
            with outside_timeout():
                built[profile] = build_root(tmp_path_factory.mktemp(f"seeded-{profile}") / "root", profile,
                                            rehearsal[0].base_url, from_root=session_base)
            TIMINGS[f"seeded {profile} (copy, lay, install stack)"] = time.monotonic() - started
            for k, v in built[profile].timings.items():
                TIMINGS[f"  {profile}: {k}"] = v
        return built[profile]

    yield get
    for r in built.values():
        shutil.rmtree(r.path, ignore_errors=True)


@pytest.fixture
def new_root(seeded: Callable[[str], RealRoot], session_base: Path, rehearsal: tuple[MirrorServer, MirrorManifest],
             tmp_path: Path) -> Iterator[Callable[..., RealRoot]]:
    made: list[Path] = []

    def make(profile: str = "seed-7900xt", stack: bool = True) -> RealRoot:
        dest = tmp_path / f"root{len(made)}"
        made.append(dest)
        if stack:
            src = seeded(profile).path
            started = time.monotonic()
            rb.copy(src, dest)
            TIMINGS.setdefault("copy a seeded root", time.monotonic() - started)
            return open_root(dest)
        started = time.monotonic()
        root = build_root(dest, profile, rehearsal[0].base_url, from_root=session_base, install_stack=False)
        TIMINGS.setdefault("copy the base and lay a profile", time.monotonic() - started)
        return root

    yield make
    rehearsal[0].clear_failures()
    for d in made:
        shutil.rmtree(d, ignore_errors=True)


# ------------------------------------------------------------------------------ the wizard's own CLI on a root

@pytest.fixture(scope="session")
def cli_template(host_ok: None, tmp_path_factory: pytest.TempPathFactory,
                 outside_timeout: Callable[[], ContextManager[None]]) -> Iterator[Callable[[str], Path]]:
    """``--sandbox DIR --profile P --root debian12`` built once per profile by the wizard's own CLI (the cached
    base, the profile, its mirror, its starting stack); tests copy it (:func:`cli_root`)."""
    built: dict[str, Path] = {}

    def get(profile: str) -> Path:
        if profile not in built:
            d = tmp_path_factory.mktemp(f"cli-{profile}") / "root"
            started = time.monotonic()
            with outside_timeout():
                r = wizard_cli("--sandbox", str(d), "--profile", profile, "--root", "debian12", "detect", "--json")
            assert r.returncode == 0, r.stderr[-1500:]
            TIMINGS[f"--root debian12 {profile} (base, profile, mirror, starting stack)"] = time.monotonic() - started
            built[profile] = d
        return built[profile]

    yield get
    for d in built.values():
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def cli_root(cli_template: Callable[[str], Path], tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """A fresh copy of a profile's CLI-built real root for one test (the copy serves its mirror on the
    template's recorded port while a command runs: one at a time)."""
    made: list[Path] = []

    def make(profile: str) -> Path:
        dest = tmp_path / f"{profile}-{len(made)}"
        rb.copy(cli_template(profile), dest)
        made.append(dest)
        return dest

    yield make
    for d in made:
        shutil.rmtree(d, ignore_errors=True)
