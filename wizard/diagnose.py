"""Facts (+ an optional error text) -> findings, each with cause, fix and sources.

Knowledge lives in ``wizard/kb/known_issues.json``: error-text signatures and conditions written
in a small predicate vocabulary (docs/contracts.md). This module implements the vocabulary and
the matching rules; it holds no facts about releases of its own. A finding carries the evidence
that made each condition true, so it never claims more than the machine and its sources show.
"""

from __future__ import annotations

import re
from typing import Callable

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from wizard import lazy_re
from wizard.fix_worked import TARGET_VARS, FixAction, fix_actions, worked_fixes
from wizard.kb import FixBranch, KernelArgs, KnownIssue, MoveTo, load_kb
from wizard.kb.families import one_generic_target
from wizard.model import (GFX_TARGET, REDHAT_FAMILY, TOOL_FAMILY, Evidence, EvidenceText, Facts, Gpu, OsInfo,
                          PythonEnv, system_torch)
from wizard.parsers.match_text import evidence_line, line_breaks, match_text
from wizard.parsers.uname import kernel_series
from wizard.parsers.writers import joined_words
from wizard.record import field, record, replace

SEVERITY_ORDER = {"critical": 0, "error": 1, "warning": 2, "info": 3}
_VISIBILITY = ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")


@record
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
    fix_kernel_args: KernelArgs = field(default_factory=KernelArgs)  # kernel command-line parameters to add / remove
    fix_move_to: MoveTo = field(default_factory=MoveTo)  # a newer / an older kernel or linux-firmware
    matched_text: str | None = None  # the error line that matched a signature
    matched: Evidence | None = None  # where it matched: file (or text) and line
    contradicted: Evidence | None = None  # a line of the evidence that speaks against this finding
    to_check: str | None = None  # why this only might apply (no positive evidence); None: a cause
    shows_failure: bool = False  # a line of this machine's own text shows the failure (a cause, or one to check why);
    # never for a note (info)

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id, "severity": self.severity, "title": self.title, "cause": self.cause,
            "fix": self.fix, "fix_commands": list(self.fix_commands), "fix_env": dict(self.fix_env),
            "fix_plan": self.fix_plan,
            "fix_kernel_args": {"add": list(self.fix_kernel_args.add), "remove": list(self.fix_kernel_args.remove)},
            "fix_move_to": {k: v for k, v in (("kernel", self.fix_move_to.kernel),
                                              ("linux-firmware", self.fix_move_to.firmware)) if v},
            "sources": list(self.sources), "evidence": list(self.evidence),
            "matched": None if self.matched is None else
            {"source": self.matched.source, "line": self.matched.line, "text": self.matched.text},
            "contradicted_by": None if self.contradicted is None else str(self.contradicted),
            "to_check": self.to_check, "shows_failure": self.shows_failure,
        }


# --------------------------------------------------------------------------- helpers


def _override(facts: Facts) -> tuple[str | None, str | None]:
    """(value, where) of HSA_OVERRIDE_GFX_VERSION in force (a service's own setting is not), if set at all."""
    for s in facts.env:
        if s.name == "HSA_OVERRIDE_GFX_VERSION" and s.service is None:
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
    if bool(arg) != is_set or (not is_set and not _override_known(f)):
        return None  # "not set" holds only where the environment was read (a paste rarely shows it)
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


def _p_wheel_carries_gfx(f: Facts, arg: object) -> list[str] | None:
    """Every ROCm torch whose gfx list is known carries every GPU's effective gfx (and there is one)."""
    envs = [e for e in _rocm_envs(f) if e.gfx_targets]
    needs = [(g, eff) for g in f.gpus if (eff := effective_gfx(g, f))]
    if not envs or not needs or any(eff not in e.gfx_targets for e in envs for _g, eff in needs):
        return None
    return [f"{_env_label(e)} carries {', '.join(sorted({eff for _g, eff in needs}))}, which "
            f"{' and '.join(_gpu_label(g) for g, _eff in needs)} needs" for e in envs]


# the machine's own text saying it has an AMD GPU where no tool names one ("to make this work with ROCm enabled AMD
# GPUs", "my AMD graphics card")
_AMD_GPU_SAID = lazy_re.compile(r"(?<!\bno )(?<!\bnot )(?<!\bwithout )(?<!\bnon-)\bAMD\s+(?:graphics\s+cards?|GPUs?|GPU\s+cards?)\b",
                                re.IGNORECASE)


def _p_torch_build(f: Facts, arg: object) -> list[str] | None:
    hits = [f"{_env_label(e)} is a {e.build} build" for e in f.python_envs if e.build == arg]
    if hits and arg in ("cuda", "cpu") and not f.gpus and not any(
            t.own and t.kind == "text" and _AMD_GPU_SAID.search(t.text) for t in f.texts):
        return None  # a CUDA or CPU torch only matters on a machine with AMD GPUs (found, or stated by its user)
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


def _p_kernel_version(f: Facts, arg: object) -> list[str] | None:
    """The running kernel's series ("6.12.101+deb13-amd64" is 6.12) in the specifier's range."""
    spec = _spec(arg)
    series = kernel_series(f.os.kernel)
    return [f"kernel {f.os.kernel}"] if spec is not None and series is not None and series in spec else None


# The graphics core (GC) IP version the kernel's own refusal names: amdkfd's "GC IP %06x %s not supported in kfd"
# (major, minor, revision a byte each: "0b0004" is 11.0.4) and amdgpu's "Failed to add gfx ip block(GC_HWIP:0x%x)"
# (the same IP_VERSION number, "0xb0004"); torvalds/linux@002c6ca:drivers/gpu/drm/amd/amdkfd/kfd_device.c,
# drivers/gpu/drm/amd/amdgpu/amdgpu_discovery.c
_GC_IP = lazy_re.compile(r"\bGC IP ([0-9a-f]{6})[ \t]|\bGC_HWIP:0x([0-9a-f]{1,6})\b", re.IGNORECASE)


def _kernel_gc_ips(f: Facts) -> list[str]:
    out: list[str] = []
    for t in f.texts:
        if t.own:
            for m in _GC_IP.finditer(t.text):
                v = int(m.group(1) or m.group(2), 16)
                out.append(f"{v >> 16}.{(v >> 8) & 0xFF}.{v & 0xFF}")
    return list(dict.fromkeys(out))


def _p_kernel_gc_ip_in(f: Facts, arg: object) -> list[str] | None:
    """The GC IP version a kernel refusal of the machine's own text names is one of these ("11.0.3")."""
    wanted = set(arg) if isinstance(arg, (list, tuple)) else set()
    hits = [v for v in _kernel_gc_ips(f) if v in wanted]
    return [f"the kernel names graphics core GC {', '.join(hits)}"] if hits else None


# DKMS's own line names the kernel the module was built for: after an upgrade the new kernel, not the running one
_DKMS_FAILED_KERNEL = lazy_re.compile(r"Bad return status for module build on kernel:\s*(\d[\w.+~-]*)")


def _p_kernel_newer_than_release(f: Facts, arg: object) -> list[str] | None:
    """The kernel a DKMS build failed for (the running kernel where the machine's text names none) is of a series
    newer than every kernel the system ROCm release documents for this distribution (for any, where it lists none
    for this one: `Release.newest_documented_kernel`)."""
    version = _dkms_release(f) or f.rocm.version
    rel = load_kb().release(version) if version else None
    newest = rel.newest_documented_kernel(f.os.id, f.os.version) if rel is not None else None
    if newest is None:
        return None
    failed = list(dict.fromkeys(m.group(1) for t in f.texts if t.own for m in _DKMS_FAILED_KERNEL.finditer(t.text)))
    for kernel in failed or [f.os.kernel]:
        series = kernel_series(kernel)
        if series is not None and series > Version(newest):
            return [f"kernel {kernel} is newer than every kernel ROCm {version} documents (at most {newest})"]
    return None


# AMD's package version carries its release's build code: amdgpu-dkms 1:6.8.5.60204-2041575.24.04 is ROCm 6.2.4's
_BUILD_CODE = lazy_re.compile(r"\bamdgpu-dkms\S*\s+(?:\d+:)?\d+\.\d+\.\d+\.(\d)(\d\d)(\d\d)(?=-|\s|$)")


def _dkms_release(f: Facts) -> str | None:
    """The ROCm release the installed amdgpu-dkms package belongs to (its build code), where the knowledge base
    holds that release: the driver, not the user-space ROCm, is what DKMS builds (the two can differ)."""
    kb = load_kb()
    for package in f.driver.dkms_packages:
        m = _BUILD_CODE.search(package)
        if m:
            version = f"{int(m.group(1))}.{int(m.group(2))}.{int(m.group(3))}"
            if kb.release(version) is not None:
                return version
    return None


def _p_igpu_and_dgpu(f: Facts, arg: object) -> list[str] | None:
    igpus = [g for g in f.gpus if g.integrated is True]
    dgpus = [g for g in f.gpus if g.integrated is False]
    if not igpus or not dgpus or any(n in f.env_values for n in _VISIBILITY):
        return None
    return [f"integrated: {_gpu_label(g)}" for g in igpus] + [f"discrete: {_gpu_label(g)}" for g in dgpus] + [
        "none of HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES is set"]


# Errors KFD's own open returns once the device's file mode let the process in (kfd_open in
# drivers/gpu/drm/amd/amdkfd/kfd_chardev.c: the process could not be created, CWSR set-up on an APU failed, KFD is
# locked): not a missing device or a permission, so not a reason to touch groups or the driver.
_KFD_REFUSED = lazy_re.compile(r"invalid argument|cannot allocate memory|bad address|resource temporarily unavailable",
                               re.IGNORECASE)


def _p_kfd_inaccessible(f: Facts, arg: object) -> list[str] | None:
    d = f.driver
    if f.is_root:
        return None
    if d.kfd_present is False:
        why = (" (the amdgpu driver is not loaded)" if d.loaded is False else
               " (inside a container: it was not passed in)" if f.in_container is True and d.loaded is True else "")
        return [f"/dev/kfd does not exist{why}"]
    if d.kfd_accessible is False and not (d.kfd_error and _KFD_REFUSED.search(d.kfd_error)):
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


_WHEEL_ROCM = lazy_re.compile(r"\+rocm(\d+)\.(\d+)")


