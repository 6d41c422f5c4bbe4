"""One mixed text (an issue body, a whole thread, a terminal scrollback) -> evidence segments.

A paste is cut where its shape changes: thread post headers (``alice · comment · 2024-05-01``),
markdown fences and headings, HTML ``<details>`` blocks, shell prompts and bare command lines
(``$ rocminfo``, ``# rocm-smi`` inside a fence, ``\\`uname -r``), and the first line of a known
output (``ROCk module is loaded``, ``==== ROCm System Management Interface ====``, ``Collecting
environment information...``, an ``lspci`` device line, a ``dmesg`` timestamp...). Each segment
gets the kind of output it is, named as the evidence-bundle file that would hold it
(``rocminfo.txt``, ``lspci.txt``...), or ``text`` for prose and logs that no parser reads.

Line numbers are the pasted text's own (1-based), so a fact read from a segment points at the
line of the paste that said it. Thread posts are kept apart: a post by someone other than the
thread's author describes another machine, so readers can tell the two apart (``Segment.own``).
"""

from __future__ import annotations

import re

from wizard import lazy_re
from wizard.parsers.dmesg import DMESG_CTIME, DMESG_ISO
from wizard.parsers.pacman import PACKAGE_LINE as PACMAN_PACKAGE_LINE
from wizard.parsers._text import (LABELS_LINE, MAX_LINE, Budgeted, check_budget, clean_line, heading_title,
                                  never_raises, prompt_command, to_text)
from wizard.record import record, replace

TEXT = "text"

# A command line -> the output kind it prints (first match wins).
_COMMAND_KINDS: tuple[tuple[lazy_re.Pattern, str], ...] = tuple(
    (lazy_re.compile(rx), kind)
    for rx, kind in (
        (r"rocm_agent_enumerator", "rocm_agent_enumerator.txt"),
        (r"\brocminfo\b", "rocminfo.txt"),
        (r"\brocm-smi\b|\brocm_smi\b", "rocm-smi.txt"),
        (r"\bamd-smi\b", "amd-smi.txt"),
        (r"\blspci\b", "lspci.txt"),
        (r"\bclinfo\b", "clinfo.txt"),
        (r"collect_env", "collect_env.txt"),
        (r"/kfd/topology|/sys/\S*kfd\S*/properties", "kfd-properties.txt"),
        (r"\bdmesg\b|\bjournalctl\b", "dmesg.txt"),
        (r"os-release|\blsb_release\b|\bhostnamectl\b", "os-release.txt"),
        (r"^\S*\buname\b", "uname.txt"),
        (r"\bpip3?\s+(?:freeze|list)\b|\bconda\s+list\b|\buv\s+pip\s+(?:list|freeze)\b|\bpython3?\S*\s+-m\s+pip\s+(?:list|freeze)\b",
         "pip-freeze.txt"),
        (r"\bdpkg(?:-query)?\s+(?:-l|--list|-W)\b|\bapt\s+list\b|\bapt-cache\s+policy\b", "dpkg.txt"),
        (r"\bpacman\s+-Q[enmdtu]*(?:\s|$)", "pacman.txt"),  # -Qi, -Ql, -Qo print other layouts
        (r"\brpm\s+-q|\b(?:dnf|yum)\s+list\b", "rpm.txt"),
        # zypper's search/packages tables and info blocks (parsers/zypper.py); its global options come first
        (r"\bzypper\s+(?:-\S+\s+)*(?:se|search|pa|packages|if|info)\b", "zypper.txt"),
        (r"^(?:env|printenv|set)\b(?!\s*-[a-z]*[ex])|^env\s*\|", "env.txt"),
        (r"^(?:groups|id)(?:\s+\w+)?\s*$", "groups.txt"),
        (r"\.info/version", "rocm-version.txt"),
    )
)
# Commands a bare line (no prompt) may be: the tool first, then only flags, paths, pipes.
_BARE_COMMAND = lazy_re.compile(
    r"^(?:sudo\s+(?:-\S+\s+)*)?(?:/opt/rocm\S*/bin/)?"
    r"(rocminfo|rocm-smi|amd-smi|lspci|clinfo|dmesg|journalctl|uname|lsb_release|hostnamectl|groups|id|"
    r"rocm_agent_enumerator|pip3?|conda|dpkg|apt|rpm|dnf|pacman|printenv|env|cat|python3?(?:\.\d+)?)"
    r"((?:\s+(?:-{1,2}[\w=./-]*|\|\s*\S+|[\w./*-]*/[\w./*:-]*|-m|list|freeze|show|-qa|grep|[\w.-]+=\S*|"
    r"torch\.utils\.collect_env|\"[^\"]*\"|'[^']*'))*)\s*$"
)
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?"
_DATE = (rf"(?:\d{{4}}-\d\d-\d\d|{_MONTH}\s+\d{{1,2}}(?:,?\s+\d{{4}})?|\d{{1,2}}\s+{_MONTH}(?:\s+\d{{4}})?"
         r"|\d+\s+(?:minutes?|hours?|days?|weeks?|months?|years?)\s+ago|yesterday|last\s+(?:week|month|year))")
