"""The knowledge base: sourced facts about GPUs, ROCm releases, torch wheels, Docker images and
known issues, read from ``wizard/kb/*.json``.

``load_kb()`` returns a cached :class:`KnowledgeBase`; each file is read and validated on first use.
A malformed file raises :class:`KbError` with one line naming the file, the entry and the key.
``python -m wizard.kb check`` lists every problem in every file.

Only the standard library is imported here (``packaging`` when versions are compared), so importing is cheap.
"""

from __future__ import annotations

import functools
import json
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, TypeVar

from typing import TYPE_CHECKING

from wizard import lazy_re

if TYPE_CHECKING:
    from packaging.version import Version

from .families import family_of_gfx as _family_of_gfx
from .parse import (
    PREDICATES,
    Problems,
    WheelFile,
    parse_apus,
    parse_docker,
    parse_gpus,
    parse_issues,
    parse_processors_without_graphics,
    parse_releases,
    parse_wheels,
)
from .records import (
    FAMILIES,
    ApuInfo,
    PLANS,
    SEVERITIES,
    AptRepo,
    CoreSdkRoutes,
    Distro,
    DockerImage,
    Fix,
    FixBranch,
    KernelArgs,
    MoveTo,
    GfxSupport,
    GpuInfo,
    HsaOverride,
    KnownIssue,
    Release,
    RpmRepo,
    TheRock,
    VendorWheel,
    Wheel,
    WheelIndex,
)

__all__ = [
    "FAMILIES", "PLANS", "PREDICATES", "SEVERITIES", "ApuInfo", "AptRepo", "CoreSdkRoutes", "Distro", "DockerImage",
    "Fix", "FixBranch", "KernelArgs", "MoveTo", "GfxSupport", "GpuInfo", "HsaOverride", "KbError", "KnownIssue", "KnowledgeBase", "Release", "RpmRepo",
    "TheRock", "VendorWheel", "Wheel", "WheelIndex", "KB_DIR", "load_kb",
]

KB_DIR = Path(__file__).resolve().parent
FILES = ("gpus.json", "rocm_releases.json", "torch_wheels.json", "docker_images.json", "known_issues.json")
_INSTINCT_SERIES = lazy_re.compile(r"mi\d{3}")  # a name key of an Instinct model number alone
_RADEON_NUMBER = lazy_re.compile(r"\d{4}")  # a name key of a four-digit Radeon model number alone ("RX 6650")
_VEGA_CORES = lazy_re.compile(r"(?:rx)?vega(\d{1,2})")  # "Radeon (RX) Vega 7": an integrated Vega by its compute units
OPTIONAL_FILES = frozenset({"gpus.json", "apus.json"})  # written by another engineer; absent/empty means "no GPUs known"

# os-release ID -> how amdgpu-install keys its packages: Ubuntu by codename, EL by "el<major.minor>",
# SLES by "sle<major.minor>", Debian by "debian<major>" (docs/contracts.md; AMD's amdgpu-install pages for
# 6.0.2, 6.1.1, 6.2.0; Debian 12 uses the jammy package per AMD's 7.0 docs conf.py).
_EL_IDS = frozenset({"rhel", "ol", "centos"})  # URL path el/<x.y> (6.2-7.2), rhel/<x.y> (<= 6.1 and 31.x)
_SLE_IDS = frozenset({"sles", "sled", "opensuse-leap"})


class KbError(ValueError):
    """A knowledge-base file is missing or malformed. The message is one line."""


def _public(v: str) -> Version | None:
    from packaging.version import InvalidVersion, Version  # imported on use: detect never needs it

    try:
        return Version(Version(v.strip()).public)
    except (InvalidVersion, AttributeError):
        return None


def _version_matches(have: str, want: str) -> bool:
    """``want`` is an exact version ("2.5.1", local part ignored) or a specifier ("<2.6", ">=2.7,<2.9")."""
    hv = _public(have)
    if hv is None:
        return False
    want = want.strip()
    if want[:1] in "<>=!~":
        try:
            from packaging.specifiers import SpecifierSet

            return hv in SpecifierSet(want)
        except ValueError:  # packaging's InvalidSpecifier
            return False
    wv = _public(want)
    return wv is not None and hv == wv


_T = TypeVar("_T")


