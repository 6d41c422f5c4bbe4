"""Operating system: os-release, kernel, architecture, package manager, Secure Boot."""

from __future__ import annotations

import os

from wizard import lazy_re
from wizard.host import Host
from wizard.model import REDHAT_FAMILY, Evidence, OsInfo
from wizard.parsers.os_release import parse_os_release
from wizard.parsers.uname import parse_uname

# EFI global variable GUID; the last byte of SecureBoot-<guid> is 1 when Secure Boot is on.
_SB_VAR = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"


def _secure_boot(host: Host) -> bool | None:
    text = host.captured("mokutil.txt")
    if text:
        low = text.lower()
        if "secureboot enabled" in low:
            return True
        if "secureboot disabled" in low:
            return False
    data = host.read_text(_SB_VAR, 64)
    if data:
        return data[-1] == "\x01"
    if host.is_live and not host.exists("/sys/firmware/efi"):
        return False  # legacy BIOS boot: no Secure Boot
    return None

# collect_env's "OS:" line -> (os-release ID, how many version parts that distro's VERSION_ID has)
_COLLECT_ENV_OS = (
    (lazy_re.compile(r"^Ubuntu (\d+\.\d+)"), "ubuntu", ("debian",)),
    (lazy_re.compile(r"^Debian GNU/Linux (\d+)"), "debian", ()),
    (lazy_re.compile(r"^Fedora(?: Linux)? (\d+)"), "fedora", ()),
    (lazy_re.compile(r"^Red Hat Enterprise Linux(?: Server)? (\d+\.\d+)"), "rhel", ("fedora",)),
    (lazy_re.compile(r"^Rocky Linux (\d+\.\d+)"), "rocky", ("rhel", "fedora")),
    (lazy_re.compile(r"^AlmaLinux (\d+\.\d+)"), "almalinux", ("rhel", "fedora")),
    (lazy_re.compile(r"^openSUSE Tumbleweed"), "opensuse-tumbleweed", ("suse",)),
    (lazy_re.compile(r"^openSUSE Leap (\d+\.\d+)"), "opensuse-leap", ("suse",)),
    (lazy_re.compile(r"^SUSE Linux Enterprise Server (\d+)"), "sles", ("suse",)),
    (lazy_re.compile(r"^Arch Linux"), "arch", ()),
    (lazy_re.compile(r"^Gentoo"), "gentoo", ()),
    (lazy_re.compile(r"^Linux Mint (\d+(?:\.\d+)?)"), "linuxmint", ("ubuntu", "debian")),
    (lazy_re.compile(r"^Pop!_OS (\d+\.\d+)"), "pop", ("ubuntu", "debian")),
)


def os_from_collect_env(line: str | None) -> tuple[str | None, str | None, tuple[str, ...]]:
    """"Ubuntu 22.04.4 LTS (x86_64)" -> ("ubuntu", "22.04", ("debian",))."""
    if not line:
        return None, None, ()
    for pattern, os_id, like in _COLLECT_ENV_OS:
        m = pattern.match(line.strip())
        if m:
            return os_id, (m.group(1) if m.groups() else None), like
    return None, None, ()


def _package_manager(host: Host, os_id: str | None, like: tuple[str, ...]) -> str | None:
    family = {os_id or "", *like}
    if host.exists("/var/lib/dpkg/status") or host.captured("dpkg.txt") or family & {"debian", "ubuntu"}:
        return "apt"
    # SUSE's rpm -qa is zypper's system: the family (or a zypper listing) is asked before an rpm list
    if host.captured("zypper.txt") or family & {"suse", "sles", "opensuse", "opensuse-leap", "opensuse-tumbleweed"}:
        return "zypper"
    if host.captured("rpm.txt") or family & REDHAT_FAMILY:
        return "dnf"
    if host.captured("pacman.txt") or family & {"arch"}:
        return "pacman"
    return None


def probe_os(host: Host) -> OsInfo:
    sources: list[Evidence] = []
    text = host.read_text("/etc/os-release")
    src = "/etc/os-release"
    if text is None:
        text = host.read_text("/usr/lib/os-release")
        src = "/usr/lib/os-release"
    if text is None:
        text, src = host.captured("os-release.txt"), "os-release.txt"
    rel = parse_os_release(text)
    os_id, version, like, pretty = rel.id, rel.version_id, rel.id_like, rel.pretty_name
    if text:
        sources.append(Evidence(src, None, rel.pretty_name))
    elif (ce_text := host.captured("collect_env.txt")):
        from wizard.parsers.collect_env import parse_collect_env

        ce_os = parse_collect_env(ce_text).os
        os_id, version, like = os_from_collect_env(ce_os)
        if os_id:
            pretty = ce_os
            sources.append(Evidence("collect_env.txt", None, f"OS: {ce_os}"))
    kernel = arch = None
    uname_text = host.captured("uname.txt")
    if uname_text:
        u = parse_uname(uname_text)
        kernel, arch = u.kernel_release, u.arch
        sources.append(Evidence("uname.txt", u.line or None, kernel))
    elif host.is_live and host.name == "live":
        u2 = os.uname()
        kernel, arch = u2.release, u2.machine
        sources.append(Evidence("uname", None, kernel))
    elif host.is_live:  # sandbox: its recorded kernel
        kernel = (host.read_text("/proc/sys/kernel/osrelease", 256) or "").strip() or None
        arch = os.uname().machine
    return OsInfo(
        id=os_id, version=version, codename=rel.version_codename, kernel=kernel,
        like=like, pretty_name=pretty, arch=arch,
        package_manager=_package_manager(host, os_id, like),
        secure_boot=_secure_boot(host), ostree=_ostree(host, rel.get("OSTREE_VERSION"), bool(text)),
        sources=tuple(sources),
    )


def _ostree(host: Host, ostree_version: str | None, read: bool) -> bool | None:
    """An ostree system (Fedora Silverblue/Kinoite, CoreOS, their derivatives): rpm-ostree writes OSTREE_VERSION into
    the os-release of the trees it composes, and ostree marks a booted deployment with /run/ostree-booted. Neither
    read (no os-release): not known."""
    if ostree_version or (host.is_live and host.exists("/run/ostree-booted")):
        return True
    return False if read else None
