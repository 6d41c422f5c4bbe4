"""``uname -a`` / ``uname -r`` / ``uname -m``: kernel release and machine architecture."""

from __future__ import annotations


from wizard import lazy_re
from wizard.parsers._text import lines, never_raises, prompt_command
from wizard.record import record

TYPE_CHECKING = False  # typing's, not imported at run time (wizard/record.py says why)
if TYPE_CHECKING:  # packaging.version costs ~25 ms to import (its pattern); detect reaches it only for a series
    from packaging.version import Version

_RELEASE_RE = lazy_re.compile(r"^\d+\.\d+(?:\.\d+)?[\w.+~-]*$")
_ARCHES = frozenset(
    {"x86_64", "aarch64", "arm64", "ppc64le", "ppc64", "s390x", "riscv64", "i686", "i586", "i386",
     "armv7l", "armv6l", "loongarch64", "mips64"}
)


@record
class Uname:
    kernel_name: str | None = None  # "Linux"
    hostname: str | None = None
    kernel_release: str | None = None  # "6.8.0-48-generic"
    kernel_version: str | None = None  # "#48~22.04.1-Ubuntu SMP PREEMPT_DYNAMIC ..."
    arch: str | None = None  # "x86_64"
    line: int = 0


@never_raises(Uname)
def parse_uname(text: object) -> Uname:
    release_only: tuple[int, str] | None = None
    arch_only: str | None = None
    for no, line in lines(text):
        s = line.strip()
        if not s or prompt_command(s) is not None and not s.startswith("Linux "):
            continue
        tokens = s.split()
        if len(tokens) >= 3 and tokens[0] in ("Linux", "GNU/Linux") and _RELEASE_RE.match(tokens[2]):
            arch = next((t for t in reversed(tokens[3:]) if t in _ARCHES), None)
            version = None
            if len(tokens) > 3:
                tail = tokens[3:]
                while tail and (tail[-1] in _ARCHES or tail[-1] in ("GNU/Linux", "unknown")):
                    tail = tail[:-1]
                version = " ".join(tail) or None
            return Uname(tokens[0], tokens[1], tokens[2], version, arch, no)
        if len(tokens) == 2 and tokens[0] == "Linux" and _RELEASE_RE.match(tokens[1]) and release_only is None:
            release_only = (no, tokens[1])  # uname -s -r
        elif len(tokens) == 1 and _RELEASE_RE.match(tokens[0]) and release_only is None:
            release_only = (no, tokens[0])
        elif len(tokens) == 1 and tokens[0] in _ARCHES and arch_only is None:
            arch_only = tokens[0]
    if release_only or arch_only:
        no, release = release_only if release_only else (0, None)
        return Uname(kernel_release=release, arch=arch_only, line=no)
    return Uname()


# Kernel releases that name the distribution that built them, and the distributions (os-release IDs) that run
# that build as their own kernel. A Debian kernel is "6.1.0-18-amd64" (LMDE runs Debian's), Proxmox VE's "6.8.12-4-pve"
# (its os-release says debian), Arch's "6.17.7-arch1-1" (EndeavourOS runs Arch's), Fedora's "6.11.4-301.fc41.x86_64",
# the Enterprise Linux rebuilds' "4.18.0-553.8.1.el8_10.x86_64", Ubuntu's archive kernels "6.8.0-45-generic" (not
# kernel.ubuntu.com's mainline builds, "6.18.7-061807-generic", which users of any distribution install).
_UBUNTU_ARCHIVE_KERNEL = lazy_re.compile(r"^\d+\.\d+\.\d+-\d{1,3}-(?:generic|lowlatency)$")
_KERNEL_BUILDERS: tuple[tuple[lazy_re.Pattern, frozenset[str]], ...] = (
    (lazy_re.compile(r"^\d+\.\d+\.\d+-\d+(?:-cloud)?-amd64$|\+deb\d+"), frozenset({"debian", "linuxmint"})),
    (lazy_re.compile(r"^\d+\.\d+\.\d+-\d+-pve$"), frozenset({"debian"})),
    (lazy_re.compile(r"^\d+\.\d+(?:\.\d+)?-arch\d+-\d+$"), frozenset({"arch", "endeavouros"})),
    (lazy_re.compile(r"\.fc\d{2}\.(?:x86_64|aarch64)$"), frozenset({"fedora"})),
    (lazy_re.compile(r"\.el\d+(?:_\d+)?\.(?:x86_64|aarch64)$"), frozenset({"rhel", "rocky", "almalinux", "centos", "ol"})),
    (_UBUNTU_ARCHIVE_KERNEL, frozenset({"ubuntu", "pop", "linuxmint"})),
)


# Each Ubuntu LTS release's GA kernel series, the oldest it runs (its HWE kernels are newer): Canonical's Livepatch
# kernel table, https://ubuntu.com/security/livepatch/docs/kernels
_UBUNTU_GA_KERNEL = {"18.04": "4.15", "20.04": "5.4", "22.04": "5.15", "24.04": "6.8", "26.04": "7.0"}
_SERIES = lazy_re.compile(r"^(\d+\.\d+)")


def kernel_series(release: str | None) -> Version | None:
    """The series of a kernel release ("6.12.101+deb13-amd64" -> 6.12), None where it names none."""
    numbers = _series_numbers(release)
    if numbers is None:
        return None
    from packaging.version import Version

    return Version("%d.%d" % numbers)


def kernel_of_another_distribution(os_id: str | None, kernel: str | None, os_version: str | None = None) -> bool:
    """True where the kernel release names the distribution that built it and the OS is another of the distributions
    above (one known to run its own builder's kernel), or an Ubuntu LTS userland runs an Ubuntu kernel older than
    that release's own (24.04 on 5.15.0-119-generic): the userland (a container's os-release, collect_env's "OS")
    sits on another system's kernel. A distribution not above (KDE neon, Zorin: Ubuntu's kernel) is never judged."""
    if not os_id or not kernel or not any(os_id in runs_it for _, runs_it in _KERNEL_BUILDERS):
        return False
    if any(pattern.search(kernel) and os_id not in runs_it for pattern, runs_it in _KERNEL_BUILDERS):
        return True
    ga = _UBUNTU_GA_KERNEL.get(os_version or "") if os_id == "ubuntu" else None
    series = _series_numbers(kernel) if ga is not None and _UBUNTU_ARCHIVE_KERNEL.match(kernel) else None
    ga_series = _series_numbers(ga) if series is not None else None
    return series is not None and ga_series is not None and series < ga_series


def _series_numbers(release: str | None) -> tuple[int, int] | None:
    """A kernel release's series as numbers ("6.12.101+deb13-amd64" -> (6, 12)): detect compares these without
    importing packaging.version; kernel_series gives diagnose the same as a Version."""
    m = _SERIES.match(release or "")
    if m is None:
        return None
    major, minor = m.group(1).split(".")
    return int(major), int(minor)