def _core_sdk_wheel(torch: str | None) -> bool:
    """A torch built for a ROCm line at or after the knowledge base's first Core SDK release (TheRock-built):
    ``2.12.0+rocm7.14.1``, ``2.13.0a0+rocm7.14.0a20260612``, ``2.13.0+rocm10.0.0``. Compared by major.minor, so a
    prerelease or a point release the knowledge base does not list yet counts by its line."""
    m = _WHEEL_ROCM.search(torch or "")
    firsts = [r.version for r in load_kb().releases("core-sdk")]
    if m is None or not firsts:
        return False
    first = min(Version(v).release[:2] for v in firsts)
    return (int(m.group(1)), int(m.group(2))) >= first


def _therock_env(e: PythonEnv) -> bool:
    """TheRock's: its rocm packages, a wheel of a Core SDK line, or device packages listed (`rocm-sdk targets`)."""
    return bool(e.rocm_sdk or e.rocm_sdk_targets or _core_sdk_wheel(e.torch))


def _device_packages_known(e: PythonEnv) -> bool:
    """The environment's TheRock device packages were seen, so that none for a GPU is positive evidence: an
    environment whose packages were read (not only recorded output), a listing that shows TheRock's rocm packages,
    or `rocm-sdk targets`. A torch version alone (collect_env, a log) says nothing about its device packages."""
    return bool(e.rocm_sdk_targets or e.rocm_sdk or e.kind != "recorded")


def _p_therock_missing_device(f: Facts, arg: object) -> list[str] | None:
    """A TheRock environment without the device package of a GPU. Installed from a family index, TheRock's libraries
    package is that family's (rocm-sdk-libraries-gfx1151, TheRock's build_tools/packaging/python rocm_sdk
    _dist_info.py) and carries its code: a GPU of that family needs no device package."""
    hits = []
    family_built = list(_therock_families(f))
    for e in f.python_envs:
        if not _therock_env(e) or not _device_packages_known(e):
            continue
        for g in f.gpus:
            if g.gfx and any(_family_holds(g.gfx, fam, kind) for fam, kind in family_built):
                continue
            if g.gfx and g.gfx not in e.rocm_sdk_targets:
                hits.append(f"{_env_label(e)} has device packages for {', '.join(e.rocm_sdk_targets) or 'no GPU'}; "
                            f"{_gpu_label(g)} needs {g.gfx}")
    return hits or None


def _p_pypi_placeholder(f: Facts, arg: object) -> list[str] | None:
    hits = [f"{_env_label(e)} holds {', '.join(e.placeholders)} from PyPI" for e in f.python_envs if e.placeholders]
    return hits or None


def _p_system_torch_shadows(f: Facts, arg: object) -> list[str] | None:
    env = system_torch(f.python_envs)
    if env is None or not f.torch_shadows:
        return None
    return [f"the system's torch {env.torch} in {env.path} (a distribution package, not a ROCm build you chose)",
            *(s.detail for s in f.torch_shadows)]


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


def _p_os_like_in(f: Facts, arg: object) -> list[str] | None:
    """os-release's ID or one of its ID_LIKE words is in the list: a derivative that takes its packages from the
    one listed (Linux Mint and Pop!_OS say "ubuntu debian") is of its family."""
    wanted = set(arg if isinstance(arg, (list, tuple)) else [arg])
    if f.os.id is None or not ({f.os.id, *f.os.like} & wanted):
        return None
    like = "" if f.os.id in wanted else f" (like {', '.join(x for x in f.os.like if x in wanted)})"
    return [f"OS {f.os.id} {f.os.version or ''}".strip() + like]


# RHEL and its rebuilds, by os-release ID or an ID_LIKE word: they name "fedora" in ID_LIKE too (RHEL: ID_LIKE="fedora",
# Rocky and AlmaLinux "rhel centos fedora", Oracle Linux ID="ol" ID_LIKE="fedora") but take RHEL's packages
_RHEL_LINE = frozenset({"rhel", "centos", "rocky", "almalinux", "ol"})
# Fedora rebuilt under an ID_LIKE that names RHEL: Nobara's os-release says ID_LIKE="rhel centos fedora", as Rocky's does,
# yet its packages are Fedora's (Nobara-Project/rpm-sources@fecae91b6fb75a229333a6dc193c7f1be113bab1:
# baseos/nobara-release/43/nobara-release.spec)
_FEDORA_REBUILDS = frozenset({"nobara"})
# Fedora-like by ID_LIKE with repositories of its own: Amazon Linux 2023 (ID="amzn", ID_LIKE="fedora")
_OWN_REPOSITORIES = frozenset({"amzn"})


def _fedora_line(os_: OsInfo) -> bool | None:
    """Whether the distribution takes Fedora's packages (None: not known): Fedora itself, a distribution that rewrites
    Fedora's os-release to its own ID with ID_LIKE="fedora" (Bazzite, Bluefin, Aurora: ublue-os/bazzite@18a2205
    build_files/image-info; Ultramarine: Ultramarine-Linux/packages@04871fd ultramarine-release.spec), or Nobara; not
    RHEL or a rebuild, whose ID_LIKE names fedora as well, nor Amazon Linux."""
    if os_.id is None:
        return None
    if os_.id == "fedora" or os_.id in _FEDORA_REBUILDS:
        return True
    return "fedora" in os_.like and not ({os_.id, *os_.like} & (_RHEL_LINE | _OWN_REPOSITORIES))


def _p_fedora_line(f: Facts, arg: object) -> list[str] | None:
    """The distribution takes Fedora's packages (true: Fedora or a derivative of it), or is known not to (false)."""
    line = _fedora_line(f.os)
    if line is None or line is not bool(arg):
        return None
    os_ = f"OS {f.os.id} {f.os.version or ''}".strip()
    return [f"{os_} (Fedora's packages)" if line else f"{os_} (not Fedora's packages)"]


def _p_wsl(f: Facts, arg: object) -> list[str] | None:
    if bool(arg):
        return [f"WSL ({f.os.kernel or 'Windows Subsystem for Linux'})"] if f.os.wsl is True else None
    return ["not WSL"] if f.os.wsl is not True else None


def _p_in_container(f: Facts, arg: object) -> list[str] | None:
    if bool(arg):
        return ["inside a container"] if f.in_container is True else None
    return ["not in a container"] if f.in_container is not True else None


def _p_amdgpu_loaded(f: Facts, arg: object) -> list[str] | None:
    if f.driver.loaded is None or f.driver.loaded is not bool(arg):
        return None
    return ["the amdgpu module is loaded" if arg else "the amdgpu module is not loaded"]


def _p_kfd_present(f: Facts, arg: object) -> list[str] | None:
    if f.driver.kfd_present is None or f.driver.kfd_present is not bool(arg):
        return None
    return ["/dev/kfd exists" if arg else "/dev/kfd does not exist"]


def _p_kfd_error(f: Facts, arg: object) -> list[str] | None:
    err = f.driver.kfd_error
    if err and re.search(str(arg), err, re.IGNORECASE):
        return [f"/dev/kfd cannot be opened: {err}"]
    return None


def _env_pair(arg: object) -> tuple[str, str]:
    pair: tuple[object, object] = arg  # type: ignore[assignment]
    return str(pair[0]), str(pair[1])


def _p_env_matches(f: Facts, arg: object) -> list[str] | None:
    name, rx = _env_pair(arg)
    value = f.env_values.get(name)
    if value is not None and re.fullmatch(rx, value):
        where = next((s.where for s in f.env if s.name == name and s.service is None), "")
        return [f"{name}={value} ({where})"]
    return None


def _p_env_not(f: Facts, arg: object) -> list[str] | None:
    name, rx = _env_pair(arg)
    value = f.env_values.get(name)
    if value is None:
        return [f"{name} is not set"]
    return [f"{name}={value}"] if not re.fullmatch(rx, value) else None


def _visible_gpus(f: Facts) -> list[Gpu]:
    """The GPUs the *_VISIBLE_DEVICES variables leave to the programs (ROCR's indexes in KFD order, then HIP's among
    those); all of them where none is set or a value is not a list of indexes of these GPUs."""
    visible = list(f.gpus)
    for name in ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"):  # the runtime's mask first
        value = f.env_values.get(name)
        ids = [v.strip() for v in (value or "").split(",") if v.strip()]
        if ids and all(i.isdigit() and int(i) < len(visible) for i in ids):
            visible = [visible[int(i)] for i in dict.fromkeys(ids)]
    return visible


def _p_gpus_differ(f: Facts, arg: object) -> list[str] | None:
    known = [g for g in _visible_gpus(f) if g.gfx]  # a GPU hidden by HIP/ROCR_VISIBLE_DEVICES runs none of its code
    if len({g.gfx for g in known}) < 2:
        return None
    return [f"{_gpu_label(g)}" for g in known]


def _installed_support(f: Facts, gfx: str) -> str | None:
    """What installed here supports ``gfx`` natively: the system ROCm release, if AMD lists the target for it,
    or a ROCm torch whose code objects include it; None when neither does or neither is known. That some other
    ROCm release supports the target says nothing about this machine's stack."""
    rel = load_kb().release(f.rocm.version) if f.rocm.version else None
    if rel is not None and rel.gfx is not None and gfx in rel.gfx.official:
        return f"system ROCm {f.rocm.version} supports {gfx}"
    carried = [e for e in _rocm_envs(f) if gfx in e.gfx_targets]
    return f"{_env_label(carried[0])} carries {gfx}" if carried else None


def _some_release_supports(gfx: str, packaged_only: bool = False) -> bool:
    """Some ROCm release lists ``gfx`` as supported (only AMD's packaged releases, not the Core SDK's, with
    ``packaged_only``)."""
    return any(r.gfx is not None and gfx in r.gfx.official for r in load_kb().releases()
               if not packaged_only or r.stream == "legacy")


def _installed_support_known(f: Facts, gfx: str) -> bool:
    """Whether the evidence shows whether the installed stack supports ``gfx``: a system ROCm release whose gfx
    list decides for it (``KnowledgeBase.gfx_list_decides``: a list read from AMD's compatibility matrix does not
    for a Radeon target it lacks), or a ROCm torch whose gfx list was read."""
    kb = load_kb()
    rel = kb.release(f.rocm.version) if f.rocm.version else None
    return (rel is not None and kb.gfx_list_decides(rel, gfx)) or any(e.gfx_targets for e in _rocm_envs(f))


# rocBLAS naming the target whose Tensile kernels it looked for: "TensileLibrary_lazy_gfx1031.dat", "for GPU arch :
# gfx1031", "No paths matched .../*gfx1031*co"
_TENSILE_GFX = lazy_re.compile(rf"TensileLibrary\S*?({GFX_TARGET})\b|\bGPU arch\s*:\s*({GFX_TARGET})\b"
                               rf"|No paths matched \S*\*({GFX_TARGET})\*co\b", re.IGNORECASE)


