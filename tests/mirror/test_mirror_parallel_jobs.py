"""Two repositories of the mirror may carry one package file name (a driver package of two amdgpu releases):
their build jobs run side by side in the build pool and must not share a folder. In a shared folder one
job unlinked the file the other was about to link into its pool (a FileNotFoundError that failed every
mirror test of a run, now and then, on a loaded machine)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import wizard.mirror.build as mirror_build
from wizard.mirror.apt_repo import AptRepo, pool_path
from wizard.mirror.build import ExtraDeb, build_mirror
from wizard.mirror.catalogue import index_path
from wizard.mirror.debs import DebSpec

pytestmark = pytest.mark.integration


def test_one_file_name_in_two_repositories_builds_into_both_pools(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    spec = DebSpec("linux-modules-extra-6.1.0-test", "0.rehearsal", "all", "the same file name in two repositories")
    urls = ("https://repo.radeon.com/amdgpu/31.40/ubuntu", "https://repo.radeon.com/amdgpu/31.50/ubuntu")
    both_built = threading.Barrier(2, timeout=60)
    real_build = mirror_build.build_deb

    def build_then_wait(s: DebSpec, out: Path, compression: str = "gzip") -> Path:
        deb = real_build(s, out, compression)
        if s.name == spec.name:
            both_built.wait()  # both jobs have built before either links: the interleaving that failed
        return deb

    monkeypatch.setattr(mirror_build, "build_deb", build_then_wait)
    m = build_mirror(tmp_path / "m", "http://127.0.0.1:9", legacy_versions=(), codenames=(), core_versions=(),
                     wheel_rows=(), extra_debs=[ExtraDeb(u, "jammy", spec) for u in urls], jobs=2)
    for u in urls:
        repo = AptRepo(tmp_path / "m" / index_path(u), "jammy", "repo.radeon.com", "")
        assert pool_path(repo, spec.filename).is_file(), u
    assert {r.base for r in m.apt_repos} == {tmp_path / "m" / index_path(u) for u in urls}
