"""What the rehearsal mirror serves, derived from the knowledge base so the two cannot drift apart.

Every package and wheel here has the real one's name, version string, dependency shape and file
layout, and none of the real one's software: each says so in its description, and ``import torch``
of a mirror wheel raises an ImportError naming the rehearsal mirror.

Facts and their sources:

* legacy releases (``rocm_releases.json``): the amdgpu-install URL per codename, whose directory
  (``6.2`` for 6.2.0, ``6.2.4``) is also the directory of the ``rocm/apt`` and ``amdgpu`` repositories
  the package's lists name, and whose file name carries AMD's package version (``6.2.60204-1``) and
  release code (``60204``). ROCm packages are versioned ``<component>.<release code>-<build>~<ubuntu>``
  (``rocm-core 6.2.0.60200-66~22.04``: see wizard/probes/rocm.py). AMD's build ids and the component
  versions of hip-runtime-amd, rocminfo and amdgpu-dkms are not in the knowledge base: ``rehearsal``
  stands where the build id goes and the ROCm version stands for the component version; each
  package's description says so. ROCm 7.x's ``amdgpu.list`` names the driver's own numbering (30.x,
  /work/shared/knowledge/facts.md), which the KB does not record per release: the mirror serves the
  driver repository under the ROCm release's directory, as 6.x does.
* ``/opt/rocm`` is an update-alternatives link (``/opt/rocm -> /etc/alternatives/rocm -> /opt/rocm-X.Y.Z``)
  set by rocm-core, and ``/usr/bin/rocminfo`` likewise, as installed systems show; the alternatives'
  priority (the release code here) is not known.
* Core SDK (7.14, 10.0): install paths, meta and per-gfx package names (``amdrocm10.0``,
  ``amdrocm10.0-gfxNNNN``), the repository URL per distro (``ubuntu2404``, ``debian12``) and its suite
  from the release's ``routes`` in ``rocm_releases.json`` (AMD's install pages). Per-gfx packages for
  the release's ``gfx`` targets.
* wheels (``torch_wheels.json``): one set per row and index, one file per Python of the row, with the
  row's local version (``+rocm6.2``); ``torch/version.py`` gives ``hip`` as the ROCm version the row
  records (the real file has the full HIP build string, not in the KB) and ``cuda = None``; rocBLAS
  Tensile file names under ``torch/lib/rocblas/library`` carry the row's gfx list, which is what
  ``wizard.probes.python_envs`` reads. pytorch-triton-rocm is served where the row records its version
  (no row does today). The platform tag (``linux_x86_64``) is not in the KB. Requires-Dist lists only
  what the mirror serves (torch's own pins of filelock, sympy, ... are left out).
* TheRock (``torch_wheels.json`` ``therock``): ``rocm`` (an sdist upstream; a wheel here, so no build
  backend is needed offline), ``rocm-sdk-core``, ``rocm-sdk-libraries``, ``rocm-sdk-device-gfxNNNN`` and
  ``amd-torch-device-gfxNNNN`` for the KB's device targets. The multi-arch index gets the 7.x Core SDK
  release and the KB's ``rocm7.14`` torch rows (the KB does not record which torch AMD's own index
  serves); ``whl-next`` gets the 10.x release and no torch (none recorded).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from wizard.kb import KnowledgeBase, Release, VendorWheel, Wheel
from wizard.mirror.debs import DebFile, DebSpec
from wizard.mirror.wheels import WheelSpec, python_tag
from wizard.record import record

BUILD = "rehearsal"  # stands where AMD's build id goes
PLATFORM = "linux_x86_64"
THEROCK_TAG = f"py3-none-{PLATFORM}"
RADEON = "https://repo.radeon.com"
PLACEHOLDER = ("Rehearsal package of the rocm-wizard local mirror, built from the knowledge base: it has the name, "
               "version scheme, dependencies and file layout of AMD's package and contains none of its software.")


class CatalogueError(ValueError):
    """The knowledge base lacks a fact the mirror needs; one line."""


# ------------------------------------------------------------------------------ legacy releases


def install_directory(install_url: str, release: str) -> str:
    """The amdgpu-install URL's directory ("6.2.4", "31.50"), also its repositories'."""
    m = re.search(r"/amdgpu-install/([^/]+)/", install_url)
    if not m:
        raise CatalogueError(f"rocm_releases.json ({release}): amdgpu-install URL has no directory")
    return m.group(1)


def install_package_version(install_url: str, release: str) -> str:
    """amdgpu-install's own package version, from the file name: "6.2.60204-1"."""
    name = install_url.rsplit("/", 1)[-1]
    m = re.fullmatch(r"amdgpu-install_(.+)_all\.deb", name)
    if not m:
        raise CatalogueError(f"rocm_releases.json ({release}): {name} is not an amdgpu-install .deb")
    return m.group(1)


