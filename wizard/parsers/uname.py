"""``uname -a`` / ``uname -r`` / ``uname -m``: kernel release and machine architecture."""

from __future__ import annotations

from wizard import lazy_re
from wizard.parsers._text import lines, never_raises, prompt_command
from wizard.record import record

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
