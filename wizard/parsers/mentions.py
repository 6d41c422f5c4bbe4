"""Facts that any text states in passing: a log line, an error, a path, a banner, a command line.

Structured tool outputs have their own parsers; this module reads what the rest of a paste says
about the machine, line by line, and only where the line really says it:

* the GPU: runtime gfx in device contexts (``gcnArchName='gfx1100'``, ``gpu_type=gfx1030``, MIOpen's
  ``gfx1030_36.ukdb``, a ``TensileLibrary_lazy_gfx1031.dat`` the runtime could not read, the device
  list of ``hipErrorNoBinaryForGpu``, ``Gfx Major/Minor/Stepping: 10/3/0``...), the hardware's gfx
  (``gfx_target_version 110000`` in any layout, SMI tools' ``GFX Version``), PCI ids, names and
  codenames (resolved against the knowledge base by the caller), BDFs, device indexes and counts;
* the software: ROCm versions (install paths, package lines of apt/dpkg/rpm/pacman, compiler banners,
  build paths), torch versions (banners, pip output, site-packages paths), Python versions;
* the settings: variables assigned on command lines, ``export`` lines, container flags, server logs;
* the system: kernel release, WSL, containers, an ``amdgpu-pro`` runtime, the kernel driver's and
  the runtime's own words about ``/dev/kfd``.

A gfx printed as part of a list (a wheel's arch list, ``PYTORCH_ROCM_ARCH``, "Available code
objects") is never taken for the GPU's. Nothing here resolves or guesses; each Mention carries the
line that said it.
"""

from __future__ import annotations

import re
from typing import Callable

from wizard import lazy_re
from wizard.model import GFX_TARGET
from wizard.parsers._text import LABELS_LINE, heading_title, lines, never_raises
from wizard.parsers.rocminfo import ROCK_LINE
from wizard.record import record

_GFX_RE = lazy_re.compile(rf"\b({GFX_TARGET})\b")


@record
class Mention:
    kind: str  # see KINDS
    value: str
    line: int  # 1-based line in the text read
    text: str  # that line, stripped and cut to 240 characters
    detail: str | None = None  # device index or BDF, an env path, how a version was stated...


KINDS = (
    "gfx_hw", "gfx_rt", "pci_id", "gpu_name", "bdf", "gpu_index", "gpu_count", "apu",
    "rocm", "torch", "python_version", "env", "kernel", "wsl", "container", "amdgpu_pro",
    "rock", "driver_bound", "kfd", "kfd_added", "render_group", "video_group", "driver_version", "dkms", "in_tree",
    "gpu_prose", "os", "user", "kfd_node", "render_node", "hip", "kfd_probe", "cpu", "cpu_title", "torch_cuda",
)

Rule = tuple[str, "lazy_re.Pattern", Callable[["re.Match[str]"], "list[tuple[str, str, str | None]]"]]


# a kernel named in a DKMS status line, a package name or a boot-menu list is one installed, not the one running
_NOT_RUNNING_KERNEL = lazy_re.compile(r":\s*(?:installed|built|added)\b|linux-(?:image|headers|modules)|vmlinuz|initrd|"
                                 r"/lib/modules/|\bkernel-(?:devel|headers|core)\b", re.I)


_AMDGPU_TOP_ID = lazy_re.compile(r'"DeviceID"\s*:\s*(\d{1,5})\s*[,}]')
_AMDGPU_TOP_PCI = lazy_re.compile(r'"pci"\s*:\s*"([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"')