@record
class LegacyRelease:
    version: str  # "6.2.4"
    codename: str  # "jammy"
    ubuntu: str  # "22.04"
    install_url: str  # the KB's amdgpu-install URL for the codename

    @property
    def directory(self) -> str:
        """"6.2" for 6.2.0, "6.2.4": the amdgpu-install URL's directory, also the repositories'."""
        return install_directory(self.install_url, self.version)

    @property
    def install_version(self) -> str:
        """amdgpu-install's own package version, from the file name: "6.2.60204-1"."""
        return install_package_version(self.install_url, self.version)

    @property
    def code(self) -> str:
        """AMD's release code: "60204"."""
        return self.install_version.split("-", 1)[0].rsplit(".", 1)[-1]

    @property
    def package_version(self) -> str:
        """rocm-core's version in AMD's scheme, with the unknown build id replaced: 6.2.4.60204-rehearsal~22.04."""
        return f"{self.version}.{self.code}-{BUILD}~{self.ubuntu}"

    @property
    def dkms_version(self) -> str:
        return f"1:{self.package_version}"

    @property
    def prefix(self) -> str:
        return f"/opt/rocm-{self.version}"

    def rocm_repo(self) -> str:
        return f"{RADEON}/rocm/apt/{self.directory}"

    def amdgpu_repo(self) -> str:
        return f"{RADEON}/amdgpu/{self.directory}/ubuntu"


def ubuntu_version(kb: KnowledgeBase, codename: str) -> str:
    for r in kb.releases():
        for d in r.distros or ():
            if d.id == "ubuntu" and d.codename == codename:
                return d.version
    raise CatalogueError(f"rocm_releases.json: no release lists Ubuntu {codename!r}, so its version is unknown")


def legacy_release(kb: KnowledgeBase, version: str, codename: str) -> LegacyRelease:
    rel = kb.release(version)
    if rel is None or rel.stream != "legacy":
        raise CatalogueError(f"rocm_releases.json: no legacy release {version}")
    url = rel.amdgpu_install.get(codename)
    if url is None:
        raise CatalogueError(f"rocm_releases.json ({rel.version}): no amdgpu-install package for {codename} "
                             f"(has: {', '.join(sorted(rel.amdgpu_install)) or 'none'})")
    return LegacyRelease(rel.version, codename, ubuntu_version(kb, codename), url)


def _desc(what: str, rel: LegacyRelease, component_known: bool) -> tuple[str, ...]:
    version_note = (f"Version: AMD's scheme <component>.<release code>-<build>~<ubuntu>; AMD's build id is not "
                    f"recorded in the knowledge base, so '{BUILD}' stands in its place")
    if not component_known:
        version_note += f", and the component version of {what} is not recorded either, so the ROCm version stands in"
    return (PLACEHOLDER, f"{what} of ROCm {rel.version} for Ubuntu {rel.ubuntu} ({rel.codename}).", version_note + ".")


def _alternative(link: str, name: str, path: str, priority: str) -> tuple[tuple[str, str], ...]:
    return (
        ("postinst", f'if [ "$1" = configure ]; then\n'
                     f'  update-alternatives --install {link} {name} {path} {priority}\nfi\n'),
        ("prerm", f'case "$1" in remove|upgrade|deconfigure)\n'
                  f'  update-alternatives --remove {name} {path} || true ;;\nesac\n'),
    )


ROCMINFO = r"""#!/bin/sh
# rocminfo (rocm-wizard rehearsal mirror): the GPU stand-in. A root without a kernel has no GPU; this
# prints the agents the KFD topology tree (/sys/class/kfd) describes, in rocminfo's layout.
nodes=/sys/class/kfd/kfd/topology/nodes
if [ ! -d "$nodes" ]; then
  echo "ROCk module is NOT loaded, possibly no GPU devices" >&2
  exit 1
fi
echo "ROCk module is loaded"
echo "HSA Agents"
i=1
for n in $(ls "$nodes" | sort -n); do
  v=$(sed -n 's/^gfx_target_version //p' "$nodes/$n/properties" 2>/dev/null)
  [ -n "$v" ] || v=0
  echo "*******"
  echo "Agent $i"
  echo "*******"
  if [ "$v" -eq 0 ]; then
    echo "  Name:                    CPU"
    echo "  Device Type:             CPU"
  else
    name=$(printf 'gfx%d%x%x' $((v / 10000)) $((v / 100 % 100)) $((v % 100)))
    echo "  Name:                    $name"
    echo "  Marketing Name:          (rehearsal GPU stand-in)"
    echo "  Device Type:             GPU"
    echo "  ISA Info:"
    echo "    ISA 1"
    echo "      Name:                    amdgcn-amd-amdhsa--$name"
  fi
  i=$((i + 1))
done
echo "*** Done ***"
"""


