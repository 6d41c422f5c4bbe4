"""Real apt and dpkg in a real root, from the rehearsal mirror: signed repositories verified (unsigned and
wrongly signed ones refused), amdgpu-install's lists and key, the legacy stack installed and purged."""

from __future__ import annotations

import time
from typing import Callable

import pytest

from wizard.kb import load_kb
from wizard.mirror import catalogue as cat
from wizard.mirror.apt_repo import AptRepo, add_to_pool, write_indexes
from wizard.mirror.build import MirrorManifest
from wizard.mirror.debs import DebSpec, build_deb
from wizard.mirror.keys import signing_key
from wizard.mirror.server import MirrorServer
from wizard.realroot.machine import RealRoot

pytestmark = [pytest.mark.system, pytest.mark.realroot]

NONINTERACTIVE = {"DEBIAN_FRONTEND": "noninteractive"}
LEGACY = ("rocm", "rocm-hip-runtime", "hip-runtime-amd", "rocminfo", "rocm-core", "amdgpu-dkms",
          "amdgpu-dkms-firmware")


def installed(r: RealRoot) -> dict[str, str]:
    out = r.run(["dpkg-query", "-W", "-f", "${Package} ${Version} ${db:Status-Abbrev}\n"]).stdout
    return {p[0]: p[1] for p in (line.split() for line in out.splitlines()) if len(p) >= 3 and p[2] == "ii"}


def test_apt_update_verifies_the_mirrors_signed_release(seeded: Callable[[str], RealRoot],
                                                        rehearsal: tuple[MirrorServer, MirrorManifest]) -> None:
    srv, m = rehearsal
    r = seeded("seed-7900xt")
    srv.clear_log()
    up = r.run(["apt-get", "update"], env=NONINTERACTIVE)
    assert up.returncode == 0, up.stderr
    assert "NO_PUBKEY" not in up.stderr and "not signed" not in up.stderr
    assert "/repo.radeon.com/rocm/apt/6.2/dists/jammy/InRelease" in srv.fetched(status=None)  # 200 or 304
    lists = [p.name for p in (r.path / "var/lib/apt/lists").iterdir()]
    assert any(n.endswith("repo.radeon.com_rocm_apt_6.2_dists_jammy_InRelease") for n in lists)
    policy = r.run(["apt-cache", "policy", "rocm-core"]).stdout
    assert f"{m.base_url}/repo.radeon.com/rocm/apt/6.2 jammy/main amd64 Packages" in policy
    assert "release o=repo.radeon.com,a=jammy,n=jammy,l=repo.radeon.com" in r.run(["apt-cache", "policy"]).stdout


def test_an_unsigned_release_is_refused(new_root: Callable[..., RealRoot],
                                        rehearsal: tuple[MirrorServer, MirrorManifest]) -> None:
    srv, _ = rehearsal
    r = new_root("seed-7900xt")
    srv.fail("/repo.radeon.com/rocm/apt/6.2/dists/jammy/InRelease")
    srv.fail("/repo.radeon.com/rocm/apt/6.2/dists/jammy/Release.gpg")
    up = r.run(["apt-get", "update"], env=NONINTERACTIVE)
    assert up.returncode == 100  # apt had it signed before: a downgrade to unsigned is refused outright
    assert "repo.radeon.com/rocm/apt/6.2 jammy Release' is no longer signed" in up.stderr
    for p in (r.path / "var/lib/apt/lists").glob("*_rocm_apt_6.2_dists_jammy_*"):
        p.unlink()
    up = r.run(["apt-get", "update"], env=NONINTERACTIVE)  # a repository never seen signed
    assert up.returncode == 100
    assert "repo.radeon.com/rocm/apt/6.2 jammy Release' is not signed" in up.stderr


@pytest.mark.realroot
def test_a_release_signed_by_another_key_is_refused(new_root: Callable[..., RealRoot],
                                                     rehearsal: tuple[MirrorServer, MirrorManifest]) -> None:
    srv, m = rehearsal
    r = new_root("seed-7900xt")
    repo = AptRepo(m.root / "wrong-key" / "repo", "jammy", "repo.radeon.com", "signed by a stranger")
    deb = build_deb(DebSpec("rocm-extra-tool", "1.0", "all", "a package behind the wrong key"), m.root / "wrong-key")
    add_to_pool(repo, deb)
    with signing_key("someone else <stranger@localhost>") as stranger:
        write_indexes(repo, stranger)
    (r.path / "etc/apt/sources.list.d/stranger.list").write_text(
        f"deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] {m.base_url}/wrong-key/repo jammy main\n")
    up = r.run(["apt-get", "update"], env=NONINTERACTIVE)
    assert up.returncode == 100
    assert "NO_PUBKEY" in up.stderr and "is not signed" in up.stderr


