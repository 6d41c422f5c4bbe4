"""Facts (+ an optional error text) -> findings, each with cause, fix and sources.

Knowledge lives in ``wizard/kb/known_issues.json``: error-text signatures and conditions written
in a small predicate vocabulary (docs/contracts.md). This module implements the vocabulary and
the matching rules; it holds no facts about releases of its own. A finding carries the evidence
that made each condition true, so it never claims more than the machine and its sources show.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from wizard.kb import load_kb
from wizard.model import Facts, Gpu, PythonEnv

SEVERITY_ORDER = {"critical": 0, "error": 1, "warning": 2, "info": 3}
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_VISIBILITY = ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")


@dataclass(frozen=True)
class Finding:
    id: str
    severity: str  # critical | error | warning | info
    title: str
    cause: str
    fix: str  # what to do, in one paragraph
    sources: tuple[str, ...]
    evidence: tuple[str, ...] = ()
    fix_commands: tuple[str, ...] = ()
    fix_env: tuple[tuple[str, str], ...] = ()
    fix_plan: str | None = None
    matched_text: str | None = None  # the error line that matched a signature

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id, "severity": self.severity, "title": self.title, "cause": self.cause,
            "fix": self.fix, "fix_commands": list(self.fix_commands), "fix_env": dict(self.fix_env),
            "fix_plan": self.fix_plan, "sources": list(self.sources), "evidence": list(self.evidence),
        }


# --------------------------------------------------------------------------- helpers


def _override(facts: Facts) -> tuple[str | None, str | None]:
    """(value, where) of HSA_OVERRIDE_GFX_VERSION in force, if set at all."""
    for s in facts.env:
        if s.name == "HSA_OVERRIDE_GFX_VERSION":
            return s.value, s.where
    return None, None


def _override_gfx(value: str | None) -> str | None:
    from wizard.probes.gpus import override_gfx

    return override_gfx(value)


def effective_gfx(g: Gpu, facts: Facts) -> str | None:
    """The gfx the runtime will load code for: the override's, else the hardware's."""
    value, _ = _override(facts)
    return _override_gfx(value) or g.gfx or g.gfx_reported


def _rocm_envs(facts: Facts) -> list[PythonEnv]:
    return [e for e in facts.python_envs if e.build == "rocm" and e.torch]


def _public(v: str | None) -> Version | None:
    if not v:
        return None
    try:
        return Version(v.split("+", 1)[0])
    except InvalidVersion:
        return None


def _spec(arg: object) -> SpecifierSet | None:
    try:
        return SpecifierSet(str(arg))
    except InvalidSpecifier:
        return None


def _gpu_label(g: Gpu) -> str:
    idx = f"GPU {g.hip_index}" if g.hip_index is not None else "GPU"
    return f"{idx} {g.name or g.pci_id or ''} ({g.gfx or g.gfx_reported or '?'})".replace("  ", " ")


def _env_label(e: PythonEnv) -> str:
    return f"{e.path or 'recorded environment'}: torch {e.torch}"


# --------------------------------------------------------------------------- predicates
# Each returns evidence lines when it holds, or None when it does not.

Pred = Callable[[Facts, object], "list[str] | None"]


def _p_gpu_gfx_in(f: Facts, arg: object) -> list[str] | None:
    wanted = set(arg if isinstance(arg, (list, tuple)) else [arg])
    hits = [_gpu_label(g) for g in f.gpus if (g.gfx or g.gfx_reported) in wanted]
    return hits or None


def _p_gpu_family_in(f: Facts, arg: object) -> list[str] | None:
    wanted = set(arg if isinstance(arg, (list, tuple)) else [arg])
    hits = [f"{_gpu_label(g)}: {g.family}" for g in f.gpus if g.family in wanted]
    return hits or None


def _p_override_set(f: Facts, arg: object) -> list[str] | None:
    value, where = _override(f)
    is_set = bool(value)
    if bool(arg) != is_set:
        return None
    return [f"HSA_OVERRIDE_GFX_VERSION={value} ({where})"] if is_set else ["HSA_OVERRIDE_GFX_VERSION is not set"]


def _p_override_empty(f: Facts, arg: object) -> list[str] | None:
    value, where = _override(f)
    return [f'HSA_OVERRIDE_GFX_VERSION="" ({where})'] if value is not None and not value.strip() else None


def _p_override_on_native(f: Facts, arg: object) -> list[str] | None:
    value, where = _override(f)
    target = _override_gfx(value)
    if not target:
        return None
    hits = []
    for g in f.gpus:
        if not g.gfx or g.gfx == target:
            continue
        carried = [e for e in _rocm_envs(f) if g.gfx in e.gfx_targets]
        if carried:
            hits.append(f"{_gpu_label(g)} is native in {_env_label(carried[0])}, "
                        f"yet HSA_OVERRIDE_GFX_VERSION={value} ({where}) makes it run {target} code")
    return hits or None


def _p_wheel_lacks_gfx(f: Facts, arg: object) -> list[str] | None:
    hits = []
    for e in _rocm_envs(f):
        if not e.gfx_targets:
            continue
        for g in f.gpus:
            eff = effective_gfx(g, f)
            if eff and eff not in e.gfx_targets:
                hits.append(f"{_env_label(e)} carries {', '.join(e.gfx_targets)}; {_gpu_label(g)} needs {eff}")
    return hits or None


def _p_torch_build(f: Facts, arg: object) -> list[str] | None:
    hits = [f"{_env_label(e)} is a {e.build} build" for e in f.python_envs if e.build == arg]
    if hits and arg in ("cuda", "cpu") and not f.gpus:
        return None  # a CUDA or CPU torch only matters on a machine with AMD GPUs
    return hits or None


def _p_torch_version(f: Facts, arg: object) -> list[str] | None:
    spec = _spec(arg)
    if spec is None:
        return None
    hits = [_env_label(e) for e in f.python_envs if (v := _public(e.torch)) is not None and v in spec]
    return hits or None


def _p_rocm_version(f: Facts, arg: object) -> list[str] | None:
    spec = _spec(arg)
    v = _public(f.rocm.version)
    return [f"system ROCm {f.rocm.version}"] if spec is not None and v is not None and v in spec else None


def _p_igpu_and_dgpu(f: Facts, arg: object) -> list[str] | None:
    igpus = [g for g in f.gpus if g.integrated is True]
    dgpus = [g for g in f.gpus if g.integrated is False]
    if not igpus or not dgpus or any(n in f.env_values for n in _VISIBILITY):
        return None
    return [f"integrated: {_gpu_label(g)}" for g in igpus] + [f"discrete: {_gpu_label(g)}" for g in dgpus] + [
        "none of HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES is set"]


def _p_kfd_inaccessible(f: Facts, arg: object) -> list[str] | None:
    d = f.driver
    if f.is_root:
        return None
    if d.kfd_present is False:
        return ["/dev/kfd does not exist (amdgpu/KFD not loaded)"]
    if d.kfd_accessible is False:
        return [f"/dev/kfd is not readable and writable by {d.user or 'this user'}"]
    return None


def _p_not_in_render_group(f: Facts, arg: object) -> list[str] | None:
    d = f.driver
    if d.user in (None, "root") or d.in_render_group is not False or d.in_video_group is not False:
        return None
    return [f"{d.user} is in: {' '.join(d.groups) or '(no groups)'}; not in render or video"]


def _p_secure_boot_dkms(f: Facts, arg: object) -> list[str] | None:
    if f.os.secure_boot and (f.driver.dkms_packages or f.driver.kind == "dkms"):
        return ["Secure Boot is on", f"amdgpu driver: {f.driver.kind} {f.driver.version or ''}".strip()]
    return None


def _p_distro_rocm_packages(f: Facts, arg: object) -> list[str] | None:
    distro = [i for i in f.rocm.installs if i.stream == "distro"]
    amd = [i for i in f.rocm.installs if i.stream in ("legacy", "core-sdk")]
    if distro and amd:
        return [f"distribution packages: {', '.join(distro[0].packages[:5])}",
                f"AMD ROCm {amd[0].version} installed too"]
    return None


def _p_mixed_rocm_repos(f: Facts, arg: object) -> list[str] | None:
    releases = set()
    for line in f.rocm.apt_sources:
        m = re.search(r"/(?:rocm/apt|amdgpu|rocm/rhel\d*|rocm/el\d*)/(\d+\.\d+(?:\.\d+)*)", line)
        if m:
            releases.add(m.group(1))
    return [f"AMD repositories for releases {', '.join(sorted(releases))}"] if len(releases) > 1 else None


def _p_therock_missing_device(f: Facts, arg: object) -> list[str] | None:
    hits = []
    for e in f.python_envs:
        therock = e.rocm_sdk or (e.torch and re.search(r"\+rocm(7\.(1[4-9]|[2-9]\d)|1\d\.)", e.torch))
        if not therock:
            continue
        for g in f.gpus:
            if g.gfx and g.gfx not in e.rocm_sdk_targets:
                hits.append(f"{_env_label(e)} has device packages for {', '.join(e.rocm_sdk_targets) or 'no GPU'}; "
                            f"{_gpu_label(g)} needs {g.gfx}")
    return hits or None


def _p_triton_missing(f: Facts, arg: object) -> list[str] | None:
    hits = [f"{_env_label(e)} has no pytorch-triton-rocm" for e in _rocm_envs(f)
            if e.triton is None and e.kind != "recorded" and (_public(e.torch) or Version("0")) >= Version("2.1")]
    return hits or None


def _p_numpy_major(f: Facts, arg: object) -> list[str] | None:
    spec = _spec(arg)
    if spec is None:
        return None
    hits = []
    for e in f.python_envs:
        nv, tv = _public(e.numpy), _public(e.torch)
        if nv is not None and tv is not None and nv in spec and tv < Version("2.3"):
            hits.append(f"{_env_label(e)} with numpy {e.numpy}")
    return hits or None


def _p_multi_gpu(f: Facts, arg: object) -> list[str] | None:
    d = [g for g in f.gpus if g.integrated is not True]
    return [f"{len(d)} discrete AMD GPUs"] if len(d) > 1 else None


def _p_os_id_in(f: Facts, arg: object) -> list[str] | None:
    wanted = set(arg if isinstance(arg, (list, tuple)) else [arg])
    return [f"OS {f.os.id} {f.os.version or ''}".strip()] if f.os.id in wanted else None


PREDICATES: dict[str, Pred] = {
    "gpu_gfx_in": _p_gpu_gfx_in,
    "gpu_family_in": _p_gpu_family_in,
    "override_set": _p_override_set,
    "override_empty": _p_override_empty,
    "override_on_native": _p_override_on_native,
    "wheel_lacks_gfx": _p_wheel_lacks_gfx,
    "torch_build": _p_torch_build,
    "torch_version": _p_torch_version,
    "rocm_version": _p_rocm_version,
    "igpu_and_dgpu": _p_igpu_and_dgpu,
    "kfd_inaccessible": _p_kfd_inaccessible,
    "not_in_render_group": _p_not_in_render_group,
    "secure_boot_dkms": _p_secure_boot_dkms,
    "distro_rocm_packages": _p_distro_rocm_packages,
    "mixed_rocm_repos": _p_mixed_rocm_repos,
    "therock_missing_device": _p_therock_missing_device,
    "triton_missing": _p_triton_missing,
    "numpy_major": _p_numpy_major,
    "multi_gpu": _p_multi_gpu,
    "os_id_in": _p_os_id_in,
}


# --------------------------------------------------------------------------- matching


def normalise_error_text(text: str) -> str:
    return _ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "\n")


def _matching_line(pattern: re.Pattern[str], text: str) -> str | None:
    m = pattern.search(text)
    if not m:
        return None
    start = text.rfind("\n", 0, m.start()) + 1
    end = text.find("\n", m.end())
    return text[start: end if end != -1 else len(text)].strip()[:300]


def _conditions(issue: object, facts: Facts | None) -> list[str] | None:
    """Evidence for every `when` predicate, or None when one does not hold.

    Without facts (an error text alone), conditions cannot be checked and are taken as met.
    """
    evidence: list[str] = []
    if facts is None:
        return evidence
    for name, arg in issue.when:  # type: ignore[attr-defined]
        pred = PREDICATES.get(name)
        if pred is None:
            return None
        got = pred(facts, arg)
        if got is None:
            return None
        evidence.extend(got)
    return evidence


def _finding(issue: object, evidence: list[str], matched: str | None) -> Finding:
    fix = issue.fix  # type: ignore[attr-defined]
    ev = ([f"error text: {matched}"] if matched else []) + evidence
    return Finding(
        id=issue.id, severity=issue.severity, title=issue.title, cause=issue.cause,  # type: ignore[attr-defined]
        fix=fix.summary, sources=tuple(issue.sources), evidence=tuple(dict.fromkeys(ev)),  # type: ignore[attr-defined]
        fix_commands=tuple(fix.commands), fix_env=tuple(dict(fix.env).items()), fix_plan=fix.plan,
        matched_text=matched,
    )


def _machine_findings(facts: Facts) -> list[Finding]:
    """Plain statements about the machine that need no knowledge-base source."""
    out = []
    if not facts.gpus and (facts.origin == "live" or facts.origin.startswith("sandbox")):
        others = f" (found: {', '.join(facts.other_gpus)})" if facts.other_gpus else ""
        out.append(Finding(
            "no-amd-gpu", "critical", "No AMD GPU on this machine" + others,
            "Neither sysfs nor the KFD topology lists an AMD display controller.",
            "Nothing to fix here: run rocm-wizard on the machine with the AMD GPU, or try a rehearsal: "
            "rocm-wizard --sandbox /tmp/rw --profile seed-7900xt", (), ()))
    for e in facts.errors:
        out.append(Finding(f"probe-{e.probe}", "info", f"Could not read {e.probe} information", e.message,
                           "Run `rocm-wizard report --bundle out.tar.gz` and attach it to a bug report.", ()))
    return out


def diagnose(facts: Facts, error_text: str | None = None) -> list[Finding]:
    """Every known issue that applies to this machine and/or this error text, most severe first."""
    text = normalise_error_text(error_text if error_text is not None else (facts.error_text or ""))
    found: dict[str, Finding] = {}
    for issue in load_kb().known_issues():
        matched = None
        if text:
            for pattern in issue.signatures:
                matched = _matching_line(pattern, text)
                if matched:
                    break
        if matched is None and not (issue.predict and issue.when):
            continue
        evidence = _conditions(issue, facts)
        if evidence is None:
            continue
        found.setdefault(issue.id, _finding(issue, evidence, matched))
    findings = list(found.values()) + _machine_findings(facts)
    findings.sort(key=lambda f: (SEVERITY_ORDER.get(f.severity, 9), f.matched_text is None, f.id))
    return findings


def diagnose_error_text(text: str, facts: Facts | None = None) -> list[Finding]:
    """Findings whose signature matches this error text (conditions checked when facts are given)."""
    norm = normalise_error_text(text or "")
    out: list[Finding] = []
    for issue in load_kb().known_issues():
        matched = None
        for pattern in issue.signatures:
            matched = _matching_line(pattern, norm)
            if matched:
                break
        if matched is None:
            continue
        evidence = _conditions(issue, facts)
        if evidence is not None:
            out.append(_finding(issue, evidence, matched))
    out.sort(key=lambda f: (SEVERITY_ORDER.get(f.severity, 9), f.id))
    return out