_OPENING_KINDS = ("description", "opened", "opened this issue", "asked", "question")
# "alice · comment · 2024-05-01" (stored threads); "alice commented on Mar 1, 2024" / "bob opened this issue
# 3 days ago · 5 comments" (a GitHub page copied as text); "carol replied Jan 5" (forums)
_POST_HEADER = lazy_re.compile(
    r"^\s*@?(?P<author>[\w.\[\]-]+) · (?P<kind>description|comment(?:ed)?|review(?: comment| thread)?|answer(?:ed)?"
    r"|repl(?:y|ied)|opened|asked|question|posted) · " + _DATE + r"\b"
    r"|^\s*@?(?P<author2>[A-Za-z0-9][\w.-]{0,38})\s+(?P<kind2>commented|opened this issue|opened|replied|answered|asked"
    r"|posted)(?:\s+on)?\s+" + _DATE + r"\b(?:\s*(?:·|\W)\s*(?:\d+\s+comments?|edited.*|\(edited\)))?\s*:?\s*$",
    re.IGNORECASE,
)
# A stored thread's own header ("ROCm/ROCm · issue #2686 · closed · Shell", "labels: ROCm 6.2.1, AMD Radeon RX 7900 XT"):
# who filed it where, and the triagers' tags, which name releases and cards that need not be this machine's
_THREAD_META = lazy_re.compile(r"^\s*[\w.-]+/[\w.-]+ · (?:issue|pull request|pr|discussion) #\d+\b", re.IGNORECASE)
_TURN_HEADER = lazy_re.compile(r"^\s*\[turn (?P<turn>\d+) by (?P<author>[^,\]]+)(?P<continued>, continued)?\]\s*$")
_FENCE = lazy_re.compile(r"^\s*(?:```|~~~)")
_HEADING = lazy_re.compile(r"^\s{0,3}#{1,6}\s+(?P<title>\S.*)$")  # closing hashes: _text.heading_title
_HTML_BLOCK = lazy_re.compile(r"^\s*</?(?:details|summary|pre|code|p|div|br|hr|table|tr|td|th|tbody|thead|ul|ol|li|h\d)\b[^>]*>",
                         re.IGNORECASE)
_HTML_TAG = lazy_re.compile(r"</?(?:details|summary|pre|code|p|div|br|b|i|em|strong|kbd|sup|sub|h\d)\b[^>]*>", re.IGNORECASE)
_SUMMARY = lazy_re.compile(r"<summary>(?P<title>.*?)(?:</summary>|$)", re.IGNORECASE)
_LABEL_MAX = 160  # a label line (its title at most 80 characters) is short: longer lines are not tried
_LABEL = lazy_re.compile(r"^\s*(?:\*\*|__)?(?P<title>[^:]{1,80}?)(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*$")