CODE_OBJECTS = 400  # files in the rehearsal hip-runtime-amd


def legacy_rocm_packages(rel: LegacyRelease) -> tuple[DebSpec, ...]:
    """rocm-core, rocminfo, hip-runtime-amd, rocm-hip-runtime and the rocm meta package (the rocm/apt repo)."""
    v, pv, pre = rel.version, rel.package_version, rel.prefix
    major = v.split(".", 1)[0]
    eq = f"(= {pv})"
    core = DebSpec(
        "rocm-core", pv, "amd64", f"ROCm {v} core package (rehearsal placeholder)", _desc("rocm-core", rel, True),
        files=(DebFile(f"{pre}/.info/version", f"{v}\n".encode()),
               DebFile(f"{pre}/lib/librocm-core.so.1", b"rehearsal placeholder: not a shared library\n"),
               DebFile(f"{pre}/include/rocm-core/rocm_version.h",
                       f"/* rehearsal placeholder */\n#define ROCM_VERSION_MAJOR {major}\n".encode())),
        scripts=_alternative("/opt/rocm", "rocm", pre, rel.code))
    rocminfo = DebSpec(
        "rocminfo", pv, "amd64", f"ROCm {v} rocminfo (rehearsal GPU stand-in)", _desc("rocminfo", rel, False),
        depends=(f"rocm-core {eq}",),
        files=(DebFile(f"{pre}/bin/rocminfo", ROCMINFO.encode(), 0o755),),
        scripts=_alternative("/usr/bin/rocminfo", "rocminfo", f"{pre}/bin/rocminfo", rel.code))
    # Like the real runtime, many files (its code objects): dpkg spends real time unpacking them (a
    # placeholder line each), so a crash test can land inside an unpack.
    objects = tuple(DebFile(f"{pre}/lib/hipcc-rehearsal/code-object-{n:03d}.hsaco",
                            f"rehearsal placeholder code object {n} of ROCm {v}\n".encode()) for n in range(CODE_OBJECTS))
    hip = DebSpec(
        "hip-runtime-amd", pv, "amd64", f"HIP runtime of ROCm {v} (rehearsal placeholder)",
        _desc("hip-runtime-amd", rel, False), depends=(f"rocm-core {eq}", f"rocminfo {eq}"),
        files=(DebFile(f"{pre}/lib/libamdhip64.so.{major}", b"rehearsal placeholder: not a shared library\n"),
               DebFile(f"{pre}/bin/hipconfig", b"#!/bin/sh\necho 'hipconfig: rehearsal placeholder' >&2\nexit 1\n",
                       0o755), *objects),
        symlinks=((f"{pre}/lib/libamdhip64.so", f"libamdhip64.so.{major}"),))
    hip_meta = DebSpec(
        "rocm-hip-runtime", pv, "amd64", f"ROCm {v} HIP runtime meta package (rehearsal placeholder)",
        _desc("rocm-hip-runtime", rel, True), depends=(f"hip-runtime-amd {eq}", f"rocminfo {eq}", f"rocm-core {eq}"))
    meta = DebSpec(
        "rocm", pv, "amd64", f"ROCm {v} meta package (rehearsal placeholder)",
        (*_desc("rocm", rel, True), "AMD's rocm meta package depends on the whole SDK; this one on the runtime "
                                    "packages the mirror serves."),
        depends=(f"rocm-hip-runtime {eq}", f"rocminfo {eq}", f"rocm-core {eq}"))
    return core, rocminfo, hip, hip_meta, meta