def _tensile_targets(f: Facts) -> list[str]:
    """The targets rocBLAS looked for Tensile kernels for: those its own lines name, else the GPUs' effective ones."""
    named = [next(x for x in m.groups() if x).lower() for t in f.texts if t.own for m in _TENSILE_GFX.finditer(t.text)]
    if named:
        return list(dict.fromkeys(named))
    return list(dict.fromkeys(eff for g in f.gpus if (eff := effective_gfx(g, f))))


def _p_tensile_gfx_unshipped(f: Facts, arg: object) -> list[str] | None:
    """A target rocBLAS looked for is one no ROCm release of the installed kind supports (AMD's lists): no such
    release's rocBLAS is built with its kernels. The Core SDK (TheRock) builds carry targets AMD's packaged releases
    never listed: they count only where such an install is read; the packaged releases (and the torch wheels built
    on them) otherwise."""
    streams = {i.stream for i in f.rocm.installs} | ({f.rocm.stream} if f.rocm.stream else set())
    packaged_only = not streams & {"core-sdk", "pip"}
    hits = [f"{gfx} is not among the targets any ROCm release of this kind supports, so its rocBLAS carries no "
            "kernels for it" for gfx in _tensile_targets(f) if not _some_release_supports(gfx, packaged_only)]
    return hits or None


def _p_tensile_gfx_not_installed(f: Facts, arg: object) -> list[str] | None:
    """A target rocBLAS looked for is one some release supports but the installed ROCm or torch is shown not to."""
    hits = [f"the installed ROCm or torch does not support {gfx}" for gfx in _tensile_targets(f)
            if _installed_support_known(f, gfx) and _installed_support(f, gfx) is None]
    return hits or None


def _p_tensile_gfx_shipped(f: Facts, arg: object) -> list[str] | None:
    """Every target rocBLAS looked for is one the installed stack supports: its kernels should be installed."""
    targets = _tensile_targets(f)
    why = [_installed_support(f, gfx) for gfx in targets]
    if not targets or not all(why):
        return None
    return [f"{w}: its Tensile kernels should be installed" for w in why if w]


def _p_override_on_supported(f: Facts, arg: object) -> list[str] | None:
    value, where = _override(f)
    target = _override_gfx(value)
    if not target:
        return None
    hits = [f"{_gpu_label(g)} is supported as {g.gfx} itself ({why}), yet HSA_OVERRIDE_GFX_VERSION={value} "
            f"({where}) makes it run {target} code" for g in f.gpus
            if g.gfx and g.gfx != target and (why := _installed_support(f, g.gfx))]
    return hits or None


def _p_gpu_codename_in(f: Facts, arg: object) -> list[str] | None:
    wanted = [str(a).lower() for a in (arg if isinstance(arg, (list, tuple)) else [arg])]
    hits = [f"{_gpu_label(g)}: {g.codename}" for g in f.gpus
            if g.codename and any(g.codename.lower().startswith(w) for w in wanted)]
    return hits or None


def _p_gpu_gfx_not_in(f: Facts, arg: object) -> list[str] | None:
    wanted = set(arg if isinstance(arg, (list, tuple)) else [arg])
    hits = [_gpu_label(g) for g in f.gpus if g.gfx and g.gfx not in wanted]
    return hits or None


# TheRock's pip indexes are per GPU family: gfx110X-dgpu, gfx110X-all, gfx1151, gfx120X-all, gfx94X-dcgpu ...
# (https://github.com/ROCm/TheRock/blob/main/RELEASES.md). "X" stands for any last digit; "-dgpu" and "-dcgpu"
# leave out the integrated GPUs of that generation.
_THEROCK_FAMILY = lazy_re.compile(r"(?:/v2(?:-staging)?/|\b|_rocm_sdk_libraries_|rocm-sdk-libraries-)(gfx\d{2,3}[0-9a-fA-FxX])"
                             r"(?:-(dgpu|all|dcgpu|igpu))?(?=[/\s\)`'\",=]|$)")


def _family_holds(gfx: str, family: str, kind: str | None) -> bool:
    fam = family.lower()
    if fam.endswith("x"):
        if not gfx.startswith(fam[:-1]) or len(gfx) != len(fam):
            return False
    elif gfx != fam:
        return False
    if kind in ("dgpu", "dcgpu"):
        return load_kb().gpus() == () or not all(g.integrated for g in load_kb().gpus() if g.gfx == gfx)
    return True


def _therock_families(f: Facts) -> dict[tuple[str, str | None], str]:
    """The TheRock GPU families this machine's own texts install from: a family index (/v2/gfx110X-dgpu/) or a
    family's libraries package (rocm-sdk-libraries-gfx1151)."""
    families: dict[tuple[str, str | None], str] = {}
    for t in f.texts:
        if not t.own:
            continue
        for m in _THEROCK_FAMILY.finditer(t.text):
            if m.group(2) or "/v2" in m.group(0) or "rocm" in m.group(0):
                families.setdefault((m.group(1), m.group(2)), m.group(0).strip("/_"))
    return families


def _p_therock_family_lacks_gpu(f: Facts, arg: object) -> list[str] | None:
    families = _therock_families(f)
    gfxs = [g.gfx for g in f.gpus if g.gfx]
    if not families or not gfxs:
        return None
    if any(_family_holds(gfx, fam, kind) for gfx in gfxs for fam, kind in families):
        return None
    named = ", ".join(sorted(f"{fam}-{kind}" if kind else fam for fam, kind in families))
    return [f"TheRock packages for {named}; the GPU is {', '.join(gfxs)}"]


def _first_own_match(f: Facts, rx: lazy_re.Pattern) -> tuple[EvidenceText, re.Match[str]] | None:
    """The first of the machine's own texts the pattern matches, and where."""
    for t in f.texts:
        if t.own and (m := rx.search(t.text)):
            return t, m
    return None


def _p_text_matches(f: Facts, arg: object) -> list[str] | None:
    found = _first_own_match(f, lazy_re.compile(str(arg), re.IGNORECASE))
    return [f"{found[0].source}: {found[1].group(0)[:120]}"] if found else None


# A program built from source, as its build line reads (llama.cpp's cmake -DGGML_HIP=ON -DGPU_TARGETS=..., koboldcpp's
# make LLAMA_HIPBLAS=1, hipcc --offload-arch=...): not the words "CMake version" in torch's collect_env, nor a hipcc
# asked only its version or help (`hipcc --version`, which bug templates ask for)
_BUILT = lazy_re.compile(rf"(?<![\w-])(?:-D)?{TARGET_VARS}[ \t]*=|(?<![\w-])-DGGML_HIP(?:BLAS)?=|\bLLAMA_HIPBLAS=|"
                         r"--offload-arch[= ]gfx|\bCMAKE_HIP_ARCHITECTURES\b|^[ \t]*(?:\$[ \t]*)?cmake[ \t]+(?:-S|-B|\.\.)"
                         r"|^[ \t]*(?:\$[ \t]*)?hipcc[ \t]+(?!(?:--version|--help|-v|-h)[ \t]*$)",
                         re.IGNORECASE | re.MULTILINE)


def _p_built_from_source(f: Facts, arg: object) -> list[str] | None:
    """The machine's own text shows a GPU program built from source (which targets it carries is its build's choice;
    this says which software this is, not that its targets are wrong)."""
    found = _first_own_match(f, _BUILT)
    if found is None:
        return None
    t, m = found
    return [f"{t.source}: built from source: {evidence_line(t.text, m.start(), m.end())[1][:120]}"]


# The GTT limit an APU's GPU gets unless it is raised: half of the system memory the kernel manages (MemTotal),
# at least 3 GiB: amdgpu's gttsize "The default is -1 (Use 1/2 RAM, minimum value is 3GB)"
# (https://docs.kernel.org/6.13/gpu/amdgpu/module-parameters.html); from 6.17 "Use value specified by TTM", whose
# pages_limit defaults to "about 50% of the total system memory" (torvalds/linux@198b8c8e
# drivers/gpu/drm/ttm/ttm_device.c ttm_global_init: totalram / 2). The tolerance covers a MemTotal or GTT rounded
# by a text; a raised limit (ttm.pages_limit for 96 or 120 GiB on 128 GB) is far outside it.
_DEFAULT_GTT_MIN = 3 << 30
_DEFAULT_GTT_TOLERANCE = 0.03
_GPU_MEMORY_WORDS = ("mem_info_", "Total Memory (B)")


def _gtt_read(f: Facts) -> tuple[tuple[int, ...], int | None]:
    """(the GTT totals, MemTotal in bytes) the machine's own texts show, where every AMD GPU is an APU (a discrete
    card has a GTT pool of its own: whose value a text shows is not known)."""
    if not f.gpus or not all(g.integrated for g in f.gpus):
        return (), None
    from wizard.parsers.gpu_memory import parse_gpu_memory

    gtt: list[int] = []
    total: int | None = None
    for t in f.texts:
        if not t.own or not ("MemTotal:" in t.text or any(w in t.text for w in _GPU_MEMORY_WORDS)):
            continue
        read = parse_gpu_memory(t.text)
        gtt += read.gtt
        total = read.mem_total or total
    return tuple(gtt), total


