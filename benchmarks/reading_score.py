"""Scoring rules of benchmarks/reading_accuracy.py, kept free of I/O so they can be unit-tested.

A recorded machine's ``expected.json`` holds facts (a subset of the ``detect --json`` document)
plus two keys that are not facts: ``category`` and ``diagnosis``. Every scalar leaf of the facts
is one scorable fact; ``gpus`` entries are compared per index and the number of GPUs is a fact
of its own. A fact is RIGHT (equal), MISSING (the detector has null, an empty list, or nothing
there) or WRONG (a different value). A wrong ``gfx`` is the worst outcome and is reported apart.

The diagnosis rule: a fixture whose thread found a cause lists known-issue ids; the wizard names
that cause when any of them is among the ids of its first three findings, in its own order.
"""

from __future__ import annotations

import enum
import hashlib
import re
from collections import Counter
from typing import Any, Iterable, Mapping, Sequence

from wizard.model import TOOL_FAMILY
from wizard.record import field, record


CATEGORIES = (
    "rdna1", "rdna2", "rdna3", "rdna35-apu", "rdna4", "vega", "gcn-old", "cdna", "multi-gpu", "wsl",
    "container", "override", "truncated", "core-sdk", "distro-packaged",
)
NOT_FACTS = frozenset({"category", "diagnosis", "holdout"})
TOP_N = 3
ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)+$")
# Findings that describe the wizard's own reading, not a cause: they do not break "silence".
NOT_A_CAUSE = re.compile(r"^probe-")


def is_holdout(name: str) -> bool:
    """The fixed rule that holds a recorded machine out of tuning: the first 32 bits of the SHA-256 of its
    directory name are a multiple of 4 (about a quarter of the corpus). Chosen before any result was read; a
    fixture's ``"holdout": true`` in expected.json states it, and the catalogue test checks the two agree."""
    return int(hashlib.sha256(name.encode("utf-8")).hexdigest()[:8], 16) % 4 == 0


class Outcome(enum.Enum):
    RIGHT = "right"
    MISSING = "missing"
    WRONG = "wrong"


@record
class Fact:
    path: str  # "gpus[0].gfx", "gpus.count", "rocm.version", "env.HSA_OVERRIDE_GFX_VERSION"
    expected: Any

    @property
    def key(self) -> str:
        """The path without list indices: what the per-key table groups by."""
        return "gpu count" if self.path == "gpus.count" else re.sub(r"\[\d+\]", "[]", self.path)


@record
class Judged:
    fact: Fact
    actual: Any
    outcome: Outcome


@record
class DiagnosisScore:
    expected_ids: tuple[str, ...]
    top_ids: tuple[str, ...]  # the first TOP_N finding ids, in the wizard's order
    all_ids: tuple[str, ...]
    top_severity: str | None  # severity of the first finding, if any

    @property
    def named(self) -> bool:
        return bool(set(self.expected_ids) & set(self.top_ids))

    @property
    def silent(self) -> bool:
        return not [i for i in self.all_ids if not NOT_A_CAUSE.match(i)]

    @property
    def contradicted(self) -> bool:
        """The wizard leads with a different cause, stated as an error: worse than silence. (A finding listed only
        "to check" comes with the severity "to-check": it states no cause.)"""
        return (not self.named and bool(self.top_ids) and not NOT_A_CAUSE.match(self.top_ids[0])
                and self.top_severity in ("critical", "error"))


@record(frozen=False)
class FixtureScore:
    name: str
    category: str
    facts: list[Judged] = field(default_factory=list)
    diagnosis: DiagnosisScore | None = None  # None: the thread found no cause
    finding_ids: tuple[str, ...] = ()  # every finding the wizard gave, in its order
    error: str | None = None  # the detector or the loader failed on this fixture
    confident_ids: tuple[str, ...] = ()  # findings shown as causes (positive evidence, not contradicted)
    bad_advice: tuple[str, ...] = ()  # "<finding id>: <why>" for advice a detected fact contradicts
    holdout: bool = False

    @property
    def spoke(self) -> bool:
        """The wizard named some cause (a finding other than its own reading notes)."""
        return any(not NOT_A_CAUSE.match(i) for i in self.finding_ids)

    def count(self, outcome: Outcome) -> int:
        return sum(1 for j in self.facts if j.outcome is outcome)