# Strong first lines of known outputs (no command needed).
# rocm-smi --json: one line of json.dumps(JSON_DATA), keyed "card0"... and "system"
_ROCM_SMI_JSON = r"^\{\"(?:card\d+|system)\": \{"
_MARKERS: tuple[tuple[lazy_re.Pattern, str], ...] = tuple(
    (lazy_re.compile(rx), kind)
    for rx, kind in (
        (r"^ROCk module (?:version \S+ )?is (?:NOT )?loaded|^ROCk module is NOT live\b|^HSA System Attributes\s*$|^HSA Agents\s*$"
         r"|^(?:Unable|Able) to open /dev/kfd read-write|^\*{3,}\s*$|^Agent \d+\s*$", "rocminfo.txt"),
        (r"ROCm System Management Interface|^=+ (?:Concise Info|Product Info|Memory Usage|PCI Bus ID|Version of)"
         r"|End of ROCm SMI Log|^GPU\[\d+\]\s*:"
         # --json: one line of json.dumps(JSON_DATA), keyed "card0"... and "system" (ROCm/rocm_smi_lib a1295714f2f6
         # python_smi_tools/rocm_smi.py, the end of main())
         r"|" + _ROCM_SMI_JSON, "rocm-smi.txt"),
        (r"^GPU:\s*\d+\s*$|^AMDSMI Tool:|^\s*(?:MARKET_NAME|TARGET_GRAPHICS_VERSION|ASIC|BUS|VRAM):\s"
         r"|^\|\s*AMD-SMI\s+\d|^gpu,[a-z0-9_,]*\b(?:market_name|target_graphics_version)\b"
         r"|^tool,version,amdsmi_library_version\b", "amd-smi.txt"),
        (r"^(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]\s+(?:VGA compatible controller|Display controller"
         r"|3D controller|Processing accelerators|[A-Z][\w /-]+ controller|[A-Z][\w /-]+ bridge)"
         # -mm's quoted class ("03:00.0 \"VGA compatible controller [0300]\" ...") and -vmm's first line (lspci.c show_machine)
         r"|^(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]\s+\"(?:VGA compatible|Display|3D) controller"
         r"|^Slot:[ \t]+(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]\s*$", "lspci.txt"),
        (r"^Number of platforms\s|^\s*Platform Name\s|^\s*Number of devices\s|^\s*Device Board Name \(AMD\)",
         "clinfo.txt"),
        # collect_env's library list starts a segment of it too (the head cut off): its "Versions of relevant
        # libraries:" line, or the "[pip3] name==version" / "[conda] name version ..." lines only it prints
        # (vLLM's collect_env pads its keys: "PyTorch version              : 2.9.0")
        (r"^Collecting environment information|^PyTorch version\s*:\s|^Is debug build\s*:\s|^ROCM used to build PyTorch\s*:"
         r"|^GPU models and configuration\s*:|^HIP runtime version\s*:|^MIOpen runtime version\s*:"
         r"|^Versions of relevant libraries:\s*$|^\[(?:pip3?|conda)\] [A-Za-z0-9][\w.-]*(?:==\S|\s+\d)",
         "collect_env.txt"),
        (r"^\s*==>\s*\S*(?:kfd|topology)\S*properties\s*<==|^\s*(?:cpu_cores_count|simd_count|gfx_target_version"
         r"|mem_banks_count|caches_count|io_links_count|cpu_core_id_base|simd_id_base)\s+\d+\s*$", "kfd-properties.txt"),
        (r"^\s*\[\s*\d+\.\d+\]\s|^[A-Z][a-z]{2}\s+\d+\s+\d\d:\d\d:\d\d\s+\S+\s+kernel:"
         # dmesg -T and --time-format=iso (parsers/dmesg.py), journalctl -o short-iso's "2025-11-29T10:00:02+0000 box kernel:"
         rf"|^{DMESG_CTIME}\s|^{DMESG_ISO}\s|^\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\d\S*\s+\S+\s+kernel:", "dmesg.txt"),
        (r"^(?:PRETTY_NAME|ID|ID_LIKE|VERSION_ID|VERSION_CODENAME|UBUNTU_CODENAME)=|^Distributor ID:\s", "os-release.txt"),
        (r"^Linux \S+ \d+\.\d+\.\d+\S* #\d", "uname.txt"),
        (r"^Package\s+Version\s*(?:\s+\S+)?$|^[A-Za-z0-9][\w.-]*==\d[\w.+!-]*\s*$", "pip-freeze.txt"),
        (r"^Desired=Unknown/Install|^\|\|/ Name|^[uihrp][ncHUFWtiR]\s{1,3}[a-z0-9][\w+.:-]+\s+\d\S*\s+\S+", "dpkg.txt"),
        (r"^uid=\d+\([^)]*\) gid=\d+", "groups.txt"),
        # zypper's table headers (search -s, search, packages) and info heading (openSUSE/zypper src/search.cc, info.cc)
        (r"^S\s+[|│]\s+Name\s+[|│]\s+(?:Type\s+[|│]\s+Version|Summary\s+[|│]\s+Type)\b"
         r"|^S\s+[|│]\s+Repository\s+[|│]\s+Name\s+[|│]\s+Version\b|^Information for package [\w.+-]+:\s*$", "zypper.txt"),
        (r"^gfx[0-9a-f]{3,4}\s*$", "rocm_agent_enumerator.txt"),
    )
)