def _p_gtt_default_limit(f: Facts, arg: object) -> list[str] | None:
    """Every GTT total the text shows is the kernel's default limit for the system memory it shows (true), or
    every one is above it (false)."""
    gtt, total = _gtt_read(f)
    if not gtt or total is None:
        return None
    default = max(_DEFAULT_GTT_MIN, total // 2)
    at_default = [abs(v - default) <= default * _DEFAULT_GTT_TOLERANCE for v in gtt]
    if (all(at_default) if arg else not any(at_default) and all(v > default for v in gtt)):
        gib = 1 << 30
        shown = ", ".join(f"{v / gib:.1f} GiB" for v in gtt)
        what = "the kernel's default GTT limit" if arg else "above the kernel's default GTT limit"
        return [f"mem_info_gtt_total {shown} with MemTotal {total / gib:.1f} GiB: {what} (half the system memory)"]
    return None


_GFX_NAMED = lazy_re.compile(rf"\b{GFX_TARGET}\b", re.IGNORECASE)


def _p_text_names_gpu_gfx(f: Facts, arg: object) -> list[str] | None:
    """The line of the machine's own text the pattern first matches names, as gfxNNNN, the target some GPU runs as
    (e.g. a program's list of the targets it carries, which then cannot be what it lacks for this GPU)."""
    found = _first_own_match(f, lazy_re.compile(str(arg), re.IGNORECASE))
    if found is None:
        return None
    t, m = found
    line = evidence_line(t.text, m.start(), m.end())[1]
    named = {g.lower() for g in _GFX_NAMED.findall(line)}
    runs_as = sorted({eff for g in f.gpus if (eff := effective_gfx(g, f)) and eff.lower() in named})
    return [f"{t.source}: the line names {', '.join(runs_as)}, the target the GPU runs as"] if runs_as else None


def _p_text_not_matches(f: Facts, arg: object) -> list[str] | None:
    """No text of this machine's own matches (e.g. the fix was already tried and failed)."""
    if _first_own_match(f, lazy_re.compile(str(arg), re.IGNORECASE)):
        return None
    return ["no line of the machine's own text shows it was already tried"]


def _p_in_render_group(f: Facts, arg: object) -> list[str] | None:
    d = f.driver
    if d.in_render_group is None or d.in_render_group is not bool(arg):
        return None
    if not arg and d.user == "root":
        return None  # root opens /dev/kfd without the group: its absence is no cause, joining it no fix
    return [f"{d.user or 'the user'} is {'' if arg else 'not '}in the render group"]


def _p_groups_pending(f: Facts, arg: object) -> list[str] | None:
    """The session lacks the group that gives /dev/kfd: render, or video where the user is given no render (older
    releases gave the devices to video); video alone pending beside a render the session holds is not why."""
    d = f.driver
    if "render" not in d.groups_pending and not (d.groups_pending and d.in_render_group is False):
        return None
    return [f"{d.user or 'the user'} is given {' and '.join(d.groups_pending)}, which this login session lacks "
            "(added after it began)"]


def _p_amdgpu_pro(f: Facts, arg: object) -> list[str] | None:
    return [f"amdgpu-pro runtime: {f.rocm.amdgpu_pro}"] if f.rocm.amdgpu_pro else None


# the outputs that list every GPU the system has (a card the prose names leaves out any other, an iGPU first)
_ENUMERATING = frozenset({"rocminfo.txt", "rocm-smi.txt", "amd-smi.txt", "lspci.txt", "kfd-properties.txt",
                          "rocm_agent_enumerator.txt", "clinfo.txt"})


def _probed(f: Facts) -> bool:
    """The facts were read on the machine itself (live, or a sandbox rehearsal), not from a recording."""
    return f.origin == "live" or f.origin.startswith("sandbox")


def _gpus_enumerated(f: Facts) -> bool:
    """Whether the GPUs the facts hold are all the machine's: probed on it, or listed by a tool that lists all."""
    return _probed(f) or any(t.kind in _ENUMERATING for t in f.texts)


def gpus_read(f: Facts) -> bool:
    """Whether the facts hold any reading of the machine's GPUs (a GPU of any vendor, or a tool that lists them all,
    or the machine probed): a bare error text reads none, and then no AMD GPU found says nothing of the machine."""
    return bool(f.gpus or f.other_gpus) or _gpus_enumerated(f)


def _visibility(f: Facts) -> list[tuple[str, str, list[str]]]:
    """Each *_VISIBLE_DEVICES variable set: (name, value, the indexes it lists)."""
    return [(name, value, [v.strip() for v in value.split(",") if v.strip()])
            for name in _VISIBILITY if (value := f.env_values.get(name)) is not None]


def _hides_every_gpu(ids: list[str]) -> bool:
    """An empty list or -1: it hides every GPU, however many there are."""
    return not ids or ids == ["-1"]


def _past(ids: list[str], count: int) -> bool:
    """Every index at or past ``count`` GPUs (numbering starts at 0)."""
    return bool(count) and all(i.isdigit() and int(i) >= count for i in ids)


def _visibility_decided(f: Facts) -> bool:
    """Whether the facts decide visible_devices_hide_all: a variable hides every GPU, or the GPUs are all the machine's,
    or no index is past the GPUs named (an iGPU the prose leaves out would be index 0)."""
    sets = _visibility(f)
    return (any(_hides_every_gpu(ids) for _n, _v, ids in sets) or _gpus_enumerated(f)
            or not any(_past(ids, len(f.gpus)) for _n, _v, ids in sets))


def _p_visible_devices_hide_all(f: Facts, arg: object) -> list[str] | None:
    count = len(f.gpus) if _gpus_enumerated(f) else 0  # indexes beyond the GPUs named say nothing where others may be
    for name, value, ids in _visibility(f):
        if _hides_every_gpu(ids):
            return [f"{name}={value!r} hides every GPU"]
        if _past(ids, count):
            return [f"{name}={value} names no GPU of the {count} present (numbering starts at 0)"]
    return None


def _p_override_family_mismatch(f: Facts, arg: object) -> list[str] | None:
    value, where = _override(f)
    target = _override_gfx(value)
    fam = load_kb().family_of_gfx(target) if target else None
    if fam is None:
        return None
    # another product family within one LLVM generic target (RDNA3.5 under 11.0.0: both GFX11) is not another
    # instruction set; whether the override's code runs there is a risk, not a mismatch the facts show
    hits = [f"{_gpu_label(g)} is {g.family}, yet HSA_OVERRIDE_GFX_VERSION={value} ({where}) makes it run {fam} code"
            for g in f.gpus if g.family and g.family != fam and not one_generic_target(g.gfx, target)]
    return hits or None


def _p_override_spoofs_gpu(f: Facts, arg: object) -> list[str] | None:
    """The override makes a GPU run another instruction set's code: a target other than its own, outside the LLVM
    generic target its own belongs to (10.3.0 on gfx1010; not 10.1.0 on gfx1010, which names its own target)."""
    value, where = _override(f)
    target = _override_gfx(value)
    if not target:
        return None
    hits = [f"{_gpu_label(g)} runs {target} code under HSA_OVERRIDE_GFX_VERSION={value} ({where})"
            for g in f.gpus if g.gfx and g.gfx != target and not one_generic_target(g.gfx, target)]
    return hits or None


_DKMS_STATUS = lazy_re.compile(r"\bamdgpu[/,]\s*[\w.:~+-]+,\s*([\w.+~-]+),\s*\w+\s*:\s*installed", re.IGNORECASE)


def _p_dkms_not_for_running_kernel(f: Facts, arg: object) -> list[str] | None:
    running = f.os.kernel
    if not running:
        return None
    built: list[str] = []
    for t in f.texts:
        if t.own:
            built += _DKMS_STATUS.findall(t.text)
    if built and running not in built:
        return [f"amdgpu-dkms is installed for {', '.join(sorted(set(built)))}; the running kernel is {running}"]
    return None


def _p_has_dgpu(f: Facts, arg: object) -> list[str] | None:
    d = [g for g in f.gpus if g.integrated is False]
    if bool(arg):
        return [f"discrete: {_gpu_label(g)}" for g in d] or None
    known = [g for g in f.gpus if g.integrated is not None]
    return ["no discrete AMD GPU"] if known and not d else None


# the machine's own words naming an AMD integrated GPU, and naming a GPU of another kind beside it (a laptop's NVIDIA
# GPU, "the primary GPU"): what a paste says where no GPU was detected
_IGPU_SAID = lazy_re.compile(r"\b(?:i-?GPU|integrated\s+(?:AMD\s+|Radeon\s+)?(?:GPU|graphics))\b", re.IGNORECASE)
_OTHER_GPU_SAID = lazy_re.compile(r"\b(?:NVIDIA|GeForce|Quadro|Intel\s+Arc|(?:RTX|GTX)\s?\d{3,4}|dGPU|(?:primary|main|"
                                  r"dedicated|discrete)\s+(?:NVIDIA\s+)?GPU)\b", re.IGNORECASE)


def _p_amd_igpu_beside_other_gpu(f: Facts, arg: object) -> list[str] | None:
    """The machine's AMD GPU is an integrated one beside another vendor's GPU: detection found only integrated AMD
    GPUs and a non-AMD display controller, or (no AMD GPU detected) its own text names an iGPU and another GPU.
    A discrete AMD GPU rules it out."""
    if any(g.integrated is False for g in f.gpus):
        return None
    igpus = [g for g in f.gpus if g.integrated is True]
    if igpus and f.other_gpus:
        return [f"integrated: {_gpu_label(g)}" for g in igpus] + [f"other GPU: {o}" for o in f.other_gpus]
    if f.gpus and _probed(f):
        return None  # the machine's own GPUs were probed: no other vendor's GPU beside them
    igpu_said = _first_own_match(f, _IGPU_SAID)
    other_said = _first_own_match(f, _OTHER_GPU_SAID)
    if igpu_said is None or other_said is None:
        return None
    return [f"{t.source}: {m.group(0)}" for t, m in (igpu_said, other_said)]


def _p_amd_gpu(f: Facts, arg: object) -> list[str] | None:
    """Some AMD GPU is known on this machine (true), or the machine's GPUs were enumerated and none is AMD's (false:
    an NVIDIA-only machine, whose CUDA lines are about its own GPU)."""
    if bool(arg):
        return [f"AMD GPU: {_gpu_label(f.gpus[0])}"] if f.gpus else None
    if f.gpus or not _gpus_enumerated(f):
        return None
    return ["no AMD GPU among the GPUs listed" + (f" (found: {', '.join(f.other_gpus)})" if f.other_gpus else "")]


# the ROCm line a part of the stack shows: a torch wheel's local version (+rocm7.0.0, +rocm7.10.0a2025...), its
# torch.version.hip (7.0.51831-...), TheRock's rocm package, a rocm/pytorch image tag (rocm7.0_ubuntu24.04_...,
# rocm7.0.2_...) in the machine's own text
_IMAGE_ROCM = lazy_re.compile(r"\brocm/pytorch(?:-[\w-]+)?:rocm(\d+)\.(\d+)(?![\d])", re.IGNORECASE)
_LINE = lazy_re.compile(r"(\d+)\.(\d+)")


def _rocm_lines_shown(f: Facts) -> list[tuple[str, str]]:
    """(major.minor, where) of every ROCm release this machine's facts and own text show in use."""
    out: list[tuple[str, str]] = []
    if f.rocm.version and (m := _LINE.match(f.rocm.version)):
        out.append((f"{int(m.group(1))}.{int(m.group(2))}", f"system ROCm {f.rocm.version}"))
    for e in f.python_envs:
        if e.torch and (m := _WHEEL_ROCM.search(e.torch)):
            out.append((f"{int(m.group(1))}.{int(m.group(2))}", f"torch {e.torch}"))
        elif e.hip and (m := _LINE.match(e.hip)):
            out.append((f"{int(m.group(1))}.{int(m.group(2))}", f"torch.version.hip {e.hip}"))
        if e.rocm_sdk and (m := _LINE.match(e.rocm_sdk)):
            out.append((f"{int(m.group(1))}.{int(m.group(2))}", f"rocm (pip) {e.rocm_sdk}"))
    for t in f.texts:
        if t.own:
            for m in _IMAGE_ROCM.finditer(t.text):
                out.append((f"{int(m.group(1))}.{int(m.group(2))}", f"{t.source}: {m.group(0)}"))
    return out


def _p_rocm_line_in(f: Facts, arg: object) -> list[str] | None:
    """Some ROCm release this machine shows in use (the system's, a ROCm torch's, TheRock's, a rocm/pytorch image's
    tag) is of one of these major.minor lines; compared as numbers, so 7.10 is no 7.1."""
    wanted = set(arg if isinstance(arg, (list, tuple)) else [arg])
    hits = [where for line, where in _rocm_lines_shown(f) if line in wanted]
    return list(dict.fromkeys(hits)) or None


def _p_kfd_open_not_permissions(f: Facts, arg: object) -> list[str] | None:
    """/dev/kfd exists and root (or a member of render) cannot open it, with an error other than "Permission
    denied": groups and permissions are not what fails."""
    d = f.driver
    if d.kfd_present is not True or not d.kfd_error or re.search(r"permission denied", d.kfd_error, re.IGNORECASE):
        return None
    who = ("root" if f.is_root or d.user == "root" else
           f"{d.user or 'the user'}, a member of render" if d.in_render_group is True else None)
    return [f"/dev/kfd exists and {who} cannot open it: {d.kfd_error}"] if who else None


_TORCH_NIGHTLY = lazy_re.compile(r"\.dev\d{8}\+rocm")


def _p_torch_not_wsl_build(f: Facts, arg: object) -> list[str] | None:
    """A ROCm torch shown not to be AMD's WSL build: a PyTorch nightly (``2.5.0.dev20240802+rocm6.1``, from
    download.pytorch.org; AMD's WSL wheels on repo.radeon.com are release builds). A release version does not show
    whose build it is, so it decides nothing either way; TheRock's Core SDK wheels are not meant."""
    hits = [f"{_env_label(e)} is a PyTorch nightly, not AMD's WSL build" for e in _rocm_envs(f)
            if _TORCH_NIGHTLY.search(e.torch or "") and not _core_sdk_wheel(e.torch)]
    return hits or None


def _p_rocm_stream_in(f: Facts, arg: object) -> list[str] | None:
    wanted = set(arg if isinstance(arg, (list, tuple)) else [arg])
    hits = [f"ROCm {i.version or '?'} ({i.stream})" for i in f.rocm.installs if i.stream in wanted]
    return hits or None


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
    "kernel_version": _p_kernel_version,
    "kernel_gc_ip_in": _p_kernel_gc_ip_in,
    "kernel_newer_than_release": _p_kernel_newer_than_release,
    "igpu_and_dgpu": _p_igpu_and_dgpu,
    "kfd_inaccessible": _p_kfd_inaccessible,
    "not_in_render_group": _p_not_in_render_group,
    "secure_boot_dkms": _p_secure_boot_dkms,
    "distro_rocm_packages": _p_distro_rocm_packages,
    "mixed_rocm_repos": _p_mixed_rocm_repos,
    "therock_missing_device": _p_therock_missing_device,
    "pypi_placeholder": _p_pypi_placeholder,
    "system_torch_shadows": _p_system_torch_shadows,
    "triton_missing": _p_triton_missing,
    "numpy_major": _p_numpy_major,
    "multi_gpu": _p_multi_gpu,
    "os_id_in": _p_os_id_in,
    "os_like_in": _p_os_like_in,
    "fedora_line": _p_fedora_line,
    "wsl": _p_wsl,
    "in_container": _p_in_container,
    "kfd_present": _p_kfd_present,
    "amdgpu_loaded": _p_amdgpu_loaded,
    "kfd_error": _p_kfd_error,
    "env_matches": _p_env_matches,
    "env_not": _p_env_not,
    "gpus_differ": _p_gpus_differ,
    "override_on_supported": _p_override_on_supported,
    "gpu_codename_in": _p_gpu_codename_in,
    "gpu_gfx_not_in": _p_gpu_gfx_not_in,
    "therock_family_lacks_gpu": _p_therock_family_lacks_gpu,
    "text_matches": _p_text_matches,
    "built_from_source": _p_built_from_source,
    "gtt_default_limit": _p_gtt_default_limit,
    "text_not_matches": _p_text_not_matches,
    "text_names_gpu_gfx": _p_text_names_gpu_gfx,
    "tensile_gfx_unshipped": _p_tensile_gfx_unshipped,
    "tensile_gfx_not_installed": _p_tensile_gfx_not_installed,
    "tensile_gfx_shipped": _p_tensile_gfx_shipped,
    "amdgpu_pro": _p_amdgpu_pro,
    "in_render_group": _p_in_render_group,
    "groups_pending": _p_groups_pending,
    "visible_devices_hide_all": _p_visible_devices_hide_all,
    "override_family_mismatch": _p_override_family_mismatch,
    "override_spoofs_gpu": _p_override_spoofs_gpu,
    "dkms_not_for_running_kernel": _p_dkms_not_for_running_kernel,
    "wheel_carries_gfx": _p_wheel_carries_gfx,
    "has_dgpu": _p_has_dgpu,
    "amd_gpu": _p_amd_gpu,
    "amd_igpu_beside_other_gpu": _p_amd_igpu_beside_other_gpu,
    "rocm_line_in": _p_rocm_line_in,
    "rocm_stream_in": _p_rocm_stream_in,
    "kfd_open_not_permissions": _p_kfd_open_not_permissions,
    "torch_not_wsl_build": _p_torch_not_wsl_build,
}


