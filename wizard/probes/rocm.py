"""Installed ROCm of both streams, the packages that belong to it, and AMD's repositories.

* legacy: ``/opt/rocm-X.Y.Z`` (``.info/version``), ``rocm-core`` / ``amdgpu-install`` packages;
* core-sdk (ROCm 7.14 / 10.x, "TheRock"): ``/opt/rocm/core*``, ``amdrocm-*`` packages;
* distro: ROCm packages built by the distribution (Debian/Ubuntu/Fedora), e.g. ``rocminfo 5.7.1-3``;
* pip: ``rocm`` / ``_rocm_sdk_*`` inside a Python environment (added by detect from the envs).
"""

from __future__ import annotations

import re

from wizard import lazy_re
from wizard.host import Host
from wizard.model import Evidence, Rocm, RocmInstall
from wizard.parsers._text import ascii_number
from wizard.record import record

_ROCM_PKG = lazy_re.compile(
    r"^(rocm|hip|hsa|roc[a-z]|miopen|amdgpu-install|amdgpu-dkms|amdgpu-core|amdrocm|comgr|openmp-extras|"
    r"rccl|migraphx|mivisionx|rpp|composablekernel|half$|llvm-amdgpu|amd-smi|hipblaslt|hipsparselt|"
    r"rdc$|rvs$|mesa-amdgpu|"
    # Debian's and Ubuntu's own ROCm libraries (libamdhip64-5, libhsa-runtime64-1, librocblas0, libhipblas0 ...)
    r"libamdhip|libhsa-runtime|libhsakmt|libroc[a-z]|libhip[a-z]|libamd-comgr|librccl|libmiopen)",
)
# a literal start: re finds it fast; MULTILINE: a whole name (rdc$) ends at its line, not at the end of the file
_ROCM_STANZA = lazy_re.compile("\nPackage: " + _ROCM_PKG.pattern[1:], re.MULTILINE)
_AMD_BUILD = lazy_re.compile(r"\.[5-9]\d{4}(?:-|$)|~\d\d\.\d\d|\.el\d|\.sle\d")  # 6.2.0.60200-66~22.04
_CORE_DIR = lazy_re.compile(r"^core(?:-(\d+(?:\.\d+)*))?$")
_VERSION = lazy_re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")
_PKG_CODE = lazy_re.compile(r"\.(\d)(\d{2})(\d{2})-")  # 6.2.0.60200-66 -> 6, 02, 00
# The Core SDK names a versioned package <name><major.minor>, a device package adding -<gfx> ("amdrocm-core10.1",
# "amdrocm10.1-gfx1100", "amdrocm-core-sdk10.1"): ROCm/TheRock@430a8a89 build_tools/packaging/linux/
# packaging_utils.py update_package_name, as the knowledge base's 10.1.0 record (rocm_releases.json) says
_SERIES_NAME = lazy_re.compile(r"^amdrocm[a-z-]*(\d+)\.(\d+)(?:-|$)")


@record
class Package:
    name: str
    version: str
    source: str
    line: int | None = None


def _short_version(text: str | None) -> str | None:
    """"6.2.0-66" / "6.2.60200" / "6.2.0.60200-66~22.04" -> "6.2.0"."""
    if not text:
        return None
    m = _PKG_CODE.search(text + "-")
    if m:
        return f"{int(m.group(1))}.{int(m.group(2))}.{int(m.group(3))}"
    m = re.search(r"(\d+)\.(\d+)\.(\d)(\d{2})(\d{2})\b", text)  # 6.2.60204 (amdgpu-install style)
    if m and int(m.group(3)) == int(m.group(1)):
        return f"{m.group(1)}.{int(m.group(4))}.{int(m.group(5))}"
    m = _VERSION.search(text)
    if not m:
        return None
    return ".".join(g for g in m.groups() if g is not None)


def _core_sdk_version(pkgs: list[Package]) -> str | None:
    """The Core SDK release its versioned packages name: the version column ("10.1.0-12" -> "10.1.0") where it is
    of the series the name carries, else the series alone ("10.1", as an /opt/rocm/core-10.1 folder without its
    .info/version reads); the newest series where several are installed. None where no name carries one."""
    best: tuple[tuple[int, int], bool, str] | None = None
    for p in pkgs:
        m = _SERIES_NAME.match(p.name)
        if not m:
            continue
        series = (int(m.group(1)), int(m.group(2)))
        named = f"{series[0]}.{series[1]}"
        full = _short_version(p.version)
        version = full if full and full.startswith(named + ".") else named
        key = (series, version != named, version)
        if best is None or key[:2] > best[:2]:
            best = key
    return best[2] if best else None