# A GPU agent's name line of rocminfo ("  Name:                    gfx1100"), which a filtered rocminfo keeps; it starts
# a rocminfo segment only out of another tool's output (clinfo prints a device "Name:" of the same shape)
_AGENT_NAME = lazy_re.compile(r"^\s*Name:\s+gfx[0-9]{1,2}[0-9a-f]{2,3}\s*$")
# Lines that may continue a segment of each kind once it has started.
_KEY_VALUE = lazy_re.compile(r"^\s*[A-Za-z][\w ./()+#&,'-]{0,60}:\s*(?:\S.*)?$")
_BODY: dict[str, lazy_re.Pattern] = {
    "rocminfo.txt": lazy_re.compile(
        r"^\s*(?:[A-Za-z][\w ./()+#&,'-]{0,60}:|\*+|Agent \d+|Pool \d+|ISA \d+|[xyz]\s+\d+|N/A|\d+\S*\s*$)"
        r"|hsa api call failure|Call returned|is (?:not )?member of|Failed to get user name|HSA_STATUS"
        r"|Unable to open|Able to open|^\s*\*\*\* Done"),
    "rocm-smi.txt": lazy_re.compile(r"^\s*(?:GPU\[\d+\]|=+|-+|\d+\s|Device\s|GPU\s|WARNING|ERROR|Driver version|\S.*\s{2,}\S)"
                               r"|^\s+\S|^(?:device|card(?:\d+|system)|system),|" + _ROCM_SMI_JSON),  # --csv, --json
    "amd-smi.txt": lazy_re.compile(r"^\s*(?:[A-Z][A-Z0-9_ ]*:|GPU:|\||\+-|[-=]+\s*$|[A-Z]+\s*:)|^\s{2,}\S"
                                   r"|^\s*[\[\]{}],?\s*$|^\s*\"[a-z_]+\"\s*:|^gpu,|^\d+,|^tool,|^AMDSMI Tool,"),  # --json, --csv
    "lspci.txt": lazy_re.compile(r"^\s*(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]\s|^\s+\S"
                                 r"|^(?:Slot|Device|Class|Vendor|SVendor|SDevice|PhySlot|Rev|ProgIf|Driver|Module|NUMANode"
                                 r"|IOMMUGroup|DTNode):[ \t]+\S"),
    "clinfo.txt": lazy_re.compile(r"^\s+\S|^\s*[A-Z][\w ()/.,-]*\s{2,}\S|^\s*[A-Z][\w ()/.,-]*:\s"),
    "collect_env.txt": lazy_re.compile(
        r"^\s*[A-Za-z][\w ./()+#&,'-]{0,60}:|^\s*\[(?:pip3?|conda)\]|^\s*GPU \d+:|^\s+\S|^Versions of relevant"
        r"|^Vulnerability |^Flags:|^\s*(?:CPU|Architecture|Model name|Stepping)|^Collecting environment"),
    "kfd-properties.txt": lazy_re.compile(r"^\s*[a-z][a-z0-9_]*\s+-?\d+\s*$|^\s*==>.*<==\s*$|^\s*\S*nodes/\d+/properties"),
    "dmesg.txt": lazy_re.compile(rf"^{DMESG_CTIME}|^{DMESG_ISO}\s|"
                            r"^\s*\[\s*\d+\.\d+\]|^[A-Z][a-z]{2}\s+\d+\s+\d\d:\d\d:\d\d\s|^\d{4}-\d\d-\d\dT\d\d:"
                            r"|^\s*(?:amdgpu|kfd|\[drm\]|kernel:)"),
    "os-release.txt": lazy_re.compile(r"^[A-Z_]+=|^(?:Distributor ID|Description|Release|Codename|No LSB modules)\b"
                                 r"|^\s*(?:Static hostname|Icon name|Chassis|Machine ID|Boot ID|Operating System|Kernel"
                                 r"|Architecture|Hardware|Firmware|Virtualization|Transient hostname)\b"),
    "uname.txt": lazy_re.compile(r"^Linux |^\d+\.\d+\.\d+\S*\s*$|^(?:x86_64|aarch64)\s*$"),
    "pip-freeze.txt": lazy_re.compile(r"^[A-Za-z0-9][\w.-]*\s*(?:==|===|@|\s)\s*\S|^-{3,}|^Package\s|^#|^-e\s|^--"),
    "dpkg.txt": lazy_re.compile(r"^[uihrpn][ncHUFWtiR]R?\s|^\|\|/|^\+\+\+-|^Desired=|^\| Status=|^\|/ Err\?"
                           r"|^[a-z0-9][\w+.-]*/\S+\s+\S+|^Listing\.\.\.|^\s+\S|^[A-Z][\w-]*:\s|^[a-z0-9][\w+.-]*\s+\d\S*\s*$"),
    "pacman.txt": lazy_re.compile(PACMAN_PACKAGE_LINE),
    "zypper.txt": lazy_re.compile(r"[|│]|^-{3,}[+┼-]*|^[-─]+┼|^(?:Loading repository data|Reading installed packages)"
                                  r"|^\s*[A-Z][\w ]{0,30}:\s|^Information for package "),
    "rpm.txt": lazy_re.compile(r"^[A-Za-z0-9][\w+.-]*-\d[\w.+~^]*-[\w.+~^]+(?:\.\w+)?\s*$|^[A-Za-z0-9][\w+.-]*\.\w+\s+\S+\s+\S+"
                          r"|^Installed Packages"),
    "env.txt": lazy_re.compile(r"^\s*(?:export\s+|declare -x\s+)?[A-Za-z_][A-Za-z0-9_]*="),
    "groups.txt": lazy_re.compile(r"^uid=|^[\w.-]+(?:\s+[\w.-]+)*\s*$|^[\w.-]+\s*:\s*[\w. -]+$"),
    "rocm_agent_enumerator.txt": lazy_re.compile(r"^\s*gfx[0-9a-f]{3,4}\s*$"),
    "rocm-version.txt": lazy_re.compile(r"^\s*\d+\.\d+(?:\.\d+)?(?:[-.]\S+)?\s*$"),
}
# Kinds where a paste holds one output: a second start marker begins a new segment of the same kind.
_RESTART_MARKERS: dict[str, lazy_re.Pattern] = {
    "rocminfo.txt": lazy_re.compile(r"^ROCk module|^HSA System Attributes\s*$"),
    "rocm-smi.txt": lazy_re.compile(r"ROCm System Management Interface"),
    "collect_env.txt": lazy_re.compile(r"^Collecting environment information"),
}
# Tool names in a heading or label ("rocminfo output:", "### Output of rocm-smi") hint the next block.
_HINTS: tuple[tuple[lazy_re.Pattern, str], ...] = tuple(
    (lazy_re.compile(rx, re.IGNORECASE), kind)
    for rx, kind in (
        (r"rocm_agent_enumerator", "rocm_agent_enumerator.txt"),
        (r"\brocminfo\b", "rocminfo.txt"),
        (r"\brocm-smi\b", "rocm-smi.txt"),
        (r"\bamd-smi\b", "amd-smi.txt"),
        (r"\blspci\b", "lspci.txt"),
        (r"\bclinfo\b", "clinfo.txt"),
        (r"collect_env|collect env", "collect_env.txt"),
        (r"\bdmesg\b|\bjournalctl\b|kernel log", "dmesg.txt"),
        (r"os-release", "os-release.txt"),
        (r"\buname\b", "uname.txt"),
        (r"pip (?:freeze|list)", "pip-freeze.txt"),
        (r"\bzypper\s+(?:se|search|pa|packages|if|info)\b", "zypper.txt"),
        (r"^\W*(?:groups|id)\W*$", "groups.txt"),
    )
)
_OUTPUT_OF = lazy_re.compile(r"(?i)^\s*(?:\d+[.)]\s*)?(?:the\s+)?(?:output|result)s?\s+(?:of|from)\s+(?P<title>.{1,80}?)\s*:?\s*$")


