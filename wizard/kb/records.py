"""Frozen records the knowledge base hands out. Built only by ``wizard.kb.parse``.

Unknown values are ``None``; ``uncertain`` carries the reason when a value is not confirmed.
Mappings are read-only views and are left out of hashing.
"""

from __future__ import annotations

from typing import Any, Mapping

from wizard import lazy_re
from wizard.record import field, record


FAMILIES = (
    "GCN5",
    "RDNA1",
    "RDNA2",
    "RDNA3",
    "RDNA3.5",
    "RDNA4",
    "CDNA1",
    "CDNA2",
    "CDNA3",
    "CDNA4",
)
SEVERITIES = ("info", "warning", "error", "critical")
PLANS = ("downgrade-6.2", "upgrade-6.4", "upgrade-7.2", "core-sdk", "driver", "therock-pip", "pip-only", "docker")
STREAMS = ("legacy", "core-sdk")
# Who publishes a wheel index, and how far its packages are promised to work: "stable" is a release
# channel AMD or PyTorch documents for users; the others are builds ahead of (or beside) a release.
INDEX_VENDORS = ("pytorch", "amd")
INDEX_CHANNELS = ("stable", "prerelease", "nightly", "dev", "preview")
# amdgpu-install --usecase lines AMD documents per device family (Core SDK install pages)
USECASE_FAMILIES = ("radeon", "ryzen", "all")


@record
class GpuInfo:
    pci_id: str  # "1002:744c"
    name: str
    codename: str | None
    gfx: str | None
    family: str | None
    integrated: bool | None
    sources: tuple[str, ...]
    peak_tflops: float | None = None
    note: str | None = None


@record
class ApuInfo:
    """A processor family's integrated GPU: which gpus.json row the processors in ``cpus`` carry."""

    cpus: tuple[str, ...]  # "Ryzen 7 7700", "Ryzen AI Max+ 395"
    graphics: str  # AMD's graphics model name for them
    pci_id: str  # the gpus.json row
    sources: tuple[str, ...]
    graphics_cores: tuple[tuple[str, int], ...] = ()  # (processor, its graphics compute units), where listed


@record
class NoGraphicsLine:
    """Processors AMD lists without an integrated GPU ("Discrete Graphics Card Required"), by the start of their key."""

    key_prefixes: tuple[str, ...]  # cpu_key starts: "epyc7", "ryzenthreadripper"
    note: str
    sources: tuple[str, ...]


@record
class Distro:
    id: str  # os-release ID: "ubuntu", "rhel", "sles", "debian", "ol", ...
    version: str  # "22.04", "9.4", "15.6"
    codename: str | None = None  # "jammy"; None where the distro has none


@record
class GfxSupport:
    official: tuple[str, ...] = ()
    unofficial: tuple[str, ...] = ()
    unsupported: tuple[str, ...] = ()
    note: str | None = None
    # targets of ``official`` AMD lists as deprecated (still supported; left out of its compatibility matrix)
    deprecated: tuple[str, ...] = ()


@record
class AptRepo:
    """AMD's apt repository for one release: the signing key, how the source is written, one URL per distro."""

    key_url: str
    keyring: str  # where AMD's instructions put the dearmored key
    format: str  # "deb822" (a .sources file) | "one-line" (a .list file)
    suite: str  # "stable"
    components: tuple[str, ...]  # ("main",)
    repos: Mapping[str, str] = field(hash=False)  # "ubuntu2404" / "debian12" -> repository URL


@record
class RpmRepo:
    key_url: str
    repos: Mapping[str, str] = field(hash=False)  # "rhel9" / "sles15" -> baseurl


@record
class CoreSdkRoutes:
    """The ways AMD documents to install one Core SDK release (URLs exactly as AMD's install page writes them)."""

    apt: AptRepo | None
    rpm: RpmRepo | None
    pip_index: str | None  # index URL for ``rocm[...]``
    pip_requirement: str | None  # with ``{gfx}`` for the device extra: "rocm[libraries,device-{gfx}]==10.0.0"
    tarball: str | None  # URL with ``{family}`` ("gfx110X-all", "gfx1151", "multiarch", ...)
    runfile: str | None
    meta_package: str | None  # "amdrocm10.0" (every target)
    gfx_package: str | None  # "amdrocm10.0-{gfx}" (one target)