def _relevant_stanzas(status: str) -> str:
    """Only the dpkg status stanzas of ROCm/amdgpu packages: a desktop's file has thousands."""
    keep = []
    status = "\n" + status
    kept_to = 0  # a stanza inside the text kept already (stanzas not parted by "\n\n") is not kept twice
    for m in _ROCM_STANZA.finditer(status):
        start = m.start() + 1
        if start < kept_to:
            continue
        end = status.find("\n\n", start)
        kept_to = len(status) if end < 0 else end
        keep.append(status[start:kept_to])
    return "\n\n".join(keep) + "\n"


_PACMAN_LOCAL = "/var/lib/pacman/local"
_PACMAN_ENTRY = lazy_re.compile(r"^(.+)-((?:\d+:)?[^-]+-[^-]+)$")


def read_packages(host: Host) -> list[Package]:
    """Installed packages related to ROCm/amdgpu, from dpkg's status file, dpkg.txt, rpm.txt, pacman.txt or zypper.txt."""
    pkgs: list[Package] = []
    status = host.read_text("/var/lib/dpkg/status", limit=64 << 20)
    if status or host.captured("dpkg.txt"):
        from wizard.parsers.dpkg import parse_dpkg
    else:
        from wizard.parsers.rpm import parse_rpm
    if status:
        # the text kept runs from a ROCm stanza to the next "\n\n": where stanzas part otherwise (CRLF ends, a blank
        # line holding a space) it holds others too, so each name is tested again, by the same pattern (one compiled)
        return [Package(p.name, p.version or "", "/var/lib/dpkg/status", None)
                for p in parse_dpkg(_relevant_stanzas(status))
                if p.installed and _ROCM_STANZA.match(f"\nPackage: {p.name}")]
    if (text := host.captured("dpkg.txt")):
        pkgs = [Package(p.name, p.version or "", "dpkg.txt", p.line) for p in parse_dpkg(text) if p.installed]
    elif (text := host.captured("rpm.txt")):
        pkgs = [Package(p.name, p.version_release, "rpm.txt", p.line) for p in parse_rpm(text)]
    elif (text := host.captured("pacman.txt")):
        from wizard.parsers.pacman import parse_pacman
        pkgs = [Package(p.name, p.version, "pacman.txt", p.line) for p in parse_pacman(text)]
    elif (text := host.captured("zypper.txt")):
        from wizard.parsers.zypper import parse_zypper
        pkgs = [Package(p.name, p.version, "zypper.txt", p.line) for p in parse_zypper(text)]
    elif (local := [m for n in host.listdir(_PACMAN_LOCAL) if (m := _PACMAN_ENTRY.match(n))]):
        # Arch and derivatives: one directory per installed package, named name-pkgver-pkgrel
        pkgs = [Package(m.group(1), m.group(2), f"{_PACMAN_LOCAL}/{m.group(0)}", None) for m in local]
    elif host.is_live and host.exists("/var/lib/rpm") and host.which("rpm"):
        res = host.run(["rpm", "-qa"], timeout=8.0)
        if res.ok:
            pkgs = [Package(p.name, p.version_release, "rpm -qa", p.line) for p in parse_rpm(res.stdout)]
    return [p for p in pkgs if _ROCM_PKG.match(p.name)]


def _repo_lines(host: Host) -> tuple[str, ...]:
    out: list[str] = []
    files = ["/etc/apt/sources.list"] + [f"/etc/apt/sources.list.d/{n}" for n in host.listdir("/etc/apt/sources.list.d")]
    files += [f"/etc/yum.repos.d/{n}" for n in host.listdir("/etc/yum.repos.d")]
    files += [f"/etc/zypp/repos.d/{n}" for n in host.listdir("/etc/zypp/repos.d")]
    for path in files:
        for line in (host.read_text(path, 1 << 20) or "").splitlines():
            s = line.strip()
            if s and not s.startswith("#") and ("repo.radeon.com" in s or "repo.amd.com" in s):
                out.append(f"{path}: {s}")
    return tuple(out)


def _pins(host: Host) -> tuple[str, ...]:
    out = []
    for name in host.listdir("/etc/apt/preferences.d"):
        text = host.read_text(f"/etc/apt/preferences.d/{name}", 1 << 16) or ""
        if "repo.radeon.com" in text or "repo.amd.com" in text:
            out.append(f"/etc/apt/preferences.d/{name}")
    return tuple(out)


def legacy_dir_version(name: str) -> str | None:
    """The release a legacy /opt folder is named for: "rocm-6.2.4" or "rocm-6.2.4-123" -> "6.2.4", "rocm-5.7" ->
    "5.7"; None for any other name (string tests: /opt is listed by every detect)."""
    if not name.startswith("rocm-"):
        return None
    version, dash, build = name[5:].partition("-")
    parts = version.split(".")
    if (dash and not ascii_number(build)) or len(parts) not in (2, 3) or not all(ascii_number(p) for p in parts):
        return None
    return version