def legacy_driver_packages(rel: LegacyRelease) -> tuple[DebSpec, ...]:
    """amdgpu-dkms and its firmware (the amdgpu repo). The postinst asks dkms to build as AMD's does; in
    the rehearsal root ``dkms`` is a stand-in that records the build it would have done."""
    ver = rel.dkms_version
    mod = rel.package_version
    firmware = DebSpec(
        "amdgpu-dkms-firmware", ver, "all", "firmware for the amdgpu kernel module (rehearsal placeholder)",
        _desc("amdgpu-dkms-firmware", rel, False), section="kernel",
        files=(DebFile(f"/lib/firmware/updates/amdgpu/REHEARSAL-PLACEHOLDER-{rel.code}.txt",
                       b"rehearsal placeholder: no firmware\n"),))
    dkms = DebSpec(
        "amdgpu-dkms", ver, "all", "amdgpu kernel module, built by DKMS (rehearsal placeholder)",
        (*_desc("amdgpu-dkms", rel, False),
         "AMD's package depends on dkms; the rehearsal root has a stand-in dkms, so that dependency is left out."),
        depends=(f"amdgpu-dkms-firmware (= {ver})",), section="kernel",
        files=(DebFile(f"/usr/src/amdgpu-{mod}/dkms.conf",
                       f'PACKAGE_NAME="amdgpu"\nPACKAGE_VERSION="{mod}"\nAUTOINSTALL="yes"\n'.encode()),
               DebFile(f"/usr/src/amdgpu-{mod}/REHEARSAL-PLACEHOLDER", b"no kernel sources in the rehearsal\n")),
        scripts=(
            ("postinst", 'if [ "$1" = configure ]; then\n'
                         '  if command -v dkms >/dev/null 2>&1; then\n'
                         f'    dkms add -m amdgpu -v {mod}\n'
                         f'    dkms build -m amdgpu -v {mod}\n'
                         f'    dkms install -m amdgpu -v {mod}\n'
                         '  else\n'
                         '    echo "amdgpu-dkms: dkms is not installed; the module was not built" >&2\n'
                         '  fi\nfi\n'),
            ("prerm", 'case "$1" in remove|upgrade|deconfigure)\n'
                      '  if command -v dkms >/dev/null 2>&1; then\n'
                      f'    dkms remove -m amdgpu -v {mod} --all || true\n'
                      '  fi ;;\nesac\n'),
        ))
    return firmware, dkms


AMDGPU_INSTALL = r"""#!/bin/sh
# amdgpu-install (rocm-wizard rehearsal mirror, ROCm @VERSION@): the options of AMD's script that the
# wizard uses, done with the real apt-get and dpkg:
#   -y | --usecase=LIST | --no-dkms | --uninstall [--rocmrelease=all|X.Y.Z] | --list-usecase | --accept-eula
# Use cases modelled: rocm (the rocm meta package), hip (rocm-hip-runtime), dkms (the kernel driver only).
# AMD's script also installs linux-headers/linux-modules-extra for the running kernel; a root without a
# kernel has none, so that part is not rehearsed.
set -e
yes=""
usecase="graphics,opencl,hip"
dkms=1
uninstall=0
release="@VERSION@"
for arg in "$@"; do
  case "$arg" in
    -y|--yes) yes="-y" ;;
    --usecase=*) usecase="${arg#--usecase=}" ;;
    --no-dkms) dkms=0 ;;
    --uninstall) uninstall=1 ;;
    --rocmrelease=*) release="${arg#--rocmrelease=}" ;;
    --accept-eula) ;;
    --list-usecase)
      echo "rocm    (rehearsal: the rocm meta package)"
      echo "hip     (rehearsal: rocm-hip-runtime)"
      echo "dkms    (rehearsal: amdgpu-dkms only)"
      exit 0 ;;
    -h|--help)
      sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "amdgpu-install: unknown option $arg" >&2; exit 2 ;;
  esac
done
installed() {
  for p in "$@"; do
    if dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii'; then echo "$p"; fi
  done
}
if [ "$uninstall" = 1 ]; then
  if [ "$release" != all ] && [ "$release" != "@VERSION@" ]; then
    echo "amdgpu-install: ROCm $release is not installed by this amdgpu-install (@VERSION@)" >&2
    exit 1
  fi
  pkgs=$(installed amdgpu-dkms amdgpu-dkms-firmware rocm-core)
  if [ -z "$pkgs" ]; then
    echo "amdgpu-install: nothing to uninstall"
    exit 0
  fi
  # shellcheck disable=SC2086
  exec apt-get purge $yes $pkgs
fi
pkgs=""
for u in $(echo "$usecase" | tr ',' ' '); do
  case "$u" in
    rocm) pkgs="$pkgs rocm" ;;
    hip) pkgs="$pkgs rocm-hip-runtime" ;;
    dkms) ;;
    *) echo "amdgpu-install: use case '$u' is not modelled by the rehearsal mirror" >&2; exit 1 ;;
  esac
done
if [ "$dkms" = 1 ]; then
  pkgs="amdgpu-dkms $pkgs"
fi
# shellcheck disable=SC2086
exec apt-get install $yes $pkgs
"""