# --------------------------------------------------------------------------- matching


@record
class _Text:
    """A text as signatures search it: ``text`` carries the normalised text (parsers/match_text.py), ``lines`` maps
    each of its lines back to the line it came from (() where they are the same)."""

    text: EvidenceText
    lines: tuple[int, ...] = ()
    joined: bool = False  # one writer's segments joined (`_posts_joined`), not a text of its own

    def line(self, row: int) -> int:
        """The number, in its source, of the text's line ``row`` (0-based)."""
        return self.text.first_line + (self.lines[row] if self.lines else row)


def _searched(t: EvidenceText) -> _Text:
    m = match_text(t.text)
    return _Text(replace(t, text=m.text), m.lines)


def _seen(facts: Facts, searched: list[_Text]) -> Facts:
    """The facts with their texts as signatures see them (``searched``: each of ``facts.texts`` normalised): a
    predicate that reads a text (text_matches) reads it so."""
    return replace(facts, texts=tuple(s.text for s in searched))


@record
class _Match:
    evidence: Evidence  # file and line that matched
    own: bool  # in the machine's own texts (not another person's post in a pasted thread)
    symptom: bool = False  # a symptom signature matched: the line shows a failure this issue is one cause of
    stated: bool = False  # a stated signature matched: the software itself states this cause
    confirmed: Evidence | None = None  # the issue's fix was applied and this line says it worked (evidence: the action)
    proposed: bool = False  # that action is another person's proposal, which the reporter confirmed
    waives: tuple[str, ...] = ()  # predicates (and "env:NAME" settings) the applied fix changed: not held against it
    shared: bool = False  # that fix is also another issue's, and nothing beyond it says which: to check


def _read(facts: Facts, error_text: str | None) -> tuple[Facts, list[_Text]]:
    """The facts as the predicates see them, and every text to search: the facts' (bundle files, paste segments,
    kernel log), an extra error text, and one writer's segments joined (`_posts_joined`, from the texts' line breaks
    and normalised as one). Each text is normalised once, for both."""
    given = [_searched(t) for t in facts.texts]
    extra: list[EvidenceText] = []
    if error_text:
        extra.append(EvidenceText("--error-file", error_text, 1, "text", True))
    elif facts.error_text and not any(t.source == "traceback.txt" for t in facts.texts):
        extra.append(EvidenceText("traceback.txt", facts.error_text, 1, "traceback.txt", True))
    texts = [s for t, s in zip(facts.texts, given) if t.text] + [_searched(t) for t in extra]
    joined = _posts_joined([replace(t, text=line_breaks(t.text)) for t in [*facts.texts, *extra] if t.text])
    return _seen(facts, given), texts + [replace(_searched(t), joined=True) for t in joined]


def _posts_joined(texts: list[EvidenceText]) -> list[EvidenceText]:
    """The reporter's words that come in several segments (prose, then a fenced block with the settings, then "now it
    works"), their text segments joined in one text per file, and each other person's post the same way
    (`joined_words`, the reporter's posts all in one). Searched after the segments themselves: only a pattern that
    spans them matches here first; segments that overlap (the same lines twice) are not one text in order."""
    prose = [t for t in texts if t.kind == "text" and t.source not in ("--error-file", "traceback.txt")]
    return [EvidenceText(w.source, w.text, w.first_line, "text", w.own, post=w.post)
            for w in joined_words(prose, reporter_runs=False) if w.parts > 1 and not w.overlapping]


def _search(patterns: tuple[lazy_re.Pattern, ...], texts: list[_Text]) -> _Match | None:
    """The first line any pattern matches: the machine's own texts first, then others' posts."""
    for own in (True, False):
        for searched in texts:
            t = searched.text
            if t.own is not own:
                continue
            for pattern in patterns:
                m = pattern.search(t.text)
                if m is None:
                    continue
                row, line = evidence_line(t.text, m.start(), m.end())
                return _Match(Evidence(t.source, searched.line(row), line), own)
    return None


def _signature_match(issue: KnownIssue, texts: list[_Text]) -> _Match | None:
    """The line that brings this issue up: a signature in the machine's own texts, else a symptom signature
    there, else either in another person's post."""
    if not texts:
        return None
    stated = _search(issue.stated_signatures, [t for t in texts if t.text.own]) if issue.stated_signatures else None
    if stated is not None:
        return replace(stated, stated=True)
    found = _search(issue.signatures, texts) if issue.signatures else None
    if found is not None and found.own:
        return found
    symptom = _search(issue.symptom_signatures, texts) if issue.symptom_signatures else None
    symptom = replace(symptom, symptom=True) if symptom is not None else None
    if symptom is not None and symptom.own:
        return symptom
    return found or symptom


def _any_gfx(f: Facts) -> bool:
    return any(g.gfx or g.gfx_reported for g in f.gpus)