def probe_rocm(host: Host, packages: list[Package]) -> Rocm:
    installs: list[RocmInstall] = []
    primary: str | None = None

    # legacy /opt/rocm-X.Y.Z
    for name in host.listdir("/opt"):
        named = legacy_dir_version(name)
        if not named:
            continue
        path = f"/opt/{name}"
        text = host.read_text(f"{path}/.info/version", 256)
        version = _short_version(text) or named
        ev = Evidence(f"{path}/.info/version", 1, text.strip()) if text else Evidence(path)
        code = "".join(f"{int(x):02d}" for x in version.split(".")[1:3])
        owned = tuple(p.name for p in packages
                      if f"{version.split('.')[0]}{code}" in p.version and not p.name.startswith("amdrocm"))
        installs.append(RocmInstall(version, "legacy", path, "version-file" if text else "path", owned, (ev,)))
    if host.exists("/opt/rocm"):
        target = host.realpath("/opt/rocm")
        if target != "/opt/rocm":
            primary = next((i.version for i in installs if i.path == target), None)
    # Core SDK: /opt/rocm/core, /opt/rocm/core-10.0
    if host.is_dir("/opt/rocm") and host.realpath("/opt/rocm") == "/opt/rocm":
        for name in host.listdir("/opt/rocm"):
            m = _CORE_DIR.match(name)
            if not m:
                continue
            path = f"/opt/rocm/{name}"
            text = host.read_text(f"{path}/.info/version", 256)
            version = _short_version(text) or m.group(1)
            owned = tuple(p.name for p in packages if p.name.startswith("amdrocm"))
            installs.append(RocmInstall(version, "core-sdk", path, "version-file" if text else "path", owned,
                                        (Evidence(path, None, text.strip() if text else None),)))
        if not installs:
            text = host.read_text("/opt/rocm/.info/version", 256)
            if text:
                installs.append(RocmInstall(_short_version(text), "legacy", "/opt/rocm", "version-file",
                                            (), (Evidence("/opt/rocm/.info/version", 1, text.strip()),)))
    # recorded /opt/rocm/.info/version
    recorded = host.captured("rocm-version.txt")
    if recorded and not installs:
        v = _short_version(recorded)
        installs.append(RocmInstall(v, "legacy", None, "version-file", (),
                                    (Evidence("rocm-version.txt", 1, recorded.strip()[:80]),)))
        primary = v
    # packages without an /opt tree we saw (bundles; distro packages)
    by_stream: dict[str, list[Package]] = {}
    for p in packages:
        if p.name.startswith("amdrocm"):
            by_stream.setdefault("core-sdk", []).append(p)
        elif _AMD_BUILD.search(p.version):
            by_stream.setdefault("legacy", []).append(p)
        elif not p.name.startswith("amdgpu"):
            by_stream.setdefault("distro", []).append(p)
    for stream, pkgs in by_stream.items():
        if any(i.stream == stream for i in installs):
            continue
        core = next((p for p in pkgs if p.name in ("rocm-core", "amdrocm-core") or p.name.startswith("rocm-core")), None)
        anchor = core or next((p for p in pkgs if p.name in ("rocminfo", "hip-runtime-amd", "rocm-hip-runtime")), None) \
            or next((p for p in pkgs if p.name.startswith("libhsa-runtime64")), None)  # Debian's, under AMD's rocminfo
        anchored = _short_version(anchor.version) if anchor else None
        if stream == "core-sdk" and anchored is None:
            anchored = _core_sdk_version(pkgs)  # amdrocm-core10.1 10.1.0-12: the names carry the series
        if stream == "legacy" and anchored is None:
            continue  # only amdgpu-install / dkms: no ROCm user space yet
        installs.append(RocmInstall(anchored, stream, None, "package", tuple(p.name for p in pkgs),
                                    tuple(Evidence(p.source, p.line, f"{p.name} {p.version}") for p in pkgs[:3])))
    if primary is None:
        versions = [i for i in installs if i.version and i.stream != "distro"] or [i for i in installs if i.version]
        if len(versions) == 1:
            primary = versions[0].version
        elif versions:
            primary = max(versions, key=lambda i: tuple(int(x) for x in re.findall(r"\d+", i.version or "0"))).version
    primary_stream = next((i.stream for i in installs if i.version == primary), None)
    return Rocm(version=primary, stream=primary_stream, installs=tuple(installs),
                apt_sources=_repo_lines(host), pins=_pins(host))
