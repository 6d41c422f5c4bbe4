"""The rehearsal mirror carries what the driver plan installs: each Core SDK release's amdgpu-install 31.x at
the knowledge base's URL with the version its file name carries, whose postinst writes AMD's driver
repository list naming the mirror, and amdgpu-dkms in that repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .test_mirror_build import fetch, packages

import pytest

from wizard.kb import load_kb
from wizard.mirror.build import MirrorManifest
from wizard.mirror.driver_catalogue import driver_releases

pytestmark = pytest.mark.integration


def test_mirror_serves_the_core_sdk_amdgpu_install_and_its_driver(mirror: MirrorManifest, tmp_path: Path) -> None:
    kb = load_kb()
    rels = driver_releases(kb, ("jammy",))
    wanted = {(r.version, r.amdgpu_install["jammy"]) for r in kb.releases("core-sdk")
              if r.driver_version and "jammy" in r.amdgpu_install}
    assert wanted and {(d.sdk, d.install_url) for d in rels} == wanted
    for d in rels:
        status, _, body = fetch(mirror.url(d.install_url))
        assert status == 200
        deb = tmp_path / d.install_url.rsplit("/", 1)[-1]
        deb.write_bytes(body)
        fields = subprocess.run(["dpkg-deb", "--field", str(deb), "Package", "Version"], capture_output=True,
                                text=True, check=True).stdout
        assert fields == f"Package: amdgpu-install\nVersion: {deb.name.split('_')[1]}\n"
        postinst = subprocess.run(["dpkg-deb", "--ctrl-tarfile", str(deb)], capture_output=True, check=True).stdout
        listing = f"{mirror.base_url}/repo.radeon.com/amdgpu/{d.driver}/ubuntu jammy main"
        assert listing.encode() in postinst
        drv = packages(mirror, d.amdgpu_repo(), "jammy")
        assert drv["amdgpu-dkms"]["Version"] == d.dkms_version and "amdgpu-dkms-firmware" in drv