@record
class Post:
    """One post of a stored thread: who wrote it and where it starts."""

    author: str
    start: int  # 1-based line of its header
    index: int  # 0 = the first post the paste holds
    opening: bool  # the thread's opening post (a description, or turn 0)


@record
class Segment:
    kind: str  # bundle file name ("rocminfo.txt") or "text"
    start: int  # 1-based line number of lines[0] in the pasted text
    lines: tuple[str, ...]  # cleaned lines (prompt, fence and HTML lines emptied), one per pasted line
    command: str | None = None  # the command that printed it, when the paste shows one
    author: str | None = None  # the post's author, when the paste is a stored thread
    own: bool = True  # written by the thread's author (or no thread structure at all)
    post: int = 0  # which post of the thread (0: the first the paste holds, or no thread structure)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def end(self) -> int:
        """1-based line number of the last line."""
        return self.start + len(self.lines) - 1


@record
class Paste:
    segments: tuple[Segment, ...] = ()
    posts: tuple[Post, ...] = ()
    title: str | None = None  # the thread's title line ("# ..."), when it has one
    author: str | None = None  # the thread's author

    def of(self, kind: str) -> tuple[Segment, ...]:
        return tuple(s for s in self.segments if s.kind == kind)


# sudo / time / watch and NAME=VALUE before a command (the name holds no '=': "\\S+=" backtracked quadratically)
_COMMAND_PREFIX = lazy_re.compile(r"^(?:sudo\s+(?:-\S+\s+)*|time\s+|watch\s+(?:-\S+\s+)*|[^\s=]+=\S*\s+)+")