def amdgpu_install_package(rel: LegacyRelease, mirror_of: dict[str, str], keyring: bytes) -> DebSpec:
    """The amdgpu-install package: its postinst writes AMD's two list files and the key, pointing at
    ``mirror_of[RADEON]`` (the mirror URL that stands for https://repo.radeon.com)."""
    base = mirror_of.get(RADEON, RADEON)
    amdgpu = rel.amdgpu_repo().replace(RADEON, base, 1)
    rocm = rel.rocm_repo().replace(RADEON, base, 1)
    opts = "[arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg]"
    postinst = ('if [ "$1" = configure ]; then\n'
                '  install -d -m 0755 /etc/apt/keyrings /etc/apt/sources.list.d\n'
                '  install -m 0644 /usr/share/amdgpu-install/rocm.gpg /etc/apt/keyrings/rocm.gpg\n'
                f"  echo 'deb {opts} {amdgpu} {rel.codename} main' > /etc/apt/sources.list.d/amdgpu.list\n"
                f"  echo 'deb {opts} {rocm} {rel.codename} main' > /etc/apt/sources.list.d/rocm.list\n"
                'fi\n')
    postrm = ('if [ "$1" = purge ]; then\n'
              '  rm -f /etc/apt/sources.list.d/amdgpu.list /etc/apt/sources.list.d/rocm.list '
              '/etc/apt/keyrings/rocm.gpg\nfi\n')
    return DebSpec(
        "amdgpu-install", rel.install_version, "all", f"AMDGPU driver and ROCm {rel.version} installer "
        "(rehearsal placeholder)",
        (PLACEHOLDER, f"amdgpu-install of ROCm {rel.version} for Ubuntu {rel.ubuntu} ({rel.codename}); version and "
                      f"file name from the knowledge base ({rel.install_url}). Its lists name the rehearsal "
                      f"mirror ({base}) and its key is the mirror's throwaway test key, not AMD's."),
        section="admin",
        files=(DebFile("/usr/bin/amdgpu-install", AMDGPU_INSTALL.replace("@VERSION@", rel.version).encode(), 0o755),
               DebFile("/usr/share/amdgpu-install/rocm.gpg", keyring)),
        scripts=(("postinst", postinst), ("postrm", postrm)))


# ------------------------------------------------------------------------------ Core SDK


@record
class CoreSdkRelease:
    version: str  # "10.0.0"
    install_path: str  # "/opt/rocm/core-10.0"
    distro: str  # "debian12", "ubuntu2404": the key of the release's routes.apt.repos
    repo_url: str  # routes.apt.repos[distro], without the trailing slash
    suite: str  # routes.apt.suite
    meta: str  # routes.meta_package: "amdrocm10.0"
    gfx_package: str  # routes.gfx_package: "amdrocm10.0-{gfx}"
    gfx: tuple[str, ...]  # the release's official targets

    @property
    def package_version(self) -> str:
        return f"{self.version}-{BUILD}"

    def repo(self) -> str:
        return self.repo_url


def core_sdk_release(kb: KnowledgeBase, version: str, distro: str) -> CoreSdkRelease:
    rel = kb.release(version)
    if rel is None or rel.stream != "core-sdk" or not rel.install_path:
        raise CatalogueError(f"rocm_releases.json: no Core SDK release {version} with an install_path")
    r = rel.routes
    if r is None or r.apt is None or not r.meta_package or not r.gfx_package or rel.gfx is None:
        raise CatalogueError(f"rocm_releases.json ({version}): routes.apt, meta_package, gfx_package and gfx are "
                             "needed for its rehearsal repository")
    url = r.apt.repos.get(distro)
    if url is None:
        raise CatalogueError(f"rocm_releases.json ({version}): routes.apt.repos has no {distro!r} "
                             f"(has: {', '.join(sorted(r.apt.repos))})")
    return CoreSdkRelease(rel.version, rel.install_path, distro, url.rstrip("/"), r.apt.suite, r.meta_package,
                          r.gfx_package, rel.gfx.official)


def core_sdk_distros(kb: KnowledgeBase, version: str) -> tuple[str, ...]:
    """The distros a Core SDK release has an apt repository for (routes.apt.repos)."""
    rel = kb.release(version)
    apt = rel.routes.apt if rel is not None and rel.routes is not None else None
    return tuple(apt.repos) if apt is not None else ()