# --------------------------------------------------------------------------- facts


def expected_facts(expected: Mapping[str, Any]) -> list[Fact]:
    """Every scorable fact of an expected.json, in a stable order."""
    out: list[Fact] = []
    for key, value in expected.items():
        if key in NOT_FACTS or key.startswith("_"):
            continue
        _flatten(key, value, out)
    return out


def _flatten(path: str, value: Any, out: list[Fact]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            if not k.startswith("_"):
                _flatten(f"{path}.{k}", v, out)
    elif path == "gpus" and isinstance(value, list):
        out.append(Fact("gpus.count", len(value)))
        for i, item in enumerate(value):
            _flatten(f"{path}[{i}]", item, out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, item in enumerate(value):
            _flatten(f"{path}[{i}]", item, out)
    else:
        out.append(Fact(path, value))


_MISSING = object()
_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def lookup(document: Any, path: str) -> Any:
    """The value at ``path`` in a detect --json document; ``_MISSING`` where there is none."""
    if path == "gpus.count":
        gpus = document.get("gpus") if isinstance(document, dict) else None
        return len(gpus) if isinstance(gpus, list) else _MISSING
    cur = document
    for name, index in _STEP.findall(path):
        if name:
            if not isinstance(cur, dict) or name not in cur:
                return _MISSING
            cur = cur[name]
        else:
            i = int(index)
            if not isinstance(cur, list) or i >= len(cur):
                return _MISSING
            cur = cur[i]
    return cur


def judge(fact: Fact, actual: Any) -> Outcome:
    if actual is _MISSING or actual is None:
        return Outcome.MISSING
    if fact.path == "gpus.count":
        if actual == 0 and fact.expected != 0:
            return Outcome.MISSING  # no GPU found at all is a fact not read, not a wrong count
        return Outcome.RIGHT if actual == fact.expected else Outcome.WRONG
    if actual in ([], "") and fact.expected not in ([], ""):
        return Outcome.MISSING
    if isinstance(fact.expected, bool) or isinstance(actual, bool):
        return Outcome.RIGHT if type(actual) is type(fact.expected) and actual == fact.expected else Outcome.WRONG
    return Outcome.RIGHT if actual == fact.expected else Outcome.WRONG


def score_facts(expected: Mapping[str, Any], detected: Mapping[str, Any] | None) -> list[Judged]:
    """Judge every expected fact against a detect --json document (None: the detector failed)."""
    out = []
    for fact in expected_facts(expected):
        actual = _MISSING if detected is None else lookup(detected, fact.path)
        out.append(Judged(fact, None if actual is _MISSING else actual, judge(fact, actual)))
    return out


# --------------------------------------------------------------------------- diagnosis


def score_diagnosis(expected: Mapping[str, Any], findings: Sequence[tuple[str, str]]) -> DiagnosisScore | None:
    """findings: (id, severity) in the diagnoser's own order. None where the thread found no cause."""
    diag = expected.get("diagnosis")
    if not isinstance(diag, dict):
        return None
    ids = tuple(str(i) for i in diag.get("known_issues", []))
    return DiagnosisScore(
        expected_ids=ids, top_ids=tuple(f[0] for f in findings[:TOP_N]), all_ids=tuple(f[0] for f in findings),
        top_severity=findings[0][1] if findings else None,
    )


def confident(findings: Iterable[tuple[str, str, bool, bool]]) -> tuple[str, ...]:
    """Ids of (id, severity, to_check, contradicted) findings that the wizard states as causes: not its own
    reading notes, not "to check", not contradicted by detection, not a mere note (info)."""
    return tuple(i for i, sev, to_check, against in findings
                 if not NOT_A_CAUSE.match(i) and not to_check and not against and sev != "info")


# --------------------------------------------------------------------------- advice against the facts
# Checked here apart from the knowledge base's own conditions, on the words the user reads: a rule names a
# piece of advice and the detected fact that rules it out.

_OVERRIDE_VALUE = re.compile(r"HSA_OVERRIDE_GFX_VERSION=(\d+)\.(\d+)\.\d+|\bthat is (\d+)\.(\d+)\.\d+")
_RENDER_ADVICE = re.compile(r"add the user to (?:the )?render|usermod\b[^\n]*\brender", re.IGNORECASE)
_LOAD_DRIVER = re.compile(r"load the amdgpu driver|/dev/kfd is missing", re.IGNORECASE)
_DXG_ADVICE = re.compile(r"HSA_ENABLE_DXG_DETECTION=1")
_KERNEL_DRIVER_ADVICE = re.compile(r"modprobe amdgpu|load the amdgpu (?:kernel )?driver|loads? amdgpu\b", re.IGNORECASE)
_KFD_DEVICE_FLAG = re.compile(r"--device[= ]/dev/kfd\b")
_WSL_USECASE = re.compile(r"--usecase=\S*\bwsl\b")
_LOAD_AMDGPU = re.compile(r"load the amdgpu (?:kernel )?driver|\bload it with `?(?:sudo )?modprobe amdgpu|"
                          r"^\s*(?:sudo\s+)?modprobe amdgpu\s*$", re.IGNORECASE | re.MULTILINE)
_RELOAD_AMDGPU = re.compile(r"modprobe -r amdgpu|rmmod amdgpu|\breload", re.IGNORECASE)
_SECURE_BOOT_ADVICE = re.compile(r"disable Secure Boot|enrol+ the (?:DKMS |MOK )?(?:signing )?key|mokutil --import",
                                 re.IGNORECASE)
_OVERRIDE_SET = re.compile(r"HSA_OVERRIDE_GFX_VERSION=(\d+\.\d+\.\d+)\b")
_VIDEO_ONLY_ADVICE = re.compile(r"add the user to (?:the )?video\b|usermod\b[^\n]*-G\s*video\b", re.IGNORECASE)


def contradicting_advice(detected: Mapping[str, Any], advice: str) -> list[str]:
    """Why ``advice`` (a finding's fix text, commands and env as shown) contradicts the detected facts."""
    out: list[str] = []
    gfxs = [g.get("gfx") or g.get("gfx_reported") for g in detected.get("gpus") or [] if isinstance(g, dict)]
    if gfxs and all(gfxs):
        for m in _OVERRIDE_VALUE.finditer(advice):
            major, minor = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            prefix = f"gfx{major}{minor}" if int(major) >= 10 else f"gfx{major}0"
            if not any(str(g).startswith(prefix) for g in gfxs):
                out.append(f"override {major}.{minor}.x advised, but the GPUs are {', '.join(map(str, gfxs))}")
    driver = detected.get("driver") or {}
    if driver.get("in_render_group") is True and _RENDER_ADVICE.search(advice):
        out.append("advises joining the render group, but the user is in it")
    if driver.get("kfd_present") is True and _LOAD_DRIVER.search(advice):
        out.append("advises loading the driver, but /dev/kfd exists")
    if (detected.get("os") or {}).get("wsl") is False and _DXG_ADVICE.search(advice):
        out.append("advises WSL's DXG detection, but this is not WSL")
    if (detected.get("os") or {}).get("wsl") is True and _KERNEL_DRIVER_ADVICE.search(advice):
        out.append("advises loading the amdgpu kernel driver, but this is WSL, whose GPU is reached through /dev/dxg")
    # "On WSL2 the GPU is exposed through the DirectX paravirt driver (/dev/dxg) ... rather than the native KFD driver
    # (/dev/kfd). Because /dev/kfd is not present ..." (https://rocm.docs.amd.com/projects/rocprofiler-sdk/en/develop/
    # how-to/using-rocprofv3-on-wsl.html)
    if (detected.get("os") or {}).get("wsl") is True and _KFD_DEVICE_FLAG.search(advice):
        out.append("advises passing /dev/kfd into a container, but this is WSL, which has no /dev/kfd (its GPU is /dev/dxg)")
    if (detected.get("os") or {}).get("wsl") is False and _WSL_USECASE.search(advice):
        out.append("advises amdgpu-install's WSL use case, but this is not WSL")
    if driver.get("in_video_group") is True and _VIDEO_ONLY_ADVICE.search(advice) and not _RENDER_ADVICE.search(advice):
        out.append("advises joining the video group, but the user is in it")
    if (driver.get("loaded") is True and _LOAD_AMDGPU.search(advice) and not _RELOAD_AMDGPU.search(advice)
            and (detected.get("os") or {}).get("wsl") is not True):
        out.append("advises loading the amdgpu driver, but it is loaded")
    if (detected.get("os") or {}).get("secure_boot") is False and _SECURE_BOOT_ADVICE.search(advice):
        out.append("advises about Secure Boot's signing of the driver, but Secure Boot is off")
    out += _override_is_own_target(detected, gfxs, advice)
    out += _package_manager_against_os(detected.get("os") or {}, advice)
    out += _env_already_set(detected.get("env") or {}, advice)
    out += _rocm_release_already_installed((detected.get("rocm") or {}).get("version"), advice)
    out += _index_lacks_gpus(detected, advice)
    return out


def _env_read(detected: Mapping[str, Any]) -> bool:
    """The environment itself was read (a live machine, a rehearsal, a bundle's env.txt): a variable it lacks is unset."""
    origin = str(detected.get("origin") or "")
    return origin == "live" or origin.startswith("sandbox") or any(
        isinstance(t, dict) and t.get("kind") == "env.txt" for t in detected.get("texts") or [])


def _override_is_own_target(detected: Mapping[str, Any], gfxs: list[Any], advice: str) -> list[str]:
    """An override advised that names the target every GPU is already, where no other override is in force (the
    environment read shows none): it changes nothing. Setting the GPU's own target in place of another override in
    force is a change."""
    if not gfxs or not all(gfxs) or not _env_read(detected):
        return []
    if (detected.get("env") or {}).get("HSA_OVERRIDE_GFX_VERSION") is not None:
        return []
    return [f"advises HSA_OVERRIDE_GFX_VERSION={v}, but the GPUs are {target} already"
            for v in dict.fromkeys(m.group(1) for m in _OVERRIDE_SET.finditer(advice))
            if (target := _override_target(v)) is not None and all(str(g) == target for g in gfxs)]


# A command line (optionally through sudo) of a distribution family's package tool. A line of prose that names
# several ("apt install libgfortran5, dnf install libgfortran") offers each family its own and is not one of these.
_PM_COMMAND = re.compile(r"^\s*(?:sudo\s+(?:-\S+\s+)*)?(apt-get|apt|dpkg|dnf|yum|rpm-ostree|grubby|zypper|pacman)\b",
                         re.MULTILINE)
# which distribution family (os-release's ID or one of its ID_LIKE words) each tool belongs to is the model's: a fact,
# not a condition of the wizard's, so the yardstick reads the same one (wizard.model.TOOL_FAMILY)
_PM_FAMILY = {tool: family for tool, family in TOOL_FAMILY.items() if tool != "amdgpu-install"}
# amdgpu-install: on a distribution of none of the dpkg or rpm families AMD ships it for it cannot even be installed
_AMDGPU_INSTALL_FAMILIES = TOOL_FAMILY["amdgpu-install"]
_AMDGPU_INSTALL = re.compile(r"(?<![/\w-])amdgpu-install\b(?!-)")


def _package_manager_against_os(os_: Mapping[str, Any], advice: str) -> list[str]:
    """A package tool's command for another distribution family than os-release's ID and ID_LIKE say."""
    os_id = os_.get("id")
    if not os_id:
        return []
    family = {str(os_id).lower(), *(str(x).lower() for x in os_.get("like") or [])}
    out = [f"advises {tool} ({'/'.join(sorted(_PM_FAMILY[tool]))}'s tool), but this is {os_id}"
           for tool in dict.fromkeys(m.group(1) for m in _PM_COMMAND.finditer(advice)) if not family & _PM_FAMILY[tool]]
    if not family & _AMDGPU_INSTALL_FAMILIES and _AMDGPU_INSTALL.search(advice):
        out.append(f"advises amdgpu-install, but AMD ships it for no distribution of {os_id}'s family")
    return out


# NAME=VALUE as advice sets it: a fix's environment line, `export NAME=VALUE`, a command's prefix. Not a comparison
# (`NAME==`), not part of a longer word.
_ENV_SETTING = re.compile(r"(?<![A-Za-z0-9_$-])([A-Z][A-Z0-9_]*)=(?!=)(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"';,)]+)")


def _env_already_set(env: Mapping[str, Any], advice: str) -> list[str]:
    """Advice that sets a variable to the value detection found in force already: that is no change."""
    out = []
    for m in _ENV_SETTING.finditer(advice):
        name, value = m.group(1), m.group(2).strip("\"'")
        have = env.get(name)
        if have is not None and str(have) == value and value:
            why = f"advises setting {name}={value}, but it is set to that already"
            if why not in out:
                out.append(why)
    return out


_MOVE_TO_RELEASE = re.compile(r"\b(?:move|upgrade|update|switch|go|install|downgrade)\w*(?: back)? to (?:a |the )?ROCm "
                              r"(\d+\.\d+(?:\.\d+)?)\b(?! or (?:newer|later|older|earlier))", re.IGNORECASE)
_AT_LEAST_RELEASE = re.compile(r"\b(?:use|install|upgrade to|move to|update to) (?:a )?ROCm (\d+\.\d+(?:\.\d+)?) or "
                               r"(?:newer|later)\b", re.IGNORECASE)


def _release(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def _rocm_release_already_installed(version: Any, advice: str) -> list[str]:
    """Advice whose change is a move to the ROCm release detection found installed (or to one at least as new)."""
    if not isinstance(version, str) or not _release(version):
        return []
    have = _release(version)
    out = [f"advises moving to ROCm {m.group(1)}, but ROCm {version} is installed"
           for m in _MOVE_TO_RELEASE.finditer(advice) if have[:len(_release(m.group(1)))] == _release(m.group(1))]
    out += [f"advises ROCm {m.group(1)} or newer, but ROCm {version} is installed"
            for m in _AT_LEAST_RELEASE.finditer(advice) if have >= _release(m.group(1))]
    return out


_PIP_INDEX = re.compile(r"^[^\n]*\bpip3? install\b[^\n]*--index-url[ =]https://download\.pytorch\.org/whl/(rocm[\d.]+)\b[^\n]*$",
                        re.MULTILINE)
_TORCH_PIN = re.compile(r"\btorch==([\w.+]+)")


def _wheel_rows() -> list[Mapping[str, Any]]:
    """The wizard's wheel matrix (wizard/kb/torch_wheels.json, through the knowledge base's one reader) as rows."""
    from wizard.kb import load_kb

    return [{"index": w.index, "torch": w.torch, "gfx": None if w.gfx is None else list(w.gfx),
             "uncertain": w.uncertain} for w in load_kb().wheels()]


def _override_target(value: Any) -> str | None:
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", str(value or "").strip())
    if not m or int(m.group(1)) < 9:
        return None
    major, minor, step = (int(x) for x in m.groups())
    return f"gfx{major}{minor}{step:x}" if major >= 10 else f"gfx9{minor}{step:x}"


def _index_lacks_gpus(detected: Mapping[str, Any], advice: str, rows: Iterable[Mapping[str, Any]] | None = None) -> list[str]:
    """A torch pip install from a download.pytorch.org ROCm index whose wheels (the pinned torch's, else every one
    the index holds), by the wizard's matrix (wizard/kb/torch_wheels.json), carry no target any GPU runs as: its own,
    the one the runtime reports, the one the override in force names. Undecided where a GPU's target is unknown, or
    a row has no fixed list or an uncertain one."""
    gpus = [g for g in detected.get("gpus") or [] if isinstance(g, dict)]
    matches = list(_PIP_INDEX.finditer(advice))
    if not matches or not gpus or not all(g.get("gfx") for g in gpus):
        return []
    runs_as = {str(g.get(k)) for g in gpus for k in ("gfx", "gfx_reported") if g.get(k)}
    if (over := _override_target((detected.get("env") or {}).get("HSA_OVERRIDE_GFX_VERSION"))) is not None:
        runs_as.add(over)
    table = list(_wheel_rows() if rows is None else rows)
    out = []
    for m in matches:
        index, pin = m.group(1), _TORCH_PIN.search(m.group(0))
        hits = [r for r in table if r.get("index") == index and (pin is None or r.get("torch") == pin.group(1))]
        if not hits or any(r.get("gfx") is None or r.get("uncertain") for r in hits):
            continue
        if not runs_as & {str(x) for r in hits for x in r["gfx"]}:
            what = f"torch {pin.group(1)} from {index}" if pin else f"the {index} index"
            out.append(f"advises {what}, whose wheels carry none of {', '.join(sorted(runs_as))}")
    return out


# --------------------------------------------------------------------------- totals


@record
class Share:
    right: int
    total: int

    @property
    def ratio(self) -> float:
        return self.right / self.total if self.total else 0.0

    def __str__(self) -> str:
        return f"{self.right}/{self.total} ({self.ratio:.1%})" if self.total else "0/0 (-)"


def fact_share(scores: Iterable[FixtureScore]) -> Share:
    judged = [j for s in scores for j in s.facts]
    return Share(sum(1 for j in judged if j.outcome is Outcome.RIGHT), len(judged))


def share_by_category(scores: Sequence[FixtureScore]) -> dict[str, Share]:
    return {c: fact_share(s for s in scores if s.category == c)
            for c in sorted({s.category for s in scores}, key=_category_order)}


def share_by_key(scores: Sequence[FixtureScore]) -> dict[str, Share]:
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for s in scores:
        for j in s.facts:
            total[j.fact.key] += 1
            right[j.fact.key] += j.outcome is Outcome.RIGHT
    return {k: Share(right[k], total[k]) for k, _ in total.most_common()}


def diagnosis_share(scores: Iterable[FixtureScore]) -> Share:
    diags = [s.diagnosis for s in scores if s.diagnosis is not None]
    return Share(sum(1 for d in diags if d.named), len(diags))


def wrong_gfx(scores: Iterable[FixtureScore]) -> list[tuple[str, Judged]]:
    return [(s.name, j) for s in scores for j in s.facts
            if j.outcome is Outcome.WRONG and j.fact.key in ("gpus[].gfx", "gpus[].gfx_reported")]


def _category_order(c: str) -> int:
    return CATEGORIES.index(c) if c in CATEGORIES else len(CATEGORIES)


# --------------------------------------------------------------------------- CAUSES.md

CAUSE_FIELDS = ("title", "cause", "fix", "sources", "signature", "conditions", "near miss", "fixtures")
_SECTION = re.compile(r"^## `?([^`\s]+)`?\s*$")
_FIELD = re.compile(r"^- \*\*([a-z ]+)\*\*:\s*(.*)$")


@record(frozen=False)
class CauseSection:
    id: str
    fields: dict[str, str]
    line: int

    def problems(self) -> list[str]:
        out = []
        if not ID_RE.match(self.id):
            out.append(f"id {self.id!r} is not lowercase-hyphenated")
        for name in ("title", "cause", "fix", "sources", "near miss"):
            if not self.fields.get(name, "").strip():
                out.append(f"{self.id}: no {name}")
        if not (self.fields.get("signature", "").strip() or self.fields.get("conditions", "").strip()):
            out.append(f"{self.id}: neither a signature nor conditions")
        if not re.search(r"https://\S+", self.fields.get("sources", "")):
            out.append(f"{self.id}: sources name no https URL")
        unknown = set(self.fields) - set(CAUSE_FIELDS)
        if unknown:
            out.append(f"{self.id}: unknown fields {sorted(unknown)}")
        return out


def parse_causes(text: str) -> list[CauseSection]:
    """Sections of CAUSES.md: `## id` then `- **field**: value` lines (a value may continue on
    indented lines below it)."""
    sections: list[CauseSection] = []
    current: CauseSection | None = None
    last_field: str | None = None
    for n, line in enumerate(text.splitlines(), 1):
        m = _SECTION.match(line)
        if m:
            current = CauseSection(m.group(1), {}, n)
            sections.append(current)
            last_field = None
            continue
        if current is None:
            continue
        f = _FIELD.match(line)
        if f:
            last_field = f.group(1)
            current.fields[last_field] = f.group(2)
        elif last_field and (line.startswith("  ") or not line.strip()):
            current.fields[last_field] += "\n" + line.strip()
        elif line.strip():
            last_field = None
    return sections