def command_kind(command: str) -> str | None:
    """The output kind a shell command prints, or None for commands we do not read."""
    cmd = command.strip().lstrip("`").strip()
    cmd = _COMMAND_PREFIX.sub("", cmd[:MAX_LINE])
    if cmd.startswith("cat ") and "/properties" not in cmd and "os-release" not in cmd and ".info/version" not in cmd:
        return None
    for rx, kind in _COMMAND_KINDS:
        if rx.search(cmd):
            return kind
    return None


def _bare_command(line: str) -> str | None:
    """A line that is only a command (no prompt): `rocminfo`, `uname -r`, `sudo dmesg | grep kfd`."""
    s = line.strip().strip("`").strip()
    if not s or len(s) > 200:
        return None
    m = _BARE_COMMAND.match(s.split("|", 1)[0].rstrip())
    if not m:
        return None
    tool, args = m.group(1), m.group(2) or ""
    if tool == "cat" and not re.search(r"/properties|os-release|\.info/version", args):
        return None
    if tool.startswith("python") and "collect_env" not in args and "pip" not in args:
        return None
    if tool in ("pip", "pip3", "conda", "apt", "dnf") and not re.search(r"\b(?:list|freeze)\b", args):
        return None
    if tool in ("rpm", "dpkg", "pacman") and not args.strip():
        return None
    if tool in ("id", "groups", "env", "printenv") and len(args.split()) > 1:
        return None
    return s


def _hint(title: str) -> str | None:
    for rx, kind in _HINTS:
        if rx.search(title):
            return kind
    return None


def _label_hint(title: str) -> str | None:
    """The output a heading or label line announces: its tool ("### rocminfo"), or what it is the output of
    ("### Output of `groups`", "3. Output of **groups**:")."""
    om = _OUTPUT_OF.match(title)
    return _hint((om.group("title") if om else title).replace("*", "").replace("`", "").strip())


def _marker(line: str) -> str | None:
    for rx, kind in _MARKERS:
        if rx.search(line):
            return kind
    return None


def _fits(kind: str, line: str) -> bool:
    if kind == TEXT:
        return True
    body = _BODY.get(kind)
    return bool(body and body.search(line))


class _Builder:
    def __init__(self) -> None:
        self.segments: list[Segment] = []
        self.kind: str | None = None
        self.start = 0
        self.buf: list[str] = []
        self.command: str | None = None
        self.author: str | None = None
        self.own = True
        self.post = 0

    def open(self, kind: str, no: int, command: str | None = None) -> None:
        self.close()
        self.kind, self.start, self.buf, self.command = kind, no, [], command

    def add(self, no: int, line: str) -> None:
        if self.kind is None:
            self.open(TEXT, no)
        while self.start + len(self.buf) < no:  # keep one entry per pasted line
            self.buf.append("")
        self.buf.append(line)

    def close(self) -> None:
        if self.kind is not None:
            while self.buf and not self.buf[-1].strip():
                self.buf.pop()
            lead = 0
            while lead < len(self.buf) and not self.buf[lead].strip():
                lead += 1
            body = self.buf[lead:]
            if body and any(s.strip() for s in body):
                self.segments.append(Segment(self.kind, self.start + lead, tuple(body), self.command, self.author,
                                             self.own, self.post))
        self.kind, self.buf, self.command = None, [], None


def _clean(line: str) -> str:
    """HTML wrappers and inline-code backticks around a whole line removed."""
    if "<" in line:
        line = _HTML_TAG.sub("", line)
    s = line.strip()
    if s.startswith("`") and not s.startswith("```"):
        line = line.replace("`", "", 1)
        if line.rstrip().endswith("`"):
            line = line.rstrip()[:-1]
    elif s.endswith("`") and not s.endswith("```") and s.count("`") == 1:
        line = line.rstrip()[:-1]
    return line