def core_sdk_packages(rel: CoreSdkRelease) -> tuple[DebSpec, ...]:
    desc = (PLACEHOLDER, f"ROCm Core SDK {rel.version}: package names from AMD's install pages "
                         "(rocm_releases.json routes); the build part of AMD's version is not recorded, "
                         f"so '{BUILD}' stands in.")
    meta = DebSpec(rel.meta, rel.package_version, "amd64", f"ROCm Core SDK {rel.version} (rehearsal placeholder)",
                   desc, files=(DebFile(f"{rel.install_path}/.info/version", f"{rel.version}\n".encode()),
                                DebFile(f"{rel.install_path}/bin/rocminfo", ROCMINFO.encode(), 0o755)))
    per_gfx = tuple(
        DebSpec(rel.gfx_package.replace("{gfx}", g), rel.package_version, "amd64",
                f"ROCm Core SDK {rel.version} device code for {g} (rehearsal placeholder)", desc, depends=(f"{rel.meta} (= {rel.package_version})",),
                files=(DebFile(f"{rel.install_path}/lib/rocblas/library/TensileLibrary_lazy_{g}.dat",
                               b"rehearsal placeholder\n"),))
        for g in rel.gfx)
    return (meta, *per_gfx)


# ------------------------------------------------------------------------------ wheels


def index_path(url: str) -> str:
    """Where an upstream URL lives in the mirror tree: "download.pytorch.org/whl/rocm6.2"."""
    parts = urlsplit(url)
    return f"{parts.hostname}{parts.path}".rstrip("/")


def _placeholder_init(project: str, version: str) -> bytes:
    return (f'raise ImportError("{project} {version} from the rocm-wizard rehearsal mirror is a placeholder: it has '
            f'the real wheel\'s name, version and file names but no {project} inside")\n').encode()


def _requires_python(pythons: tuple[str, ...]) -> str | None:
    plain = sorted({tuple(int(x) for x in p.rstrip("t").split(".")) for p in pythons})
    return f">={plain[0][0]}.{plain[0][1]}" if plain else None


def torch_wheels(w: Wheel, therock: tuple[str, ...] = ()) -> tuple[WheelSpec, ...]:
    """torch, torchvision, torchaudio (and pytorch-triton-rocm where recorded) for one KB row.

    ``therock``: the device targets a TheRock-style torch offers as ``device-gfxNNNN`` extras (rows
    whose wheel does not bundle ROCm)."""
    local = w.index
    tags = tuple(f"{python_tag(p)}-{PLATFORM}" for p in w.python)
    rp = _requires_python(w.python)
    tv = f"{w.torch}+{local}"
    gfx = w.gfx or ()
    note = (f"Rehearsal wheel of the rocm-wizard local mirror for the knowledge base row torch {w.torch} on "
            f"{w.index_url} (torch_wheels.json); no PyTorch inside.")
    version_py = (f"# rocm-wizard rehearsal mirror: the fields of torch/version.py; hip is the ROCm version the "
                  f"knowledge base records\n__version__ = {tv!r}\ndebug = False\ncuda = None\n"
                  f"git_version = 'unknown (rehearsal mirror)'\nhip = {w.rocm!r}\n").encode()
    files: list[tuple[str, bytes]] = [("torch/__init__.py", _placeholder_init("torch", tv)),
                                      ("torch/version.py", version_py)]
    files += [(f"torch/lib/rocblas/library/TensileLibrary_lazy_{g}.dat", b"rehearsal placeholder\n") for g in gfx]
    requires: list[str] = []
    extras: list[str] = []
    if w.triton:
        requires.append(f"pytorch-triton-rocm=={w.triton}")
    if w.bundles_rocm is False and w.rocm:
        requires.append(f"rocm[libraries,device-all]=={w.rocm}.*")
        for g in therock:
            extras.append(f"device-{g}")
            requires.append(f'amd-torch-device-{g}=={tv}; extra == "device-{g}"')
    out = [WheelSpec("torch", tv, tags, tuple(files), f"torch {tv} (rehearsal placeholder)", rp, tuple(requires),
                     tuple(extras), note)]
    for name, version in (("torchvision", w.torchvision), ("torchaudio", w.torchaudio)):
        if version:
            v = f"{version}+{local}"
            out.append(WheelSpec(name, v, tags, ((f"{name}/__init__.py", _placeholder_init(name, v)),),
                                 f"{name} {v} (rehearsal placeholder)", rp, (f"torch=={tv}",),
                                 tuple(f"device-{g}" for g in therock) if name == "torchvision" else (), note))
    if w.triton:
        v = f"{w.triton}"
        out.append(WheelSpec("pytorch-triton-rocm", v, tags, (("triton/__init__.py", _placeholder_init("triton", v)),),
                             f"pytorch-triton-rocm {v} (rehearsal placeholder)", rp, (), (), note))
    return tuple(out)