def _override_known(f: Facts) -> bool:
    """Whether HSA_OVERRIDE_GFX_VERSION's absence is a fact: it is set, or the environment itself was read (a live
    machine, a rehearsal, a bundle's env.txt)."""
    return _override(f)[0] is not None or _probed(f) or any(t.kind == "env.txt" for t in f.texts)


def _installs_read(f: Facts) -> bool:
    return bool(f.rocm.installs)


# Which facts decide a predicate: where they are unknown (a recording or a paste often lacks them), a
# predicate that does not hold says nothing either way. One table for both uses: a fix branch is withheld
# only where the facts decide against it, and (for the software facts in _NO_VETO) a finding whose signature
# matched this machine's own text is not vetoed by an unknown fact, only marked "to check".
_DECIDED: dict[str, Callable[[Facts], bool]] = {
    # the GTT totals and the system memory both shown, on a machine whose AMD GPUs are all APUs
    "gtt_default_limit": lambda f: all(x for x in _gtt_read(f)),
    # a torch version without its build tag ("2.4.1" from a log) does not say which build it is
    "torch_build": lambda f: any(e.torch and e.build for e in f.python_envs),
    "torch_version": lambda f: any(e.torch for e in f.python_envs),
    "wheel_lacks_gfx": lambda f: any(e.gfx_targets for e in f.python_envs),
    "therock_missing_device": lambda f: any(_therock_env(e) and _device_packages_known(e) for e in f.python_envs),
    # Secure Boot's state is read from mokutil; a paste rarely shows it, or which amdgpu driver the machine runs
    "secure_boot_dkms": lambda f: f.os.secure_boot is False or (f.os.secure_boot is True and f.driver.kind is not None),
    # /dev/kfd existing says nothing about who may open it: that is decided by root, its absence, or its access read
    "kfd_inaccessible": lambda f: f.is_root is True or f.driver.kfd_present is False
    or f.driver.kfd_accessible is not None,
    "not_in_render_group": lambda f: f.driver.in_render_group is not None,
    "in_render_group": lambda f: f.driver.in_render_group is not None,
    "gpu_gfx_in": _any_gfx,
    "gpu_gfx_not_in": _any_gfx,
    "gpu_family_in": lambda f: any(g.family for g in f.gpus),
    "gpu_codename_in": lambda f: any(g.codename for g in f.gpus),
    "has_dgpu": lambda f: any(g.integrated is not None for g in f.gpus),
    # a discrete AMD GPU, or the machine's own GPUs probed (its other vendors' display controllers read with them)
    "amd_igpu_beside_other_gpu": lambda f: any(g.integrated is False for g in f.gpus)
    or (bool(f.gpus) and _probed(f)),
    # an AMD GPU named, or every GPU of the machine listed (detection, lspci, rocminfo ...)
    "amd_gpu": lambda f: bool(f.gpus) or _gpus_enumerated(f),
    "rocm_line_in": lambda f: bool(_rocm_lines_shown(f)),
    "visible_devices_hide_all": _visibility_decided,
    "override_set": _override_known,
    "override_spoofs_gpu": lambda f: _override_known(f) and any(g.gfx for g in f.gpus),
    "os_id_in": lambda f: f.os.id is not None,
    "os_like_in": lambda f: f.os.id is not None,
    "fedora_line": lambda f: f.os.id is not None,
    "wsl": lambda f: f.os.wsl is not None,
    "in_container": lambda f: f.in_container is not None,
    "kfd_present": lambda f: f.driver.kfd_present is not None,
    "amdgpu_loaded": lambda f: f.driver.loaded is not None,
    "rocm_stream_in": _installs_read,
    "distro_rocm_packages": _installs_read,
    "rocm_version": lambda f: f.rocm.version is not None,
    "kernel_version": lambda f: kernel_series(f.os.kernel) is not None,
    "kernel_gc_ip_in": lambda f: bool(_kernel_gc_ips(f)),
    "torch_not_wsl_build": lambda f: False,  # only a nightly shows it; a release version shows nothing either way
    # undecided only where an override is set, some ROCm release supports the GPU's own target, and nothing shows
    # what the installed stack supports
    "override_on_supported": lambda f: _override(f)[0] is None
    or all(_installed_support_known(f, g.gfx) for g in f.gpus if g.gfx)
    or not any(g.gfx and _some_release_supports(g.gfx) for g in f.gpus),
}
_NO_VETO = frozenset({"torch_build", "torch_version", "wheel_lacks_gfx", "kfd_inaccessible", "not_in_render_group",
                      "in_render_group", "override_set", "override_spoofs_gpu", "secure_boot_dkms",
                      "torch_not_wsl_build", "visible_devices_hide_all", "amd_gpu", "gtt_default_limit"})
# Conditions that are the cause itself, not a fact that could only rule it out: the failure line shows a symptom
# (a memory fault), the condition says why. Where the evidence does not decide one, a finding whose signature
# matched this machine's own text is listed as "to check", not as a cause.
_CAUSE_CONDITIONS = {"override_on_supported": "the installed ROCm or torch supports the GPU's own target",
                     "wheel_lacks_gfx": "the installed torch lacks the GPU's target",
                     "therock_missing_device": "the installed TheRock packages lack the GPU's device package",
                     "override_set": "HSA_OVERRIDE_GFX_VERSION is set",
                     "override_spoofs_gpu": "HSA_OVERRIDE_GFX_VERSION makes the GPU run another instruction set",
                     "kernel_version": "the running kernel is in the range this needs",
                     "distro_rocm_packages": "the distribution's ROCm packages are installed beside AMD's",
                     "visible_devices_hide_all": "the *_VISIBLE_DEVICES index names no GPU the machine has",
                     "rocm_line_in": "the ROCm release in use is one this issue is about"}
NOT_KNOWN = "not known from the evidence"
# Conditions that only say which GPU or system this is: a predicted issue resting on them alone (this GPU is
# unsupported, this is WSL) is a risk until a failure shows it; one that also rests on the installed
# software or the settings (the wheel lacks the GPU's target, the override names another family) is a cause.
_IDENTITY_ONLY = frozenset({"gpu_gfx_in", "gpu_gfx_not_in", "gpu_family_in", "gpu_codename_in", "has_dgpu",
                            "amd_gpu", "amd_igpu_beside_other_gpu", "igpu_and_dgpu", "multi_gpu", "gpus_differ",
                            "os_id_in", "os_like_in", "fedora_line", "wsl",
                            "in_container", "tensile_gfx_unshipped", "built_from_source", "kernel_gc_ip_in"})


# Conditions that only name GPUs: a stated signature (the software's own words about this machine) does without them
_GPU_NAMING = frozenset({"gpu_gfx_in", "gpu_gfx_not_in", "gpu_family_in", "gpu_codename_in"})
STATED = "the software's own words decide it"


def _decided(name: str, facts: Facts) -> bool:
    known = _DECIDED.get(name)
    return known is None or known(facts)


@record
class _Held:
    evidence: list[str]  # what made each condition true, and "(name: not known from the evidence)" lines
    held: int  # how many conditions hold
    unknown_causes: tuple[str, ...] = ()  # conditions of _CAUSE_CONDITIONS the evidence does not decide
    unchecked: bool = False  # no facts were given (an error text alone): the conditions were not checked at all


def _changed_by_fix(name: str, arg: object, waives: tuple[str, ...]) -> bool:
    """The applied fix changes what this predicate reads (the facts of a thread may be those after the fix)."""
    if name in ("env_matches", "env_not"):
        return f"env:{_env_pair(arg)[0]}" in waives
    return name in waives


FIX_CHANGED = "changed by the fix applied"


def _conditions(issue: KnownIssue, facts: Facts | None, matched: bool = False, stated: bool = False,
                waives: tuple[str, ...] = ()) -> _Held | None:
    """Evidence for every `when` predicate and how many held, or None when one does not hold.

    Without facts (an error text alone), conditions cannot be checked and are taken as met. ``stated``: a stated
    signature matched the machine's own text; a condition that only names GPUs is then not needed. ``waives``: the
    predicates an applied fix that worked changed (`_worked`); one of them that does not hold is not needed.
    """
    evidence: list[str] = []
    if facts is None:
        return _Held(evidence, 0, unchecked=bool(issue.when))
    held = 0
    unknown: list[str] = []
    for name, arg in issue.when:
        pred = PREDICATES.get(name)
        if pred is None:
            return None
        got = pred(facts, arg)
        if got is None:
            if _changed_by_fix(name, arg, waives):
                evidence.append(f"({name.replace('_', ' ')}: {FIX_CHANGED})")
                continue
            if stated and name in _GPU_NAMING:
                evidence.append(f"({name.replace('_', ' ')}: {STATED})")
                continue
            if matched and (name in _NO_VETO or name in _CAUSE_CONDITIONS) and not _decided(name, facts):
                evidence.append(f"({name.replace('_', ' ')}: {NOT_KNOWN})")
                if name in _CAUSE_CONDITIONS:
                    unknown.append(name)
                continue
            return None
        held += 1
        evidence.extend(got)
    return _Held(evidence, held, tuple(unknown))


DETECTED = "detected facts"  # Evidence.source of a contradiction that detection, not a text, shows


def _facts_against(issue: KnownIssue, facts: Facts | None) -> _Match | None:
    """The first of the issue's `contradicted_when` predicates that the detected facts make true."""
    if facts is None:
        return None
    for name, arg in issue.contradicted_when:
        pred = PREDICATES.get(name)
        got = pred(facts, arg) if pred is not None else None
        if got:
            return _Match(Evidence(DETECTED, None, "; ".join(got)), True)
    return None


def against_detection(f: Finding) -> bool:
    """True when detection itself speaks against the finding (it is then listed last, with a note)."""
    return f.contradicted is not None and f.contradicted.source == DETECTED


def _branch_fits(when: tuple[tuple[str, object], ...], facts: Facts | None) -> bool:
    """A fix branch is shown unless a detected fact decides one of its conditions against it."""
    if facts is None:
        return True
    for name, arg in when:
        pred = PREDICATES.get(name)
        if pred is not None and pred(facts, arg) is None and _decided(name, facts):
            return False
    return True


NOT_ADVISED = "No advice: detection contradicts this cause (see the evidence)."
GFX_PLACEHOLDER = "gfxNNNN"  # in a fix command: the target the machine's GPU runs as


def _for_machine(command: str, facts: Facts | None, advised: str | None = None) -> str:
    """A fix command with its gfxNNNN as the target this machine's GPUs run as (the override the advice itself sets
    (``advised``), else the one in force, else their own), where they all run as one; else as written."""
    if facts is None or GFX_PLACEHOLDER not in command:
        return command
    over = _override_gfx(advised)
    targets = {over} if over and facts.gpus else {eff for g in facts.gpus if (eff := effective_gfx(g, facts))}
    return command.replace(GFX_PLACEHOLDER, targets.pop()) if len(targets) == 1 else command