_EDIT_MARK = lazy_re.compile(r"^\s*(?:[*_]{1,2})?(?:EDIT(?:ED)?|Edit(?:ed)?|UPDATE|Update|UPD)(?:\s*\d{1,2})?(?:\s*\([^)\n]{0,40}\))?"
                             r"(?:[*_]{1,2})?\s*[:：]")


# a line of the reporter's that introduces the fix they applied, ending with a colon before it
_FIX_INTRO = lazy_re.compile(r"(?:\bI\s+(?:fix(?:ed)?|solved|worked\s+around)\s+(?:this|it)\b"
                             r"|\b(?:the\s+)?(?:fix|solution|workaround)\s+(?:is|was)\b"
                             r"|\b(?:trick|workaround|fix)\b[^\n]{0,80}?\bto\s+get\s+(?:the\s+program|it)\s+to\s+(?:run|work)\b)"
                             r"[^\n]*:\s*$", re.IGNORECASE)


@never_raises(Paste)
def split_paste(text: object) -> Paste:
    """Segments in text order; never raises."""
    b = _Builder()
    posts: list[Post] = []
    title: str | None = None
    thread_author: str | None = None
    in_fence = False
    hint: str | None = None
    for no, raw in _raw_lines(text):
        if not posts and no <= 3 and not in_fence and (_THREAD_META.match(raw) or LABELS_LINE.match(raw)):
            if LABELS_LINE.match(raw):  # the thread's labels (ROCm's issue form sets the GPU and ROCm version ones)
                b.open(TEXT, no)
                b.add(no, raw.strip())
                b.close()
            continue
        head = _POST_HEADER.match(raw) or _TURN_HEADER.match(raw)
        if head and head.groupdict().get("continued") and posts \
                and posts[-1].author.casefold() == head.group("author").strip().casefold():
            b.close()  # the same writer's turn goes on after a stored fragment ends: the same post
            in_fence, hint = False, None
            continue
        if head:
            b.close()
            kinds = head.groupdict()
            author = (kinds.get("author") or kinds.get("author2") or "").strip()
            kind = (kinds.get("kind") or kinds.get("kind2") or "").lower()
            opening = kind in _OPENING_KINDS or kinds.get("turn") == "0"
            if not posts and opening:
                thread_author = author
            posts.append(Post(author, no, len(posts), opening))
            # without the opening post the reporter is unknown: every post is read as this machine's
            # GitHub's logins are case-insensitive: "alvinshan" opens the thread, "AlvinShan" answers in it
            b.author, b.own = author, thread_author is None or author.casefold() == thread_author.casefold()
            b.post = len(posts) - 1
            in_fence, hint = False, None
            continue
        if _FENCE.match(raw):
            in_fence = not in_fence
            b.close()
            continue
        fix_intro = not in_fence and b.own and bool(_FIX_INTRO.search(raw))
        if not in_fence and posts and b.post == len(posts) - 1 and (
                fix_intro or (posts[-1].opening and _EDIT_MARK.match(raw))):
            # "EDIT:" in the opening post, or a line of the reporter's introducing the fix ("I fix this ... by running
            # the following commands:"): what follows was written later or is the fix applied, not the machine as
            # first reported; it is read as the same author's next post (the introducing line stays in this one)
            if fix_intro:
                b.open(TEXT, no)
                b.add(no, _clean(raw))
            b.close()
            posts.append(Post(posts[-1].author, no + 1 if fix_intro else no, len(posts), False))
            b.post = len(posts) - 1
            if fix_intro:
                continue
        line = _clean(raw)
        s = line.strip()
        if not s:
            if b.kind is not None:
                b.add(no, "")
            continue
        if not in_fence:
            hm = _HEADING.match(line)
            heading = heading_title(hm.group("title")) if hm else ""
            if hm and not command_kind(heading):
                b.close()
                if title is None and no <= 3 and line.lstrip().startswith("# "):
                    title = heading
                hint = _label_hint(heading)
                b.open(TEXT, no)  # the heading stays with the prose under it (an issue template's field and answer)
                b.add(no, line)
                continue
        sm = _SUMMARY.search(raw)
        if sm or _HTML_BLOCK.match(raw):
            b.close()
            if sm:
                hint = _hint(sm.group("title"))
            if not s:
                continue
        # a command: prompt line, "# cmd" inside a fence, a bare command line
        cmd = prompt_command(line)
        if cmd is None and in_fence and s.startswith("# "):
            cmd = s[2:].strip() if command_kind(s[2:]) else None
        if cmd is None and (b.kind in (None, TEXT) or in_fence or s.startswith("`") or raw.strip().startswith("`")):
            cmd = _bare_command(line)
        if cmd is not None and not s.startswith(">>>"):
            kind = command_kind(cmd) if cmd else None
            b.open(TEXT, no)  # the prompt line itself (user, host, variables set for the command) is evidence too
            b.add(no, line)
            b.open(kind or TEXT, no + 1, cmd or None)
            hint = None
            continue
        # a label line naming a tool ("rocminfo output:", "3. Output of **groups**") hints the block after it
        om = _OUTPUT_OF.match(s) if len(s) <= _LABEL_MAX else None
        if om and not in_fence:
            h = _label_hint(s)
            if h:
                b.open(TEXT, no)
                b.add(no, line)
                b.close()
                hint = h
                continue
        lm = _LABEL.match(s) if len(s) <= _LABEL_MAX else None
        if lm and not in_fence and b.kind in (None, TEXT) and len(lm.group("title").split()) <= 8:
            h = _hint(lm.group("title"))
            if h:
                b.open(TEXT, no)
                b.add(no, line)
                b.close()
                hint = h
                continue
        marker = _marker(line)
        if marker is None and b.kind in (None, TEXT) and _AGENT_NAME.match(line):
            marker = "rocminfo.txt"  # a filtered rocminfo (`rocminfo | grep Name`) in prose: its GPU agents' records
        if b.kind is not None and b.kind != TEXT:
            restart = _RESTART_MARKERS.get(b.kind)
            if marker == b.kind and restart and restart.search(line) and _has_body(b):
                b.open(b.kind, no, None)
                b.add(no, line)
                continue
            if marker == b.kind or (_fits(b.kind, line) and (marker is None or _fits_strongly(b.kind, line))):
                b.add(no, line)
                continue
        if marker is not None:
            b.open(marker, no, None)
            b.add(no, line)
            hint = None
            continue
        if hint is not None and _fits(hint, line) and (not _prose(line) or hint == "groups.txt"):
            b.open(hint, no, None)
            b.add(no, line)
            hint = None
            continue
        if b.kind != TEXT:
            b.open(TEXT, no)
        b.add(no, line)
    b.close()
    segments = b.segments
    before = [s for s in segments if posts and s.start < posts[0].start]
    if posts and not posts[0].opening and all(len([x for x in s.lines if x.strip()]) == 1
                                              and (s.lines[0].startswith("#") or LABELS_LINE.match(s.lines[0]))
                                              for s in before):
        # the opening post is missing and only the title (and labels) stand above the first post: they are the reporter's, not
        # this machine's (text above the first header is the opening post itself, unheaded)
        segments = [replace(s, own=False) if s in before else s for s in segments]
    return Paste(tuple(segments), tuple(posts), title, thread_author)