class KnowledgeBase:
    """Read-only view of the knowledge files in one directory. Each file is parsed on first use."""

    def __init__(self, directory: Path | str = KB_DIR) -> None:
        self.directory = Path(directory)

    # ------------------------------------------------------------------ loading

    def _read(self, name: str) -> Any:
        path = self.directory / name
        if not path.exists():
            if name in OPTIONAL_FILES:
                return None
            raise KbError(f"{name}: file missing in {self.directory}")
        text = path.read_text(encoding="utf-8")
        if not text.strip():
            if name in OPTIONAL_FILES:
                return None
            raise KbError(f"{name}: file is empty")
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise KbError(f"{name}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None

    def _parse(self, name: str, parser: Callable[[Any, Problems], _T]) -> _T:
        problems = Problems(name)
        result = parser(self._read(name), problems)
        if problems.lines:
            more = len(problems.lines) - 1
            tail = f" (and {more} more; run 'python -m wizard.kb check')" if more else ""
            raise KbError(problems.lines[0] + tail)
        return result

    @cached_property
    def _gpus(self) -> tuple[GpuInfo, ...]:
        if self._read("gpus.json") is None:
            return ()
        return self._parse("gpus.json", parse_gpus)

    @cached_property
    def _gpu_index(self) -> dict[str, GpuInfo]:
        return {g.pci_id: g for g in self._gpus}

    @cached_property
    def _typed_releases(self) -> tuple[Release, ...]:
        """The releases as rocm_releases.json writes them."""
        return self._parse("rocm_releases.json", parse_releases)

    @cached_property
    def _releases(self) -> tuple[Release, ...]:
        """The typed releases; one whose gfx list is null takes the targets AMD's compatibility matrix lists for
        it (derived_compat_matrix.json), where the matrix has a column for it."""
        from wizard.record import replace

        from .ingest_compat import DERIVED_COMPAT_MATRIX, matrix_gfx

        typed = self._typed_releases
        table = self._read(DERIVED_COMPAT_MATRIX) if (self.directory / DERIVED_COMPAT_MATRIX).exists() else None
        derived = matrix_gfx(table) if isinstance(table, dict) else {}
        out = []
        for r in typed:
            found = derived.get(r.version) if r.gfx is None else None
            if found is not None:
                r = replace(r, gfx=GfxSupport(official=found[0], note=f"AMD's compatibility matrix: {found[1]}"))
            out.append(r)
        return tuple(out)

    @cached_property
    def _wheel_file(self) -> WheelFile:
        return self._parse("torch_wheels.json", parse_wheels)

    @cached_property
    def _docker_file(self) -> tuple[tuple[DockerImage, ...], tuple[str, ...], tuple[str, ...]]:
        return self._parse("docker_images.json", parse_docker)

    @cached_property
    def _issues(self) -> tuple[KnownIssue, ...]:
        return self._parse("known_issues.json", parse_issues)

    # ------------------------------------------------------------------ GPUs

    def gpus(self) -> tuple[GpuInfo, ...]:
        return self._gpus

    def gpu_by_pci(self, pci_id: str) -> GpuInfo | None:
        """``pci_id`` as "1002:744c" (case-insensitive; "0x" prefixes tolerated)."""
        key = pci_id.strip().lower().replace("0x", "")
        return self._gpu_index.get(key)

    @staticmethod
    def family_of_gfx(gfx: str | None) -> str | None:
        return _family_of_gfx(gfx)

    @cached_property
    def _name_index(self) -> tuple[dict[str, set[int]], dict[str, set[int]]]:
        from .names import index_codenames, index_names

        rows = list(enumerate(self._gpus))
        return (index_names((i, g.name) for i, g in rows),
                index_codenames((i, g.codename) for i, g in rows if g.codename))

    def gpus_by_name(self, name: str) -> tuple[GpuInfo, ...]:
        """Rows whose marketing names include this one ("RX 7900 XTX", "Radeon 8060S", "MI250X")."""
        from .names import name_keys

        idx = self._name_index[0]
        keys = name_keys(name)
        for key in keys:
            if key in idx:
                named = tuple(self._gpus[i] for i in sorted(idx[key]))
                vega = _VEGA_CORES.fullmatch(key)
                if vega is not None and "graphics" not in name.lower():
                    # "Vega 10" without "Graphics" is also the Vega 10 die (RX Vega 56/64: gfx900), not only the
                    # 10-core iGPU: both readings stand
                    named += tuple(g for g in self.gpus_by_codename(f"Vega {vega.group(1)}") if g not in named)
                return named
        # an Instinct series named without its variant letter ("MI300": AMD's MI300 series, MI300A and MI300X) stands
        # for the rows of that model number with a letter suffix
        vega = next((m for k in keys for m in [_VEGA_CORES.fullmatch(k)] if m), None)
        if vega is not None:
            return self._vega_igpus_with_cores(int(vega.group(1)))
        # ... and a Radeon model number written without its suffix ("RX 6650", "RX 7900"), where it is no product
        # itself, for the rows of that number with a letter suffix (6650 XT, 6650M, 6650M XT): the caller keeps the
        # answer only where they agree
        series = next((k for k in keys if _INSTINCT_SERIES.fullmatch(k) or _RADEON_NUMBER.fullmatch(k)), None)
        if series is None:
            return ()
        rows = {i for k, found in idx.items() if k.startswith(series) and k[len(series):].isalpha() for i in found}
        return tuple(self._gpus[i] for i in sorted(rows))

    def _vega_igpus_with_cores(self, cores: int) -> tuple[GpuInfo, ...]:
        """A Vega iGPU named by its compute units ("Radeon Vega 7"): the GCN5 rows of the processors with that many
        graphics cores (apus.json), where no row carries the name itself."""
        pcis = {a.pci_id for a in self._parse("apus.json", parse_apus) if any(n == cores for _, n in a.graphics_cores)} \
            if self._read("apus.json") is not None else set()
        rows = (self.gpu_by_pci(p) for p in sorted(pcis))
        return tuple(g for g in rows if g is not None and g.integrated and g.gfx and g.gfx.startswith("gfx9"))

    def gpus_by_codename(self, codename: str) -> tuple[GpuInfo, ...]:
        """Rows of a chip codename as lspci and the kernel write it ("Navi 31", "Vega 10 XL/XT", "Phoenix1")."""
        from .names import codename_keys

        idx = self._name_index[1]
        rows: set[int] = set()
        for key in codename_keys(codename):
            rows |= idx.get(key, set())
        return tuple(self._gpus[i] for i in sorted(rows))

    @cached_property
    def _apus(self) -> dict[str, ApuInfo]:
        from .names import cpu_key

        if self._read("apus.json") is None:
            return {}
        return {cpu_key(c): a for a in self._parse("apus.json", parse_apus) for c in a.cpus}

    def apu_for_cpu(self, cpu: str) -> ApuInfo | None:
        """The apus.json row of a processor ("AMD Ryzen 7 7700 8-Core Processor" -> Raphael's Radeon Graphics).
        A name without its tier digit ("Ryzen 7900" for "Ryzen 9 7900"), or without the tier and PRO ("Ryzen 5650U" for
        "Ryzen 5 PRO 5650U"), finds the one processor of that model."""
        from .names import cpu_key

        found = self._apus.get(cpu_key(cpu))
        if found is None:
            rows = self._apus_without_tier.get(cpu_key(cpu), [])
            found = rows[0] if len(rows) == 1 else None
        return found

    @cached_property
    def _processors_without_graphics(self) -> tuple[str, ...]:
        if self._read("apus.json") is None:
            return ()
        return tuple(k for line in self._parse("apus.json", parse_processors_without_graphics) for k in line.key_prefixes)

    def cpu_without_graphics(self, cpu: str) -> bool:
        """Whether AMD lists the processor without an integrated GPU (an EPYC 7003, a Threadripper PRO)."""
        from .names import cpu_key

        key = cpu_key(cpu)
        return any(key.startswith(p) for p in self._processors_without_graphics)

    @cached_property
    def _apus_without_tier(self) -> dict[str, list[ApuInfo]]:
        from .names import cpu_keys_as_written

        out: dict[str, list[ApuInfo]] = {}
        for key, apu in self._apus.items():
            for bare in cpu_keys_as_written(key):
                if apu not in out.setdefault(bare, []):
                    out[bare].append(apu)
        return out

    def gpu_for_cpu(self, cpu: str) -> GpuInfo | None:
        """The integrated GPU a processor carries (its gpus.json row), if known."""
        apu = self.apu_for_cpu(cpu)
        return self.gpu_by_pci(apu.pci_id) if apu is not None else None

    # ------------------------------------------------------------------ wheels

    def wheels(self) -> tuple[Wheel, ...]:
        return self._wheel_file[0]

    def wheel(self, torch: str, index: str) -> Wheel | None:
        """The row for one torch version on one index ("2.5.1", "rocm6.2"); local versions are ignored."""
        for w in self.wheels():
            if w.index == index and _version_matches(w.torch, torch):
                return w
        return None

    def wheels_for(self, torch: str | None = None, index: str | None = None, gfx: str | None = None,
                   python: str | None = None) -> tuple[Wheel, ...]:
        """Rows matching every given filter. ``torch`` is a version or a specifier (">=2.7");
        ``gfx`` keeps rows whose compiled-in list is known and contains it."""
        out = []
        for w in self.wheels():
            if torch is not None and not _version_matches(w.torch, torch):
                continue
            if index is not None and w.index != index:
                continue
            if gfx is not None and (w.gfx is None or gfx not in w.gfx):
                continue
            if python is not None and python not in w.python:
                continue
            out.append(w)
        return tuple(out)

    def index_url(self, index: str) -> str | None:
        """URL of a download.pytorch.org ROCm index the knowledge base has rows for, else None."""
        for w in self.wheels():
            if w.index == index:
                return w.index_url
        return None

    def indexes(self, vendor: str | None = None, channel: str | None = None) -> tuple[WheelIndex, ...]:
        """Every package index the knowledge base knows (the list a local mirror serves)."""
        return tuple(ix for ix in self._wheel_file[4]
                     if (vendor is None or ix.vendor == vendor) and (channel is None or ix.channel == channel))

    def wheel_index(self, name_or_url: str) -> WheelIndex | None:
        key = name_or_url.rstrip("/")
        for ix in self._wheel_file[4]:
            if ix.name == key or ix.url.rstrip("/") == key:
                return ix
        return None

    @cached_property
    def _derived_devices(self) -> dict[str, Any]:
        """derived_devices.json (``python -m wizard.kb ingest``); empty when this directory keeps none."""
        from .ingest import DERIVED_DEVICES

        path = self.directory / DERIVED_DEVICES
        if not path.exists():
            return {}
        doc = self._read(DERIVED_DEVICES)
        return doc if isinstance(doc, dict) else {}

    def published_devices(self, ix: WheelIndex) -> tuple[str, ...]:
        """Targets whose device packages TheRock's publishing manifest puts on this index (its release stream
        of the aggregate whl-next index), documented by AMD's install page or not; () for other indexes."""
        d = self._derived_devices
        template = str(d.get("index_url") or "")
        if "{stream}" not in template:
            return ()
        head, tail = template.split("{stream}", 1)
        url = ix.url.rstrip("/") + "/"
        if not (url.startswith(head) and url.endswith(tail)):
            return ()
        stream = url[len(head):len(url) - len(tail)]
        return tuple(sorted((d.get("streams") or {}).get(stream) or {}))

    def published_provenance(self) -> str | None:
        """Where the published device packages are derived from, as ``repo:path@commit`` (not the URL: a plan's
        notes carry it into the script, which names no upstream host when mirrors are in force)."""
        src = (self._derived_devices.get("provenance") or {}).get("streams") or {}
        if not all(k in src for k in ("repo", "path", "commit")):
            return None
        return f"{src['repo']}:{src['path']}@{src['commit']}"

    def target_status(self, gfx: str) -> dict[str, bool] | None:
        """TheRock's SUPPORTED_GPUS.md Linux status of a target (build_passing, sanity_tested, release_ready)."""
        row = (self._derived_devices.get("linux_status") or {}).get(gfx)
        return dict(row) if isinstance(row, dict) else None

    def device_extra_indexes(self, gfx: str, *, stable_only: bool = False,
                             published: bool = False) -> tuple[WheelIndex, ...]:
        """AMD indexes with a documented device-<gfx> extra (with ``published``: or device packages TheRock
        publishes there without AMD documenting them): stable, prerelease, nightly, then the rest; documented
        before published only; newest ROCm line first."""
        from packaging.version import InvalidVersion, Version

        def line(ix: WheelIndex) -> Version:
            try:
                return Version(ix.rocm or "0")
            except InvalidVersion:
                return Version("0")

        hits = [ix for ix in self.indexes(vendor="amd")
                if ((ix.device_extras and gfx in ix.device_extras) or (published and gfx in self.published_devices(ix)))
                and (ix.stable or not stable_only)]
        rank = {"stable": 0, "prerelease": 1, "nightly": 2}  # then preview, dev
        return tuple(sorted(hits, key=lambda ix: (rank.get(ix.channel, 3), gfx not in (ix.device_extras or ()),
                                                  -line(ix).major, -line(ix).minor, ix.name)))

    def vendor_wheels(self, sdk: str | None = None) -> tuple[VendorWheel, ...]:
        """AMD's own torch builds (per Core SDK release, each with a mandatory device extra)."""
        return tuple(v for v in self._wheel_file[5] if sdk is None or _public(v.sdk) == _public(sdk))

    def therock(self) -> TheRock | None:
        return self._wheel_file[1]

    def hsa_overrides(self) -> tuple[HsaOverride, ...]:
        return self._wheel_file[2]

    def unresolved_wheels(self) -> tuple[dict[str, Any], ...]:
        """torch releases whose ROCm indexes are not known (each with 'uncertain' and sources)."""
        return self._wheel_file[3]

    def override_for(self, gfx: str, wheel: Wheel | None = None) -> str | None:
        """The HSA_OVERRIDE_GFX_VERSION value that is a documented, ISA-compatible override for ``gfx``.

        None when the target needs none (a wheel carries it natively: ``wheel``'s list when given,
        else any current wheel), or when no override is safe (gfx101x, gfx1103: see the data's reasons).
        """
        if wheel is not None and wheel.gfx is not None and gfx in wheel.gfx:
            return None
        for o in self.hsa_overrides():
            if gfx in o.gfx:
                if o.value is None:
                    return None
                if o.only_when_wheel_lacks and (wheel is None or wheel.gfx is None):
                    return None
                return o.value
        return None

    def override_entry(self, gfx: str) -> HsaOverride | None:
        for o in self.hsa_overrides():
            if gfx in o.gfx:
                return o
        return None

    # ------------------------------------------------------------------ releases

    def releases(self, stream: str | None = None) -> tuple[Release, ...]:
        rels = self._releases
        return rels if stream is None else tuple(r for r in rels if r.stream == stream)

    def gfx_list_decides(self, release: Release, gfx: str) -> bool:
        """Whether ``release``'s gfx list shows whether it supports ``gfx``: a list rocm_releases.json writes does
        (AMD's system requirements: Instinct and Radeon); one read from AMD's compatibility matrix only for a
        target it lists or an Instinct one (``ingest_compat.matrix_decides``: for Radeon and Ryzen the matrix
        defers to AMD's Radeon and Ryzen pages, so a Radeon target it lacks is unknown there, not unsupported)."""
        from .ingest_compat import matrix_decides

        if release.gfx is None:
            return False
        if gfx in release.gfx.official:
            return True
        typed = next((r for r in self._typed_releases if r.version == release.version), None)
        return (typed is not None and typed.gfx is not None) or matrix_decides(gfx)

    def release(self, version: str) -> Release | None:
        """"6.2" finds 6.2.0; "6.2.4" finds 6.2.4."""
        want = _public(version)
        if want is None:
            return None
        for r in self._releases:
            if _public(r.version) == want:
                return r
        return None

    @staticmethod
    def amdgpu_install_key(os_id: str | None, os_version: str | None, codename: str | None) -> str | None:
        """The distro key amdgpu-install URLs are stored under: "jammy", "el9.4", "sle15.6"."""
        os_id = (os_id or "").lower()
        if os_id == "ubuntu":
            return codename.lower() if codename else None
        if os_id in _EL_IDS and os_version and "." in os_version:
            return "el" + os_version
        if os_id in _SLE_IDS and os_version and "." in os_version:
            return "sle" + os_version
        if os_id == "debian" and os_version:
            return "debian" + os_version.split(".")[0]
        return None

    def amdgpu_install_url(self, version: str, os_id: str | None, os_version: str | None,
                           codename: str | None) -> str | None:
        rel = self.release(version)
        key = self.amdgpu_install_key(os_id, os_version, codename)
        if rel is None or key is None:
            return None
        return rel.amdgpu_install.get(key)

    # ------------------------------------------------------------------ docker and issues

    def docker_images(self) -> tuple[DockerImage, ...]:
        return self._docker_file[0]

    def docker_image(self, tag: str) -> DockerImage | None:
        t = tag.strip()
        if not t.startswith("rocm/"):
            t = "rocm/pytorch:" + t
        for im in self.docker_images():
            if im.tag == t:
                return im
        return None

    def docker_run_flags(self) -> tuple[str, ...]:
        return self._docker_file[1]

    def known_issues(self) -> tuple[KnownIssue, ...]:
        return self._issues

    def known_issue(self, issue_id: str) -> KnownIssue | None:
        for k in self._issues:
            if k.id == issue_id:
                return k
        return None

    # ------------------------------------------------------------------ checking

    def summary(self) -> str:
        """What ``kb check`` prints when there is no problem."""
        return (f"knowledge base OK: {len(self.releases())} releases, {len(self.wheels())} wheel rows, "
                f"{len(self.indexes())} indexes, {len(self.docker_images())} images, "
                f"{len(self.known_issues())} known issues, {len(self.gpus())} GPUs")

    def problems(self) -> list[str]:
        """Every problem in every file, one line each (empty when all is well)."""
        out: list[str] = []
        parsers = {"gpus.json": parse_gpus, "rocm_releases.json": parse_releases, "torch_wheels.json": parse_wheels,
                   "docker_images.json": parse_docker, "known_issues.json": parse_issues, "apus.json": parse_apus}
        for name, parser in parsers.items():
            try:
                doc = self._read(name)
            except KbError as exc:
                out.append(str(exc))
                continue
            if doc is None:
                continue
            problems = Problems(name)
            parser(doc, problems)
            out.extend(problems.lines)
        if not out:
            from .ingest import DERIVED_WHEEL_GFX, derived_problems, wheel_gfx_problems

            out.extend(derived_problems(self.directory))
            table = self._read(DERIVED_WHEEL_GFX) if (self.directory / DERIVED_WHEEL_GFX).exists() else None
            if isinstance(table, dict):
                out.extend(wheel_gfx_problems(table, self.wheels()))
            from .ingest_matrix import DERIVED_BUILD_MATRIX, build_matrix_problems

            matrix = self._read(DERIVED_BUILD_MATRIX) if (self.directory / DERIVED_BUILD_MATRIX).exists() else None
            if isinstance(matrix, dict):
                out.extend(build_matrix_problems(matrix, self.wheels()))
            from .ingest_install import DERIVED_INSTALL_PAGES, install_page_problems

            pages = self._read(DERIVED_INSTALL_PAGES) if (self.directory / DERIVED_INSTALL_PAGES).exists() else None
            if isinstance(pages, dict):
                out.extend(install_page_problems(pages, self.releases()))
            from .ingest_compat import DERIVED_COMPAT_MATRIX, compat_matrix_problems

            compat = self._read(DERIVED_COMPAT_MATRIX) if (self.directory / DERIVED_COMPAT_MATRIX).exists() else None
            if isinstance(compat, dict):
                out.extend(compat_matrix_problems(compat, self._typed_releases))
        if not out:
            out.extend(self._cross_problems())
        return out

    def _cross_problems(self) -> list[str]:
        from .consistency import cross_problems

        out: list[str] = []
        for o in self.hsa_overrides():
            for g in o.gfx:
                if o.value is not None and any(w.gfx and g in w.gfx for w in self.wheels()) \
                        and not o.only_when_wheel_lacks:
                    out.append(f"torch_wheels.json: hsa_overrides ({g}): a wheel carries {g} natively; "
                               "set only_when_wheel_lacks")
        for gpu in self.gpus():
            if gpu.gfx and gpu.family and _family_of_gfx(gpu.gfx) not in (None, gpu.family):
                out.append(f"gpus.json: gpus ({gpu.pci_id}): family {gpu.family} disagrees with {gpu.gfx} "
                           f"({_family_of_gfx(gpu.gfx)})")
        out.extend(cross_problems(self))
        return out


@functools.cache
def load_kb(directory: str | None = None) -> KnowledgeBase:
    """The knowledge base (cached per directory). Files are read lazily on first use."""
    return KnowledgeBase(Path(directory) if directory else KB_DIR)