def _amdgpu_top_device(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    """amdgpu_top's JSON (``amdgpu_top -J``) places each device in a "DevicePath" object: its PCI device id in
    decimal ("DeviceID":5510 is 1002:1586; amdgpu_top reads only amdgpu devices, so the vendor is AMD's) and its
    PCI address ("pci":"0000:c3:00.0"). Read only where the line holds one device: the reader groups a line's
    claims as one GPU."""
    if m.string.count('"DevicePath"') != 1:
        return []
    out: list[tuple[str, str, str | None]] = []
    dev = _AMDGPU_TOP_ID.search(m.group(1))
    if dev and 0 < int(dev.group(1)) <= 0xFFFF:
        out.append(("pci_id", f"1002:{int(dev.group(1)):04x}", None))
    pci = _AMDGPU_TOP_PCI.search(m.group(1))
    if pci:
        out.append(("bdf", pci.group(1).lower(), None))
    return out


def _one(kind: str, group: int | str = 1, detail: int | str | None = None) -> Callable[[re.Match[str]], list[tuple[str, str, str | None]]]:
    def f(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
        value = m.group(group)
        if not value:
            return []
        d = m.group(detail) if detail is not None else None
        return [(kind, value, d)]
    return f


# radeontop's (and the kernel's) names of the RDNA2 chips: amdgpu's CHIP_SIENNA_CICHLID ... CHIP_BEIGE_GOBY are Navi 21-24
_FISH_CHIPS = {"SIENNA_CICHLID": "Navi 21", "NAVY_FLOUNDER": "Navi 22", "DIMGREY_CAVEFISH": "Navi 23", "BEIGE_GOBY": "Navi 24"}


def _radeontop_chip(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    chip = m.group(1)
    if chip == "UNKNOWN_CHIP":
        return []
    return [("gpu_name", _FISH_CHIPS.get(chip, chip), "codename")]


def _gfx_from_packed(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    v = int(m.group(1))
    major, minor, step = v // 10000, v // 100 % 100, v % 100
    if v <= 0 or major < 6 or minor > 15 or step > 15:
        return []
    return [("gfx_hw", f"gfx{major}{minor:x}{step:x}", None)]


def _gfx_from_mms(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    major, minor, step = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if major < 6 or minor > 15 or step > 15:
        return []
    return [("gfx_rt", f"gfx{major}{minor:x}{step:x}", None)]


def _gfx_hex_id(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    """llama.cpp prints "gfx1100 (0x1100)": the name is enough."""
    return [("gfx_rt", m.group(2).lower(), m.group(1))]


def _pci(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    return [("pci_id", f"1002:{m.group(1).lower()}", None)]


def _rocm_from_package_code(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    """6.2.0.60200-66 / 6.2.60200 -> 6.2.0 (the build code states the release exactly)."""
    major, minor, patch = m.group("maj"), m.group("min"), m.group("pat")
    code = m.group("code")
    if code is None and patch is not None and len(patch) == 5:  # amdgpu-install_6.1.60103: X.Y.<build code>
        code, patch = patch, None
    # the installer's version names the release its repository serves, not what is installed
    detail = "installer" if m.group(0).startswith("amdgpu-install") else "package"
    if code and len(code) == 5 and code[0] == major and int(code[1:3]) == int(minor):
        return [("rocm", f"{int(major)}.{int(minor)}.{int(code[3:5])}", detail)]
    if detail == "installer":
        return []
    if patch is not None and not code:
        return [("rocm", f"{int(major)}.{int(minor)}.{int(patch)}", "distro-package")]  # no AMD build number
    return []


def _env_assignments(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    out: list[tuple[str, str, str | None]] = []
    for am in _ASSIGN_RE.finditer(m.string):
        name, value = am.group("name"), am.group("value")
        value = value.strip().strip("'\"").strip().rstrip(",;")
        if value.startswith("${"):
            # a compose file's or a shell's default of the variable itself ("NAME=${NAME:-}"): where the host leaves it
            # unset, the default; another variable's value is not known
            dm = re.match(r"\$\{(\w+)(?::?-([^}]*))?\}?$", value)
            if dm is None or dm.group(1) != name:
                continue
            value = dm.group(2) or ""
        elif value.endswith(":") or re.fullmatch(r"[A-Z_]+", value):
            continue  # "NAME: OTHER_NAME:" in a map of empty values
        out.append(("env", f"{name}={value}", None))
    return out


_ENV_NAMES = r"(?:HSA_OVERRIDE_GFX_VERSION(?:_\d+)?|HSA_XNACK|HSA_ENABLE_DXG_DETECTION|HIP_VISIBLE_DEVICES|ROCR_VISIBLE_DEVICES|CUDA_VISIBLE_DEVICES|GPU_DEVICE_ORDINAL|PYTORCH_ROCM_ARCH|TORCH_BLAS_PREFER_HIPBLASLT|HSA_ENABLE_SDMA|MIOPEN_FIND_MODE|PYTORCH_HIP_ALLOC_CONF|ROCM_PATH|LD_LIBRARY_PATH|LD_PRELOAD)"
# NAME=value (shell, env, docker -e, compose list), NAME: value (compose map, ollama's env map), set -x NAME value.
# An unquoted value runs on over commas that join the items of one list ("HIP_VISIBLE_DEVICES=0,1", "...ALLOC_CONF=
# garbage_collection_threshold:0.6,max_split_size_mb:128"), not over a comma that starts the next assignment
# ("HSA_OVERRIDE_GFX_VERSION=10.3.0,HIP_VISIBLE_DEVICES=0") or ends the value ("NAME=1, then ...").
_UNQUOTED_ITEM = r"[^\s\]\"',}`;)]"  # a Markdown code span's backtick, a shell's ";", a ")" end the value too
_ASSIGN_RE = lazy_re.compile(
    rf"(?:(?:^|[\s\[\"'(,{{])(?:-e\s+|--env[= ]\s*|export\s+|set\s+-gx\s+|set\s+-x\s+|Environment=\"?)?)"
    rf"(?P<name>{_ENV_NAMES})(?:=|['\"]\]\s*=\s*|:\s*(?=[\"'\d/])|\s+(?=\d))"
    rf"(?P<value>\"[^\"]*\"|'[^']*'|{_UNQUOTED_ITEM}*(?:,(?![A-Z][A-Z0-9_]*\s*[=:]){_UNQUOTED_ITEM}+)*)"
)

# A line that tells, rather than shows: advice, questions, hypotheticals. Settings read from it are not facts.
_TELLING = lazy_re.compile(
    r"\b(?:try|tried|trying|should|could|would|suggest\w*|recommend\w*|maybe|perhaps|instead|without|whether|"
    r"if you|you can|you need|you have to|did you|have you|make sure|don't|do not|doesn't|didn't|no need|unset|"
    r"instructions?|guide|docs?|documentation|e\.g\.|for example|such as|like this|similar|until|unless|otherwise)\b"
    # a setting said to have solved the problem is the fix, not the failing machine's state
    r"|\b(?:solved|fixed|resolved)\s+(?:it|that|this|the\s+(?:issue|problem))\b|\bdid\s+the\s+trick\b"
    r"|^\s*(?:use|set|add|run|export it|put)\b|\buse\s+`",
    re.IGNORECASE,
)

# A line that says a distribution was not tried ("I haven't confirmed for RHEL"): the distributions it names are
# not the machine's.
_UNTRIED = lazy_re.compile(r"\b(?:haven'?t|have not|hasn'?t|has not)\s+(?:\w+\s+)?(?:confirmed|tested|tried|checked|verified)\b"
                           r"|\bnot (?:yet )?(?:confirmed|tested|tried|checked|verified)\b", re.IGNORECASE)

# A Radeon iGPU's model number written without "Radeon" ("680M", "780M"): one form for every rule that reads it
_IGPU_BARE = r"[6-8]\d0M"
# how a program names an AMD GPU by its product name: "AMD Radeon RX 7900 XTX", "Radeon RX 6800", "AMD Instinct MI300X"
_AMD_NAME = r"(?:AMD |ATI )?(?:Radeon|Instinct)"
# Product names as people write them; the caller keeps only names the knowledge base resolves.
PRODUCT = lazy_re.compile(
    r"(?<![\w/.-])(?:"
    r"(?:AMD\s+)?Radeon\s*(?:\(TM\)|™)?\s*(?:Pro\s+)?VII\b"
    r"|(?:AMD\s+)?(?:Radeon\s*(?:\(TM\)|™)?\s*)?(?:RX\s*)?Vega\s*(?:56|64|Frontier(?:\s+Edition)?|\d{1,2}(?:\s+Graphics)?)\b"
    # "Radeon RX Vega" with no number: amdgpu.ids' name of the RX Vega 56/64 board (1002:687f), the discrete Vega 10;
    # not the Kaby Lake-G "RX Vega M" (Polaris) nor an iGPU named by its compute units ("RX Vega 10 Graphics")
    r"|(?:AMD\s+)?(?:Radeon\s*(?:\(TM\)|™)?\s*)?RX\s*Vega\b(?!\s*(?:\d|M(?:\b|obile)|II\b))"
    r"|(?:AMD\s+)?Radeon\s*(?:\(TM\)|™)?\s*\d{3,4}[MS]\b"
    r"|(?:AMD\s+)?(?:Radeon\s*(?:\(TM\)|™)?\s*)?AI\s+PRO\s+R\d{4}D?\b|\bR9\d{3}D?\b"
    r"|(?:AMD\s+)?(?:Radeon\s*(?:\(TM\)|™)?\s*)?(?:Pro\s+)?(?:RX\s*|R[579]\s+|HD\s*|WX\s*|W(?=\d{4}))\d{3,4}"
    # NVIDIA's RTX cards all have four digits: "RTX 480" is a slip for AMD's RX 480 (names.py reads it so)
    r"(?:\s?(?:XTX|XT|GRE|X|M|S|D)(?![\w]))?|\bRTX\s?[45]\d0(?!\w|\.\d)"
    r"|(?:AMD\s+)?Instinct\s+MI\d{2,3}[A-Z]{0,2}\b|\bMI\d{2,3}(?:X|A|P|HF)?\b"
    r"|(?:AMD\s+)?Radeon\s*(?:\(TM\)|™)?\s*(?:R9\s+)?(?:Fury(?:\s+X)?|Nano)\b|\bR9\s+(?:Fury(?:\s+X)?|Nano)\b"
    r"|\b\d{4}\s?(?:XTX|XT|GRE)\b|\b[5-9]\d{3}M\b"
    # an iGPU's model without "Radeon" ("a Ryzen 7 255 with 780m GPU"); only before a GPU word (a "780M" model is a size)
    rf"|\b{_IGPU_BARE}(?=\s+(?:i?GPU|graphics|APU)\b)"
    r"|(?:AMD\s+)?Radeon\s*(?:\(TM\)|™)?\s*[5-9]\d{3}\b(?:\s?(?:XTX|XT|GRE)\b)?"
    r"|\bNavi\s?[1-4]\d\b|\b(?:Vega\s?(?:10|20)|Ellesmere|Polaris\s?[12]\d|Aldebaran|Arcturus|Strix Halo|Strix Point|Phoenix|Rembrandt|Renoir|Raphael|Cezanne|Lucienne|Raven\s?Ridge|Picasso)\b"
    r")"
    # a two-word codename joined into a host, runner or image name ("linux-strix-halo-gpu-rocm-4", "strix_point")
    r"|(?<![A-Za-z0-9/.])Strix[-_](?:Halo|Point)(?![A-Za-z0-9])",
    re.IGNORECASE,
)


def _joined_in_address(m: re.Match[str]) -> bool:
    """A codename joined into a name ("strix-halo") that sits in a URL or a path (a repository about that GPU, not the
    machine's): the whitespace-delimited word around it holds a slash."""
    if "-" not in m.group(0) and "_" not in m.group(0):
        return False
    start = max(m.string.rfind(c, 0, m.start()) for c in " \t`'\"(<[") + 1
    ends = [i for i in (m.string.find(c, m.end()) for c in " \t`'\")>]") if i >= 0]
    return "/" in m.string[start:min(ends, default=len(m.string))]


# Codenames that are also ordinary words (painters, people, a city, stars, a town): one names the GPU only on a line
# that speaks of hardware ("a Phoenix APU", "Raphael iGPU", "AMD Renoir"), not in "Thanks Raphael" or "I live in Phoenix"
_PLAIN_WORD_CODENAME = lazy_re.compile(r"(?:Phoenix|Rembrandt|Renoir|Raphael|Cezanne|Lucienne|Picasso|Ellesmere|Aldebaran"
                                       r"|Arcturus)", re.I)
_HARDWARE_WORD = lazy_re.compile(r"\b(?:AMD|ATI|Radeon|Ryzen|Instinct|FirePro|Athlon|[ADI]PU|[id]GPUs?|GPUs?|graphics|gfx\w*|Navi|Vega"
                                 r"|Polaris|ROCm|HIP|amdgpu|chip|die|SoC|codename|processor|CPU|silicon|\d{3}M)\b", re.I)


def _plain_word_alone(m: re.Match[str]) -> bool:
    """A codename that is also an ordinary word, on a line that names no hardware."""
    return bool(_PLAIN_WORD_CODENAME.fullmatch(m.group(0))) and not _HARDWARE_WORD.search(m.string)


_MESA_GFX = lazy_re.compile(r"(gfx\d{3,4}[a-f]?)(?:_r\d)?", re.I)  # Mesa's chip names from gfx11.5 on, and Phoenix's


def _renderer_product(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    """The product a renderer string names before its chip ("AMD Radeon RX Vega (VEGA10, ..."): the same GPU's name."""
    before = m.string[:m.start()].rstrip()
    last = None
    for p in PRODUCT.finditer(before):
        last = p
    return [("gpu_name", last.group(0), None)] if last is not None and last.end() == len(before) else []


def _mesa_chip(chip: str) -> list[tuple[str, str, str | None]]:
    m = _MESA_GFX.fullmatch(chip)
    if m:
        return [("gfx_rt", m.group(1).lower(), "mesa")]
    return [("gpu_name", chip, "codename")] if chip.lower() not in ("radeonsi", "llvmpipe", "amdgpu") else []


# a number after these words labels something else ("step 2 Radeon ...", "ROCm 6 Instinct ...")
_NOT_A_COUNT = lazy_re.compile(r"\b(?:step|section|part|version|v|rocm|ubuntu|gen|generation|no|number|#)\.?\s*$", re.I)


_OS_NAME = lazy_re.compile(
    r"(?<!-)\b(Ubuntu|Kubuntu|Xubuntu|Lubuntu|Debian(?: GNU/Linux)?|Fedora(?: Linux)?|Arch ?Linux|Manjaro(?: Linux)?|EndeavourOS"
    r"|openSUSE (?:Tumbleweed|Leap)|Rocky Linux|AlmaLinux|CentOS(?: Linux| Stream)?|Red Hat Enterprise Linux(?: Server)?|RHEL"
    r"|Linux ?Mint|Pop!_OS|Gentoo|NixOS|Oracle Linux|(?-i:SLES)|SUSE Linux Enterprise(?: Server| Desktop)?)(?![a-z])"
    r"(?!\s*(?:packages?|repo|repositor|-style|based|derivative))"
    # SUSE numbers its service packs: "SLES 15 SP6" is VERSION_ID 15.6
    r"(?:[\s:]*(?:release\s+|Linux\s+|Server\s+)?v?(\d+(?:\.\d+)*(?:[ -]?SP\d{1,2}\b)?))?",
    re.IGNORECASE,
)
_OS_IDS = (("kubuntu", "ubuntu"), ("xubuntu", "ubuntu"), ("lubuntu", "ubuntu"), ("ubuntu", "ubuntu"), ("debian", "debian"),
           ("fedora", "fedora"), ("arch", "arch"), ("manjaro", "manjaro"), ("endeavouros", "endeavouros"),
           ("opensuse tumbleweed", "opensuse-tumbleweed"), ("opensuse leap", "opensuse-leap"), ("rocky", "rocky"),
           ("almalinux", "almalinux"), ("centos", "centos"), ("red hat", "rhel"), ("rhel", "rhel"), ("linux mint", "linuxmint"),
           ("linuxmint", "linuxmint"), ("pop!_os", "pop"), ("gentoo", "gentoo"), ("nixos", "nixos"), ("oracle", "ol"),
           ("sles", "sles"), ("suse linux enterprise", "sles"))
# how many parts of the version os-release's VERSION_ID has for each
_OS_VERSION_PARTS = {"ubuntu": 2, "pop": 2, "linuxmint": 2, "rhel": 2, "rocky": 2, "almalinux": 2, "ol": 2,
                     "opensuse-leap": 2, "debian": 1, "fedora": 1, "centos": 1}


# Ubuntu's releases are year.month, in April and October (and 6.06, the one June release); Pop!_OS follows them
_UBUNTU_RELEASE = lazy_re.compile(r"\d{1,2}\.(?:04|10)|6\.06")


def os_from_name(name: str, version: str | None) -> tuple[str, str | None] | None:
    """("Ubuntu", "22.04.3") -> ("ubuntu", "22.04"); ("Arch Linux", None) -> ("arch", None)."""
    low = name.lower()
    os_id = next((i for key, i in _OS_IDS if low.startswith(key)), None)
    if os_id is None:
        return None
    if version and os_id == "sles":
        sp = re.fullmatch(r"(\d+)(?:\.(\d+)|[ -]?SP(\d+))?(?:\.\d+)*", version, re.I)
        version = (sp.group(1) + (f".{sp.group(2) or sp.group(3)}" if sp.group(2) or sp.group(3) else "")) if sp else None
    elif version and os_id in _OS_VERSION_PARTS:
        parts = version.split(".")
        want = _OS_VERSION_PARTS[os_id]
        if os_id == "linuxmint":
            want = 1 if len(parts) == 1 else 2
        version = ".".join(parts[:want]) if len(parts) >= want else None
        if version and os_id in ("ubuntu", "pop") and not _UBUNTU_RELEASE.fullmatch(version):
            version = None  # not a release: "(Ubuntu 13.3.0-6ubuntu2~24.04)" is the compiler's package version
    elif os_id in ("arch", "manjaro", "endeavouros", "gentoo", "opensuse-tumbleweed"):
        version = None
    return os_id, version


def _os(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    found = os_from_name(m.group(1), m.group(2))
    if found is None:
        return []
    out: list[tuple[str, str, str | None]] = [("os", f"{found[0]} {found[1] or ''}".strip(), None)]
    if found[0] in _ROLLING and m.group(2) and re.fullmatch(r"\d\.\d{1,2}(?:\.\d+)?", m.group(2)):
        out.append(("kernel", m.group(2), None))  # a rolling distribution has no release: "Arch Linux 6.8.1" is its kernel
    return out


_ROLLING = frozenset({"arch", "manjaro", "endeavouros", "gentoo", "opensuse-tumbleweed"})


def _title_cpus(line: str) -> list[tuple[str, str, str | None]]:
    return [("cpu_title", name, None) for name in _cpu_names(line)]


def _override_statement(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    """"set the HSA_OVERRIDE_GFX_VERSION to gfx1030" -> HSA_OVERRIDE_GFX_VERSION=10.3.0."""
    if m.group(5):
        return [("env", f"{m.group(1)}={m.group(5)}", "stated")]
    return [("env", f"{m.group(1)}={int(m.group(2))}.{int(m.group(3), 16)}.{int(m.group(4), 16)}", "stated")]


# A Radeon iGPU model written bare ("680M", "780M"): named after a role word or an index, where it is a GPU
_IGPU_MODEL = lazy_re.compile(rf"(?:Radeon\s+)?{_IGPU_BARE}(?![\w.])", re.I)


# a package removed in its own command before it ("sudo apt-get remove --purge amdgpu-dkms", "dnf remove -y rocm-hip
# amdgpu-dkms": the last package manager of the command, then a removing verb) or "removed the amdgpu-dkms": the package
# is gone, not the driver in use
_PACKAGE_MANAGERS = frozenset({"apt", "apt-get", "dnf", "yum", "zypper"})
_REMOVING = frozenset({"remove", "purge", "autoremove", "erase", "rm"})
_REMOVED_THE = lazy_re.compile(r"\b(?:remov|uninstall|purg)(?:ed|ing)\s+the\s+$", re.I)


def _package_removed(line: str, pos: int) -> bool:
    command = re.split(r"&&|\|\||[;|]", line[:pos])[-1]
    if _REMOVED_THE.search(command):
        return True
    words = command.split()
    heads = [i for i, w in enumerate(words) if w in _PACKAGE_MANAGERS]
    return bool(heads) and any(w in _REMOVING for w in words[heads[-1] + 1:])


def _named_gpu(line: str, pos: int) -> str | None:
    """The product or bare iGPU model that starts at ``pos``."""
    m = PRODUCT.match(line, pos) or _IGPU_MODEL.match(line, pos)
    return m.group(0) if m else None


def _role_gpu(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    name = _named_gpu(m.string, m.end())
    return [("gpu_name", name, "label")] if name else []


def _visible_index(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    """"# or 1 for 680M", "# 1 is the 780M": the index the comment gives a named GPU (in ``detail``)."""
    out: list[tuple[str, str, str | None]] = []
    for im in re.finditer(r"\b(\d{1,2})\s+(?:for|is|=)\s+(?:the\s+|my\s+)?", m.group(1)):
        name = _named_gpu(m.group(1), im.end())
        if name:
            out.append(("gpu_name", name, f"index {im.group(1)}"))
    return out


def _enumerated_first(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    """"iGPU: Radeon 780M (gfx1103) — always present, enumerates first": the one GPU the line names is device 0."""
    names = [p.group(0) for p in PRODUCT.finditer(m.string)]
    return [("gpu_name", names[0], None), ("gpu_index", "0", None)] if len(names) == 1 else []


# another vendor's GPU named on a line
_OTHER_VENDOR_DEVICE = lazy_re.compile(r"\b(?:NVIDIA|GeForce|Quadro|Tesla|Intel\(R\) (?:Arc|UHD|Iris)|Intel (?:Arc|UHD|Iris))\b")


def _jax_environment_devices(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    out: list[tuple[str, str, str | None]] = [("gpu_name", m.group(2), None)] if m.group(2) else []
    return out + [("gpu_count", m.group(1) or m.group(3), None)]


def _ollama_versions(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    """ollama's "detected amdgpu versions [gfx1030 gfx1031]" (ollama/ollama@6c5ccb1:gpu/amd_linux.go): one target a GPU.
    The reader groups a line's claims as one GPU, so the targets are read only where they are all one; the count always."""
    gfxs = [g.lower() for g in re.findall(rf"\b({GFX_TARGET})\b", m.group(1))]
    if not gfxs:
        return []
    out: list[tuple[str, str, str | None]] = [("gfx_rt", gfxs[0], None)] if len(set(gfxs)) == 1 else []
    return out + [("gpu_count", str(len(gfxs)), None)]


def _ollama_amdgpu(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    out: list[tuple[str, str, str | None]] = [("gfx_rt", m.group(1) or m.group(3) or m.group(4), None)]
    return out + [("gpu_index", m.group(2), None)] if m.group(2) else out


def _llama_using_device(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    out: list[tuple[str, str, str | None]] = [("gpu_name", m.group(2).strip(), None)]
    return out + [("gpu_index", m.group(1), None)] if m.group(1) else out


def _sdnext_agents(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    agents = re.findall(rf"'({GFX_TARGET})(?::[\w+:-]*)?'", m.group(1))
    if not agents or len(set(agents)) != 1 or len(agents) != m.group(1).count("'") // 2:
        return []
    return [("gfx_rt", agents[0], None), ("gpu_count", str(len(agents)), None)]


def _hashcat_device(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    if m.group(1):
        return [("gfx_rt", m.group(1), None)]
    return [("gpu_name", m.group(2), None)] if m.group(2) else [("bdf", f"0000:{m.group(3)}", None)]


def _ghw_pci_device(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    out: list[tuple[str, str, str | None]] = [("bdf", m.group(1), None)]
    if m.group(3):
        out.append(("gpu_name", m.group(3), "codename"))
    if m.group(4):
        out.append(("gpu_name", m.group(4), "lspci"))
    return out + ([("driver_bound", "true", None)] if m.group(2) == "amdgpu" else [])


def _rccl_tests_rank(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    out: list[tuple[str, str, str | None]] = [("gpu_name", m.group(3), None), ("gpu_index", m.group(1), None)]
    if m.group(2):  # the domain as 4 digits, however wide the tool wrote it
        domain, rest = m.group(2).lower().split(":", 1)
        out.append(("bdf", f"{int(domain, 16):04x}:{rest}", None))
    return out


def _rocm_bandwidth_test_device(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    out: list[tuple[str, str, str | None]] = [("gpu_name", m.group(1), None)] if m.group(1) else []
    return out + [("bdf", f"0000:{m.group(2)}:{int(m.group(3), 16):02x}.{m.group(4)}", None)]


def _cupy_device(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    kind = "gpu_name" if m.group(2) else "gfx_rt" if m.group(3) else "bdf"
    return [(kind, m.group(2) or m.group(3) or m.group(4), None), ("gpu_index", m.group(1), None)]


def _gfx_prose(m: re.Match[str]) -> list[tuple[str, str, str | None]]:
    return [("gfx_rt", m.group(1).lower(), "prose")]


def _bdf_domain0(m: "re.Match[str]") -> list[tuple[str, str, str | None]]:
    """The bus address of group 1, in PCI domain 0 where the line leaves the domain out ("03:00.0")."""
    return [("bdf", m.group(1) if m.group(1).count(":") == 2 else "0000:" + m.group(1), None)]


_RULES: tuple[tuple[str, lazy_re.Pattern, Callable[[re.Match[str]], list[tuple[str, str, str | None]]]], ...] = (
    # ---- GPU: hardware gfx
    ("gfx_target_version", lazy_re.compile(r"gfx_target_version\W{0,3}(\d{5,6})\b"), _gfx_from_packed),
    ("gfx version", lazy_re.compile(rf"(?:GFX Version|TARGET_GRAPHICS_VERSION)\s*:\s*({GFX_TARGET})\b", re.I), _one("gfx_hw")),
    # ---- GPU: runtime gfx in device contexts
    ("gcnarchname", lazy_re.compile(rf"gcnArchName\W{{0,4}}\s*({GFX_TARGET})", re.I), _one("gfx_rt")),
    ("gpu_type", lazy_re.compile(rf"\b(?:gpu_type|gfx|compute|arch|gfx_version)\s*[=:]\s*\"?({GFX_TARGET})\b"), _one("gfx_rt")),
    # ollama's ROCm device filter names the dropped device's target, on a line that also lists the supported ones:
    # msg="dropping ROCm device — no rocblas support for gfx target" device="AMD Radeon RX 6700 XT" gfx_target=gfx1031
    # supported="map[gfx1030:true ...]" hint="set HSA_OVERRIDE_GFX_VERSION to map to a supported target"
    # (ollama/ollama@fb30760:discover/amd.go); the key names the device's own target, so the list does not hide it
    ("ollama gfx_target", lazy_re.compile(rf"\bgfx_target=\"?({GFX_TARGET})\b"), _one("gfx_rt")),
    # SD.Next's start-up: the agents rocm_agent_enumerator lists (one per GPU, gfx000 left out), "ROCm: agents=['gfx1100']"
    # (vladmandic/sdnext@058a7f0:installer.py, modules/rocm.py): each agent a GPU, read where they are all one target (the
    # reader groups a line's claims as one GPU: different targets on one line would make one GPU of them)
    ("sdnext agents", lazy_re.compile(r"\bROCm: agents=\[([^\]\n]*)\]"), _sdnext_agents),
    # ... and the GPUs torch sees: "Torch detected GPU: AMD Radeon RX 7900 XTX VRAM 24560 Arch (11, 0) Cores 48" (older,
    # vladmandic/sdnext@d62ee69:installer.py), "Torch detected: {'gpu': 'AMD Radeon RX 7900 XTX', 'vram': 24560, ...}"
    ("sdnext torch gpu", lazy_re.compile(rf"\bTorch detected(?: GPU: |: \{{'gpu': ')({_AMD_NAME}[^'\n]*?)"
                                         r"(?: VRAM \d|')"), _one("gpu_name")),
    # Triton's compile target, a dataclass whose repr its errors and logs print: "GPUTarget(backend='hip', arch='gfx1100',
    # warp_size=32)", the current device's target on ROCm (triton-lang/triton@0009f6b:python/triton/backends/compiler.py);
    # one a line (several are a list of targets)
    ("triton target", lazy_re.compile(rf"\bGPUTarget\(backend='hip', arch='({GFX_TARGET})(?::[\w+:-]*)?'"),
     lambda m: [("gfx_rt", m.group(1), None)] if m.string.count("GPUTarget(") == 1 else []),
    # InvokeAI's start-up names the torch device it uses: logger.info(f"Using torch device: {torch_device_name}")
    # (invoke-ai/InvokeAI@59a8c0d:invokeai/app/run_app.py; the name is torch.cuda.get_device_name's)
    ("invokeai torch device", lazy_re.compile(rf"\bUsing torch device: ({_AMD_NAME}[^\n]*?)\s*$"),
     _one("gpu_name")),
    # uv's --torch-backend=auto detection, in its debug log: "Detected AMD GPU architecture from `rocm_agent_enumerator`:
    # gfx1100" (the lowest target uv knows among the agents; astral-sh/uv@11f49f2:crates/uv-torch/src/accelerator.rs);
    # not the one read from UV_AMD_GPU_ARCHITECTURE, a setting
    ("uv amd architecture", lazy_re.compile(rf"\bDetected AMD GPU architecture from `rocm_agent_enumerator`: ({GFX_TARGET})\b"),
     _one("gfx_rt")),
    # Frigate's ROCm detector reads the GPU's target with HSA_OVERRIDE_GFX_VERSION unset, then sets (or keeps) the
    # override: "AMD/ROCm: detected gfx1031, overriding HSA_OVERRIDE_GFX_VERSION=10.3.0", "AMD/ROCm: detected gfx1103
    # but HSA_OVERRIDE_GFX_VERSION already present (11.0.0), not overriding!"
    # (blakeblackshear/frigate@087493b:frigate/detectors/plugins/rocm.py)
    ("frigate rocm", lazy_re.compile(rf"\bAMD/ROCm: detected ({GFX_TARGET})(?:, overriding HSA_OVERRIDE_GFX_VERSION=(\d+\.\d+\.\d+)"
                                     r"| but HSA_OVERRIDE_GFX_VERSION already present \((\d+\.\d+\.\d+)\))"),
     lambda m: [("gfx_hw", m.group(1), None),
                ("env", f"HSA_OVERRIDE_GFX_VERSION={m.group(2) or m.group(3)}", "log")]),
    # TensorFlow's short description of a device, in its "Created device" and "Ignoring visible gpu device" lines:
    # "device: %d, name: %s, pci bus id: %s" (tensorflow/tensorflow@637eae5:tensorflow/core/common_runtime/gpu/gpu_device.cc)
    ("tf device", lazy_re.compile(rf"\bdevice: (\d{{1,2}}), name: ({_AMD_NAME}[^,\n]*?), pci bus id: "),
     lambda m: [("gpu_name", m.group(2), None), ("gpu_index", m.group(1), None)]),
    # TensorFlow's ROCm build skipping a device whose target it was not built for, on a line that also lists the
    # targets it supports: "Ignoring visible gpu device (device: 0, name: AMD Radeon RX 7600, pci bus id: 0000:0d:00.0)
    # with AMDGPU version : gfx1102. The supported AMDGPU versions are gfx1030, gfx900, ..."
    # (tensorflow/tensorflow@637eae5:tensorflow/core/common_runtime/gpu/gpu_device.cc)
    ("tf amdgpu version", lazy_re.compile(rf"\bwith AMDGPU version\s*:\s*({GFX_TARGET})\b"), _one("gfx_rt")),
    # ollama's (0.1.x-0.11) reason for skipping a GPU older than it supports, the target read from the KFD node:
    # slog.Warn(fmt.Sprintf("amdgpu too old gfx%d%x%x", ...), "gpu", id) (ollama/ollama@bc8909f^:discover/amd_linux.go);
    # the first ROCm releases of ollama (0.1.2x) numbered the GPU and said whether its target was supported:
    # "amdgpu [%d] too old %s", "amdgpu [%d] %s is supported", "amdgpu [%d] %s is not supported by %s %v" (the last
    # followed by the runtime's supported targets; ollama/ollama@6c5ccb1:gpu/amd_linux.go)
    ("ollama too old", lazy_re.compile(rf"\bamdgpu (?:too old ({GFX_TARGET})\b|\[(\d{{1,2}})\] (?:too old ({GFX_TARGET})\b|({GFX_TARGET}) is (?:not )?supported\b))"),
     _ollama_amdgpu),
    # ... and the driver version it logged from /sys/module/amdgpu/version, which only a loaded amdgpu-dkms module has:
    # slog.Info("AMD Driver: " + ver) (same file)
    ("ollama amd driver", lazy_re.compile(r"\bmsg=\"AMD Driver: (\d+\.\d+\.\d+[\w.-]*)\""),
     lambda m: [("driver_version", m.group(1), None), ("rock", "true", "ollama")]),
    # ollama's early discovery line: the targets KFD reports, one per GPU ("detected amdgpu versions [gfx1030 gfx906]")
    ("ollama amdgpu versions", lazy_re.compile(r"\bdetected amdgpu versions \[([^\]\n]*)\]"),
     _ollama_versions),
    ("llama", lazy_re.compile(rf"Device (\d+): [^,\n]*, ({GFX_TARGET}) \(0x[0-9a-f]+\)", re.I), _gfx_hex_id),
    # darktable's OpenCL device key (its "canonical name": the platform's and the device's names, lower-cased, letters
    # and digits only; darktable-org/darktable src/common/opencl.c, "UNIFIED MEM SIZE: ... reserved for '%s'", the
    # darktablerc keys cldevice_v5_<cname> and cldevice_v6_<cname>): ROCm's OpenCL platform "AMD Accelerated Parallel
    # Processing" names the device by the runtime's target ("amdacceleratedparallelprocessinggfx1103"; the letters of
    # "gfx90a:sramecc+:xnack-" stay: "...gfx90asrameccxnack")
    ("darktable cname", lazy_re.compile(rf"(?<![a-z0-9])amdacceleratedparallelprocessing({GFX_TARGET})(?=sramecc|xnack|_id\d|['\"=\s]|$)"),
     _one("gfx_rt")),
    # clinfo --list: "Platform #0: AMD Accelerated Parallel Processing" then " `-- Device #0: gfx1033"
    ("clinfo list", lazy_re.compile(rf"^\s*[`|\\+-]*\s*Device\s+#\d+:\s*({GFX_TARGET})(?::[\w+:-]*)?\s*$"), _one("gfx_rt")),
    ("nobinary device", lazy_re.compile(rf"amdgcn-amd-amdhsa--({GFX_TARGET})\S*\s*-\s*\[(?:Not )?Found\]"), _one("gfx_rt")),
    ("rocminfo name", lazy_re.compile(rf"^\s*Name:\s+(?:amdgcn-amd-amdhsa--)?({GFX_TARGET})(?::\S*)?\s*$"), _one("gfx_rt")),
    ("miopen db", lazy_re.compile(rf"\b({GFX_TARGET})_\d+\.(?:u?kdb|db|fdb\.txt|udb|HIP\.fdb\.txt)\b"), _one("gfx_rt")),
    ("tensile missing", lazy_re.compile(rf"(?:Cannot read|cannot open|No such file|not found|missing|Could not load|failed to load)"
                                   rf"[^\n]*TensileLibrary\w*?_({GFX_TARGET})\b|TensileLibrary\w*?_({GFX_TARGET})\S*:?\s*No such file", re.I),
     lambda m: [("gfx_rt", m.group(1) or m.group(2), None)]),
    # rocBLAS looking for the running device's code objects ("rocBLAS warning: No paths matched .../library/*gfx1031*co")
    ("tensile glob", lazy_re.compile(rf"\bNo paths matched \S*\*({GFX_TARGET})\*co\b"), _one("gfx_rt")),
    # AMDGPU.jl's device list ("HIP Devices [1]" then "1. HIPDevice(name=\"gfx1100\", id=1)")
    ("julia hip device", lazy_re.compile(rf"\bHIPDevice\(name=\"({GFX_TARGET})\""), _one("gfx_rt")),
    ("rocblas arch", lazy_re.compile(rf"(?:GPU arch|GPU architecture|arch(?:itecture)?)\s*:\s*({GFX_TARGET})\b", re.I), _one("gfx_rt")),
    ("mms", lazy_re.compile(r"Gfx Major/Minor/Stepping:\s*(\d+)/(\d+)/(\d+)"), _gfx_from_mms),
    ("isa paren", lazy_re.compile(rf"(?:Radeon|Instinct|AMD|RX\s?\d{{3,4}}\w*|GPU)[^()\n]{{0,60}}\(({GFX_TARGET})(?::[\w+-]+)*\)", re.I), _one("gfx_rt")),
    ("enumerator", lazy_re.compile(rf"^\s*({GFX_TARGET})\s*$"), _one("gfx_rt")),
    ("hip arch", lazy_re.compile(rf"(?:agent|device|GPU)\s+(?:name|arch)\W{{0,3}}\s*({GFX_TARGET})\b", re.I), _one("gfx_rt")),
    # ---- GPU: ids, names, places, counts
    ("pci [1002:xxxx]", lazy_re.compile(r"\[1002:([0-9a-fA-F]{4})\]|\b1002:([0-9a-fA-F]{4})\b"),
     lambda m: [("pci_id", f"1002:{(m.group(1) or m.group(2)).lower()}", None)]),
    # the Kubernetes node labeller's label of a node's GPUs (ROCm/k8s-device-plugin: "amd.com/gpu.device-id=74a1", the
    # beta form "beta.amd.com/gpu.device-id.67df=1" with the count as its value)
    ("k8s device-id", lazy_re.compile(r"\bamd\.com/gpu\.device-id[.=]([0-9a-fA-F]{4})\b"),
     lambda m: [("pci_id", f"1002:{m.group(1).lower()}", None)]),
    ("lspci Device", lazy_re.compile(r"(?:Advanced Micro Devices|\bATI\b|\bAMD\b)[^\n]*?\bDevice ([0-9a-f]{4})\b"), _pci),
    ("device id", lazy_re.compile(r"\b(?:Device ID|DEVICE_ID|GPU ID|device_id|Chip ID)\s*(?:[:=]\s*)?(?:\d+\()?0x([0-9a-fA-F]{4})\b", re.I), _pci),
    # glxinfo -B's renderer: "Device: AMD Radeon VII (vega20, LLVM 15.0.7, DRM 3.53, 5.15.0-78-generic) (0x66af)"
    ("glxinfo device", lazy_re.compile(r"^\s*Device:\s+(?:AMD|ATI)\b[^\n]*\(0x([0-9a-fA-F]{4})\)\s*$"), _pci),
    ("lspci name", lazy_re.compile(r"\[AMD(?:/ATI)?\]\s+([^\[\n]+?)\s*(?:\[([^\]\n]+)\])?\s*(?:\(rev [0-9a-f]+\))?\s*$"),
     lambda m: [("gpu_name", m.group(1).strip(), "codename")] + ([("gpu_name", m.group(2).strip(), "lspci")] if m.group(2) else [])),
    # ollama's device lines ("inference compute", "dropping integrated GPU"): the runtime's name of the device is its
    # description ("name" is the backend's ROCm0); ollama/ollama@fb30760:discover/types.go, discover/runner.go
    ("ollama description", lazy_re.compile(rf"\b(?:description|device)=\"({_AMD_NAME}[^\"\n]*)\""), _one("gpu_name")),
    ("marketing name", lazy_re.compile(r"(?:Marketing Name|MARKET_NAME|Card (?:Series|SKU|Model)|Board name|Device Board Name \(AMD\)"
                                  r"|Product Name|name)\s*[:=]\s*['\"]?((?:AMD |ATI )?(?:Radeon|Instinct|FirePro)[^'\",\n]*?)['\",]?\s*$", re.I),
     _one("gpu_name", 1)),
    # ... and llama.cpp's (ggml's) ROCm device list: "ROCm1: AMD Radeon RX 7800 XT (16368 MiB, 16146 MiB free)"
    ("device N: name", lazy_re.compile(r"\b(?:(?:Device|GPU|cuda:?)\s*|ROCm)(\d+)\s*[:=]\s*((?:AMD )?(?:Radeon|Instinct)[^,()\n]*?)\s*(?:[,(]|:\s|$)", re.I),
     lambda m: [("gpu_name", m.group(2).strip(), None), ("gpu_index", m.group(1), None)]),
    # llama.cpp naming the devices a model loads onto: LLAMA_LOG_INFO("%s: using device %s (%s) - %zu MiB free\n", ...)
    # ("llama_model_load_from_file_impl: using device ROCm0 (AMD Radeon RX 7900 XTX) - 24390 MiB free";
    # ggml-org/llama.cpp@5bc7a74:src/llama.cpp), and --list-devices' Vulkan rows ("  Vulkan0: AMD Radeon RX 6600 XT
    # (RADV NAVI23) (8176 MiB, 8000 MiB free)"; common_print_available_devices). A ROCm device's number is its HIP
    # index; a Vulkan device's numbers Vulkan's own list, so it is no index here
    ("llama using device", lazy_re.compile(rf"\busing device (?:ROCm(\d+)|Vulkan\d+) \(({_AMD_NAME}[^()\n]*)\)"
                                           r" - \d+ MiB free"),
     _llama_using_device),
    ("llama vulkan device", lazy_re.compile(rf"^\s*Vulkan\d+: ({_AMD_NAME}[^()\n]*?) \([^()\n]*\) "
                                            r"\(\d+ MiB, \d+ MiB free\)"), _one("gpu_name")),
    # rocm-smi --showproductname, text and --csv: "GPU[1] : Card series: Navi 31 [Radeon RX 7900 XT/7900 XTX]",
    # "card1,Arcturus GL-XL [AMD Instinct MI100],0x0c34,..." (one line per GPU, numbered)
    ("smi card series", lazy_re.compile(r"^\s*(?:GPU\[(\d+)\]\s*:\s*Card series\s*:|card(\d+),)\s*([^,\[\n]*?)\s*(?:\[([^\]\n]+)\])?\s*(?:,|$)", re.I),
     lambda m: [("gpu_index", m.group(1) or m.group(2), None)]
     + ([("gpu_name", m.group(3).strip(), "codename")] if m.group(3).strip() else [])
     + ([("gpu_name", m.group(4).strip(), "lspci")] if m.group(4) else [])),
    # sglang's check_env: "GPU 0,1,2,3,4,5,6,7: AMD Instinct MI300X" (one name for the listed devices)
    # rccl-tests' device table, one line per rank: "#   Rank %2d Pid %6d on %10s device %2d [0x%02x] %s" (the HIP device
    # index, the bus number, hipDeviceProp's name; ROCm/rccl-tests@043eef6:src/common.cu), "[%s]" with the whole bus address
    # of cudaDeviceGetPCIBusId in later ones (ROCm/rccl-tests@c0eac93, same path), "#  Rank %2d Group %2d Pid ..." in the
    # layout nccl-tests took up; an NVIDIA device's name is no Radeon or Instinct
    ("rccl-tests rank", lazy_re.compile(r"^\s*#\s+Rank\s+\d+\s+(?:Group\s+\d+\s+)?(?:Pid\s+\d+\s+)?on\s+\S+\s+device\s+(\d{1,2})\s+"
                                        r"\[(?:0x[0-9a-f]{2}|([0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]))\]\s+"
                                        rf"({_AMD_NAME}[^\n]*?)\s*$"),
     _rccl_tests_rank),
    # Blender's Cycles listing its HIP devices (blender --debug-cycles): "Added device \"%s\" with id \"%s\"." where the id
    # is "HIP_%s_%04x:%02x:%02x" of the device's name, PCI domain, bus and device number
    # (blender/blender@a1de44d:intern/cycles/device/hip/device.cpp device_hip_info); the function is not printed: a GPU's
    # display function is function 0 (its HDMI audio is function 1), as inxi's rule reads it
    ("blender hip device", lazy_re.compile(r'\bAdded device "([^"\n]+)" with id "HIP_[^"\n]*_([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2})"'),
     lambda m: [("gpu_name", m.group(1), None), ("bdf", f"{m.group(2)}.0", None)]),
    # hashcat's device lines (hashcat/hashcat@a52b70d:src/terminal.c): -I's "Name...........: %s" and the run's
    # "* Device #%u: %s, %u/%u MB, %uMCU" (or "..., skipped") give ROCm's OpenCL device by its target ("gfx1030"); -I's OpenCL block prints
    # "PCI.Addr.BDF...: %02x:%02x.%u" only for an AMD device on AMD's platform (the CUDA and HIP blocks' "PCI.Addr.BDFe..",
    # with the domain, are NVIDIA's too)
    ("hashcat device", lazy_re.compile(rf"^\s*(?:Name\.{{3,}}:\s*|\*\s*Device #\d+:\s*)(?:({GFX_TARGET})(?::[\w+:-]*)?"
                                       rf"|({_AMD_NAME}[^,\n]*?))(?:\s*$|, \d+/\d+ MB|, skipped\b)"
                                       r"|^\s*PCI\.Addr\.BDF\.\.\.:\s*([0-9a-f]{2}:[0-9a-f]{2}\.[0-7])\s*$"),
     _hashcat_device),
    # BOINC's client naming the GPUs OpenCL found: "OpenCL: %s %d: %s" (or "%d (ignored by config)", "%d (not used)") with the
    # type "AMD/ATI GPU" and the device's description "%.64s (driver version %.64s, device version ...", its name ROCm's
    # CL_DEVICE_NAME, the target with its features ("gfx90c:xnack-"), where no board name was read
    # (BOINC/boinc@c5c6cb7:lib/opencl_boinc.cpp OPENCL_DEVICE_PROP::description, client/gpu_opencl.cpp); a board name is
    # read by "device N: name"
    ("boinc opencl gpu", lazy_re.compile(rf"\bOpenCL: AMD/ATI GPU \d{{1,2}}(?: \((?:ignored by config|not used)\))?: ({GFX_TARGET})"
                                         r"(?::[\w+:-]*)? \(driver version "),
     _one("gfx_rt")),
    # tinygrad's AMD backend at DEBUG>=1: "AMDDevice: opening {device_id} with target {target} arch {arch}", the target
    # KFD's node reports (gfx_target_version, which HSA_OVERRIDE_GFX_VERSION does not change; tinygrad/tinygrad@a9069c1:
    # tinygrad/runtime/ops_amd.py)
    ("tinygrad amd device", lazy_re.compile(rf"\bAMDDevice: opening (\d{{1,2}}) with target \(\d+, \d+, \d+\) arch ({GFX_TARGET})\b"),
     lambda m: [("gfx_hw", m.group(2), None), ("gpu_index", m.group(1), None)]),
    # ghw's PCI device string, which LocalAI logs for each graphics card at start-up (xlog.Debug("GPU", "gpu", gpu.String()):
    # "card #0 @0000:03:00.0 -> driver: 'amdgpu' class: 'Display controller' vendor: 'Advanced Micro Devices, Inc.
    # [AMD/ATI]' product: 'Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]'" (mudler/LocalAI@82c191a:
    # core/application/startup.go; jaypipes/ghw pkg/pci Device.String "%s -> driver: '%s' class: '%s' vendor: '%s'
    # product: '%s'" with pci.ids' names): the address, the bound driver and lspci's names of a display device of AMD's
    ("ghw pci device", lazy_re.compile(r"\b([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) -> driver: '(\w*)' class: "
                                       r"'(?:Display|VGA compatible|3D) controller' vendor: 'Advanced Micro Devices, Inc\. \[AMD/ATI\]' "
                                       r"product: '([^'\[\n]*?)\s*(?:\[([^\]'\n]+)\])?'"),
     _ghw_pci_device),
    # rocm_bandwidth_test's device list, "Device: %u,  %s,  %s,  %s" (HSA's agent index, the product name, and for a GPU its
    # UUID and the BDF made from HSA_AMD_AGENT_INFO_BDFID as "%02x:%x.%x", no domain), and its topology's GPU block line
    # "  Device  BDF:  %s" (ROCm/rocm_bandwidth_test@6bd5c1a:rocm_bandwidth_test_report.cpp DisplayDevInfo,
    # rocm_bandwidth_test_print.cpp, rocm_bandwidth_test_topology.cpp PopulateBDF); the agent index counts the CPUs
    ("rocm_bandwidth_test device", lazy_re.compile(rf"^\s*(?:Device: \d{{1,2}},  ({_AMD_NAME}[^,\n]*?),  GPU-\w+,  "
                                                   r"|Device  BDF:\s+)([0-9a-f]{2}):([0-9a-f]{1,2})\.([0-7])\s*$"),
     _rocm_bandwidth_test_device),
    # CuPy's show_config, a row a device property keyed by the device's index: "Device {} Name", "Device {} Arch" (the
    # gcnArchName, on ROCm only; "Compute Capability" on CUDA), "Device {} PCI Bus ID" (cupy/cupy@0f4daa4:cupyx/_runtime.py)
    ("cupy device", lazy_re.compile(rf"^\s*Device (\d{{1,2}}) (?:Name\s*: ({_AMD_NAME}[^\n]*?)"
                                    rf"|Arch\s*: ({GFX_TARGET})(?::[\w+:-]*)?|PCI Bus ID\s*: ([0-9a-f]{{4}}:[0-9a-f]{{2}}:[0-9a-f]{{2}}\.[0-7]))\s*$"),
     _cupy_device),
    # MLC-LLM's device detection: logger.info("%s device: %s:%s", FOUND, device_type, i) for each index its check_device
    # subprocess lists, the indexes TVM finds existing from 0 on ("Found device: rocm:1"; "Not found device: rocm:0" when
    # none; mlc-ai/mlc-llm@01ced33:python/mlc_llm/support/auto_device.py): at least index + 1 ROCm GPUs
    ("mlc found device", lazy_re.compile(r"(?<![\w-])Found(?:\x1b\[0m|\[0m)? device: rocm:(\d{1,2})\b"),
     lambda m: [("gpu_count", str(int(m.group(1)) + 1), None)]),
    ("gpu list name", lazy_re.compile(r"^\s*GPU\s+(\d{1,2}(?:,\d{1,2})+)\s*:\s*((?:AMD )?(?:Radeon|Instinct)[^,\n]*?)\s*$"),
     lambda m: [("gpu_name", m.group(2), None), ("gpu_count", str(len(m.group(1).split(","))), None)]),
    # the kernel driver naming its device: amdgpu, or radeon for the cards before GCN (and GCN1/2 it still drives)
    ("bdf", lazy_re.compile(r"\b(?:amdgpu|radeon)(?::| )\s*([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])\b"), _one("bdf")),
    # an lspci row pasted after a label ("GPU:    83:00.0 VGA compatible controller: Advanced Micro Devices, ...")
    ("lspci bdf", lazy_re.compile(r"(?:^|[\s:：])((?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])\s+(?:VGA compatible|Display|3D) controller"
                                  r"\s*:\s*(?:Advanced Micro Devices|ATI|AMD)\b"),
     _bdf_domain0),
    # ... and a "PCI ID" (or "PCI address") label whose value is a whole bus address: the address, not a vendor:device id;
    # in any case (TensorFlow's device line: "name: AMD Radeon RX 6600 XT, pci bus id: 0000:0c:00.0")
    # (and TensorFlow's older device line: "Found device 0 with properties: \npciBusID: 0000:0b:00.0 name: ...";
    # tensorflow/tensorflow@637eae5:tensorflow/core/common_runtime/gpu/gpu_device.cc); not where the line names another
    # vendor's device (the same TensorFlow lines for "name: NVIDIA GeForce RTX 3090")
    ("bdf kv", lazy_re.compile(r"\b(?:PCI Bus|BDF|pci_bus_id|pciBusID|PCI bus id|PCI ID|PCI address)\s*[:=]\s*`?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])",
                                re.I),
     lambda m: [] if _OTHER_VENDOR_DEVICE.search(m.string) else [("bdf", m.group(1).lower(), None)]),
    # inxi's device line with -xx: "bus-ID: 03:00.0 chip-ID: 1002:744c" (smxi/inxi 15a55d0b948d4ddaffd5bfb266d4d12077b8fc39
    # inxi, the device rows' 'bus-ID' and 'chip-ID' keys; "bus ID: ... chip ID: ..." before inxi 3): the address of an AMD
    # device's function 0 (its HDMI audio is function 1; a line wrapped between the two keys is not read)
    ("inxi bus-id", lazy_re.compile(r"\bbus[- ]ID:\s*((?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.0)\s+chip[- ]ID:\s*1002:[0-9a-f]{4}\b"),
     _bdf_domain0),
    # ollama's device line ("... compute=gfx1031 pci_id=0d:00.0", "pci_id=0000:0d:00.0"): the bus address, domain 0 when left out
    ("ollama pci_id", lazy_re.compile(r"\bpci_id=\"?((?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])\b"),
     _bdf_domain0),
    ("ollama gpu index", lazy_re.compile(r"\b(?:gpu|id)=(\d+)\b[^\n]*\b(?:library=rocm|gpu_type=|compute=gfx|name=)", re.I),
     _one("gpu_index")),
    ("count", lazy_re.compile(r"(?:Number of HIP devices|found|device_count\(\)\W*|Device count|Number of devices|num_gpus|GPU count)"
                         r"\s*[:=]?\s*(\d{1,2})\s*(?:ROCm devices|HIP devices|GPUs?|devices?|$)", re.I),
     _one("gpu_count")),
    # JAX's device list on ROCm, as jax.devices() prints it: "[RocmDevice(id=0), RocmDevice(id=1)]" (one item a device;
    # ROCm/rocm-install-on-linux@5dd2ddf:docs/install/3rd-party/jax-install.rst); only the printed list itself
    ("jax devices", lazy_re.compile(r"^\s*\[\s*RocmDevice\(id=\d{1,2}\)(?:,\s*RocmDevice\(id=\d{1,2}\))*\s*\]\s*$"),
     lambda m: [("gpu_count", str(m.group(0).count("RocmDevice(")), None)]),
    # ... and jax.print_environment_info's device line: "jax.devices (2 total, 2 local): [RocmDevice(id=0) RocmDevice(id=1)]"
    # (jax-ml/jax@0fb462e:jax/_src/environment_info.py), later "device info: AMD Instinct MI300X-8, 8 local devices\""
    # (device kind, count; jax-ml/jax@4853515, same path): this host's GPUs are the local ones
    ("jax environment devices", lazy_re.compile(r"\bjax\.devices \(\d{1,3} total, (\d{1,2}) local\): \[RocmDevice\("
                                                rf"|\bdevice info: ({_AMD_NAME}[^\n]*?)-\d{{1,3}}, (\d{{1,2}}) local devices\b"),
     _jax_environment_devices),
    # "2 radeon Nano", "4x MI100", "8 x Instinct MI300X": a number of one product (the name is read by PRODUCT)
    ("count of product", lazy_re.compile(r"(?<![\w.,/-])([2-9]|1[0-6])\s*(?:x\s*|×\s*)?(?=(?:AMD\s+)?(?:Radeon|Instinct|MI\d{2,3}|R9\s)\S*)", re.I),
     lambda m: [("gpu_count", m.group(1), None)] if PRODUCT.match(m.string, m.end())
     and not _NOT_A_COUNT.search(m.string[:m.start()]) else []),
    # rocm-smi numbers every GPU it reports on, also in its complaints ("ERROR: GPU[1]   : sclk clock is unsupported")
    ("smi gpu number", lazy_re.compile(r"^\s*(?:ERROR:\s*|WARNING:\s*)?GPU\[(\d{1,2})\]\s*:"),
     lambda m: [("gpu_count", str(int(m.group(1)) + 1), "smi")]),
    ("apu", lazy_re.compile(r"Memory Properties:\s*APU|\bis_apu\s*[:=]\s*(?:1|true)|\bAPU\s*:\s*(?:yes|true)\b", re.I),
     lambda m: [("apu", "true", None)]),
    # ---- ROCm
    ("rocm path", lazy_re.compile(r"/opt/rocm-(\d+\.\d+(?:\.\d+)?)(?=[/\s'\":]|$)"), _one("rocm", 1)),
    ("rocm package", lazy_re.compile(
        r"\b(?:rocm-core|rocm-dev|rocm-libs|rocm-hip-runtime|rocm-hip-sdk|rocminfo|rocm-smi-lib|hip-runtime-amd|rocm-language-runtime|"
        r"rocm-opencl-runtime|rocm-device-libs|hsa-rocr|rocm-llvm|amdgpu-install)(?:/\S+\s+|[ :=_-]|\s+\S*\s+|-\s*)"
        r"(?P<maj>[1-9]\d?)\.(?P<min>\d+)(?:\.(?P<pat>\d+))?(?:\.(?P<code>\d{5}))?(?:[-~.]\S*)?(?=\s|$|,)"),
     _rocm_from_package_code),
    ("compiler banner", lazy_re.compile(r"\broc-(\d+\.\d+\.\d+)\b"), lambda m: [("rocm", m.group(1), "compiler")]),
    ("build path", lazy_re.compile(r"\brocm-rel-(\d+\.\d+(?:\.\d+)?)\b"), lambda m: [("rocm", m.group(1), "build-path")]),
    # a distribution package's build tree, named after the upstream release tag it unpacked ("/usr/src/debug/
    # hip-runtime-amd/clr-rocm-6.0.2/rocclr/os/os_posix.cpp": Arch's hip-runtime-amd built from ROCm 6.0.2)
    ("source tree", lazy_re.compile(r"/usr/src/debug/[\w.+-]+/[A-Za-z][\w.-]*?-rocm-(\d+\.\d+\.\d+)/"),
     lambda m: [("rocm", m.group(1), "build-path")]),
    # not a HIP version in the field: vLLM's collect_env fills "ROCM Version" from `hipcc --version`'s "HIP version:
    # (\S+)" ("ROCM Version                 : 6.3.42133-1b9c17779"; vllm-project/vllm@030ea52:vllm/collect_env.py)
    ("rocm version kv", lazy_re.compile(r"\b(?:(?i:ROCm version)|ROCm)\s*[:=]\s*v?(\d+\.\d+(?:\.\d{1,3})?)(?![\d.]*\d{5})(?!\w|\.\w)"),
     lambda m: [("rocm", m.group(1), "tool")]),
    # "ROCm 6.2", "Rocm v5.7"; the version in a parenthesis after the word ("latest Rocm (it shows as version 4.3.0)",
    # "ROCm (version 6.0)"), not another program's there ("ROCm (and python version 3.10)")
    # a launcher naming the ROCm it found by place ("system ROCm at /opt/rocm version '7.2.4' vs expected '7.13.0'")
    ("rocm at path", lazy_re.compile(r"\bROCm\s+(?:at|in|under)\s+/\S+\s+(?:is\s+)?version\s+['\"`]?(\d+\.\d+\.\d+)\b", re.I),
     lambda m: [("rocm", m.group(1), None)]),
    ("rocm stated", lazy_re.compile(r"(?<![+\w./-])rocm(?:(?:\s+(?:libs?|libraries|packages|stack))?\s*v?\s?(\d+\.\d+(?:\.\d+)?)(?![\w.])"
                                    r"|\s*\(\s*(?:(?:[\w-]+\s+){0,3}?(?:shows?|says?|is|reports?|reported|shown|displays?|lists?|listed)"
                                    r"(?:\s+as)?\s+)?version\s+v?(\d+\.\d+(?:\.\d+)?)\s*\))", re.I),
     lambda m: [("rocm", m.group(1) or m.group(2), "stated")]),
    # torch.version.hip as scripts label it ("PyTorch ROCm version: X.Y.NNNNN-<commit>"): only a value of HIP's own
    # form (a five-digit build number), which no ROCm release number has
    # (and collect_env's field as AUTOMATIC1111's sysinfo dumps it in JSON: "hip_compiled_version": "5.6.31061-8c743ae5d";
    # AUTOMATIC1111/stable-diffusion-webui@11f827c:modules/sysinfo.py)
    ("hip version", lazy_re.compile(r"\b(?:ROCM HIP version|HIP version|HIP runtime version|ROCM used to build PyTorch|"
                               r"(?:Py)?[Tt]orch ROCm version|hip_compiled_version\"|"
                               r"torch\.version\.hip\W*)\s*[:=]?\s*['\"]?"
                               r"(\d+\.\d+\.\d{5}(?:-[0-9a-f]+)?)"), _one("hip")),
    # a ROCm torch's version with its own torch.version.hip beside it ("2.11.0+rocm7.2 (torch.version.hip = 7.2.26015)"):
    # the version is torch's (torchvision's or triton's +rocm versions have no torch.version.hip to show)
    ("torch with its hip", lazy_re.compile(r"(?<![\w.+-])(?<!vision==)(?<!audio==)(?<!triton==)(?<!rocm==)(\d+\.\d+\.\d+(?:[a-z]+\d*)?\+rocm\d+(?:\.\d+)*)\s*\(\s*"
                                           r"torch\.version\.hip\b"), _one("torch")),
    # SD.Next's (and kohya_ss's) torch backend line: "Torch backend: AMD ROCm HIP 6.0.32830-d62f6a171" (older,
    # vladmandic/sdnext@d62ee69:installer.py), "Torch backend: {'type': 'rocm', 'hip': '6.2.41133-dd7f95766'}" (@058a7f0)
    ("sdnext hip", lazy_re.compile(r"\bTorch backend: (?:AMD ROCm HIP |\{'type': 'rocm', 'hip': ')(\d+\.\d+\.\d{5}(?:-[0-9a-f]+)?)"),
     _one("hip")),
    # a ROCm package version carries its release's build code ("4.2.0.40200-21", "6.2.4.60204-139~22.04")
    ("rocm build code", lazy_re.compile(r"(?<![\w.])([1-9])\.(\d{1,2})\.(\d{1,2})\.(\d{5})(?:-\d+)?(?![\w.])"),
     lambda m: [("rocm", f"{m.group(1)}.{int(m.group(2))}.{int(m.group(3))}", "package")]
     if int(m.group(4)) == int(m.group(1)) * 10000 + int(m.group(2)) * 100 + int(m.group(3)) else []),
    ("rocm version file", lazy_re.compile(r"/\.info/version\S*\s*[:\s]\s*(\d+\.\d+\.\d+)(?:-\d+)?\s*$"),
     lambda m: [("rocm", m.group(1), "version-file")]),
    # ---- torch
    # DeepSpeed's ds_report pads each name with dots: print(name, "." * (max_dots - len(name)), value):
    # "torch version .................... 2.4.0+rocm6.1", "torch hip version ................ 6.1.40091-a8dbc0c19"
    # (microsoft/DeepSpeed@0399e0b:deepspeed/env_report.py; the hip line: jagadish-amd/DeepSpeed@048a11c, same path)
    ("ds_report", lazy_re.compile(r"^\s*torch (?:version \.{2,} (\d+\.\d+\.\d+(?:[a-z]+\d*)?(?:\+[\w.]+)?)"
                                  r"|hip version \.{2,} (\d+\.\d+\.\d{5}(?:-[0-9a-f]+)?))\s*$"),
     lambda m: [("torch", m.group(1), None)] if m.group(1) else [("hip", m.group(2), None)]),
    # (also mmcv's and mmengine's collect_env, a Python dict or its items: "'PyTorch': '1.9.0a0+gitdfbd030'",
    # "('PyTorch', '2.0.0+rocm5.4.2')")
    # (and the env reports of transformers, accelerate and diffusers: "- PyTorch version (GPU?): 2.5.1+rocm6.2 (True)";
    # huggingface/transformers@026b0db:src/transformers/commands/env.py, huggingface/accelerate@bb22ffc:
    # src/accelerate/commands/env.py)
    ("torch banner", lazy_re.compile(r"(?<!build )(?<!built with )\b(?:pytorch|torch)(?:[ _]version(?: \(GPU\?\))?|\.__version(?:__)?)?"
                                     r"(?:[\"']\s*[:=,]|\s*[:=])\s*[\"']?v?(\d+\.\d+\.\d+(?:\.?[a-z]+\d*)?(?:\+[\w.]+)?)\b", re.I),
     _one("torch")),
    ("torch pip", lazy_re.compile(r"(?:^|[\s,(])torch(?:==|-| )(\d+\.\d+\.\d+(?:(?:a|b|rc|\.dev|\.post)\d*)?(?:\+(?:rocm|cu|cpu)[\w.]*)?)"
                             r"(?:\.dist-info|-cp\d+|\s|$|\)|,)"), _one("torch")),
    ("torch site", lazy_re.compile(r"(/\S*?/(?:site|dist)-packages)/torch-(\d+\.\d+\.\d+\S*?)\.dist-info"),
     lambda m: [("torch", m.group(2), m.group(1))]),
    # the REPL's answer to torch.__version__, plain or IPython's ("Out[2]: '2.2.0.dev20231010+rocm5.7'")
    ("torch repl", lazy_re.compile(r"^(?:Out\[\d+\]:\s*)?'(\d+\.\d+\.\d+(?:\.?[a-z]+\d*)?\+(?:rocm|cu|cpu)[\w.]*)'\s*$"), _one("torch")),
    # a launcher's log: "INFO     Torch 2.3.0+rocm6.0" (the build tag makes it torch's own version string)
    # a helper reading the reporter's output back to them: "(you have `2.5.0.dev20240802+rocm6.1` here)"
    ("torch you have", lazy_re.compile(r"\byou(?:\s+have|'ve\s+got|\s+are\s+(?:using|running|on))\s+`?"
                                       r"([1-9]\d*\.\d+\.\d+(?:\.?[a-z]+\d*)?\+(?:rocm|cu|cpu)[\w.]*)`?(?![\w+-])", re.I),
     _one("torch")),
    # ... also with the version in backticks, as Markdown writes it ("The image ships torch `2.13.0a0+rocm7.14.0a20260612`.")
    ("torch build", lazy_re.compile(r"(?<![\w/.-])(?:Py)?Torch\s+(?:`v?(\d+\.\d+\.\d+(?:\.?[a-z]+\d*)?\+(?:rocm|cu|cpu)[\w.]*)`"
                                    r"|v?(\d+\.\d+\.\d+(?:\.?[a-z]+\d*)?\+(?:rocm|cu|cpu)[\w.]*)(?![\w.+-]))", re.I),
     lambda m: [("torch", m.group(1) or m.group(2), None)]),
    ("torch paren", lazy_re.compile(r"\b(?:py)?torch\s*\(\s*v?(\d+\.\d+\.\d+(?:(?:a|b|rc|\.dev|\.post)\w*)?(?:\+[\w.]+)?)\s*\)", re.I),
     _one("torch")),
    ("gfx overridden", lazy_re.compile(rf"\b({GFX_TARGET})\s*,?\s*(?:overrid\w*|spoof\w*|reported as|running as)\s+(?:to\s+|as\s+)?({GFX_TARGET})\b", re.I),
     lambda m: [("gfx_hw", m.group(1).lower(), "stated"), ("gfx_rt", m.group(2).lower(), "stated")]),
    ("torch wheel", lazy_re.compile(r"torch-(\d+\.\d+\.\d+(?:(?:a|b|rc|\.dev|\.post)\w*)?)(?:%2B|\+)((?:rocm|cu|cpu)[\w.]*?)-cp\d+", re.I),
     lambda m: [("torch", f"{m.group(1)}+{m.group(2)}", None)]),
    ("torch requirement", lazy_re.compile(r"Requirement already satisfied: torch\S*\s+in\s+(\S+)\s+\((\d+\.\d+\.\d+\S*?)\)"),
     lambda m: [("torch", m.group(2), m.group(1))]),
    ("python", lazy_re.compile(r"\bPython (3\.\d{1,2})(?:\.\d+)?\b|/python(3\.\d{1,2})/(?:site|dist)-packages"),
     lambda m: [("python_version", m.group(1) or m.group(2), None)]),
    # ---- settings
    ("env", lazy_re.compile(_ENV_NAMES), _env_assignments),
    ("env stated", lazy_re.compile(r"\b(?:set|setting|had|have|exported?)\s+(?:the\s+)?(HSA_OVERRIDE_GFX_VERSION)\s+(?:to|=|as)\s+"
                              r"`?(?:gfx(\d{1,2})([0-9a-f])([0-9a-f])|(\d+\.\d+\.\d+))\b"), _override_statement),
    # a variable stated to be set, in the present or past ("but `ROCM_PATH` is set to `/opt/rocm`."); not a condition, a
    # try or advice ("When ROCBLAS_TENSILE_LIBPATH is set to ..., it works"), not a denial
    ("env is set to", lazy_re.compile(rf"^(?!.*\b(?:when|if|once|unless|should|could|would|try|tried|must|need)\b)(?!.*n't\b)"
                                      rf".*?`?\b({_ENV_NAMES})`?\s+(?:is|was)\s+(?:already\s+|still\s+)?set\s+to\s+"
                                      r"[`'\"]?([^\s`'\",;]+?)[`'\"]?(?=[\s,;]|\.?$)", re.I),
     lambda m: [("env", f"{m.group(1).upper()}={m.group(2)}", "stated")]),
    ("env unset", lazy_re.compile(rf"^\s*(?:[$#>]\s*)?unset\s+((?:{_ENV_NAMES}\s*)+)$"),
     lambda m: [("env", n, "unset") for n in m.group(1).split()]),
    # ---- system
    # collect_env's "Python platform: Linux-<release>-<arch>-with-glibc"; vLLM's collect_env pads the key
    # ("Python platform              : Linux-...")
    # ... and the Hugging Face env reports' platform.platform() ("- Platform: Linux-6.8.0-45-generic-x86_64-with-glibc2.35";
    # huggingface/transformers@026b0db:src/transformers/commands/env.py)
    # ... and AUTOMATIC1111's sysinfo, a JSON dump: its "Platform" is platform.platform(), its "Torch env info" collect_env's
    # get_env_info()._asdict() ("python_platform": "Linux-..."; AUTOMATIC1111/stable-diffusion-webui@11f827c:modules/sysinfo.py)
    ("kernel platform", lazy_re.compile(r"(?:Python platform|^\s*OS|^\s*-\s*Platform|^\s*\"(?:Platform|python_platform)\")\s*:\s*\"?"
                                        r"Linux-(\d+\.\d+\.\d+[\w.+~-]*?)-(?:x86_64|aarch64)"),
     _one("kernel")),  # also CuPy's show_config ("OS                        : Linux-5.15.0-75-generic-x86_64-with-glibc2.31")
    # Python's platform.uname() repr, as jax.print_environment_info prints it ("platform: uname_result(system='Linux',
    # node='box', release='6.8.0-49-generic', version='#49-Ubuntu SMP ...', machine='x86_64')"; jax-ml/jax@4853515:
    # jax/_src/environment_info.py)
    ("kernel uname_result", lazy_re.compile(r"\buname_result\(system='Linux', node='[^'\n]*', release='(\d+\.\d+\.\d+[^'\s]*)'"),
     _one("kernel")),
    # modprobe looks in the running kernel's module tree ("Module amdgpu not found in directory /lib/modules/<release>")
    ("kernel modprobe", lazy_re.compile(r"\bnot found in directory /lib/modules/(\d+\.\d+\.\d+[^\s/]*)"), _one("kernel")),
    # Ubuntu's HWE kernels carry the release they are built for in their version ("#40~20.04.1-Ubuntu SMP")
    ("ubuntu hwe kernel", lazy_re.compile(r"#\d+~(\d{2}\.(?:04|10))\.\d+-Ubuntu\b"), lambda m: [("os", f"ubuntu {m.group(1)}", "package")]),
    # /proc/version's banner; amd-smi's "amdgpu version" on an in-tree driver prints it with every blank dropped
    # ("Linuxversion6.8.0-79-generic(buildd@...)")
    ("kernel version", lazy_re.compile(r"\bLinux ?version ?(\d+\.\d+\.\d+[^\s(]*)"), _one("kernel")),
    # uname -a ("Linux box 6.8.0-49-generic #49-Ubuntu SMP ..."), also as issue templates get it typed over with commas
    # ("Linux desktop 6.5.0-pf5, SMP PREEMPT_DYNAMIC, x86_64")
    ("kernel uname", lazy_re.compile(r"^\s*Linux \S+ (\d+\.\d+\.\d+[\w.+~-]*),?[ \t]+(?:#\d|SMP\b|PREEMPT)"),
     _one("kernel")),
    # the kernel's own stack-dump header (an Oops, a WARNING, a hung task; torvalds/linux lib/dump_stack.c
    # dump_stack_print_info: "CPU: %d UID: %u PID: %d Comm: %.20s %s%s %s %.*s" with the taint and the release):
    # "CPU: 13 PID: 28657 Comm: blender Tainted: G      D            6.6.2-zen1-1-zen #1"
    ("kernel stack dump", lazy_re.compile(r"\bCPU: \d+ (?:UID: \d+ )?PID: \d+ Comm: .{1,20}? (?:Not tainted|Tainted: [A-Z ]{1,40}?) "
                                          r"+(\d+\.\d+(?:\.\d+)?[\w.+~-]*) #"), _one("kernel")),
    ("kernel kv", lazy_re.compile(r"(?:^\s*(?:[-*]\s*)?|\bSystem:\s+)(?:\*\*)?Kernel(?: version| release)?(?:\*\*)?\s*:\s*(?:Linux\s+)?(\d+\.\d+(?:\.\d+)?[\w.+~-]*)", re.I),
     _one("kernel")),
    # a Markdown table's row, as issue templates write the system ("| Kernel | 6.12.101+deb13-amd64 |")
    ("kernel table row", lazy_re.compile(r"^\s*\|\s*(?:\*\*)?Kernel(?: version| release)?(?:\*\*)?\s*\|\s*`?(?:Linux\s+)?(\d+\.\d+(?:\.\d+)?[\w.+~-]*)`?\s*\|", re.I),
     _one("kernel")),
    # the booted kernel's command line, as /proc/cmdline and the kernel's own "Command line:" / "Kernel command line:"
    # log lines print it: GRUB passes the image it booted as BOOT_IMAGE ("BOOT_IMAGE=(hd0,gpt2)/vmlinuz-6.8.0-45-generic
    # root=..."); a vmlinuz named anywhere else (ls /boot, grub.cfg's "linux /vmlinuz-...") is only installed
    ("kernel cmdline", lazy_re.compile(r"(?:^\s*`?|\b[Cc]ommand line:\s*)BOOT_IMAGE=\S*?/vmlinuz-"
                                       r"(\d+\.\d+(?:\.\d+)?[\w.+~-]*)(?=[\s`]|$)"), _one("kernel")),
    ("wsl", lazy_re.compile(r"microsoft-standard-WSL\d?|-Microsoft\b|/dev/dxg\b|\bWSL ?2?\b|librocdxg", re.I),
     lambda m: [("wsl", "true", None)]),
    # a shell prompt whose host is a container's: Docker names a container's host by the first 12 hex digits of its
    # id, in bash's Debian form ("root@3f2a9c1b7d4e:/work#") and in the Fedora/RHEL one ("[root@3f2a9c1b7d4e work]#")
    ("container", lazy_re.compile(r"/\.dockerenv|/run/\.containerenv|^\s*`?(?:\([\w.-]+\)\s*)?(?:[\w! .-]*@[0-9a-f]{12}:\S*"
                                  r"|\[[\w.-]+@[0-9a-f]{12}(?:\s+[^\]\s]+)?\])\s?[#$]"),
     lambda m: [("container", "true", None)]),
    # SD.Next's platform line, its values joined as k=v: docker= is whether SD_DOCKER is set, which SD.Next's container
    # image sets ("Platform: arch=x86_64 cpu=x86_64 system=Linux release=6.8.0-49-generic python=3.11.9 ... docker=True";
    # vladmandic/sdnext@058a7f0:installer.py get_platform, launch.py)
    # Hugging Face TGI's runtime environment (text-generation-launcher --env, and its start-up): "Docker label: {}" is the
    # DOCKER_LABEL its image build compiles in ("sha-<commit>", "sha-<commit>-rocm"), "N/A" outside the images
    # (huggingface/text-generation-inference@19bb224:launcher/src/env_runtime.rs)
    ("tgi docker label", lazy_re.compile(r"^\s*Docker label: sha-[0-9a-f]{7,40}(?:-[\w.-]+)?\s*$"),
     lambda m: [("container", "true", None)]),
    ("sdnext docker", lazy_re.compile(r"\bPlatform: arch=\S+(?=[^\n]* system=Linux\b)(?=[^\n]* docker=True\b)"),
     lambda m: [("container", "true", None)]),
    # a command run in a container at a prompt ("$ sudo docker exec -it gpustack-worker bash -c ...", "kubectl exec pod --
    # rocminfo"): what it prints is the container's
    ("container exec", lazy_re.compile(r"(?:^\s*|[$#>]\s*)(?:sudo\s+)?(?:(?:docker|podman|nerdctl)\s+(?:container\s+)?exec"
                                       r"|kubectl\s+exec)\s+(?:-{1,2}[\w-]+(?:[ =](?!-)[\w./:=-]+)?\s+)*[\w.:/-]+\s+(?:--\s+)?\w"),
     lambda m: [("container", "true", None)]),
    # a container started for an interactive shell in the writer's own steps ("1. Launch `docker run -it --device=/dev/kfd
    # ... rocm/jax-build:...`"): what follows runs in it; not advice, a hypothetical or a detached (-d) server
    ("container run -it", lazy_re.compile(r"^(?!.*\b(?:should|could|would|might|if|unless|instead|try|tried|trying|please|you)\b)(?!.*n't\b)"
                                          r".*\b(?:docker|podman|nerdctl)\s+run\b(?![^\n`]*\s-(?:d\b|-detach\b|\w*d\w*\b))"
                                          r"[^\n`]*\s-(?:it|ti|-interactive)\b", re.I),
     lambda m: [("container", "true", None)]),
    # the writer's run stated to be in a container ("the example command inside the container"); not advice or a
    # hypothetical ("should work inside a container", "if you run it in a container"), not a denial
    ("container stated", lazy_re.compile(r"^(?!.*\b(?:should|could|would|might|if|unless|instead|outside|not|never|without)\b)"
                                         r"(?!.*n't\b).*(?:\b(?:inside|within|in)\s+(?:the|a|my|this|our)\s+(?:[\w.:/-]+\s+)?"
                                         r"(?:(?:docker|podman|distrobox|toolbox|lxc|incus)\s+)?(?:container|pod)\b"
                                         # a distrobox or toolbox is a container ("installing ROCm in distrobox", "In the
                                         # toolbox, llama-cli fails", "running ollama on a distrobox")
                                         r"|\b(?:inside|within|in|on)\s+(?:(?:the|a|my|this|our)\s+)?(?:[\w.:/-]+\s+)?"
                                         r"(?:distrobox|toolbox)\b(?!\s*(?:create|enter|rm|list|version|image|[-:]\s*\w)))", re.I),
     lambda m: [("container", "true", "stated")]),
    # the writer's own container ("I updated my Ubuntu 20.04 container to ROCm 3.9"), or the image they pulled to run
    # ("I pulled docker and tried this"); not advice, a hypothetical or a denial, as above
    ("own container", lazy_re.compile(r"^(?!.*\b(?:should|could|would|might|if|unless|instead|outside|not|never|without)\b)"
                                      r"(?!.*n't\b).*(?:\b(?:my|our)\s+(?:[\w.!-]+\s+){0,3}?(?:docker\s+|podman\s+|lxc\s+|lxd\s+)?"
                                      r"container\b(?!\s+(?:image|registry|runtime|engine|toolkit)s?\b)"
                                      r"|\b(?:I|we)\s+(?:have\s+)?pulled\s+(?:the\s+|a\s+)?(?:[\w./:-]+\s+)?(?:docker|podman)\b)", re.I),
     lambda m: [("container", "true", "stated")]),
    # the writer's own environment stated to be a container image ("My environment uses the `rocm/vllm:...` base Docker
    # image", "I'm running the rocm/pytorch docker image"); in the present tense, not advice, a hypothetical or a denial
    ("image used", lazy_re.compile(r"^(?!.*\b(?:should|could|would|might|if|unless|instead|outside|not|never|without|tried|try)\b)"
                                   r"(?!.*n't\b).*\b(?:(?:my|our)\s+(?:environment|env|setup|stack)\s+(?:uses|is|runs)"
                                   r"|(?:I|we)(?:'m|’m|'re|’re|\s+am|\s+are)?\s+(?:using|running|use|run))\b"
                                   # up to the sentence's end (an image tag's dots and quoted names are inside it)
                                   r"(?:`[^`]*`|[^.;`]|\.(?=\S)){0,160}?\b(?:docker|podman|container|base)\s+image\b", re.I),
     lambda m: [("container", "true", "stated")]),
    # the image named as the one the writer uses, before its name ("the docker image I use:" over a `docker pull` line)
    ("image I use", lazy_re.compile(r"^(?!.*\b(?:should|could|would|might|if|unless|instead|outside|not|never|without|tried|try)\b)"
                                    r"(?!.*n't\b)\s*(?:the|my|our)\s+(?:docker|podman|container)\s+image\s+(?:that\s+)?(?:I|we)"
                                    r"(?:'m|\s+am|\s+are)?\s+(?:use|using|run|running)\b", re.I),
     lambda m: [("container", "true", "stated")]),
    # the writer's run in their own image ("I just did the following in my rocm/pytorch:rocm7.1.1_... docker image");
    # the sentence (not the whole line) is free of advice, a hypothetical or a denial
    ("in my image", lazy_re.compile(r"(?:^|[.!?]\s)(?:(?!\b(?:should|could|would|might|if|unless|instead|outside|not|never|without)\b"
                                    r"|n't\b|[.!?]\s).)*?\b(?:in|inside|within)\s+(?:my|our)\s+(?:[\w./:-]+\s+){0,2}"
                                    r"(?:docker|podman)\s+(?:image|container)\b", re.I),
     lambda m: [("container", "true", "stated")]),
    # a thread's title about the container image the writer runs ("Official ROCm docker images do not support RX 7600");
    # not a question or a request for an image
    # or about the container it runs failing ("[bug]: ROCM Docker container not using AMD GPU", "invoke-rocm container
    # doesn't support gpus")
    ("title container", lazy_re.compile(r"^#\s(?!.*\?)(?!.*\b(?:how|request|feature|add|provide|publish|build|please|want|need)\b)"
                                        r".*(?:\b(?:docker|podman|container)\s+images?\b"
                                        r"|\bcontainer\s+(?:doesn't|does\s+not|isn't|is\s+not|not|won't|can't|cannot|fails?"
                                        r"|failing|crash(?:es|ing)?|hangs?)\b)", re.I),
     lambda m: [("container", "true", "title")]),
    # the proprietary runtime's files or packages on this machine (not the name in prose: "don't install amdgpu-pro")
    ("amdgpu-pro", lazy_re.compile(r"(/opt/amdgpu-pro\S*|libamdocl-orca\w*\.so|\bamdgpu-pro-(?:\d{2}\.\d{1,2}|core|lib32|oglp|opencl"
                                   r"|ocl|vulkan|install)\b[\w.+~/-]*|\bopencl-(?:legacy|orca)-amdgpu-pro-icd\b)"), _one("amdgpu_pro")),
    # the amdgpu driver speaking of a device in the kernel log ("amdgpu 0000:c4:00.0: GPU reset begin!"), a row of
    # rocm-smi's concise table with the sensors the driver exports ("0  2  0x74a1,  55354  48.0°C  133.0W ..."): the
    # driver is loaded
    ("driver bound", lazy_re.compile(r"^\s*(?:\[[^\]\n]{1,40}\]\s*|[A-Z][a-z]{2} +\d{1,2} [\d:.]+ \S+ kernel: )?"
                                     r"amdgpu 0000:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]: "
                                     r"|^\s*\d+\s+\d+\s+0x[0-9a-f]{4},\s+\d+\s+\d+(?:\.\d+)?°C\s"
                                     # lspci -k: "Kernel driver in use: amdgpu" (or the module's path, as a reporter wrote it)
                                     r"|\bKernel driver in use:\s*`?(?:/\S*/)?amdgpu\b"
                                     # inxi -G: the driver bound to the device, "driver: amdgpu v: kernel" ("driver: N/A"
                                     # and "modules: amdgpu" when none is)
                                     r"|\bdriver:\s*amdgpu\s+v:\s*\S"
                                     # lshw: the driver bound to the device, "configuration: driver=amdgpu latency=0"
                                     r"|\bconfiguration:[^\n]*\bdriver=amdgpu\b"),
     lambda m: [("driver_bound", "true", None)]),
    # rocminfo's first line: its reader's pattern (wizard/parsers/rocminfo.py ROCK_LINE), case as printed
    ("rock", lazy_re.compile(ROCK_LINE),
     lambda m: [("rock", "false" if m.group("not") else "true", m.group("ver"))]
     + ([("driver_version", m.group("ver"), "rock")] if m.group("ver") and not m.group("not") else [])),
    # lsmod's row and lspci -k's binding: the amdgpu module is in the kernel
    # vLLM's (and SGLang's, through vLLM's platforms) start-up: logger.info("Automatically detected platform %s.", ...) names
    # "rocm" only where amdsmi.amdsmi_init() succeeded and amdsmi_get_processor_handles() listed an AMD GPU
    # (vllm-project/vllm@00e2bbc:vllm/platforms/__init__.py rocm_platform_plugin), which amd-smi does only with the
    # amdgpu driver loaded (its init fails with AMDSMI_STATUS_DRIVER_NOT_LOADED otherwise)
    ("vllm platform rocm", lazy_re.compile(r"\bAutomatically detected platform rocm\."),
     lambda m: [("rock", "true", "vllm")]),
    # nvtop's device header: mvwprintw("Device %-2u", id), then "[%s]" with the device's name (libdrm's marketing name),
    # then "PCIe GEN %u@%2ux" or "Integrated GPU" (Syllo/nvtop@3d4a953:src/interface.c draw_devices); its numbers follow
    # the DRM devices nvtop found, as the generic "Device N: name" rule reads them
    ("nvtop device", lazy_re.compile(rf"^\s*Device (\d{{1,2}})\s*\[({_AMD_NAME}[^\]\n]{{0,60}})\]\s*(?:PCIe GEN|Integrated GPU)\b"),
     lambda m: [("gpu_name", m.group(2).strip(), None), ("gpu_index", m.group(1), None)]),
    # radeontop's header: "radeontop %s, running on %s bus %02x, %u samples/sec" with the kernel's ASIC name from its
    # family_str table (clbr/radeontop@0f1d2ea:ui.c, family_str.c); the RDNA2 chips go by their code names there
    ("radeontop family", lazy_re.compile(r"\bradeontop \S+, running on ([A-Z][A-Z0-9_]{2,20}) bus [0-9a-f]{2}, \d+ samples/sec"),
     _radeontop_chip),
    # GPUStack's `gpustack-runtime detect` (gpustack/runtime@88026d6:gpustack_runtime/cmds/detector.py, detector/amd.py):
    # the table's header "| AMD Driver Version: %s ... Runtime Version: %s |" (amd-smi's driver version, ROCm's
    # major.minor from amdsmi_get_rocm_version), a row per device "| index | name | used / total | util | temp | CC |
    # OK/ERR |" with the HSA agent's gfx as CC; --format json's "compute_capability": "gfx1101" of each device
    ("gpustack header", lazy_re.compile(r"^\|\s*AMD Driver Version: \S+\s+Runtime Version: (\d+\.\d+)\s*\|\s*$"),
     lambda m: [("rocm", m.group(1), "tool")]),
    ("gpustack row", lazy_re.compile(rf"^\|\s*(\d{{1,2}})\s*\|[^|\n]{{1,90}}\|\s*(?:N/A|\d+MiB) / \d+MiB\s*\|[^|\n]{{0,12}}\|"
                                     rf"[^|\n]{{0,12}}\|\s*({GFX_TARGET})\s*\|\s*(?:OK|ERR)\s*\|\s*$"),
     lambda m: [("gfx_rt", m.group(2), None), ("gpu_index", m.group(1), None)]),
    ("gpustack json cc", lazy_re.compile(rf'^\s*"compute_capability"\s*:\s*"({GFX_TARGET})"\s*,?\s*$'), _one("gfx_rt")),
    # SGLang's and vLLM's fused-MoE kernel config, a file named after the running GPU: get_config_file_name's
    # f"E={E},N={N},device_name={device_name}..." with the device's name, spaces made "_" (sgl-project/sglang@083d601:
    # python/sglang/srt/layers/moe/fused_moe_triton/fused_moe_triton_config.py), logged as "Using MoE kernel config from
    # %s.", "Config file not found at %s" (SGLang) and "Using configuration from %s for MoE layer." (vLLM's
    # fused_moe.py); only where the line says it looked for this machine's file, not a listing of the configs folder
    ("moe config device", lazy_re.compile(r"\b(?:Config file not found at|Using (?:MoE kernel )?config(?:uration)? from)"
                                          r"\s+[^\s,]*[/\\]E=\d+,N=\d+,device_name=(AMD_(?:Instinct|Radeon)_[A-Za-z0-9_]{1,60}?)"
                                          r"(?=[,.](?:dtype=|block_shape=|json\b)|_down\b)"),
     lambda m: [] if m.group(1) == "AMD_Radeon_Graphics" else [("gpu_name", m.group(1).replace("_", " "), None)]),
    # Lemonade's system-info (/api/v1/system-info, nlohmann JSON, keys sorted): an AMD GPU's "family" is its gfx, from
    # KFD's gfx_target_version on Linux or from the name on Windows (lemonade-sdk/lemonade@e385039:
    # src/cpp/server/system_info.cpp, get_device_dict, LinuxSystemInfo::detect_amd_gpus, identify_rocm_arch_from_name;
    # a family such as "gfx110X" is not one target); one device's object on the line
    ("lemonade family", lazy_re.compile(rf'"family"\s*:\s*"({GFX_TARGET})"\s*(?:,|\}}|$)'),
     lambda m: [("gfx_hw", m.group(1), None)] if m.string.count('"family"') == 1 else []),
    # RamaLama's `ramalama info` (JSON): "Accelerator": "hip" only where KFD's topology (/sys/devices/virtual/kfd/kfd/
    # topology/nodes, there while amdgpu's KFD is up) lists an AMD GPU of gfx900 or later with VRAM
    # (containers/ramalama@8bc1f0a:ramalama/cli.py info_cli, ramalama/common.py check_rocm_amd, ramalama/amdkfd.py)
    ("ramalama accelerator hip", lazy_re.compile(r'^\s*"Accelerator":\s*"hip",?\s*$'),
     lambda m: [("rock", "true", "ramalama")]),
    ("amdgpu module", lazy_re.compile(r"^\s*(?:amdgpu\s+\d+\s+\d+\b|Kernel driver in use:\s*amdgpu\s*$)"),
     lambda m: [("rock", "true", None)]),
    # the writer stating the module loaded ("rocm libs v 6.4.0 installed,  amdgpu module loaded."); not a condition, a
    # question or a denial
    ("amdgpu loaded said", lazy_re.compile(r"^(?!.*\b(?:if|whether|unless|should|make sure|check)\b)(?:(?!\?).)*?"
                                           r"(?<!\bno )(?<!\bnot )\bamdgpu\s+(?:kernel\s+)?(?:module|driver)\s+(?:is\s+|was\s+|gets\s+|got\s+)?"
                                           r"loaded\b(?!\s*\?)", re.I),
     lambda m: [("rock", "true", "stated")]),
    # the error ends at the line's end, or at the quote that closes it in a sentence or a title
    ("kfd open", lazy_re.compile(r"(Unable|Able) to open /dev/kfd read-write(?::\s*([^'\"`]+?))?\s*(?:['\"`]|$)"),
     lambda m: [("kfd", "ok" if m.group(1) == "Able" else (m.group(2) or "unknown").strip(), None)]),
    ("kfd missing", lazy_re.compile(r"/dev/kfd\W*(?::\s*)?No such file or directory|error gathering device information while adding custom device \"/dev/kfd\""
                               r"|/dev/kfd`?\s+(?:(?:is\s+)?(?:absent|missing|not present|does not exist|doesn't exist)|isn't\s+(?:present|there))"
                               # "there is no kfd folder in /dev", "I have no /dev/kfd"; not a condition ("if there is no /dev/kfd")
                               r"|^(?!.*\b(?:if|whether|unless)\b).*\bno\s+(?:`?/dev/kfd\b|kfd\s+(?:(?:folder|directory|device|node|file|entry)\s+)?"
                               r"(?:in|under)\s+`?/dev\b)", re.I),
     lambda m: [("kfd", "No such file or directory", None)]),
    ("kfd added", lazy_re.compile(r"kfd kfd: (?:amdgpu: )?added device ([0-9a-f]{4}:[0-9a-f]{4})"), _one("kfd_added")),
    # the kernel logs each GPU KFD probes once: the same id at two boot times is two GPUs
    ("kfd probe", lazy_re.compile(r"^\s*\[\s*(\d+\.\d+)\]\s+kfd kfd: (?:amdgpu: )?(?:added|skipped) device ([0-9a-f]{4}:[0-9a-f]{4})\b"),
     lambda m: [("kfd_probe", m.group(2), m.group(1))]),
    ("group member", lazy_re.compile(r"(\S+) is (not )?(?:a )?member of \"?(render|video)\"? group"),
     lambda m: [("render_group" if m.group(3) == "render" else "video_group",
                 "false" if m.group(2) else "true", m.group(1))]),
    # the reporter on themself ("it states that I am a member of render group"); detail None: the reporter, name unknown
    ("reporter member", lazy_re.compile(r"(?<!\bif )(?<!\bwhether )\bI(?:'m|’m| am)\s+(?:already\s+|also\s+)?(not\s+)?(?:a\s+)?"
                                        r"member\s+of\s+(?:the\s+)?[\"'`]?(render|video)[\"'`]?"
                                        r"(?:\s+(?:and|&)\s+(?:the\s+)?[\"'`]?(render|video)[\"'`]?)?\s+groups?\b", re.I),
     lambda m: [("render_group" if g.lower() == "render" else "video_group", "false" if m.group(1) else "true", None)
                for g in (m.group(2), m.group(3)) if g]),
    # `groups` output quoted in a sentence ("Groups says: adm sudo video render"): the groups named are the user's
    # (a group not named may be one the sentence left out: absence is not read)
    ("groups said", lazy_re.compile(r"^\s*(?:the\s+)?(?:output\s+of\s+)?[`'\"]?groups[`'\"]?\s*(?:command\s+)?"
                                    r"(?:says|said|shows|showed|gives|gave|returns|returned|prints|printed|output)\s*:\s*(.+)$", re.I),
     lambda m: [("render_group" if g.lower() == "render" else "video_group", "true", None)
                for g in dict.fromkeys(re.findall(r"(?<![\w-])(render|video)(?![\w-])", m.group(1), re.I))]),
    # ... not another driver's: the OpenCL runtime's in clinfo ("Driver version: 3614.0 (HSA1.1,LC)", ROCm's clinfo;
    # "(PAL,HSAIL)" on AMD's older stacks) or NVIDIA's in nvidia-smi's header ("Driver Version: 550.54.14  CUDA Version: 12.4");
    # nor TensorFlow's "with AMDGPU version : gfx1102", the device's target ("tf amdgpu version"); nor a version whose
    # first number has three digits or more, which amdgpu's (a kernel release, amdgpu-dkms' "6.10.5") never has: NVIDIA's
    # on a line of its own ("nvidia-smi -q": "Driver Version                            : 550.54.14")
    # ... nor CuPy's show_config "CUDA Driver Version", on ROCm hipDriverGetVersion's number ("60241134"; cupy/cupy@0f4daa4:
    # cupyx/_runtime.py)
    ("driver version", lazy_re.compile(r"(?<!CUDA )\b(?:Driver version|DRIVER_VERSION|AMDGPU version|amdgpu version|Kernel driver version)\s*[:=]\s*(?!gfx|\d{3})"
                                       r"(\S+)(?!\S)(?!\s*\((?:HSA|PAL|LC|ROCr))", re.I),
     lambda m: [] if "CUDA Version" in m.string or "NVIDIA-SMI" in m.string else [("driver_version", m.group(1).rstrip(",|"), None)]),
    # `dkms status` ("amdgpu, 2.2-31, 4.15.0-46-generic, x86_64: installed"; ROCm's older rock-dkms too), the package's
    # name, apt's installed list ("rock-dkms/Ubuntu 16.04,now 2.1-96 all [installed,automatic]"), modinfo's path of a
    # DKMS-built module ("filename: /lib/modules/4.15.0-46-generic/updates/dkms/amdgpu.ko")
    ("dkms", lazy_re.compile(r"\b(?:amdgpu|rock)(?:-dkms)?[/,]\s*(\d+\.\d+(?:\.\d+)?[\w.-]*)\s*,\s*\S+\s*,\s*\S+\s*:\s*installed"
                             r"|(?<!\bnot )(?<!\bno )(?<!without )(?<!instead of )(?<!removed )(?<!uninstalled )(?<!purged )"
                             r"(?<!removing )(?<!uninstalling )(?<!purging )\b((?:amdgpu|rock)-dkms)\b"
                             r"|/updates/dkms/(amdgpu)\.ko\b"),
     lambda m: [] if m.group(2) and _package_removed(m.string, m.start(2)) else [
         ("dkms", m.group(1) or m.group(2) or m.group(3), None)]),
    # the kernel's own amdgpu said in words: "in-kernel (inbox) amdgpu driver", "the in-tree amdgpu module"
    ("in-tree said", lazy_re.compile(r"\b(?:in-kernel|inbox|in-tree)\s+(?:\((?:inbox|in-tree|upstream)\)\s+)?amdgpu"
                                     r"(?:\s+kernel)?\s+(?:driver|module)\b", re.I),
     lambda m: [("in_tree", "in-tree", None)]),
    # ---- more GPU evidence: kernel words, firmware names, lshw, labelled lines, prose
    ("kfd refuses", lazy_re.compile(r"kfd kfd: (?:amdgpu: )?([A-Z][A-Z0-9_]+)\s+not supported in kfd"),
     lambda m: [("gpu_name", m.group(1).title(), "codename")]),
    # Mesa's renderer string names the chip (glxinfo, vulkaninfo, llama.cpp's Vulkan device list): "AMD Radeon
    # Graphics (RADV GFX1151)", "(radeonsi, gfx1103_r1, LLVM 17.0.6, DRM 3.57, ...)", "(RADV PHOENIX)", older
    # "AMD Radeon RX Vega (VEGA10, DRM 3.27.0, ...)": a gfx name is the target; another, a codename to resolve
    ("mesa chip", lazy_re.compile(r"\((?:RADV\s+([A-Za-z][\w]*)\s*\)|(?:radeonsi,\s*)?([A-Za-z][\w]*),\s*(?:LLVM|DRM)\s+\d)"),
     lambda m: _renderer_product(m) + _mesa_chip(m.group(1) or m.group(2))),
    ("firmware chip", lazy_re.compile(r"amdgpu/([a-z][a-z0-9]+?)_(?:mc|pfp|me|ce|rlc|mec2?|sdma1?|smc|uvd|vce|gpu_info|sos|asd|ta)\.bin"),
     lambda m: [("gpu_name", m.group(1), "codename")]),
    ("lshw bus", lazy_re.compile(r"(?:bus info|Bus-Informationen|informations bus)\s*:\s*pci@([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])", re.I),
     _one("bdf")),
    ("lshw product", lazy_re.compile(r"^\s*(?:product|Produkt|produit|producto)\s*:\s*([^\[\n]+?)\s*\[([^\]\n]+)\]", re.I),
     lambda m: [("gpu_name", m.group(1).strip(), "codename"), ("gpu_name", m.group(2).strip(), "lspci")]),
    ("labelled gpu", lazy_re.compile(r"^\s*(?:[-*]\s*)?(?:\*\*)?(?:[id]GPU|GPUs?(?:\s*\d)?|Graphics(?: card)?|Video card|Graphics Card|Card|Hardware|Device)(?:\*\*)?\s*:"
                                r"\s*(?:\*\*)?(\S.*)$", re.I),
     lambda m: [("gpu_name", p.group(0), "label") for p in PRODUCT.finditer(m.group(1))]
     # an iGPU's model alone in the field ("GPU: 780M aka gfx1103"): AMD names it "Radeon 780M"
     or [("gpu_name", f"Radeon {g.upper()}", "label") for g in re.findall(rf"^(?:AMD\s+)?({_IGPU_BARE}|80[56]0S)\b", m.group(1).strip(), re.I)]
     or [("gfx_rt", g.lower(), "label") for g in re.findall(rf"^`?({GFX_TARGET})(?::[\w+:-]*)?`?\s*$", m.group(1).strip())]
     # (not a numbered agent list's CPU row: rocm_bandwidth_test's "Device: 0,  AMD Ryzen 9 7950X 16-Core Processor")
     or (_cpu_as_gpu(m.group(1)) if not re.search(r"\b(?:NVIDIA|GeForce|RTX|GTX|Intel|Arc)\b", m.group(1), re.I)
         and not re.match(r"\d{1,2},\s", m.group(1)) else [])),
    # a GPU named with its role ("tried with iGPU 680M and dGPU RX 6500M"): each is one of the machine's GPUs
    ("role gpu", lazy_re.compile(r"\b[id]GPU\s+(?:is\s+)?(?:an?\s+|the\s+)?(?=\S)", re.I), _role_gpu),
    # a device index a *_VISIBLE_DEVICES line's comment gives a GPU ("HIP_VISIBLE_DEVICES=0  # or 1 for 680M")
    ("enumerated first", lazy_re.compile(r"(?<!n't )(?<!not )\b(?:enumerates|is\s+enumerated|shows\s+up|is\s+listed)\s+first\b", re.I),
     _enumerated_first),
    ("visible index", lazy_re.compile(r"\b(?:HIP|ROCR|CUDA)_VISIBLE_DEVICES\s*=\s*\S+\s*#(.*)$"), _visible_index),
    ("cpu igpu", lazy_re.compile(r"\b(?:iGPU|integrated (?:GPU|graphics)|APU)\b", re.I),
     lambda m: [] if PRODUCT.search(m.string) else _cpu_as_gpu(m.string)),
    ("prose gpu", PRODUCT, lambda m: [] if _joined_in_address(m) or _plain_word_alone(m) else [("gpu_prose", m.group(0), None)]),
    # a thread's title naming the processor the problem happened on ("hipErrorNoBinaryForGpu on Ryzen 7 4800U")
    ("title cpu", lazy_re.compile(r"^#\s"), lambda m: _title_cpus(m.string)),
    # the target whose support a thread says is missing or coming ("Until gfx1151 support is enabled"): the weakest claim,
    # taken only where nothing names the GPU
    ("gfx support", lazy_re.compile(rf"\b(?:until|no|without|missing|lacks?|lacking|enabl(?:e|es|ed|ing)|add(?:s|ed|ing)?)\s+"
                                    rf"(?:the\s+)?({GFX_TARGET})\s+support\b|\b({GFX_TARGET})\s+support\s+(?:is|was|isn't|wasn't)\s+(?:not\s+)?"
                                    r"(?:yet\s+)?(?:enabled|added|missing|available|there)\b", re.I),
     lambda m: [("gfx_rt", (m.group(1) or m.group(2)).lower(), "support")]),
    ("prose gfx", lazy_re.compile(rf"\b(?:an?|my|the|is|it's)\s+({GFX_TARGET})\s+(?:GPU|card|device|iGPU|APU)\b"
                             rf"|\b(?:device|machine|system|GPU|card|laptop)\s+(?:with|having)\s+(?:only\s+|an?\s+)?({GFX_TARGET})\b", re.I),
     lambda m: [("gfx_rt", (m.group(1) or m.group(2)).lower(), "prose")]),
    # a thread's title saying where the problem happens, by target ("... model load on gfx1151 with TheRock dev tarball",
    # "Crash on Strix Halo (gfx1151)"): as weak as prose; not a target's support asked for, added or missing
    ("title gfx", lazy_re.compile(rf"^#\s(?!.*\?)(?!.*\b(?:support|request|feature|add|provide|publish|please|want|need)\b)(?:[^\n(]*?\bon\s+(?:an?\s+|my\s+)?({GFX_TARGET})\b(?![\w.-])|[^\n]*?\(({GFX_TARGET})\))", re.I),
     lambda m: [("gfx_rt", (m.group(1) or m.group(2)).lower(), "prose")]),
    # a full target id with both feature settings ("gfx90a:sramecc+:xnack-") is how the runtime names a device's ISA
    ("full isa", lazy_re.compile(rf"(?<![\w./-])({GFX_TARGET}):sramecc[+-]:xnack[+-](?![\w.:-])"),
     lambda m: [("gfx_rt", m.group(1).lower(), "prose")]),
    # the TheRock index a torch was installed from names one target ("rocm.nightlies.amd.com/v2-staging/gfx1151")
    ("therock index", lazy_re.compile(rf"\brocm\.(?:nightlies|prereleases)\.amd\.com/v2(?:-staging)?/({GFX_TARGET})(?![\w-])"),
     lambda m: [("gfx_rt", m.group(1), "prose")]),
    ("hsa device", lazy_re.compile(rf"\bHSA device ({GFX_TARGET})\S*\s*\(PCI ID ([0-9a-fA-F]{{4}})\)"),
     lambda m: [("gfx_rt", m.group(1).lower(), None), ("pci_id", f"1002:{m.group(2).lower()}", None)]),
    ("kms init", lazy_re.compile(r"initializing kernel modesetting \((?:IP DISCOVERY|([A-Z][A-Z0-9_]+)) 0x1002:0x([0-9A-Fa-f]{4})\b"),
     lambda m: [("pci_id", f"1002:{m.group(2).lower()}", None)]
     + ([("gpu_name", m.group(1).title(), "codename")] if m.group(1) else [])),
    # KFD adding a GPU to its topology: "amdgpu: Topology: Add dGPU node [0x744c:0x1002]" / "Add APU node [...]", the
    # device id first (torvalds/linux d7ab8e67aa52e27837aefdc0d67af93ae0931abc drivers/gpu/drm/amd/amdkfd/kfd_topology.c,
    # kfd_debug_print_topology: "Topology: Add %s node [0x%0x:0x%0x]", device_id, vendor_id)
    ("kfd topology node", lazy_re.compile(r"\bTopology: Add (?:dGPU|APU) node \[0x([0-9a-fA-F]{4}):0x1002\]"), _pci),
    # DRM registering the driver's device: "[drm] Initialized amdgpu 3.57.0 20150101 for 0000:03:00.0 on minor 1" (the date
    # dropped in newer kernels) (torvalds/linux 010e85f9e47c6a92740b7d73e0fca8f792573582 drivers/gpu/drm/drm_drv.c,
    # drm_dev_register: "Initialized %s %d.%d.%d %s for %s on minor %d", dev_name = the PCI address)
    ("drm initialized", lazy_re.compile(r"\bInitialized (?:amdgpu|radeon) \d+\.\d+\.\d+(?: \d{8})? for "
                                        r"([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) on minor \d+"), _one("bdf")),
    ("amdgpu_top device", lazy_re.compile(r'"DevicePath"\s*:\s*\{([^{}]*)\}'), _amdgpu_top_device),
    # amdgpu_top --dump's device block: "PCI (domain:bus:dev.func): 0000:03:00.0", "DeviceID.RevID : 0x744C.0xC8"
    # (Umio-Yasuno/amdgpu_top f81e5bd3103b76430ca0e4d16615191030634ede src/dump_info.rs, device_info(); it reads only
    # amdgpu's devices, so the vendor is AMD's)
    ("amdgpu_top dump", lazy_re.compile(r"^\s*PCI \(domain:bus:dev\.func\)\s*:\s*([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s*$"
                                        r"|^\s*DeviceID\.RevID\s*:\s*0[xX]([0-9a-fA-F]{4})\.0[xX][0-9a-fA-F]{1,2}\s*$"),
     lambda m: [("bdf", m.group(1).lower(), None)] if m.group(1) else [("pci_id", f"1002:{m.group(2).lower()}", None)]),
    ("render nodes", lazy_re.compile(r"\b(renderD1\d\d)\b"), _one("render_node")),
    ("kfd stated", lazy_re.compile(r"/dev/kfd`?\s+(?:is\s+)?(?:present|exists)\b|^\s*/dev/kfd:\s*(?:found|present|exists)\b"
                                   # its owner or its mode stated ("I ended up with /dev/kfd owned by group `render`")
                                   r"|(?<!\bif )(?<!\bwhether )(?<!\bthat )/dev/kfd`?\s+(?:device\s+)?(?:is\s+)?(?:owned\s+by|belongs\s+to"
                                   r"|has\s+(?:the\s+)?(?:wrong|correct|right|bad)\s+permissions)\b", re.I),
     lambda m: [("kfd", "present", None)]),
    # `ls -l /dev/kfd`'s line, or the kfd row of `ls -l /dev` (a bare "kfd" after a character device's mode and numbers)
    ("kfd node", lazy_re.compile(r"^\s*(?:crw\S*\s+\d+\s+\S+\s+(\S+)\s+\d+,\s*\d+\s+.*\s)?/dev/kfd\s*$"
                                 r"|^\s*crw\S*\s+\d+\s+\S+\s+(\S+)\s+\d+,\s*\d+\s+.*\skfd\s*$"),
     lambda m: [("kfd", "present", m.group(1) or m.group(2))]),
    # ---- OS, user
    ("os label", lazy_re.compile(r"^\s*(?:[-*]\s*)?(?:\*\*)?(?:OS|Operating System|Distribution|Distro|Linux Distribution|Description|PRETTY_NAME)"
                            r"(?:\*\*)?\s*[:=]\s*\"?(?:\*\*)?(.+)$", re.I),
     lambda m: [("os", f"{f[0]} {f[1] or ''}".strip(), "label") for o in [_OS_NAME.search(m.group(1))] if o
                for f in [os_from_name(o.group(1), o.group(2))] if f]),
    # /etc/redhat-release's (or fedora-release's) one line, a file's own label of the machine's release:
    # "Rocky Linux release 8.10 (Green Obsidian)", "Oracle Linux Server release 8.9", "Fedora release 39 (Thirty Nine)"
    ("os release file", lazy_re.compile(r"^\s*`?((?:Rocky Linux|AlmaLinux|CentOS(?: Linux| Stream)?|Red Hat Enterprise Linux|"
                                        r"Oracle Linux|Fedora)(?: Server)?) release (\d+(?:\.\d+)*)(?: \([\w ]+\))?`?\s*$"),
     lambda m: [("os", f"{f[0]} {f[1] or ''}".strip(), "label") for f in [os_from_name(m.group(1), m.group(2))] if f]),
    # `nix-info -m`'s line: " - host os: `Linux 6.8.7, NixOS, 24.05 (Uakari), 24.05.20240427.58a1abd`"
    ("nix-info host os", lazy_re.compile(r"^\s*-?\s*host os:\s*`?Linux (\d+\.\d+(?:\.\d+)?[\w.+~-]*), NixOS, (\d{2}\.\d{2})\b"),
     lambda m: [("kernel", m.group(1), None), ("os", f"nixos {m.group(2)}", "label")]),
    # the system a nixos-rebuild builds ("/nix/store/...-nixos-system-main-23.05.2816.bfd953b2c6de.drv"): its name is the
    # host's and its version the NixOS release (year.month, the channel's revision count, the nixpkgs commit)
    ("nixos system", lazy_re.compile(r"\bnixos-system-[\w.-]+?-(\d{2}\.\d{2})(?:pre\d+|\.\d+)[.-][0-9a-f]{7,}\b"),
     lambda m: [("os", f"nixos {m.group(1)}", "label")]),
    # os-release's VERSION line pasted bare: Ubuntu's is the release, "LTS" and the alliterative codename
    ("os-release version", lazy_re.compile(r'^\s*VERSION\s*=\s*"?(\d{2}\.(?:04|10))(?:\.\d+)?(?:\s+LTS)?\s+\(([A-Z])[a-z]+\s+\2[a-z]+\)"?\s*$'),
     lambda m: [("os", f"ubuntu {m.group(1)}", "label")]),
    ("os", _OS_NAME, _os),
    # "im using arch", "I'm on Arch btw": the distribution in a user's own words (not "arch: x86_64")
    ("os arch words", lazy_re.compile(r"\b(?:I'?m\s+(?:using|on|running)|I\s+(?:use|run)|using|running)\s+arch\b"
                                 r"(?!\s*[:=(-])(?!\s+(?:x86|amd64|aarch|arm|i686|linux\s*=))", re.I),
     lambda m: [("os", "arch", None)]),
    ("fedora rpm", lazy_re.compile(r"\.fc(\d{2})\.(?:x86_64|noarch|aarch64|i686)\b"), lambda m: [("os", f"fedora {m.group(1)}", "package")]),
    # Portage builds a package in /var/tmp/portage/<category>/<package>-<version>/work (its PORTAGE_TMPDIR default):
    # a program built there, as its own file paths show (an assert, a backtrace), is Gentoo's package
    ("gentoo portage build", lazy_re.compile(r"/var/tmp/portage/[a-z0-9-]+/[\w.+-]+/work/"),
     lambda m: [("os", "gentoo", "package")]),
    ("prompt user", lazy_re.compile(r"^\s*`?(?:\([\w.-]+\)\s*)?([a-z_][a-z0-9_.-]{0,31})@[\w.-]+:[^\s$#]*\s?[$#]"),
     lambda m: [("user", m.group(1), "prompt")]),
    ("member", lazy_re.compile(r"^\s*(\S+) is (?:not )?member of \"?[\w-]+\"? group"), lambda m: [("user", m.group(1), None)]),
    # the fourth number is WSL's ("5.15.153.1-microsoft-standard-WSL2"): never five digits, which is an AMD build code of
    # a ROCm package's version ("rocm-core.x86_64  6.2.1.60201-112.el9  @rocm" in `dnf list`, rpm -qa's
    # "rocm-core-6.2.1.60201-112.el9.x86_64"), not a kernel
    # Debian 13's "+debNN" and backports' "+bpo" ("6.12.48+deb13-amd64"); Arch's zen, hardened and lts flavours
    ("kernel token", lazy_re.compile(r"(?<![\w.-])(\d\.\d{1,2}\.\d{1,3}(?:\.\d{1,3})?(?:\+deb\d+|\+bpo)?-(?:\d+(?:\.\d+)*-)?(?:generic|amd64|lowlatency|oem|aws|azure|gcp"
                                r"|microsoft-standard(?:-WSL2)?|arch\d+(?:-\d+)?|zen\d+-\d+-zen|hardened\d+-\d+-hardened|lts|zen\d*|cachyos|default|pve|rt\d*|\d+\.fc\d+\.x86_64|\d+(?:\.\d+)*\.el\d\S*)\+?)(?![\w-])"),
     lambda m: [] if _NOT_RUNNING_KERNEL.search(m.string) else [("kernel", m.group(1), "token")]),
)
# cheap substring filters: a rule runs only on lines containing one of its words (lower-cased)
_NEEDLES: dict[str, tuple[str, ...]] = {
    "gfx_target_version": ("gfx_target_version",), "gfx version": ("gfx version", "target_graphics"),
    "gcnarchname": ("gcnarch",), "gpu_type": ("gfx",), "ollama amdgpu versions": ("amdgpu versions",), "ollama too old": ("too old", "supported"), "ollama amd driver": ("amd driver:",), "ollama description": ("description=", "device="), "ollama gfx_target": ("gfx_target=",), "tf amdgpu version": ("amdgpu version",), "tf device": ("pci bus id",), "sdnext agents": ("agents=",), "sdnext torch gpu": ("torch detected",),
    "sdnext hip": ("torch backend",), "invokeai torch device": ("using torch device",), "triton target": ("gputarget(",), "llama using device": ("using device",),
    "llama vulkan device": ("vulkan",),
    "uv amd architecture": ("rocm_agent_enumerator",), "sdnext docker": ("docker=true",), "tgi docker label": ("docker label:",), "frigate rocm": ("amd/rocm",), "jax devices": ("rocmdevice(",), "jax environment devices": ("local",), "kernel uname_result": ("uname_result(",),
    "ds_report": ("..",), "llama": ("gfx",), "nobinary device": ("found]",),
    "rocminfo name": ("name:",), "miopen db": ("db",), "tensile missing": ("tensilelibrary",), "tensile glob": ("no paths matched",), "julia hip device": ("hipdevice(",),
    "rocblas arch": ("arch",), "mms": ("stepping",), "isa paren": ("(gfx",), "enumerator": ("gfx",),
    "hip arch": ("gfx",), "pci [1002:xxxx]": ("1002:",), "k8s device-id": ("amd.com/gpu.device-id",), "lspci Device": ("device ",),
    "device id": ("id",), "glxinfo device": ("device:",), "lspci name": ("[amd",), "marketing name": ("radeon", "instinct", "firepro"),
    "device N: name": ("radeon", "instinct"), "bdf": ("amdgpu", "radeon"), "bdf kv": ("bus", "bdf", "pci id", "pci address"), "rocm at path": ("version",), "clinfo list": ("device #",), "lspci bdf": ("controller",),
    "ollama gpu index": ("gpu=", "id="), "ollama pci_id": ("pci_id=",), "count": ("devices", "device_count", "gpu"), "apu": ("apu",),
    "rocm path": ("/opt/rocm-",), "rocm package": ("rocm", "hip-runtime", "amdgpu-install"),
    "compiler banner": ("roc-",), "build path": ("rocm-rel-",), "source tree": ("/usr/src/debug/",), "rocm version kv": ("rocm",),
    "rocm version file": (".info/version",), "rocm build code": (".",), "amdgpu module": ("amdgpu",), "ramalama accelerator hip": ("accelerator",), "vllm platform rocm": ("detected platform rocm",), "moe config device": ("device_name=amd_",), "gpustack header": ("runtime version:",), "gpustack row": ("mib |",), "gpustack json cc": ("compute_capability",), "nvtop device": ("device",), "radeontop family": ("radeontop",), "lemonade family": ('"family"',), "gpu list name": ("radeon", "instinct"), "mlc found device": ("device: rocm:",), "cupy device": ("device ",), "rocm_bandwidth_test device": ("device: ", "device  bdf:"), "ghw pci device": ("-> driver:",), "boinc opencl gpu": ("amd/ati gpu",), "tinygrad amd device": ("amddevice: opening",), "rccl-tests rank": ("rank",), "blender hip device": ("added device",), "hashcat device": ("name...", "device #", "pci.addr.bdf..."), "therock index": (".amd.com/v2",), "rocm stated": ("rocm",), "torch banner": ("torch",), "torch pip": ("torch",),
    "torch site": ("torch-",), "torch repl": ("'",), "torch requirement": ("torch",), "python": ("python",),
    "torch wheel": ("torch-",), "torch you have": ("you",), "hip version": ("hip", "used to build", "torch rocm version"), "torch with its hip": ("torch.version.hip",), "kms init": ("modesetting",), "hsa device": ("hsa device",), "smi card series": ("card series", "card"), "torch paren": ("torch",), "torch build": ("torch",), "gfx overridden": ("gfx",),
    "env": ("hsa_", "_visible_devices", "gpu_device_ordinal", "pytorch_", "torch_blas", "miopen_", "rocm_path",
            "ld_library_path", "ld_preload"),
    "kernel platform": ("platform", "os"), "kernel modprobe": ("/lib/modules/",), "ubuntu hwe kernel": ("-ubuntu",), "kernel version": ("linux version", "linuxversion"), "kernel stack dump": ("comm:",), "kernel uname": ("linux ",),
    "kernel kv": ("kernel",), "wsl": ("wsl", "microsoft", "dxg"), "container": ("@", "dockerenv", "containerenv"),
    "amdgpu-pro": ("amdgpu-pro", "orca"), "container stated": ("container", "pod", "distrobox", "toolbox"), "container exec": (" exec ",), "container run -it": (" run ",), "image used": ("image",), "image I use": ("image",), "in my image": ("docker", "podman"), "own container": ("container", "pulled"), "title container": ("image", "container"), "rock": ("rock module",), "driver bound": ("amdgpu 0000:", "°c", "driver in use", "driver: amdgpu", "driver=amdgpu"), "kfd open": ("/dev/kfd",), "amdgpu loaded said": (" loaded",),
    "kfd missing": ("/dev/kfd", "/dev"), "reporter member": ("member of",), "groups said": ("groups",), "kfd added": ("added device",), "kfd probe": ("added device", "skipped device"), "group member": ("member of",),
    "driver version": ("driver version", "driver_version", "amdgpu version"), "dkms": ("amdgpu", "rock"),
    "in-tree said": ("in-kernel", "inbox", "in-tree"),
    "env unset": ("unset",), "env is set to": (" set to ",), "env stated": ("hsa_override",), "kfd refuses": ("not supported in kfd",), "firmware chip": ("amdgpu/",), "mesa chip": ("radv", "llvm", "drm"), "lshw bus": ("pci@",),
    "lshw product": ("[",), "labelled gpu": (":",), "prose gpu": ("radeon", "rx", "rtx", "vega", "mi", "xt", "gre", "instinct",
                                                                  "hd", "w", "r7", "r9", "r5", "navi", "ellesmere",
                                                                  "polaris", "aldebaran", "arcturus", "strix", "phoenix",
                                                                  "rembrandt", "renoir", "raphael", "cezanne", "lucienne", "raven",
                                                                  "picasso", "fury", "0m ",
                                                                  "nano"),
    "prose gfx": ("gfx",), "title gfx": ("gfx",), "darktable cname": ("amdacceleratedparallelprocessing",), "gfx support": ("support",), "title cpu": ("ryzen", "ai max"), "nix-info host os": ("host os",), "nixos system": ("nixos-system-",), "kernel table row": ("kernel",), "kernel cmdline": ("boot_image=",), "os-release version": ("version",), "full isa": ("sramecc",), "cpu igpu": ("igpu", "integrated", "apu"), "role gpu": ("igpu", "dgpu"), "visible index": ("_visible_devices",), "enumerated first": ("first",), "os arch words": ("arch",), "render nodes": ("renderd",), "amdgpu_top device": ("devicepath",), "kfd topology node": ("topology: add",), "drm initialized": ("initialized",), "amdgpu_top dump": ("dev.func", "deviceid.revid"), "inxi bus-id": ("chip-id: 1002:", "chip id: 1002:"), "kfd node": ("kfd",), "kfd stated": ("/dev/kfd",),
    "os": ("ubuntu", "debian", "fedora", "arch", "manjaro", "endeavour", "opensuse", "rocky", "alma", "centos", "red hat",
           "rhel", "mint", "pop!_os", "gentoo", "nixos", "oracle", "sles", "suse linux enterprise"),
    "os label": (":", "="), "fedora rpm": (".fc",), "gentoo portage build": ("/var/tmp/portage/",), "member": ("member of",), "prompt user": ("@",),
    "kernel token": ("-generic", "-amd64", "lowlatency", "-oem", "-aws", "-azure", "-gcp", "microsoft", "-arch", "-zen", "cachyos",
                     "-hardened", "-lts",
                     "-default", "-pve", "-rt", ".fc", ".el"),
}
# A gfx written in a list (wheel arch lists, build flags, "supported: ...") is not the device's.
_LIST_CONTEXT = lazy_re.compile(
    r"PYTORCH_ROCM_ARCH|AMDGPU_TARGETS|GPU_TARGETS|offload-arch|get_arch_list|arch_list|Available code objects"
    r"|supported (?:gfx|arch|targets?|GPUs?)|(?:gfx[0-9a-f]+[;,]\s*){2,}|\[\s*'gfx", re.I)


# rules whose gfx a key ties to one device, on lines that also list targets by design
_KEYED_GFX = frozenset({"ollama gfx_target", "ollama too old", "tf amdgpu version", "sdnext agents"})


# what a text says a correct install would show, said just before a version
# what an install or a doc says one should see ("should show `PyTorch version: 2.1.2`", "you should see: Using torch
# device: AMD Radeon RX 7900 XTX", "Expected output: jax.devices (2 total, 2 local)"): not this machine's
_SHOULD_SHOW = lazy_re.compile(r"\b(?:should\s+(?:now\s+|then\s+)?(?:show|be|say|print|read|report|display|give|see)\b"
                               r"|expected\s+output\s*:)[^.;()]*$", re.I)
# the kinds such a line would give: versions and the devices a program reports
_SHOWN_KINDS = frozenset({"torch", "hip", "rocm", "kernel", "driver_version", "gpu_name", "gpu_prose", "gpu_count",
                          "gpu_index", "gfx_rt", "gfx_hw", "pci_id", "bdf"})
_HEADING = lazy_re.compile(r"^\s{0,3}#{2,6}\s+(\S.*)$")  # closing hashes: _text.heading_title
_UNDERSCORE_EMPHASIS = lazy_re.compile(r"(?<![\w/.$])_+(?=\w)(?!_*(?:OLD|rocm_sdk|version|init|main|file|name)\b)|(?<=\w)_+(?![\w/.])")
_BARE_VERSION = lazy_re.compile(r"^\s*(?:ROCm\s+)?v?(\d+\.\d+(?:\.\d+)?)\s*$", re.IGNORECASE)
# the field answered with a distribution's ROCm package as rpm names it ("rocm-7.1.0-3.fc44.noarch",
# "rocm-core-6.3.1-1.el9.x86_64"): its version is the release
_ROCM_PACKAGE_NEVRA = lazy_re.compile(r"^\s*rocm(?:-core)?-(\d+\.\d+\.\d+)-\d[\w.]*?\.(?:fc|el)\d+(?:_\d+)?(?:\.(?:noarch|x86_64|aarch64))?\s*$")


# A processor model: named where the GPU is asked, it stands for its integrated GPU (wizard/kb/apus.json)
# (people drop the tier digit and PRO: "Ryzen 5650U" for the Ryzen 5 PRO 5650U; the knowledge base finds the one it names)
CPU = lazy_re.compile(r"\bRyzen\s+(?:AI\s+Max\+?\s+(?:PRO\s+)?\d{3}|AI\s+[579]\s+(?:HX\s+)?(?:PRO\s+)?\d{3}"
                 r"|[3579]\s+(?:PRO\s+)?\d{4}[A-Z0-9]{0,4}|(?:PRO\s+)?[1-9]\d{3}[A-Z][A-Z0-9]{0,3})\b", re.IGNORECASE)


# Strix Halo's processors as people write them without "Ryzen", in either order: "AI Max+ 395", "AMD 395 AI MAX+",
# "AI MAX PRO 390" (AMD's names: Ryzen AI Max 385/390, Max+ 395, Max PRO 380/385/390, Max+ PRO 395; apus.json)
_AI_MAX = lazy_re.compile(r"(?<!Ryzen )(?<![\w+])(?:AI\s+Max\+?\s+(PRO\s+)?(38[05]|39[05])|(38[05]|39[05])\s+AI\s+Max\+?(?:\s+(PRO))?)"
                          r"(?![\w.])", re.I)


def _cpu_names(line: str) -> list[str]:
    """The processors a line names, each as AMD writes it (a Strix Halo part written without "Ryzen" included)."""
    out = [m.group(0) for m in CPU.finditer(line)]
    for m in _AI_MAX.finditer(line):
        model = m.group(2) or m.group(3)
        out.append(f"Ryzen AI Max{'+' if model == '395' else ''}{' PRO' if m.group(1) or m.group(4) else ''} {model}")
    return out


def _cpu_as_gpu(line: str) -> list[tuple[str, str, str | None]]:
    return [("gpu_name", name, "cpu") for name in _cpu_names(line)]


# Ubuntu's own VERSION string: the release, "LTS" on long-term ones, and the alliterative codename
_UBUNTU_VERSION = lazy_re.compile(r"^\s*(\d{2}\.(?:04|10))(?:\.\d+)?(?:\s+LTS)?\s+\(([A-Z])[a-z]+\s+\2[a-z]+\)\s*$")


def _template_field(heading: str, line: str) -> list[tuple[str, str, str | None]]:
    """What a line says as the answer to an issue template's heading ("### GPU", "### ROCm Version")."""
    if heading in ("gpu", "gpus", "graphics", "graphics card", "gpu model"):
        out: list[tuple[str, str, str | None]] = [("gpu_name", p.group(0), "label") for p in PRODUCT.finditer(line)]
        if not out:
            out = _cpu_as_gpu(line)
        out += [("gfx_rt", g.lower(), "label") for g in re.findall(rf"(?i)^\s*({GFX_TARGET})\s*$", line)]
        return out
    if heading in ("cpu", "processor"):  # the machine's processor (an integrated GPU it carries is resolved later)
        return [("cpu", line.strip(), "label")] if re.search(r"\b(?:Ryzen|Athlon|EPYC|Threadripper)\b", line, re.I) else []
    if heading in ("operating system", "os", "distribution", "distro"):
        m = _OS_NAME.search(line)
        found = os_from_name(m.group(1), m.group(2)) if m else None
        um = _UBUNTU_VERSION.match(line.strip().strip("\"'`")) if found is None else None  # quoted as os-release quotes it
        if um:  # os-release's VERSION of Ubuntu without the name: "22.04.5 LTS (Jammy Jellyfish)"
            found = ("ubuntu", um.group(1))
        return [("os", f"{found[0]} {found[1] or ''}".strip(), "label")] if found else []
    if heading.startswith("rocm version"):
        m = _BARE_VERSION.match(line) or _ROCM_PACKAGE_NEVRA.match(line)
        return [("rocm", m.group(1), "label")] if m else []
    return []


# A thread's labels (_text.LABELS_LINE): only a label that is wholly a product or "ROCm X.Y[.Z]" is read.
_ROCM_LABEL = lazy_re.compile(r"ROCm\s+(\d+\.\d+(?:\.\d+)?)", re.IGNORECASE)


def _labels(labels: str) -> list[tuple[str, str, str | None]]:
    out: list[tuple[str, str, str | None]] = []
    for label in (x.strip() for x in labels.split(",")):
        if PRODUCT.fullmatch(label):
            out.append(("gpu_name", label, "label"))
        elif (rm := _ROCM_LABEL.fullmatch(label)) is not None:
            out.append(("rocm", rm.group(1), "label"))
    return out


_SHELL_START = lazy_re.compile(
    r"^\s*(?:[>$#%❯]\s*|\S+@\S+?[:~][^\s]*\s?[$#]\s*|\([\w.-]+\)\s*)?"
    r"(?:export\b|set\s+-|env\b|sudo\b|docker\b|podman\b|-\s|-e\b|Environment=|[A-Z_][A-Z0-9_]*=|[A-Z_][A-Z0-9_]*:\s|\{|\[|\||`?\w+\s*=)")


def _shellish(line: str) -> bool:
    """A line that sets variables (a command, an rc file, a compose file, a log's env map), not a sentence about them."""
    if _SHELL_START.match(line) or "map[" in line or "env=" in line or re.search(r"\blevel=[A-Z]+\b|\bmsg=", line):
        return True
    prose = re.sub(r"`[^`]*`", " ", line)
    return len(re.findall(r"[A-Za-z]{2,}", prose)) <= 6


# a line that opens a conditional block in a script or program (shell, Python, Julia, Ruby, JavaScript): the keyword in
# lower case, as code writes it (a sentence's "If I run:" starts with a capital)
_CONDITIONAL = lazy_re.compile(r"^\s*(?:if|elif|elseif|else\s+if|unless)\b")


# A line that asks for one fact, and the form of the next line that answers it: `pip show torch` ("Name: torch", then
# "Version: 2.5.1+rocm6.2"), and Python's or IPython's prompt echoing an expression's value on the line below it
_REPL = r"^\s*(?:>>>|In \[\d+\]:)\s*(?:print\()?"
_ECHO = r"^\s*(?:Out\[\d+\]:\s*)?['\"]?"
_ASKED: tuple[tuple[lazy_re.Pattern, str, lazy_re.Pattern], ...] = (
    (lazy_re.compile(r"^\s*Name:\s*torch\s*$"), "torch",
     lazy_re.compile(r"^\s*Version:\s*(\d+\.\d+(?:\.\d+)?(?:[a-z]+\d+)?(?:\.dev\d+)?(?:\+[\w.]+)?)\s*$")),
    (lazy_re.compile(_REPL + r"torch\.__version__\)?\s*$"), "torch",
     lazy_re.compile(_ECHO + r"(\d+\.\d+\.\d+(?:[a-z]+\d+)?(?:\.dev\d+)?(?:\+[\w.]+)?)['\"]?\s*$")),
    (lazy_re.compile(_REPL + r"torch\.version\.hip\)?\s*$"), "hip",
     lazy_re.compile(_ECHO + r"(\d+\.\d+\.\d{5}-[0-9a-f]+)['\"]?\s*$")),
    (lazy_re.compile(_REPL + r"torch\.cuda\.get_device_properties\([^)\n]*\)\.gcnArchName\)?\s*$"), "gfx_rt",
     lazy_re.compile(_ECHO + rf"({GFX_TARGET})(?::[\w+:-]*)?['\"]?\s*$")),
    # a device's PCI vendor id line, then its device id on the next (read as 1002:<id>):
    # vulkaninfo's "vendorID = 0x1002" / "deviceID = 0x744c", in --summary and in VkPhysicalDeviceProperties
    # (KhronosGroup/Vulkan-Tools 697e22d5d256b29e4d6cdd75b3cd42f1aa634113 vulkaninfo/vulkaninfo.cpp DumpSummaryGPU,
    # vulkaninfo/generated/vulkaninfo.hpp); hwinfo's "Vendor: pci 0x1002 ..." / "Device: pci 0x744c ..."
    # (openSUSE/hwinfo 3e3a3cf762b7521a1d99b9291d02c28caf7b8dec src/hd/hdp.c: dump_normal's "Vendor: %s", "Device: %s"
    # of dump_hid's "pci 0x%04x"; "SubVendor:" / "SubDevice:" name the board, not the chip)
    (lazy_re.compile(r"^\s*vendorID\s*=\s*0x0*1002\s*$"), "pci_id", lazy_re.compile(r"^\s*deviceID\s*=\s*0x0*([0-9a-fA-F]{4})\s*$")),
    (lazy_re.compile(r"^\s*Vendor:\s*pci 0x1002\b"), "pci_id", lazy_re.compile(r"^\s*Device:\s*pci 0x([0-9a-fA-F]{4})\b")),
    # ... and a device's name (hipDeviceProp's name on ROCm: "AMD Radeon RX 6800 XT"; same file, get_device_name)
    (lazy_re.compile(_REPL + r"torch\.cuda\.get_device_name\([^)\n]*\)\)?\s*$"), "gpu_name",
     lazy_re.compile(_ECHO + rf"({_AMD_NAME}[^'\"\n]*?)['\"]?\s*$")),
    # the number of GPUs torch sees, an int (pytorch/pytorch@17e3b6a:torch/cuda/__init__.py device_count); 0 is no count
    (lazy_re.compile(_REPL + r"torch\.cuda\.device_count\(\)\)?\s*$"), "gpu_count", lazy_re.compile(r"^\s*(?:Out\[\d+\]:\s*)?(\d{1,2})\s*$")),
    # `modinfo amdgpu`: the module file first, then its fields (kmod tools/modinfo.c); a "version:" line, read as the next
    # one, is the MODULE_VERSION only an out-of-tree amdgpu (amdgpu-dkms) declares (mainline drivers/gpu/drm/amd/amdgpu/
    # amdgpu_drv.c declares none; "filename: .../updates/dkms/amdgpu.ko" then "version: 18.20.2.15" as amdgpu-pro's shows it).
    # The file's version, not a loaded module's ("modinfo_version": read as driver_version, detail "modinfo")
    (lazy_re.compile(r"^\s*filename:\s*/\S*/amdgpu\.ko(?:\.(?:xz|zst|gz))?\s*$"), "modinfo_version",
     lazy_re.compile(r"^\s*version:\s*(\d+\.\d+\.\d+(?:\.\d+)?)\s*$")),
)


_PIP_SHOW_NAME = lazy_re.compile(r"^\s*Name:\s*\S+\s*$")
_PIP_SHOW_TORCH = lazy_re.compile(r"^\s*Name:\s*torch\s*$")
_PIP_REQUIRES_CUDA = lazy_re.compile(r"^\s*Requires:.*\bnvidia-[\w-]+-(cu\d+)\b")
# a shell one-liner that prints one value (`python -c "import torch; print(torch.version.hip)"`): its output answers it
# as the Python prompt's echo does
_ONE_LINER = lazy_re.compile(r"^\s*python3?(?:\.\d+)?\s+-c\s+[\"'](?:[^\"'\n]*;\s*)?print\((?P<expr>[\w.]+(?:\([^()\"'\n]*\))?(?:\.[\w]+)*)\)\s*;?\s*[\"']\s*$")


# hipInfo's device blocks (ROCm/hip-tests@3543bc3:samples/1_Utils/hipInfo/hipInfo.cpp printDeviceProp): "device#" and the
# HIP index, then "Name: ", "pciBusID: ", "pciDeviceID: ", "pciDomainID: " (decimal, one a line), ..., "gcnArchName: ",
# each key left-aligned in 34 columns. What a block's lines name is that device's, at that index; its three PCI numbers
# make its address (a GPU's display function is function 0)
_HIPINFO_DEVICE = lazy_re.compile(r"^\s*device#\s+(\d{1,2})\s*$")
_HIPINFO_PCI = lazy_re.compile(r"^\s*pci(Bus|Device|Domain)ID:\s+(\d{1,5})\s*$")
_HIPINFO_ROW = lazy_re.compile(r"^\s*[A-Za-z][\w.]*:")


class _HipInfoBlock:
    """The hipInfo device block being read: its HIP index and the PCI numbers read so far."""

    def __init__(self, index: str) -> None:
        self.index = index
        self.pci: dict[str, int] = {}

    def place(self, line: str) -> str | None:
        """The device's address, once its domain (the last of the three) is read."""
        m = _HIPINFO_PCI.match(line)
        if m is None:
            return None
        self.pci[m.group(1)] = int(m.group(2))
        bus, dev, dom = (self.pci.get(k) for k in ("Bus", "Device", "Domain"))
        if m.group(1) != "Domain" or bus is None or dev is None or dom is None or bus > 255 or dev > 31 or dom > 0xFFFF:
            return None
        return f"{dom:04x}:{bus:02x}:{dev:02x}.0"


# TransferBench's GPU topology table on ROCm (ROCm/TransferBench@788840d:src/TransferBench.cpp; the NVIDIA build prints
# none): a header row of each GPU's gcnArchName without its features ("        | gfx1100 | gfx1100 |"), then a row a GPU:
# " GPU %02d |", a link cell per GPU ("    -   |" for itself, "%s-%d" of HT/QPI/PCIE/INFB/XGMI and the hop count), then
# " %11s | %4d | %-12d |" of hipDeviceGetPCIBusId, the CUs and the closest NUMA node. A row after the header names that
# GPU's index, address and target
_TRANSFERBENCH_ARCHS = lazy_re.compile(rf"^\s+\|(?: +{GFX_TARGET} \|)+\s*$")
_TRANSFERBENCH_ROW = lazy_re.compile(r"^\s*GPU (\d{2}) \|(?:\s*(?:-|(?:  HT| QPI|PCIE|INFB|XGMI|\?\?\?\?)-\d+)\s*\|)+"
                                     r"\s*([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]) \|\s*\d+ \|")


# `apt install linux-headers-$(uname -r) linux-modules-extra-$(uname -r)` (AMD's install steps): what apt then prints
# about those packages names them by the running kernel's release, as the shell expanded it
_UNAME_PACKAGE = lazy_re.compile(r"\blinux-(?:headers|modules(?:-extra)?|image|tools)-[\"']?(?:\$\(uname -r\)|`uname -r`)")
# ... until apt's answer ends: at a blank line or at the next command (which may install another kernel)
_NEXT_COMMAND = lazy_re.compile(r"^\s*(?:\S+@\S+?[:~][^\s$#]*\s?[$#]|[$#>])?\s*(?:sudo\s+)?(?:apt|apt-get|dpkg|dnf|uname)\s")
_APT_KERNEL_PACKAGE = lazy_re.compile(
    r"(?:\bUnable to locate package |\bCouldn't find any package by (?:glob|regex) '|^\s*)"
    r"linux-(?:headers|modules(?:-extra)?|image|tools)-(\d+\.\d+(?:\.\d+)?[\w.+~-]*?)'?"
    r"(?:\s*$|\s+is already the newest version\b)")


# System commands that print one fact on their first line, and the form of that answer:
# * systemd-detect-virt (-c/--container): the container technology's id (systemd/systemd
#   c7bf6410e8628d91e1ea3673b1ffbb2b78005f03 src/basic/virt.c, virtualization_table and container_table: openvz, lxc,
#   lxc-libvirt, systemd-nspawn, docker, podman, rkt, proot, pouch, container-other) -> in a container; "wsl" is WSL,
#   read by the "wsl" rule from its own word; a VM's id ("kvm", "microsoft") or "none" is not a container;
# * cat /sys/module/amdgpu/initstate: "live" once the module is initialised (the kernel's module_sysfs_initstate);
# * cat /sys/module/amdgpu/version: the module's MODULE_VERSION, which only an out-of-tree amdgpu (amdgpu-dkms) sets
#   (mainline drivers/gpu/drm/amd/amdgpu/amdgpu_drv.c declares none).
_COMMAND_ASKS: tuple[tuple[lazy_re.Pattern, str, lazy_re.Pattern], ...] = (
    (lazy_re.compile(r"^(?:sudo\s+)?systemd-detect-virt(?:\s+(?:-c|--container))?\s*$"), "container",
     lazy_re.compile(r"^\s*(openvz|lxc|lxc-libvirt|systemd-nspawn|docker|podman|rkt|proot|pouch|container-other)\s*$")),
    (lazy_re.compile(r"^(?:sudo\s+)?cat\s+/sys/module/amdgpu/initstate\s*$"), "rock", lazy_re.compile(r"^\s*(live)\s*$")),
    (lazy_re.compile(r"^(?:sudo\s+)?cat\s+/sys/module/amdgpu/version\s*$"), "driver_version",
     lazy_re.compile(r"^\s*(\d+\.\d+\.\d+)\s*$")),
)


def _asked_by(command: str | None) -> tuple[str, lazy_re.Pattern] | None:
    if command and (asks := next(((kind, form) for ask, kind, form in _COMMAND_ASKS if ask.match(command)), None)):
        return asks
    m = _ONE_LINER.match(command) if command else None
    line = f">>> print({m.group('expr')})" if m else ""
    return next(((kind, form) for ask, kind, form in _ASKED if ask.match(line)), None) if m else None


def _answer(kind: str, value: str) -> tuple[str, str, str | None]:
    """The kind, value and detail of a fact a line answers for the line (or the command) before it."""
    if kind == "gfx_rt":
        return kind, value.lower(), "echo"
    if kind == "pci_id":
        return kind, f"1002:{value.lower()}", None
    if kind in ("container", "rock"):
        return kind, "true", None
    if kind == "driver_version":
        return kind, value, "sysfs"
    if kind == "modinfo_version":
        return "driver_version", value, "modinfo"
    return kind, value, "echo"


@never_raises(tuple)  # type: ignore[arg-type]
def read_mentions(text: object, command: str | None = None) -> tuple[Mention, ...]:
    """Every fact a text states, in text order; never raises. ``command``: the command that printed the text."""
    out: list[Mention] = []
    seen: set[tuple[str, str, int]] = set()

    def add(kind: str, value: str, no: int, line: str, detail: str | None) -> None:
        """A mention, once per (kind, value, line)."""
        if (kind, value, no) not in seen:
            seen.add((kind, value, no))
            out.append(Mention(kind, value, no, line.strip()[:240], detail))

    in_code_objects = False
    heading: str | None = None  # an issue template's "### GPU" / "### ROCm Version" field the next lines answer
    answered = 0
    asked = _asked_by(command)  # the fact the line before (or the command) asked for, and its answer's form
    pip_show_torch = False  # inside `pip show torch`'s block (its Name line to a blank or another Name line)
    branch_indent: int | None = None  # the indentation of the conditional ("if ...") the lines below it are inside
    # the command (or a line above) asked apt for kernel packages by `$(uname -r)`
    uname_packages = bool(command and "uname -r" in command and _UNAME_PACKAGE.search(command))
    hipinfo: _HipInfoBlock | None = None  # inside hipInfo's block of one device
    transferbench_archs: list[str] = []  # the targets of TransferBench's topology header, by GPU index
    for no, line in lines(text):
        if uname_packages and (not line.strip() or _NEXT_COMMAND.match(line)):
            uname_packages = False
        if not line or len(line) > 4000:
            continue
        first = len(out)
        if (hd := _HIPINFO_DEVICE.match(line)) is not None:
            hipinfo = _HipInfoBlock(hd.group(1))
        elif hipinfo is not None and line.strip() and not _HIPINFO_ROW.match(line):
            hipinfo = None
        elif hipinfo is not None and (place := hipinfo.place(line)) is not None:
            add("bdf", place, no, line, None)
        if "gfx" in line and _TRANSFERBENCH_ARCHS.match(line):
            transferbench_archs = _GFX_RE.findall(line)
        elif transferbench_archs and (tb := _TRANSFERBENCH_ROW.match(line)) is not None:
            index = int(tb.group(1))
            add("bdf", tb.group(2).lower(), no, line, None)
            add("gpu_index", str(index), no, line, None)
            if index < len(transferbench_archs):
                add("gfx_rt", transferbench_archs[index], no, line, None)
        indent = len(line) - len(line.lstrip())
        if branch_indent is not None and line.strip() and indent <= branch_indent:
            branch_indent = None
        conditional = branch_indent is not None
        if _CONDITIONAL.match(line):
            branch_indent = indent
        answer = asked[1].match(line) if asked is not None else None
        if asked is not None and answer:
            kind, value, detail = _answer(asked[0], answer.group(1))
            add(kind, value, no, line, detail)
        asked = next(((kind, form) for ask, kind, form in _ASKED if ask.match(line)), None)
        if "uname -r" in line and _UNAME_PACKAGE.search(line):
            uname_packages = True
        elif uname_packages and "linux-" in line and (kp := _APT_KERNEL_PACKAGE.search(line)) is not None:
            add("kernel", kp.group(1), no, line, "apt $(uname -r)")
        if _PIP_SHOW_NAME.match(line) or not line.strip():
            pip_show_torch = bool(_PIP_SHOW_TORCH.match(line))
        elif pip_show_torch and (cu := _PIP_REQUIRES_CUDA.match(line)) is not None:
            add("torch_cuda", cu.group(1), no, line, "pip show")  # PyPI's default Linux wheel: a CUDA build
        if "*" in line or "_" in line:  # markdown emphasis: **ROCm**: 7.2.1, _rocm-core 6.0.2-2_
            line = _UNDERSCORE_EMPHASIS.sub(" ", line.replace("**", "")).rstrip()
        low = line.lower()
        hm = _HEADING.match(line)
        if hm:
            heading, answered = heading_title(hm.group(1)).lower(), 0
            continue
        lm = LABELS_LINE.match(line) if "labels:" in low else None
        if lm and "=" not in lm.group("labels"):  # a tracker's labels, not Kubernetes' key=value ones
            for kind, value, detail in _labels(lm.group("labels")):
                add(kind, value, no, line, detail)
            continue
        if heading is not None and answered < 3:
            answered += 1
            for kind, value, detail in _template_field(heading, line):
                add(kind, value, no, line, detail)
        if "code object" in low and "available" in low:
            in_code_objects = True
        elif in_code_objects and (not line.strip() or "devices" in low):
            in_code_objects = False
        listy = bool(_LIST_CONTEXT.search(line)) or in_code_objects
        telling = bool(_TELLING.search(line))
        untried = "not" in low or "n't" in low or "n’t" in low
        untried = untried and bool(_UNTRIED.search(line))
        for name, rx, make in _RULES:
            needles = _NEEDLES.get(name)
            if needles and not any(n in low for n in needles):
                continue
            for m in rx.finditer(line):
                for kind, value, detail in make(m):
                    if kind in ("gfx_rt", "gfx_hw") and listy and name not in _KEYED_GFX:
                        continue
                    if kind == "env" and detail is None and (telling or conditional or (name == "env" and not _shellish(line))):
                        continue  # advice, or a setting a program makes only under a condition, is not the machine's
                    if kind == "os" and untried:
                        continue
                    if kind in _SHOWN_KINDS and _SHOULD_SHOW.search(line, 0, m.start()):
                        continue  # what an install should give ("should show `PyTorch version: 2.1.2`"), not this machine's
                    add(kind, value, no, line, detail)
                if name in ("env",):
                    break  # the env rule reads the whole line at once
        if hipinfo is not None and any(m.kind in ("gpu_name", "gfx_rt", "bdf") for m in out[first:]):
            add("gpu_index", hipinfo.index, no, line, "hipInfo")
    return tuple(out)


__all__ = ["KINDS", "Mention", "read_mentions"]