def _raw_lines(data: object) -> list[tuple[int, str]]:
    """(1-based number, line) with colours, control characters and block-quote marks removed."""
    text = to_text(data).replace("\r\n", "\n").replace("\r", "\n")
    out = Budgeted()
    for no, raw in enumerate(text.split("\n"), start=1):
        if not no & 1023:
            check_budget()
        line = clean_line(raw[:MAX_LINE]).rstrip()
        while line.startswith("> ") or line == ">":
            line = line[2:]
        out.append((no, line))
    return out


def _has_body(b: _Builder) -> bool:
    return sum(1 for s in b.buf if s.strip()) > 2


def _fits_strongly(kind: str, line: str) -> bool:
    """A line with another kind's marker that still belongs here (rocminfo's own `Agent 2`...)."""
    return kind == "rocminfo.txt" and bool(re.match(r"^\s*(?:\*+|Agent \d+)\s*$", line))


_SENTENCE = lazy_re.compile(r"[a-z]{2,}[,.!?]?\s+(?:[a-z]{2,}[,.!?]?\s+){4,}", re.IGNORECASE)


def _prose(line: str) -> bool:
    return bool(_SENTENCE.search(line)) and ":" not in line[:40]


__all__ = ["Paste", "Post", "Segment", "TEXT", "command_kind", "split_paste"]
