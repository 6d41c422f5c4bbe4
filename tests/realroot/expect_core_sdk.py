"""What the core-sdk plan must leave in a real root, from the knowledge base alone (not from the run):
the newest Core SDK release whose ``routes`` name an apt repository for the profile's distro and whose
torch build the knowledge base confirms, its per-gfx package (and the meta package it depends on) at the
rehearsal mirror's version, AMD's newest confirmed torch build of that release with its companions and the
``rocm`` selector at the release (so detect finds two ROCm installs: the system one and the venv's), and the
source file in the format AMD's page gives, naming the mirror."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from wizard.kb import KnowledgeBase
from wizard.mirror import catalogue as cat
from wizard.profiles import Profile
from wizard.realroot.rehearsal import core_sdk_distro

if TYPE_CHECKING:
    from tests.realroot.test_plans_realroot import Expect

SOURCE_FILE = {"deb822": "amdrocm.sources", "one-line": "amdrocm.list"}


def _vkey(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v))


def gfx_name(target_version: int) -> str:
    """KFD's gfx_target_version (120001) as a gfx name (gfx1201)."""
    return "gfx%d%x%x" % (target_version // 10000, target_version // 100 % 100, target_version % 100)


def expect_core_sdk(kb: KnowledgeBase, prof: Profile, venv: str, mirror: str) -> Expect:
    from tests.realroot.test_plans_realroot import Expect

    distro = core_sdk_distro(prof.os_release)
    gfx = gfx_name(prof.gpus[0].gfx_target_version)
    rel = max((r for r in kb.releases("core-sdk") if r.install_path and r.routes is not None
               and r.routes.apt is not None and distro in r.routes.apt.repos and r.routes.gfx_package
               and r.gfx is not None and gfx in r.gfx.official
               # the planner's rule: a plan taking AMD's torch needs that release's build in the knowledge base
               and any(v.uncertain is None for v in kb.vendor_wheels(r.version))), key=lambda r: _vkey(r.version))
    assert rel.routes is not None and rel.routes.apt is not None and rel.routes.gfx_package and rel.install_path
    apt = rel.routes.apt
    rows = [v for v in kb.vendor_wheels(rel.version) if v.uncertain is None]
    v = max(rows, key=lambda r: _vkey(r.torch))
    comp = {"torchvision": v.torchvision or "", "torchaudio": v.torchaudio or "", "rocm": rel.version}
    served = cat.core_sdk_release(kb, rel.version, str(distro))
    pkgs = ((rel.routes.gfx_package.replace("{gfx}", gfx), served.package_version),
            (str(rel.routes.meta_package), served.package_version))
    url = apt.repos[str(distro)].replace("https:/", mirror.rstrip("/"))
    if apt.format == "deb822":
        line = (f"Types: deb\nURIs: {url}\nSuites: {apt.suite}\nComponents: {' '.join(apt.components)}\n"
                f"Signed-By: {apt.keyring}\n")
    else:
        line = f"deb [arch=amd64 signed-by={apt.keyring}] {url} {apt.suite} {' '.join(apt.components)}\n"
    gone = prof.rocm if prof.rocm else None
    return Expect(venv, v.torch, comp, rel.version, None, {SOURCE_FILE[apt.format]: line}, gone, stream="core-sdk",
                  install_path=rel.install_path, installs=(rel.install_path, venv), packages=pkgs, gfx=gfx)


def expect_driver(kb: KnowledgeBase, prof: Profile, mirror: str) -> Expect:
    """The driver plan on a machine without /dev/kfd: the newest Core SDK release's amdgpu-install (31.x) for
    the profile's codename at the version its file name carries, the amdgpu-dkms it installs at the mirror's
    version, AMD's driver repository list naming the mirror, and after the reboot the DKMS driver loaded."""
    from tests.realroot.test_plans_realroot import SOURCE_OPTS, Expect
    from wizard.mirror.driver_catalogue import driver_releases

    assert prof.codename is not None
    rels = [r for r in kb.releases("core-sdk") if r.driver_version and prof.codename in r.amdgpu_install]
    rel = max(rels, key=lambda r: _vkey(r.version))
    url = rel.amdgpu_install[prof.codename]
    directory = url.split("/amdgpu-install/", 1)[1].split("/", 1)[0]
    served = next(d for d in driver_releases(kb, (prof.codename,)) if d.sdk == rel.version)
    pkgs = (("amdgpu-install", url.rsplit("/", 1)[1].split("_")[1]), ("amdgpu-dkms", served.dkms_version))
    line = f"deb {SOURCE_OPTS} {mirror.rstrip('/')}/repo.radeon.com/amdgpu/{directory}/ubuntu {prof.codename} main\n"
    return Expect("", "", {}, None, None, {"amdgpu.list": line}, None, stream="driver", packages=pkgs, driver="dkms")