def test_amdgpu_install_writes_amds_lists_and_the_mirrors_key(seeded: Callable[[str], RealRoot],
                                                              rehearsal: tuple[MirrorServer, MirrorManifest]) -> None:
    _, m = rehearsal
    r = seeded("seed-7900xt")
    opts = "[arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg]"
    assert (r.path / "etc/apt/sources.list.d/rocm.list").read_text() == \
        f"deb {opts} {m.base_url}/repo.radeon.com/rocm/apt/6.2 jammy main\n"
    assert (r.path / "etc/apt/sources.list.d/amdgpu.list").read_text() == \
        f"deb {opts} {m.base_url}/repo.radeon.com/amdgpu/6.2/ubuntu jammy main\n"
    shown = r.run(["gpg", "--show-keys", "--with-colons", "/etc/apt/keyrings/rocm.gpg"])  # the root's real gpg
    assert f"fpr:::::::::{m.key_fingerprint}:" in shown.stdout


def test_legacy_stack_install_and_purge_with_real_dpkg(new_root: Callable[..., RealRoot],
                                                       rehearsal: tuple[MirrorServer, MirrorManifest],
                                                       timings: dict[str, float]) -> None:
    _, m = rehearsal
    r = new_root("seed-7900xt", stack=False)
    rel = cat.legacy_release(load_kb(), "6.2.4", "jammy")
    deb = "/root/" + rel.install_url.rsplit("/", 1)[-1]
    started = time.monotonic()
    for argv in (["wget", "-q", "-O", deb, m.url(rel.install_url)], ["apt-get", "install", "-y", deb],
                 ["apt-get", "update"], ["amdgpu-install", "-y", "--usecase=rocm"]):
        done = r.run(argv, env=NONINTERACTIVE, timeout=900)
        assert done.returncode == 0, (argv, done.stderr[-800:])
    timings["full legacy install (wget, apt-get install, update, amdgpu-install --usecase=rocm)"] = \
        time.monotonic() - started
    have = installed(r)
    assert {p: have.get(p) for p in LEGACY} == {
        **{p: rel.package_version for p in LEGACY[:5]}, "amdgpu-dkms": rel.dkms_version,
        "amdgpu-dkms-firmware": rel.dkms_version}
    assert have["amdgpu-install"] == "6.2.60204-1"
    assert r.run(["readlink", "-f", "/opt/rocm"]).stdout.strip() == "/opt/rocm-6.2.4"
    assert r.run(["cat", "/opt/rocm/.info/version"]).stdout.strip() == "6.2.4"
    assert "amdgpu/6.2.4.60204-rehearsal~22.04, rehearsal-kernel, x86_64: installed" in r.run(["dkms", "status"]).stdout
    agents = r.run(["rocminfo"], as_user=True).stdout
    assert agents.count("Name:                    gfx1100") == 2
    # --uninstall purges rocm-core and the driver, and apt drags every dependent package out with them
    started = time.monotonic()
    gone = r.run(["amdgpu-install", "-y", "--uninstall", "--rocmrelease=all"], env=NONINTERACTIVE)
    assert gone.returncode == 0, gone.stderr[-800:]
    assert "Purging configuration files for rocm-hip-runtime" in gone.stdout or "Removing rocm-hip-runtime" in gone.stdout
    have = installed(r)
    assert not set(LEGACY) & set(have) and "amdgpu-install" in have
    assert not (r.path / "opt/rocm").exists() and not (r.path / "opt/rocm-6.2.4").exists()
    assert r.run(["dkms", "status"]).stdout == ""
    purge = r.run(["apt-get", "purge", "-y", "amdgpu-install"], env=NONINTERACTIVE)
    assert purge.returncode == 0
    assert not (r.path / "etc/apt/sources.list.d/rocm.list").exists()
    assert not (r.path / "etc/apt/keyrings/rocm.gpg").exists()
    timings["legacy uninstall and purge"] = time.monotonic() - started
