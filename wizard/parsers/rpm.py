"""``rpm -qa`` output: NEVRA lines such as ``rocm-smi-lib-7.4.0.60300-39.el9.x86_64``; and ``dnf list`` / ``yum list``
rows, ``name.arch  [epoch:]version-release  repo`` in columns (rpm-software-management/dnf
5ad76abc97a6b82a70ddc828d2286a47567eff7f dnf/cli/output.py, Output.simpleList: ``na = '%s.%s' % (name, arch)``, then
``pkg.evr`` and ``pkg._from_repo``, "@repo" for an installed one)."""

from __future__ import annotations

from wizard import lazy_re
from wizard.parsers._text import lines, never_raises
from wizard.record import record

_ARCHES = frozenset(
    {"x86_64", "noarch", "i686", "i386", "aarch64", "ppc64le", "s390x", "src", "armv7hl", "riscv64"}
)
_TOKEN_RE = lazy_re.compile(r"^[A-Za-z0-9_+.:~^-]+$")
_DNF_ROW_RE = lazy_re.compile(r"^([A-Za-z0-9_+.-]+)\.([a-z0-9_]+)\s+(?:(\d+):)?([A-Za-z0-9_+.~^]+)-([A-Za-z0-9_+.~^]+)\s+(@?)\S+\s*$")
# dnf list's sections: only an installed package's row names its repo with "@"; a row without it is one the repos offer
# (under "Available Packages", or any row of `dnf list | grep ...`), read only under an "Installed Packages" heading
_DNF_SECTION_RE = lazy_re.compile(r"^([A-Z][a-z]*(?: [A-Z]?[a-z]+)*) [Pp]ackages\s*$")


@record
class RpmPackage:
    name: str
    version: str
    release: str
    arch: str | None
    epoch: str | None = None
    line: int = 0

    @property
    def version_release(self) -> str:
        return f"{self.version}-{self.release}"


@never_raises(tuple)
def parse_rpm(text: object) -> tuple[RpmPackage, ...]:
    out: list[RpmPackage] = []
    installed_section = False
    for no, line in lines(text):
        s = line.strip()
        if (section := _DNF_SECTION_RE.match(s)) is not None:
            installed_section = section.group(1).lower() == "installed"
            continue
        row = _DNF_ROW_RE.match(s)
        if row and row.group(2) in _ARCHES:
            name, arch, epoch, version, release, at = row.groups()
            if at or installed_section:
                out.append(RpmPackage(name, version, release, arch, epoch, no))
            continue
        if not s or " " in s or not _TOKEN_RE.match(s):
            continue
        arch = None
        head, dot, tail = s.rpartition(".")
        if dot and tail in _ARCHES:
            s, arch = head, tail
        parts = s.rsplit("-", 2)
        if len(parts) != 3 or not all(parts):
            continue
        name, version, release = parts
        epoch = None
        if ":" in version:
            epoch, version = version.split(":", 1)
        if not version[:1].isalnum() or not release[:1].isalnum():
            continue
        out.append(RpmPackage(name, version, release, arch, epoch, no))
    return tuple(out)