@record
class Release:
    version: str  # "6.2.4"
    stream: str  # "legacy" | "core-sdk"
    date: str | None  # ISO date
    amdgpu_install: Mapping[str, str] = field(hash=False)  # "jammy" / "el9.4" / "sle15.6" -> URL
    filename_verified: bool | None  # amdgpu-install file name seen in AMD's own docs
    distros: tuple[Distro, ...] | None  # None: list not known
    kernels: tuple[str, ...] | None
    gfx: GfxSupport | None
    kmd_compat: tuple[str, ...] | None  # user-space release lines this kernel driver supports
    install_path: str | None  # "/opt/rocm-6.2.4", "/opt/rocm/core-10.0"
    packages: tuple[str, ...]  # core/meta package names, e.g. ("rocm-core", "rocm")
    uncertain: str | None
    notes: str | None
    sources: tuple[str, ...]
    driver_version: str | None = None  # amdgpu driver numbering of the Core SDK's amdgpu-install: "31.50"
    amdgpu_install_usecases: Mapping[str, str] = field(default_factory=dict, hash=False)  # "radeon" -> args
    routes: CoreSdkRoutes | None = None
    remove_first: str | None = None  # specifier of installed legacy releases AMD says to uninstall first
    # "<os-id> <version>" -> the kernel series (major.minor) AMD's release notes list as supported there
    kernel_series: Mapping[str, tuple[str, ...]] = field(default_factory=dict, hash=False)

    def newest_kernel_series(self, os_id: str | None, os_version: str | None) -> str | None:
        """The newest kernel series this release lists for that distribution version, or None where it lists none."""
        series = self.kernel_series.get(f"{(os_id or '').lower()} {os_version or ''}")
        return max(series, key=_series_key) if series else None

    def newest_documented_kernel(self, os_id: str | None, os_version: str | None) -> str | None:
        """The newest kernel series this release documents for that distribution version, or, where it lists none
        for it (the version unknown, the distribution not listed), the newest it documents for any; None where it
        documents none at all."""
        every = [s for series in self.kernel_series.values() for s in series]
        return self.newest_kernel_series(os_id, os_version) or (max(every, key=_series_key) if every else None)


def _series_key(series: str) -> tuple[int, ...]:
    return tuple(int(x) for x in series.split("."))


@record
class WheelIndex:
    """One Python package index the knowledge base knows (the list a local mirror serves)."""

    name: str  # "rocm7.2" for download.pytorch.org/whl/rocm7.2; "amd-..." for AMD's indexes
    url: str
    vendor: str  # "pytorch" | "amd"
    channel: str  # see INDEX_CHANNELS
    rocm: str | None  # the ROCm line its packages are built for ("7.2", "10.0"); None: several or unknown
    device_extras: tuple[str, ...] | None  # AMD: gfx targets with a documented device-gfxNNNN extra here
    uncertain: str | None
    notes: str | None
    sources: tuple[str, ...]

    @property
    def stable(self) -> bool:
        return self.channel == "stable"


@record
class VendorWheel:
    """AMD's own torch build for one Core SDK release (installed with a mandatory device extra)."""

    sdk: str  # Core SDK release: "10.0.0"
    torch: str  # "2.13.0+rocm10.0.0"
    torchvision: str | None
    torchaudio: str | None
    index: str  # a WheelIndex name
    device_extra_required: bool  # torch[device-gfxNNNN] must be installed with it
    uncertain: str | None
    notes: str | None
    sources: tuple[str, ...]


@record
class Wheel:
    torch: str  # "2.5.1"
    index: str  # "rocm6.2"
    index_url: str
    torchvision: str | None
    torchaudio: str | None
    triton: str | None  # pytorch-triton-rocm
    python: tuple[str, ...]
    gfx: tuple[str, ...] | None  # None: not a fixed list (TheRock device packages) or unknown
    rocm: str | None  # ROCm version bundled / required
    bundles_rocm: bool | None  # True: ROCm user space inside the wheel; False: from pip packages
    uncertain: str | None
    notes: str | None
    sources: tuple[str, ...]
    uncertain_facts: tuple[str, ...] = ()  # which facts "uncertain" is about: "gfx", "python", "torchaudio", ...

    @property
    def choice_certain(self) -> bool:
        """Whether the facts a choice rests on (the gfx list, the Python tags) are certain: "newest" prefers
        such rows; a note about torchaudio or the index alone does not demote a row."""
        return not {"gfx", "python"} & set(self.uncertain_facts)

    @property
    def gfx_known(self) -> bool:
        return self.gfx is not None


