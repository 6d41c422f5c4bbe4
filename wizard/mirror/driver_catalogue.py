"""The kernel driver line of the Core SDK era in the rehearsal mirror: AMD's driver-numbered
amdgpu-install (31.x) and the amdgpu-dkms it installs, derived from the knowledge base.

Facts and their sources (``rocm_releases.json``, a Core SDK release's ``driver_version`` and
``amdgpu_install`` per codename, from AMD's 10.0 install page): the package's URL, whose directory
(``31.50``) is the driver's number and whose file name carries the package version
(``31.50.315000-1``). Like the legacy packages, its list names AMD's driver repository
``repo.radeon.com/amdgpu/<directory>/ubuntu <codename> main`` (the legacy line's scheme; the
knowledge base records no other for 31.x) and installs the key ``/etc/apt/keyrings/rocm.gpg`` (here
the mirror's test key). amdgpu-dkms's version is not recorded: the package version stands in, with
``rehearsal`` as the build id. Which ROCm and graphics user-space packages the 31.x use cases pull is
not recorded either: the rehearsal script installs the kernel driver (amdgpu-dkms) for them and
says so; ``--no-dkms`` installs nothing.
"""

from __future__ import annotations

from wizard.kb import KnowledgeBase
from wizard.mirror.catalogue import (BUILD, PLACEHOLDER, RADEON, install_directory,
                                     install_package_version, ubuntu_version)
from wizard.mirror.debs import DebFile, DebSpec
from wizard.record import record

SOURCE_OPTS = "[arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg]"


@record
class DriverRelease:
    sdk: str  # the Core SDK release whose install page names it: "10.0.0"
    driver: str  # "31.50"
    codename: str  # "noble"
    ubuntu: str  # "24.04"
    install_url: str

    @property
    def directory(self) -> str:
        return install_directory(self.install_url, self.sdk)

    @property
    def install_version(self) -> str:
        return install_package_version(self.install_url, self.sdk)

    @property
    def dkms_version(self) -> str:
        return f"1:{self.install_version.split('-', 1)[0]}-{BUILD}~{self.ubuntu}"

    def amdgpu_repo(self) -> str:
        return f"{RADEON}/amdgpu/{self.directory}/ubuntu"


def driver_releases(kb: KnowledgeBase, codenames: tuple[str, ...]) -> tuple[DriverRelease, ...]:
    """Every Core SDK release's amdgpu-install for these Ubuntu codenames (where the KB has one)."""
    out = []
    for rel in kb.releases("core-sdk"):
        if not rel.driver_version:
            continue
        for c in codenames:
            url = rel.amdgpu_install.get(c)
            if url is not None and url.endswith(".deb"):
                out.append(DriverRelease(rel.version, rel.driver_version, c, ubuntu_version(kb, c), url))
    return tuple(out)


AMDGPU_INSTALL = r"""#!/bin/sh
# amdgpu-install (rocm-wizard rehearsal mirror, driver @DRIVER@ of ROCm Core SDK @SDK@): the options of
# AMD's script that the wizard uses, done with the real apt-get and dpkg:
#   -y | --usecase=LIST | --gfxversion=X | --no-dkms | --uninstall | --accept-eula
# The knowledge base does not record which ROCm and graphics packages the 31.x use cases install: here
# every use case installs the kernel driver (amdgpu-dkms) from the list this package wrote, and --no-dkms
# installs nothing. AMD's script also installs linux-headers for the running kernel; a root without a
# kernel has none, so that part is not rehearsed.
set -e
yes=""
dkms=1
uninstall=0
for arg in "$@"; do
  case "$arg" in
    -y|--yes) yes="-y" ;;
    --usecase=*) for u in $(echo "${arg#--usecase=}" | tr ',' ' '); do
        case "$u" in rocm|graphics|dkms|opencl|hip) ;;
          *) echo "amdgpu-install: use case '$u' is not modelled by the rehearsal mirror" >&2; exit 1 ;;
        esac; done ;;
    --gfxversion=*|--accept-eula) ;;
    --no-dkms) dkms=0 ;;
    --uninstall) uninstall=1 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "amdgpu-install: unknown option $arg" >&2; exit 2 ;;
  esac
done
if [ "$uninstall" = 1 ]; then
  if dpkg-query -W -f='${db:Status-Abbrev}' amdgpu-dkms 2>/dev/null | grep -q '^ii'; then
    exec apt-get purge $yes amdgpu-dkms amdgpu-dkms-firmware
  fi
  echo "amdgpu-install: nothing to uninstall"
  exit 0
fi
if [ "$dkms" = 0 ]; then
  echo "amdgpu-install (rehearsal): --no-dkms: no kernel driver; the use cases' user-space packages are not modelled"
  exit 0
fi
apt-get update
exec apt-get install $yes amdgpu-dkms
"""