def vendor_torch_wheels(v: VendorWheel, therock: tuple[str, ...], pythons: tuple[str, ...] = ()) -> tuple[WheelSpec, ...]:
    """AMD's torch, torchvision and torchaudio of one ``vendor_wheels`` row (versions with their own
    ``+rocmX.Y.Z``), torch offering a ``device-gfxNNNN`` extra per target. The KB does not record the
    Python tags of AMD's files: ``pythons`` are those of the same torch release on PyTorch's own indexes
    (a torch release supports the same Pythons whoever builds it); none known: ``py3-none``."""
    note = (f"Rehearsal wheel of the rocm-wizard local mirror for AMD's torch {v.torch} of ROCm Core SDK {v.sdk} "
            "(torch_wheels.json vendor_wheels); Python tags from the same torch release's upstream rows; "
            "no PyTorch inside.")
    tags = tuple(f"{python_tag(p)}-{PLATFORM}" for p in pythons) or (THEROCK_TAG,)
    version_py = (f"# rocm-wizard rehearsal mirror: the fields of torch/version.py; hip is the Core SDK release the "
                  f"knowledge base records\n__version__ = {v.torch!r}\ndebug = False\ncuda = None\n"
                  f"git_version = 'unknown (rehearsal mirror)'\nhip = {v.sdk!r}\n").encode()
    extras = tuple(f"device-{g}" for g in therock)
    requires = tuple(f'amd-torch-device-{g}=={v.torch}; extra == "device-{g}"' for g in therock)
    out = [WheelSpec("torch", v.torch, tags, (("torch/__init__.py", _placeholder_init("torch", v.torch)),
                                                         ("torch/version.py", version_py)),
                     f"torch {v.torch} (rehearsal placeholder)", None, requires, extras, note)]
    if v.torchvision:
        out.append(WheelSpec("torchvision", v.torchvision, tags,
                             (("torchvision/__init__.py", _placeholder_init("torchvision", v.torchvision)),),
                             f"torchvision {v.torchvision} (rehearsal placeholder)", None, (f"torch=={v.torch}",),
                             extras, note))
    if v.torchaudio:  # the KB pairs one torchaudio with several torch builds: it pins none of them here
        out.append(WheelSpec("torchaudio", v.torchaudio, tags,
                             (("torchaudio/__init__.py", _placeholder_init("torchaudio", v.torchaudio)),),
                             f"torchaudio {v.torchaudio} (rehearsal placeholder)", None, (), (), note))
    return tuple(out)


def therock_device_wheels(torch_version: str, gfx: tuple[str, ...]) -> tuple[WheelSpec, ...]:
    return tuple(
        WheelSpec(f"amd-torch-device-{g}", torch_version, (THEROCK_TAG,),
                  ((f"amd_torch_device_{g}/__init__.py", b""),
                   (f"amd_torch_device_{g}/lib/REHEARSAL-PLACEHOLDER-{g}.txt", b"no device code\n")),
                  f"torch {torch_version} device code for {g} (rehearsal placeholder)")
        for g in gfx)


def therock_sdk_wheels(version: str, gfx: tuple[str, ...]) -> tuple[WheelSpec, ...]:
    """rocm (selector), rocm-sdk-core, rocm-sdk-libraries and rocm-sdk-device-gfxNNNN at one Core SDK version."""
    note = (f"Rehearsal wheel of the rocm-wizard local mirror for ROCm Core SDK {version} (TheRock); no ROCm inside. "
            "Upstream 'rocm' is an sdist that selects its dependencies when built; here it is a wheel.")
    devices = tuple(f"device-{g}" for g in gfx)
    requires = [f"rocm-sdk-core=={version}", f'rocm-sdk-libraries=={version}; extra == "libraries"']
    requires += [f'rocm-sdk-device-{g}=={version}; extra == "device-{g}"' for g in gfx]
    requires += [f'rocm-sdk-device-{g}=={version}; extra == "device-all"' for g in gfx]
    selector = WheelSpec("rocm", version, (THEROCK_TAG,),
                         (("rocm_sdk/__init__.py", _placeholder_init("rocm_sdk", version)),),
                         f"ROCm Core SDK {version} selector (rehearsal placeholder)", None, tuple(requires),
                         ("libraries", "device-all", *devices), note)
    core = WheelSpec("rocm-sdk-core", version, (THEROCK_TAG,),
                     (("_rocm_sdk_core/__init__.py", b""),
                      ("_rocm_sdk_core/.info/version", f"{version}\n".encode())),
                     f"ROCm Core SDK {version} core (rehearsal placeholder)", description=note)
    libs = WheelSpec("rocm-sdk-libraries", version, (THEROCK_TAG,), (("_rocm_sdk_libraries/__init__.py", b""),),
                     f"ROCm Core SDK {version} libraries (rehearsal placeholder)", description=note)
    dev = tuple(WheelSpec(f"rocm-sdk-device-{g}", version, (THEROCK_TAG,),
                          ((f"rocm_sdk_device_{g}/__init__.py", b""),
                           (f"rocm_sdk_device_{g}/lib/rocblas/library/TensileLibrary_lazy_{g}.dat",
                            b"rehearsal placeholder\n")),
                          f"ROCm Core SDK {version} device code for {g} (rehearsal placeholder)", description=note)
                for g in gfx)
    return (selector, core, libs, *dev)