@record
class TheRock:
    multi_arch_index: str
    multi_arch_index_nightly: str | None
    rocm10_index: str | None
    device_extras: tuple[str, ...]  # gfx targets with a device-gfxNNNN extra on the *stable* indexes
    install_example: str | None
    legacy_family_indexes: tuple[str, ...]
    notes: str | None
    sources: tuple[str, ...]


@record
class HsaOverride:
    gfx: tuple[str, ...]
    value: str | None  # None: no safe value (the reason says why)
    only_when_wheel_lacks: bool  # a workaround for old wheels; newer wheels carry the target
    reason: str
    sources: tuple[str, ...]


@record
class DockerImage:
    tag: str
    exists: bool | None  # False: documented as (very likely) non-existent
    rocm: str | None
    torch: str | None
    ubuntu: str | None
    python: str | None
    confidence: str  # "high" | "medium"
    note: str | None
    sources: tuple[str, ...]


@record
class KernelArgs:
    """Kernel command-line parameters a fix adds ("iommu=pt", "amdgpu.runpm=0") or removes ("nomodeset")."""
    add: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.add or self.remove)


MOVE_DIRECTIONS = ("newer", "older")


@record
class MoveTo:
    """A fix that moves the running kernel or the installed linux-firmware to a newer or an older one ("newer",
    "older", None: not part of the fix)."""
    kernel: str | None = None
    firmware: str | None = None

    def __bool__(self) -> bool:
        return bool(self.kernel or self.firmware)


@record
class FixBranch:
    """One way of fixing an issue that holds only on some machines: ``when`` names the facts it needs
    (predicates of wizard/diagnose.py); it is shown unless a detected fact contradicts one of them."""
    when: tuple[tuple[str, Any], ...]
    summary: str
    commands: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, hash=False)
    plan: str | None = None
    kernel_args: KernelArgs = field(default_factory=KernelArgs)
    move_to: MoveTo = field(default_factory=MoveTo)


@record
class Fix:
    summary: str
    commands: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, hash=False)
    plan: str | None = None
    kernel_args: KernelArgs = field(default_factory=KernelArgs)
    move_to: MoveTo = field(default_factory=MoveTo)
    branches: tuple[FixBranch, ...] = ()  # advice for some machines only, after the summary that fits all
    # the program whose systemd service the fix's env (its branches' too) is set in ("ollama": ollama.service's
    # Environment=): a setting that service makes is in force for this advice, whatever the shell has
    service: str | None = None


@record
class KnownIssue:
    id: str
    severity: str
    title: str
    signatures: tuple[lazy_re.Pattern, ...]
    when: tuple[tuple[str, Any], ...]  # (predicate, argument); lists become tuples
    predict: bool
    cause: str
    fix: Fix
    sources: tuple[str, ...]
    uncertain: str | None = None
    unless: tuple[lazy_re.Pattern, ...] = ()  # evidence lines that speak against this cause (it is then not shown first)
    explains: tuple[str, ...] = ()  # ids of issues this one is the deeper cause of (it goes above them)
    # (predicate, argument) pairs on the detected facts: when one holds, the facts speak against this cause
    contradicted_when: tuple[tuple[str, Any], ...] = ()
    # the finding names a failure whose cause text lists several possible causes: seen, it is "to check"
    symptom: bool = False
    # lines that show a failure this issue is one of several causes of: a finding brought up by one of them is a
    # cause only where a `when` predicate beyond the GPU's or system's identity holds, else it is "to check"
    symptom_signatures: tuple[lazy_re.Pattern, ...] = ()
    # lines in which the software itself states this cause (the WSL runtime's "ROCR: unsupported GPU"): one in the
    # machine's own text needs none of the `when` predicates that only name GPUs (a list of supported GPUs changes
    # from release to release; the runtime's own words are about the release installed)
    stated_signatures: tuple[lazy_re.Pattern, ...] = ()
    # the cause text names several causes and each fix branch is one of them: a finding is a cause only where the
    # detected facts establish a branch (every one of its predicates holds), else it is "to check"
    cause_in_branches: bool = False

    def matches_text(self, text: str) -> bool:
        """True when one of the signatures (symptom and stated signatures included) is found in ``text`` (predicates
        not checked)."""
        return any(p.search(text) for p in (*self.signatures, *self.symptom_signatures, *self.stated_signatures))