def amdgpu_install_package(rel: DriverRelease, mirror_of: dict[str, str], keyring: bytes) -> DebSpec:
    """The 31.x amdgpu-install: its postinst writes the driver repository's list and the key, pointing at
    ``mirror_of[RADEON]`` (the mirror URL that stands for https://repo.radeon.com)."""
    base = mirror_of.get(RADEON, RADEON)
    amdgpu = rel.amdgpu_repo().replace(RADEON, base, 1)
    postinst = ('if [ "$1" = configure ]; then\n'
                '  install -d -m 0755 /etc/apt/keyrings /etc/apt/sources.list.d\n'
                '  install -m 0644 /usr/share/amdgpu-install/rocm.gpg /etc/apt/keyrings/rocm.gpg\n'
                f"  echo 'deb {SOURCE_OPTS} {amdgpu} {rel.codename} main' > /etc/apt/sources.list.d/amdgpu.list\n"
                'fi\n')
    postrm = ('if [ "$1" = purge ]; then\n'
              '  rm -f /etc/apt/sources.list.d/amdgpu.list /etc/apt/keyrings/rocm.gpg\nfi\n')
    script = AMDGPU_INSTALL.replace("@DRIVER@", rel.driver).replace("@SDK@", rel.sdk)
    return DebSpec(
        "amdgpu-install", rel.install_version, "all", f"AMDGPU driver {rel.driver} installer (rehearsal placeholder)",
        (PLACEHOLDER, f"amdgpu-install {rel.driver} (ROCm Core SDK {rel.sdk}) for Ubuntu {rel.ubuntu} ({rel.codename}); "
                      f"version and file name from the knowledge base ({rel.install_url}). Its list names the "
                      f"rehearsal mirror ({base}) and its key is the mirror's throwaway test key, not AMD's."),
        section="admin",
        files=(DebFile("/usr/bin/amdgpu-install", script.encode(), 0o755),
               DebFile("/usr/share/amdgpu-install/rocm.gpg", keyring)),
        scripts=(("postinst", postinst), ("postrm", postrm)))


def driver_packages(rel: DriverRelease) -> tuple[DebSpec, ...]:
    """amdgpu-dkms and its firmware in the driver repository; the postinst asks dkms to build as AMD's does."""
    ver = rel.dkms_version
    mod = ver.split(":", 1)[1]
    note = (f"amdgpu-dkms of driver {rel.driver} (ROCm Core SDK {rel.sdk}) for Ubuntu {rel.ubuntu}: its version is not "
            f"recorded in the knowledge base, so amdgpu-install's own version stands in with '{BUILD}' as build id.")
    firmware = DebSpec("amdgpu-dkms-firmware", ver, "all", "firmware for the amdgpu kernel module (rehearsal "
                       "placeholder)", (PLACEHOLDER, note), section="kernel",
                       files=(DebFile(f"/lib/firmware/updates/amdgpu/REHEARSAL-PLACEHOLDER-{rel.driver}.txt",
                                      b"rehearsal placeholder: no firmware\n"),))
    dkms = DebSpec(
        "amdgpu-dkms", ver, "all", "amdgpu kernel module, built by DKMS (rehearsal placeholder)",
        (PLACEHOLDER, note, "AMD's package depends on dkms; the rehearsal root has a stand-in dkms, so that "
                            "dependency is left out."),
        depends=(f"amdgpu-dkms-firmware (= {ver})",), section="kernel",
        files=(DebFile(f"/usr/src/amdgpu-{mod}/dkms.conf",
                       f'PACKAGE_NAME="amdgpu"\nPACKAGE_VERSION="{mod}"\nAUTOINSTALL="yes"\n'.encode()),
               DebFile(f"/usr/src/amdgpu-{mod}/REHEARSAL-PLACEHOLDER", b"no kernel sources in the rehearsal\n")),
        scripts=(("postinst", 'if [ "$1" = configure ]; then\n'
                              f'  dkms add -m amdgpu -v {mod}\n  dkms build -m amdgpu -v {mod}\n'
                              f'  dkms install -m amdgpu -v {mod}\nfi\n'),
                 ("prerm", 'case "$1" in remove|upgrade|deconfigure)\n'
                           f'  dkms remove -m amdgpu -v {mod} --all || true ;;\nesac\n')))
    return firmware, dkms, *kernel_headers()


def kernel_headers(kernel: str | None = None) -> tuple[DebSpec, ...]:
    """Stand-ins for the distribution's headers packages of the running kernel, which AMD's driver-only install
    asks for (``linux-headers-$(uname -r)``, ``linux-modules-extra-$(uname -r)``): a rehearsal root reaches no
    distribution archive and shares the host's kernel, so the mirror serves placeholders of that kernel's name."""
    import os

    k = kernel or os.uname().release
    note = (f"Stands in for the distribution's package of kernel {k}'s headers (the rehearsal root's uname -r) in "
            "the rehearsal mirror; it holds no headers: the root's dkms is a stand-in.")
    return tuple(DebSpec(f"{name}-{k}", "0.rehearsal", "all", f"{what} of kernel {k} (rehearsal placeholder)",
                         (PLACEHOLDER, note), section="kernel",
                         files=(DebFile(f"/usr/share/doc/{name}-{k}/REHEARSAL-PLACEHOLDER", b"no files\n"),))
                 for name, what in (("linux-headers", "headers"), ("linux-modules-extra", "extra modules")))