@record
class _Advice:
    summary: str
    commands: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    plan: str | None = None
    kernel_args: KernelArgs = field(default_factory=KernelArgs)
    move_to: MoveTo = field(default_factory=MoveTo)




def _kernel_arg_commands(args: KernelArgs, facts: Facts | None) -> list[str]:
    """On a distribution whose boot entries grubby manages (Fedora, RHEL and its rebuilds), the commands that add and
    remove the parameters on every installed kernel (grubby(8): --update-kernel=ALL --args / --remove-args);
    elsewhere none: GRUB's GRUB_CMDLINE_LINUX_DEFAULT, systemd-boot's entries differ, the rendering says so. Nor
    inside a container (the kernel is the host's, whatever the image's distribution) or under WSL (its kernel's
    command line is WSL's own setting). On an ostree system (Silverblue, Kinoite, CoreOS and their derivatives)
    grubby's edits do not carry over to the next deployment: rpm-ostree kargs --append-if-missing / --delete-if-present (a plain
    --delete of a parameter the deployment lacks fails the whole change, and a removal lists each parameter that
    turns the thing off, of which the machine may have one); an ostree system of another family (Endless OS is
    Debian's) has no rpm-ostree: none."""
    if not args or facts is None or facts.in_container is True or facts.os.wsl is True:
        return []
    if not ({facts.os.id, *facts.os.like} & REDHAT_FAMILY):  # grubby's and rpm-ostree's systems
        return []
    if facts.os.ostree:  # an ostree system: its deployments' arguments are rpm-ostree's (Fedora CoreOS docs, kargs)
        return ([f"sudo rpm-ostree kargs {' '.join(f'--append-if-missing={a}' for a in args.add)}"] if args.add else []) + (
            [f"sudo rpm-ostree kargs {' '.join(f'--delete-if-present={a}' for a in args.remove)}"] if args.remove
            else [])
    out = [f'sudo grubby --update-kernel=ALL --args="{" ".join(args.add)}"'] if args.add else []
    return out + ([f'sudo grubby --update-kernel=ALL --remove-args="{" ".join(args.remove)}"'] if args.remove else [])


_COMMAND_TOOL = lazy_re.compile(r"^\s*(?:sudo\s+(?:-\S+\s+)*)?([\w.-]+)")


def _fits_os(command: str, facts: Facts | None) -> bool:
    """A fix command is for this distribution unless its tool belongs to a family the detected one is not of (an
    unknown distribution withholds nothing)."""
    if facts is None or not facts.os.id:
        return True
    m = _COMMAND_TOOL.match(command)
    family = TOOL_FAMILY.get(m.group(1)) if m else None
    return family is None or bool({facts.os.id, *facts.os.like} & family)


def _in_force(name: str, value: str, facts: Facts, service: str | None = None) -> bool:
    """The setting is what the machine runs with already: the value in force, or an override that names the target
    every GPU is, where the environment read shows no override in force (the GPUs run as their own target then).
    For advice set in a service's environment (``Fix.service``): where the service's unit was found, only what its
    unit sets (the shell's is never what the service runs with: ~/.bashrc does not reach a systemd service); where no
    unit was read (the program may be started by hand, or the units were not read), the unit's value if it sets one,
    else as for the shell."""
    own = facts.service_env(service).get(name) if service else None
    if own is not None or (service and facts.has_service(service)):
        return own == value
    have = facts.env_values.get(name)
    if have is not None or name != "HSA_OVERRIDE_GFX_VERSION":
        return have == value
    target = _override_gfx(value)
    return (target is not None and _override_known(facts) and bool(facts.gpus)
            and all(g.gfx == target for g in facts.gpus))


def _branch_in_force(branch: FixBranch, facts: Facts | None, service: str | None = None) -> bool:
    """A branch whose whole change is an environment (no command, plan, kernel parameter or move) in which every
    setting is in force already (`_in_force`, in ``service``'s environment where the fix names one): it is done,
    advising it again is no change."""
    if facts is None or not branch.env or branch.commands or branch.plan or branch.kernel_args or branch.move_to:
        return False
    return all(_in_force(name, value, facts, service) for name, value in branch.env.items())


def _advice(issue: KnownIssue, facts: Facts | None) -> _Advice:
    """The fix, with only the branches this machine's facts allow."""
    fix = issue.fix
    parts, commands, env, plan = [fix.summary], list(fix.commands), dict(fix.env), fix.plan
    add, remove = list(fix.kernel_args.add), list(fix.kernel_args.remove)
    kernel, firmware = fix.move_to.kernel, fix.move_to.firmware
    for b in fix.branches:
        if not _branch_fits(b.when, facts) or _branch_in_force(b, facts, fix.service):
            continue
        if b.summary not in parts:  # two branches of one advice for two families both fit an unknown distribution
            parts.append(b.summary)
        commands += [c for c in b.commands if c not in commands]
        env.update(b.env)
        plan = plan or b.plan
        add += b.kernel_args.add
        remove += b.kernel_args.remove
        kernel, firmware = kernel or b.move_to.kernel, firmware or b.move_to.firmware
    args = KernelArgs(add=tuple(dict.fromkeys(add)), remove=tuple(dict.fromkeys(remove)))
    commands += _kernel_arg_commands(args, facts)
    advised = env.get("HSA_OVERRIDE_GFX_VERSION")  # the runtime loads the code of the override the advice sets
    return _Advice(" ".join(p for p in parts if p),
                   tuple(dict.fromkeys(_for_machine(c, facts, advised) for c in commands if _fits_os(c, facts))),
                   tuple(env.items()), plan, args, MoveTo(kernel=kernel, firmware=firmware))


def _branch_established(when: tuple[tuple[str, object], ...], facts: Facts | None) -> bool:
    """Every predicate of a fix branch holds on the detected facts (an unknown fact establishes nothing: "not in a
    container" holds for choosing advice where nothing says whether one is used, but establishes no cause then; a
    /dev/kfd missing inside a container is the container's --device, not the host's driver)."""
    if facts is None:
        return False
    for name, arg in when:
        if name == "kernel_gc_ip_in" and not _kernel_gc_ips(facts):
            continue  # another way to say which GPU this is, where the kernel names no core: the others decide
        pred = PREDICATES.get(name)
        if pred is None or not pred(facts, arg):
            return False
        if name == "in_container" and not arg and facts.in_container is not False:
            return False
    return True


SYMPTOM = "this failure shows, but it has several possible causes: see which one holds"
# conditions that hold by something's absence (a line the text does not show, a variable not set)
_ABSENCE_ONLY = frozenset({"text_not_matches", "env_not"})
SHARED_FIX = "a fix that worked here is this issue's, but also another's, and nothing else says which one it was"
UNDECIDED_BRANCH = "this failure shows, but which of its causes holds is not known from the evidence: see the fix"


def _to_check(issue: KnownIssue, match: _Match | None, got: _Held, against: _Match | None,
              facts: Facts | None = None) -> str | None:
    why = _to_check_evidence(issue, match, got, against, facts)
    if why is None and issue.cause_in_branches and not any(_branch_established(b.when, facts)
                                                             for b in issue.fix.branches):
        return UNDECIDED_BRANCH
    return why


def _cause_branch_established(issue: KnownIssue, facts: Facts | None) -> bool:
    """A fix branch that names a cause (a predicate beyond the GPU's or system's identity) holds on the facts."""
    return bool(_cause_branch_evidence(issue, facts))


def _cause_branch_evidence(issue: KnownIssue, facts: Facts | None) -> list[str]:
    """What makes each established fix branch that names a cause hold (the findings' evidence shows why)."""
    out: list[str] = []
    if facts is None:
        return out
    for b in issue.fix.branches:
        if all(_identity_only(n, a) for n, a in b.when) or not _branch_established(b.when, facts):
            continue
        for name, arg in b.when:
            out += PREDICATES[name](facts, arg) or []
    return out


def _to_check_evidence(issue: KnownIssue, match: _Match | None, got: _Held, against: _Match | None,
                       facts: Facts | None) -> str | None:
    """Why a finding only might apply (it is then listed apart from the causes), or None for a cause. Positive
    evidence is a line of this machine's own text that shows the failure, or (for an issue the facts alone
    predict) detected facts that make every condition hold; a predicted warning is a risk, not a cause. A line
    that shows only a symptom (a symptom signature, or a condition that is the cause left undecided) is not
    positive evidence of this cause, unless a fix branch that names a cause holds on the facts (a DKMS build failure
    on a kernel newer than every kernel the installed release documents)."""
    held = got.held
    if against is not None:
        return "a line of the evidence speaks against it"
    if issue.severity == "info":
        return "a note, not a cause"
    if match is not None and match.shared:
        return SHARED_FIX
    if match is not None and match.own:
        if issue.symptom and match.confirmed is None:  # a fix of its shown working says which cause it was
            return SYMPTOM
        if got.unchecked and not match.stated:
            return "this failure shows, but without the machine's facts whether its conditions hold is not known"
        if got.unknown_causes:
            return (f"this failure shows, but whether {' and '.join(_CAUSE_CONDITIONS[n] for n in got.unknown_causes)}"
                    f" is {NOT_KNOWN}")
        if match.symptom and not (held == len(issue.when) and not all(_identity_only(n, a) for n, a in issue.when)) \
                and not _cause_branch_established(issue, facts):
            return "this failure shows, but it has several possible causes, and no detected fact shows this one"
        return None
    if issue.predict and issue.when and held == len(issue.when):
        if all(_identity_only(name, arg) for name, arg in issue.when) and not (match is not None and _in_title(match)):
            return "a risk: the GPU or system it needs is here, but no failure in this machine's own text shows it"
        return None if issue.severity in ("critical", "error") else "a risk the facts allow; no failure shows it"
    if match is not None:
        return "seen only in another person's post"
    return "no evidence on this machine shows it"


def _identity_only(name: str, arg: object) -> bool:
    """A condition that only says which GPU or system this is; a ROCm torch being installed says no more (a CPU
    or CUDA torch on an AMD machine is itself the fault)."""
    return name in _IDENTITY_ONLY or (name == "torch_build" and arg == "rocm")


def _in_title(match: _Match) -> bool:
    """A match in a pasted thread's title: the failure the thread, and every post in it, is about."""
    return (match.evidence.text or "").startswith("#") and (match.evidence.line or 99) <= 2