@record
class WheelIndex:
    url: str  # upstream index URL
    wheels: tuple[WheelSpec, ...]


def wheel_indexes(kb: KnowledgeBase, rows: tuple[Wheel, ...] | None = None) -> tuple[WheelIndex, ...]:
    """Every index the mirror serves, with its wheels: each KB row on its own index, and TheRock's."""
    rows = kb.wheels() if rows is None else rows
    tr = kb.therock()
    gfx = tr.device_extras if tr else ()
    core = {r.version: r for r in kb.releases("core-sdk")}
    by_index: dict[str, list[WheelSpec]] = {}
    sdk_for_index: dict[str, str] = {}
    for w in rows:
        sdk = _core_release_for(core, w.rocm) if w.bundles_rocm is False else None
        specs = torch_wheels(w, gfx if sdk else ())
        by_index.setdefault(w.index_url.rstrip("/"), []).extend(specs)
        if sdk is not None:
            sdk_for_index[w.index_url.rstrip("/")] = sdk.version
            by_index[w.index_url.rstrip("/")].extend(therock_device_wheels(specs[0].version, gfx))
    if tr is not None:
        seven = sorted((r for r in core.values() if r.version.startswith("7.")), key=lambda r: _vkey(r.version))
        ten = sorted((r for r in core.values() if r.version.startswith("10.")), key=lambda r: _vkey(r.version))
        multi = tr.multi_arch_index.rstrip("/")
        if seven:
            sdk_for_index[multi] = seven[-1].version
            by_index.setdefault(multi, [])
        if ten and tr.rocm10_index:
            sdk_for_index[tr.rocm10_index.rstrip("/")] = ten[-1].version
            by_index.setdefault(tr.rocm10_index.rstrip("/"), [])
    sdk_versions: dict[str, set[str]] = {url: {version} for url, version in sdk_for_index.items()}
    def served_gfx(url: str) -> tuple[str, ...]:
        """The documented extras, plus the device packages TheRock's manifest publishes on this index."""
        ix = kb.wheel_index(url)
        return tuple(dict.fromkeys((*gfx, *(kb.published_devices(ix) if ix is not None else ()))))

    for v in kb.vendor_wheels():  # AMD's own torch builds on the AMD index each row names, with their SDK's wheels
        ix = kb.wheel_index(v.index)
        if ix is None:
            continue
        url = ix.url.rstrip("/")
        served = by_index.setdefault(url, [])
        have = {(w.name, w.version) for w in served}
        pythons = next((w.python for w in kb.wheels() if w.torch == v.torch.split("+")[0]), ())
        targets = served_gfx(url)
        for spec in (*vendor_torch_wheels(v, targets, pythons), *therock_device_wheels(v.torch, targets)):
            if (spec.name, spec.version) not in have:
                have.add((spec.name, spec.version))
                served.append(spec)
        sdk_versions.setdefault(url, set()).add(v.sdk)
    for url, versions in sdk_versions.items():
        for version in sorted(versions, key=_vkey):
            by_index[url].extend(therock_sdk_wheels(version, served_gfx(url)))
    return tuple(WheelIndex(url, tuple(specs)) for url, specs in sorted(by_index.items()))


def _vkey(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v))


def _core_release_for(core: dict[str, Release], rocm: str | None) -> Release | None:
    if not rocm:
        return None
    hits = [r for v, r in core.items() if v == rocm or v.startswith(rocm + ".")]
    return max(hits, key=lambda r: _vkey(r.version)) if hits else None