def _said_once(lines: list[str]) -> tuple[str, ...]:
    """Each evidence line once; a line that another one begins with goes (two conditions on one GPU: its name, then
    its name with what the override makes it run)."""
    uniq = list(dict.fromkeys(lines))
    return tuple(x for x in uniq if not any(y != x and y.startswith(x + " ") for y in uniq))


def _finding(issue: KnownIssue, got: _Held, match: _Match | None, against: _Match | None,
             facts: Facts | None = None) -> Finding:
    ev: list[str] = []
    if match is not None and match.confirmed is not None:
        ev.append(f"the fix applied: {match.evidence}" + (" (another person's proposal)" if match.proposed else ""))
        ev.append(f"and it worked: {match.confirmed}")
    elif match is not None:
        ev.append(f"{match.evidence}" + ("" if match.own else " (another person's post)"))
    ev += got.evidence
    ev += _cause_branch_evidence(issue, facts)
    detected_against = against is not None and against.evidence.source == DETECTED
    if against is not None and detected_against:
        ev.append(f"but: detection contradicts this cause: {against.evidence.text}")
    elif against is not None:
        ev.append(f"but: {against.evidence}")
    advice = _advice(issue, facts)
    if detected_against:  # advice a detected fact contradicts is never given
        advice = _Advice(NOT_ADVISED)
    return Finding(
        id=issue.id, severity=issue.severity, title=issue.title, cause=issue.cause,
        fix=advice.summary, sources=tuple(issue.sources), evidence=_said_once(ev),
        fix_commands=advice.commands, fix_env=advice.env, fix_plan=advice.plan, fix_kernel_args=advice.kernel_args,
        fix_move_to=advice.move_to,
        matched_text=match.evidence.text if match is not None else None,
        matched=match.evidence if match is not None else None,
        contradicted=against.evidence if against is not None else None,
        to_check=None if detected_against else _to_check(issue, match, got, against, facts),
        shows_failure=match is not None and match.own and issue.severity != "info",
    )


def _machine_findings(facts: Facts) -> list[Finding]:
    """Plain statements about the machine that need no knowledge-base source."""
    out = []
    if not facts.gpus and _probed(facts):
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


_SEVERITY_WEIGHT = {"critical": 4, "error": 3, "warning": 1, "info": 0}


def _rank(issue: KnownIssue, match: _Match | None, held: int, against: _Match | None) -> int:
    """How specific a finding's evidence is: a line of this machine's own text that shows the failure,
    then every condition on its facts that holds, then severity. Evidence against it sends it down."""
    score = (100 if match.own else 40) if match is not None else 0
    score += 15 * held + _SEVERITY_WEIGHT.get(issue.severity, 0)
    if against is not None:
        score -= 1000 if against.evidence.source == DETECTED else 90
    return score


def _ranked(scored: list[tuple[int, KnownIssue, Finding]]) -> list[Finding]:
    """Most specific first; an issue that explains another (a deeper cause of the same symptom) goes above it,
    unless detection contradicts it (it then stays last)."""
    score = {issue.id: sc for sc, issue, _ in scored}
    for _ in range(3):  # explanations can chain: settle them
        for _sc, issue, f in scored:
            if against_detection(f):
                continue
            for other in issue.explains:
                if other in score and score[issue.id] <= score[other]:
                    score[issue.id] = score[other] + 1
    ordered = sorted(scored, key=lambda x: (-score[x[1].id], SEVERITY_ORDER.get(x[1].severity, 9), x[1].id))
    return [f for _sc, _i, f in ordered]


_ACTIONS: dict[int, tuple[FixAction, ...]] = {}


def _fix_actions() -> tuple[FixAction, ...]:
    """What applying each known issue's fix looks like in text; a symptom's own fix (a check, a debugging aid) is no
    cause's fix and is left out, its branches (the fix for the machines of one cause: a rebuild for the GPU's
    target) are read."""
    kb = load_kb()
    if id(kb) not in _ACTIONS:
        _ACTIONS[id(kb)] = tuple(a for i in kb.known_issues() for a in fix_actions(i, kb)
                                 if not i.symptom or a.in_branch)
    return _ACTIONS[id(kb)]


def _worked(facts: Facts | None, texts: list[_Text]) -> dict[str, _Match]:
    """The issues whose fix the machine's text shows applied and working (`wizard.fix_worked`), each with the line
    of the action and the line that says it worked. One action the fixes of several issues share states the one
    the facts leave (its other conditions hold, nothing detected contradicts it); where several remain, the one
    whose failure the text shows, then the one whose own fix (not a branch) it is, then one that explains the
    others, then one the facts alone can show (not one its failure line defines, unshown), then the one whose every
    condition the facts show holding (none changed by the fix, none unknown); else none."""
    kb = load_kb()
    out: dict[str, _Match] = {}
    own = [t for t in texts if t.text.own]
    # the texts themselves: the joined ones would put the reporter's later posts in their first run, and a claim
    # would read across another person's post between them
    for hit in worked_fixes([t.text for t in texts if not t.joined], _fix_actions()):
        fits: list[tuple[KnownIssue, tuple[str, ...], bool, bool]] = []
        ids = list(dict.fromkeys(a.issue for a in hit.actions))
        for issue_id in ids:
            issue = kb.known_issue(issue_id)
            if issue is None:
                continue
            # a branch's action is the issue's fix only on the machines its branch fits
            mine = [a for a in hit.actions if a.issue == issue_id
                    and _branch_fits(tuple((n, arg) for n, arg in a.when if n not in a.changes), facts)]
            if not mine:
                continue
            waives = tuple(sorted({c for a in mine for c in a.changes} | {f"env:{n}" for a in mine for n in a.env_names}))
            got = _conditions(issue, facts, True, False, waives)
            if got is None or _facts_against(issue, facts) is not None \
                    or (issue.unless and _search(issue.unless, own) is not None):
                continue
            # what the facts say for it: every condition of its own holds, or the fix changed one (joining render
            # is what its "not in render" was about); its failure shown is checked below
            # (a condition that holds by an absence, a line not shown or a variable not set, shows nothing of this
            # machine: an issue with no other condition is not shown holding by it)
            fully = any(name not in _ABSENCE_ONLY for name, _ in issue.when) and got.held == len(issue.when)
            fits.append((issue, waives, fully, any(FIX_CHANGED in e for e in got.evidence)))
        # an action other issues' fixes share, or one that fixes failures no known issue describes (a newer kernel)
        shared = len(ids) > 1 or any(a.generic for a in hit.actions)
        shown = {f[0].id for f in fits if _signature_match(f[0], texts) is not None} if shared else set()
        if len(fits) > 1:
            fits = [f for f in fits if f[0].id in shown] or fits
        if len(fits) > 1:
            main = [f for f in fits if any(not a.in_branch for a in hit.actions if a.issue == f[0].id)]
            fits = main or fits
        if len(fits) > 1:
            left = {f[0].id for f in fits}
            fits = [f for f in fits if left - {f[0].id} <= set(f[0].explains)] or fits
        if len(fits) > 1:
            # an issue the facts alone can show (predict) over one its failure line defines, which is not shown
            fits = [f for f in fits if f[0].predict or f[0].id in shown] or fits
        if len(fits) > 1:
            fits = [f for f in fits if f[2]] or fits  # every condition of its own holds on the facts
        # an action several issues' fixes share states one only where something speaks for it beyond the action;
        # else each issue it may be is to check (the fix of one of them worked)
        decided = len(fits) == 1 and (not shared or fits[0][2] or fits[0][3] or fits[0][0].id in shown)
        for issue, waives, _fully, _changed in fits:
            out.setdefault(issue.id, _Match(hit.action, True, confirmed=hit.confirmed, proposed=hit.proposed,
                                            waives=waives, shared=not decided))
    return out


def _amd_gpu_unshown(issue: KnownIssue, facts: Facts | None) -> bool:
    """The issue needs an AMD GPU (`amd_gpu: true`) and none is known on the facts. With its `unless` line in the
    machine's own text (another vendor's GPU, nvidia-smi), nothing shows an AMD GPU and a line shows another's: the
    failure is that GPU's, not listed. Where an AMD GPU is known, the same line leaves it "to check" (either GPU's)."""
    return (facts is not None and any(name == "amd_gpu" and arg is True for name, arg in issue.when)
            and _p_amd_gpu(facts, True) is None)


def _findings(facts: Facts | None, texts: list[_Text], predicted: bool) -> list[Finding]:
    scored: list[tuple[int, KnownIssue, Finding]] = []
    worked = _worked(facts, texts)
    for issue in load_kb().known_issues():
        match = _signature_match(issue, texts)
        if issue.id in worked and (match is None or not (match.stated or worked[issue.id].shared)):
            match = worked[issue.id]  # the fix applied and working: the action, and the line that says it worked
        if match is None and not (predicted and issue.predict and issue.when):
            continue
        got = _conditions(issue, facts, match is not None and match.own, match is not None and match.stated,
                          match.waives if match is not None else ())
        if got is None:
            continue
        against = _facts_against(issue, facts)
        if against is None and issue.unless:
            against = _search(issue.unless, [t for t in texts if t.text.own])
            if against is not None and _amd_gpu_unshown(issue, facts):
                continue  # an issue of AMD machines, no AMD GPU known, and its text names another vendor's GPU
        scored.append((_rank(issue, match, got.held, against), issue, _finding(issue, got, match, against, facts)))
    return _ranked(scored)


def diagnose(facts: Facts, error_text: str | None = None) -> list[Finding]:
    """Every known issue that applies to this machine and/or its texts, the most specific first.

    Signatures are searched in every text the machine came with (bundle files, pasted outputs,
    kernel log lines) and in ``error_text``; each finding names the file and line that matched.
    """
    findings = _findings(*_read(facts, error_text), predicted=True)
    causes = [f for f in findings if not against_detection(f) and f.to_check is None]
    return (causes + _machine_findings(facts) + [f for f in findings if not against_detection(f) and f.to_check]
            + [f for f in findings if against_detection(f)])


def causes_and_checks(findings: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """(causes, to check): the findings positive evidence shows (with those detection contradicts, listed last
    without advice), and apart from them those that only might apply."""
    return [f for f in findings if f.to_check is None], [f for f in findings if f.to_check is not None]


def diagnose_error_text(text: str, facts: Facts | None = None) -> list[Finding]:
    """Findings whose signature matches this error text (conditions checked when facts are given)."""
    texts = [_searched(EvidenceText("error text", text or "", 1, "text", True))]
    seen = _seen(facts, [_searched(t) for t in facts.texts]) if facts is not None else None
    causes, checks = causes_and_checks(_findings(seen, texts, predicted=False))
    return causes + checks
