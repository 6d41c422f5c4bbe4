"""Strict parsers: JSON of one knowledge-base file -> frozen records, or one-line problems.

Each problem names the file, the entry and the key ("torch_wheels.json: wheels[3] (2.5.1 rocm6.2):
unknown key 'foo'"). Parsers collect every problem they can find; an entry with a problem is
dropped from the result, so ``check`` can list all of them while ``load`` refuses the file.
"""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Any, Callable, Mapping, NoReturn

from .wrap_rx import wrap_tolerant
from .records import (
    FAMILIES,
    INDEX_CHANNELS,
    MOVE_DIRECTIONS,
    INDEX_VENDORS,
    PLANS,
    SEVERITIES,
    STREAMS,
    USECASE_FAMILIES,
    ApuInfo,
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
    NoGraphicsLine,
    Release,
    RpmRepo,
    TheRock,
    VendorWheel,
    Wheel,
    WheelIndex,
)

from wizard import lazy_re

_GFX = lazy_re.compile(r"^gfx[0-9]{2,3}[0-9a-f]$")
_PCI = lazy_re.compile(r"^[0-9a-f]{4}:[0-9a-f]{4}$")
_DATE = lazy_re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MISSING = object()

# Predicate -> argument kind, exactly the vocabulary of docs/contracts.md.
PREDICATES: dict[str, str] = {
    "gpu_gfx_in": "gfx-list",
    "gpu_family_in": "family-list",
    "override_set": "bool",
    "override_empty": "true",
    "override_on_native": "true",
    "wheel_lacks_gfx": "true",
    "torch_build": "build",
    "torch_version": "specifier",
    "rocm_version": "specifier",
    "kernel_version": "specifier",
    "kernel_newer_than_release": "true",
    "igpu_and_dgpu": "true",
    "kfd_inaccessible": "true",
    "not_in_render_group": "true",
    "secure_boot_dkms": "true",
    "distro_rocm_packages": "true",
    "mixed_rocm_repos": "true",
    "therock_missing_device": "true",
    "pypi_placeholder": "true",
    "system_torch_shadows": "true",
    "triton_missing": "true",
    "numpy_major": "specifier",
    "multi_gpu": "true",
    "os_id_in": "str-list",
    "os_like_in": "str-list",
    "fedora_line": "bool",
    "wsl": "bool",
    "in_container": "bool",
    "kfd_present": "bool",
    "amdgpu_loaded": "bool",
    "kfd_error": "regex",
    "env_matches": "env-pair",
    "env_not": "env-pair",
    "gpus_differ": "true",
    "override_on_supported": "true",
    "gpu_codename_in": "str-list",
    "gpu_gfx_not_in": "gfx-list",
    "therock_family_lacks_gpu": "true",
    "text_matches": "regex",
    "text_not_matches": "regex",
    "text_names_gpu_gfx": "regex",
    "built_from_source": "true",
    "gtt_default_limit": "bool",
    "kernel_gc_ip_in": "str-list",
    "tensile_gfx_unshipped": "true",
    "tensile_gfx_not_installed": "true",
    "tensile_gfx_shipped": "true",
    "amdgpu_pro": "true",
    "in_render_group": "bool",
    "groups_pending": "true",
    "visible_devices_hide_all": "true",
    "override_family_mismatch": "true",
    "override_spoofs_gpu": "true",
    "dkms_not_for_running_kernel": "true",
    "wheel_carries_gfx": "true",
    "has_dgpu": "bool",
    "amd_igpu_beside_other_gpu": "true",
    "rocm_stream_in": "str-list",
    "kfd_open_not_permissions": "true",
    "torch_not_wsl_build": "true",
    "amd_gpu": "bool",
    "rocm_line_in": "str-list",
}


class Problems:
    """Collects one-line problems for one file."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.lines: list[str] = []

    def add(self, where: str, message: str) -> None:
        self.lines.append(f"{self.file}: {where}: {message}" if where else f"{self.file}: {message}")


class _Bad(Exception):
    """Raised inside one entry; the entry is dropped, the problem already recorded."""


class Entry:
    """A JSON object with a fixed set of keys, read field by field.

    ``text``/``flag``/``strs``/``gfx_list``/``version``/``url`` read a required, non-null key;
    their ``opt_`` forms also accept null (and, with ``required=False``, a missing key) as None.
    """

    def __init__(self, problems: Problems, where: str, raw: Any, keys: set[str]) -> None:
        self.p = problems
        self.where = where
        if not isinstance(raw, dict):
            self.fail(None, f"expected an object, got {type(raw).__name__}")
        self.raw: dict[str, Any] = raw
        bad = False
        for k in raw:
            if k not in keys:
                self.p.add(where, f"unknown key {k!r}")
                bad = True
        if bad:
            raise _Bad

    def fail(self, key: str | None, message: str) -> NoReturn:
        self.p.add(self.where, f"key {key!r}: {message}" if key else message)
        raise _Bad

    def get(self, key: str, required: bool) -> Any:
        if key not in self.raw:
            if required:
                self.fail(key, "missing")
            return _MISSING
        return self.raw[key]

    def _present(self, key: str, required: bool, null: bool) -> Any:
        """The key's value, or _MISSING when it is absent (allowed) or null (allowed)."""
        v = self.get(key, required)
        if v is None:
            if not null:
                self.fail(key, "must not be null")
            return _MISSING
        return v

    def _text(self, key: str, v: Any) -> str:
        if not isinstance(v, str) or not v.strip():
            self.fail(key, f"expected a non-empty string, got {v!r}")
        return v

    def text(self, key: str) -> str:
        return self._text(key, self._present(key, True, False))

    def opt_text(self, key: str, *, required: bool = True) -> str | None:
        v = self._present(key, required, True)
        return None if v is _MISSING else self._text(key, v)

    def _flag(self, key: str, v: Any) -> bool:
        if not isinstance(v, bool):
            self.fail(key, f"expected true/false, got {v!r}")
        return v

    def flag(self, key: str, *, default: bool | None = None) -> bool:
        v = self._present(key, default is None, False)
        return default if v is _MISSING and default is not None else self._flag(key, v)

    def opt_flag(self, key: str) -> bool | None:
        v = self._present(key, True, True)
        return None if v is _MISSING else self._flag(key, v)

    def number(self, key: str) -> float | None:
        v = self._present(key, False, True)
        if v is _MISSING:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.fail(key, f"expected a number, got {v!r}")
        return float(v)

    def _strs(self, key: str, v: Any, check: Callable[[str], str | None] | None) -> tuple[str, ...]:
        if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
            self.fail(key, "expected a list of non-empty strings")
        if check:
            for x in v:
                msg = check(x)
                if msg:
                    self.fail(key, msg)
        return tuple(v)

    def strs(self, key: str, *, required: bool = True,
             check: Callable[[str], str | None] | None = None) -> tuple[str, ...]:
        """A list of strings; () when the key is absent and not required."""
        v = self._present(key, required, False)
        return () if v is _MISSING else self._strs(key, v, check)

    def opt_strs(self, key: str, *, check: Callable[[str], str | None] | None = None) -> tuple[str, ...] | None:
        v = self._present(key, True, True)
        return None if v is _MISSING else self._strs(key, v, check)

    def gfx_list(self, key: str, *, required: bool = True) -> tuple[str, ...]:
        return self.strs(key, required=required, check=_gfx_problem)

    def opt_gfx_list(self, key: str) -> tuple[str, ...] | None:
        return self.opt_strs(key, check=_gfx_problem)

    def _version(self, key: str, v: str) -> str:
        from packaging.version import InvalidVersion, Version

        try:
            Version(v)
        except InvalidVersion:
            self.fail(key, f"not a version: {v!r}")
        return v

    def version(self, key: str) -> str:
        return self._version(key, self.text(key))

    def opt_version(self, key: str) -> str | None:
        v = self.opt_text(key)
        return None if v is None else self._version(key, v)

    def date(self, key: str) -> str | None:
        v = self.opt_text(key)
        if v is not None and not _DATE.match(v):
            self.fail(key, f"expected YYYY-MM-DD, got {v!r}")
        return v

    def _url(self, key: str, v: str) -> str:
        if not _is_https(v):
            self.fail(key, f"expected an https:// URL, got {v!r}")
        return v

    def url(self, key: str) -> str:
        return self._url(key, self.text(key))

    def opt_url(self, key: str, *, required: bool = True) -> str | None:
        v = self.opt_text(key, required=required)
        return None if v is None else self._url(key, v)

    def url_map(self, key: str, *, required: bool = True) -> dict[str, str]:
        """An object of name -> https URL ({} when absent and not required)."""
        v = self.get(key, required)
        if v is _MISSING:
            return {}
        if not isinstance(v, dict):
            self.fail(key, "expected an object of name -> https:// URL")
        for k, u in v.items():
            if not isinstance(k, str) or not k or not isinstance(u, str) or not _is_https(u):
                self.fail(key, f"{k!r}: expected an https:// URL, got {u!r}")
        return dict(v)

    def sources(self, key: str = "sources") -> tuple[str, ...]:
        v = self.get(key, True)
        if not isinstance(v, list) or not v:
            self.fail(key, "needs at least one source URL")
        for s in v:
            if not isinstance(s, str) or not _is_https(s):
                self.fail(key, f"source is not an https:// URL: {s!r}")
        return tuple(v)


def _is_https(s: str) -> bool:
    return s.startswith("https://") and " " not in s and len(s) > len("https://x")


def _gfx_problem(s: str) -> str | None:
    return None if _GFX.match(s) else f"not a gfx target: {s!r}"


def _each(problems: Problems, items: Any, where: str, build: Callable[[str, Any], Any]) -> list[Any]:
    out: list[Any] = []
    if not isinstance(items, list):
        problems.add(where, "expected a list")
        return out
    for i, raw in enumerate(items):
        label = f"{where}[{i}]"
        if isinstance(raw, dict):
            for k in ("id", "tag", "version", "pci_id", "name"):
                if isinstance(raw.get(k), str):
                    label += f" ({raw[k]})"
                    break
            else:
                if isinstance(raw.get("torch"), str):
                    label += f" ({raw['torch']} {raw.get('index')})"
        try:
            out.append(build(label, raw))
        except _Bad:
            pass
    return out


def _top(problems: Problems, doc: Any, keys: set[str], required: set[str]) -> dict[str, Any] | None:
    if not isinstance(doc, dict):
        problems.add("", "top level must be an object")
        return None
    for k in doc:
        if k not in keys:
            problems.add("", f"unknown top-level key {k!r}")
    for k in required:
        if k not in doc:
            problems.add("", f"missing top-level key {k!r}")
    return doc


def _meta_ok(problems: Problems, meta: Any) -> None:
    if meta is not None and not isinstance(meta, dict):
        problems.add("_meta", "expected an object")


# --------------------------------------------------------------------------- gpus.json


def parse_gpus(doc: Any, problems: Problems) -> tuple[GpuInfo, ...]:
    top = _top(problems, doc, {"_meta", "gpus"}, {"gpus"})
    if top is None:
        return ()
    _meta_ok(problems, top.get("_meta"))

    def build(where: str, raw: Any) -> GpuInfo:
        e = Entry(problems, where, raw,
                  {"pci_id", "name", "codename", "gfx", "family", "integrated", "sources", "peak_tflops", "note"})
        pci = e.text("pci_id")
        if not _PCI.match(pci.lower()):
            e.fail("pci_id", f"expected vendor:device hex, got {pci!r}")
        gfx = e.opt_text("gfx")
        if gfx is not None and not _GFX.match(gfx):
            e.fail("gfx", f"not a gfx target: {gfx!r}")
        family = e.opt_text("family")
        if family is not None and family not in FAMILIES:
            e.fail("family", f"unknown family {family!r} (known: {', '.join(FAMILIES)})")
        return GpuInfo(
            pci_id=pci.lower(), name=e.text("name"), codename=e.opt_text("codename", required=False),
            gfx=gfx, family=family, integrated=e.opt_flag("integrated"),
            sources=e.sources(), peak_tflops=e.number("peak_tflops"), note=e.opt_text("note", required=False),
        )

    gpus = _each(problems, top.get("gpus", []), "gpus", build)
    seen: set[str] = set()
    for g in gpus:
        if g.pci_id in seen:
            problems.add(f"gpus ({g.pci_id})", "duplicate pci_id")
        seen.add(g.pci_id)
    return tuple(gpus)


# --------------------------------------------------------------------------- apus.json


def parse_apus(doc: Any, problems: Problems) -> tuple[ApuInfo, ...]:
    top = _top(problems, doc, {"_meta", "apus", "without_graphics"}, {"apus"})
    if top is None:
        return ()
    _meta_ok(problems, top.get("_meta"))

    def build(where: str, raw: Any) -> ApuInfo:
        e = Entry(problems, where, raw, {"cpus", "graphics", "graphics_cores", "pci_id", "sources"})
        pci = e.text("pci_id")
        if not _PCI.match(pci.lower()):
            e.fail("pci_id", f"expected vendor:device hex, got {pci!r}")
        cpus = e.strs("cpus") or ()
        if not cpus:
            e.fail("cpus", "expected at least one processor name")
        cores = e.get("graphics_cores", False)
        if cores is _MISSING:
            cores = {}
        if not isinstance(cores, dict) or not all(
                c in cpus and isinstance(n, int) and not isinstance(n, bool) and n > 0 for c, n in cores.items()):
            e.fail("graphics_cores", "expected {processor of cpus: a positive number of compute units}")
        return ApuInfo(cpus=tuple(cpus), graphics=e.text("graphics"), pci_id=pci.lower(), sources=e.sources(),
                       graphics_cores=tuple(cores.items()))

    parse_processors_without_graphics(doc, problems)
    return tuple(_each(problems, top.get("apus", []), "apus", build))


def parse_processors_without_graphics(doc: Any, problems: Problems) -> tuple[NoGraphicsLine, ...]:
    """apus.json's ``without_graphics``: processor lines AMD lists without an integrated GPU."""
    if not isinstance(doc, dict):
        return ()

    def build(where: str, raw: Any) -> NoGraphicsLine:
        e = Entry(problems, where, raw, {"key_prefixes", "note", "sources"})
        prefixes = e.strs("key_prefixes") or ()
        if not prefixes or not all(re.fullmatch(r"[a-z0-9+]+", k) for k in prefixes):
            e.fail("key_prefixes", "expected processor keys (lower-case letters and digits: 'epyc7')")
        return NoGraphicsLine(key_prefixes=tuple(prefixes), note=e.text("note"), sources=e.sources())

    return tuple(_each(problems, doc.get("without_graphics", []), "without_graphics", build))


# --------------------------------------------------------------------------- rocm_releases.json


def parse_releases(doc: Any, problems: Problems) -> tuple[Release, ...]:
    top = _top(problems, doc, {"_meta", "releases"}, {"releases"})
    if top is None:
        return ()
    _meta_ok(problems, top.get("_meta"))

    def build(where: str, raw: Any) -> Release:
        e = Entry(problems, where, raw, {
            "version", "stream", "date", "amdgpu_install", "filename_verified", "distros", "kernels", "gfx",
            "kmd_compat", "install_path", "packages", "uncertain", "notes", "sources", "driver_version",
            "amdgpu_install_usecases", "routes", "remove_first", "kernel_series"})
        stream = e.text("stream")
        if stream not in STREAMS:
            e.fail("stream", f"expected one of {STREAMS}, got {stream!r}")
        ai = e.get("amdgpu_install", True)
        if not isinstance(ai, dict):
            e.fail("amdgpu_install", "expected an object (distro key -> URL); {} when there is none")
        for k, u in ai.items():
            if not isinstance(u, str) or not _is_https(u):
                e.fail("amdgpu_install", f"{k!r}: expected an https:// URL, got {u!r}")
        distros = None
        raw_d = e.get("distros", True)
        if raw_d is not None:
            if not isinstance(raw_d, list):
                e.fail("distros", "expected a list of {id, version, codename} or null")
            distros = tuple(
                Distro(id=de.text("id"), version=de.text("version"), codename=de.opt_text("codename", required=False))
                for de in (Entry(problems, f"{where}: distros[{i}]", d, {"id", "version", "codename"})
                           for i, d in enumerate(raw_d)))
        gfx = None
        raw_g = e.get("gfx", True)
        if raw_g is not None:
            ge = Entry(problems, f"{where}: gfx", raw_g, {"official", "unofficial", "unsupported", "note", "deprecated"})
            gfx = GfxSupport(official=ge.gfx_list("official", required=False),
                             unofficial=ge.gfx_list("unofficial", required=False),
                             unsupported=ge.gfx_list("unsupported", required=False),
                             note=ge.opt_text("note", required=False),
                             deprecated=ge.gfx_list("deprecated", required=False))
            stray = [g for g in gfx.deprecated if g not in gfx.official]
            if stray:
                ge.fail("deprecated", f"not in official (a deprecated target is still a supported one): {stray}")
        usecases = e.get("amdgpu_install_usecases", False)
        if usecases is _MISSING:
            usecases = {}
        if not isinstance(usecases, dict) or not all(
                k in USECASE_FAMILIES and isinstance(v, str) and v.startswith("--usecase=") for k, v in usecases.items()):
            e.fail("amdgpu_install_usecases", f"expected {{{'/'.join(USECASE_FAMILIES)}: \"--usecase=...\"}}")
        remove_first = e.opt_text("remove_first", required=False)
        if remove_first is not None:
            try:
                from packaging.specifiers import SpecifierSet

                SpecifierSet(remove_first)
            except ValueError:  # packaging's InvalidSpecifier
                e.fail("remove_first", f"not a version specifier: {remove_first!r}")
        kernel_series = e.get("kernel_series", False)
        if kernel_series is _MISSING:
            kernel_series = {}
        if not isinstance(kernel_series, dict) or not all(
                isinstance(k, str) and re.match(r"^[a-z]+ \d+(\.\d+)*$", k) and isinstance(v, list) and v
                and all(isinstance(x, str) and re.match(r"^\d+\.\d+$", x) for x in v)
                for k, v in kernel_series.items()):
            e.fail("kernel_series", 'expected {"<os-id> <version>": ["<major>.<minor>", ...]}')
        listed = {f"{d.id} {d.version}" for d in distros or ()}
        for k in kernel_series:
            if distros is not None and k not in listed:
                e.fail("kernel_series", f"{k!r} is not among the release's distros")
        routes = None
        raw_r = e.get("routes", False)
        if raw_r is not _MISSING and raw_r is not None:
            routes = _routes(problems, f"{where}: routes", raw_r)
        return Release(
            version=e.version("version"), stream=stream, date=e.date("date"),
            amdgpu_install=MappingProxyType(dict(ai)),
            filename_verified=e.opt_flag("filename_verified"),
            distros=distros, kernels=e.opt_strs("kernels"), gfx=gfx,
            kmd_compat=e.opt_strs("kmd_compat"),
            install_path=e.opt_text("install_path"), packages=e.strs("packages"),
            uncertain=e.opt_text("uncertain", required=False),
            notes=e.opt_text("notes", required=False), sources=e.sources(),
            driver_version=e.opt_text("driver_version", required=False),
            amdgpu_install_usecases=MappingProxyType(dict(usecases)), routes=routes, remove_first=remove_first,
            kernel_series=MappingProxyType({k: tuple(v) for k, v in kernel_series.items()}),
        )

    rels = _each(problems, top.get("releases", []), "releases", build)
    seen: set[str] = set()
    for r in rels:
        if r.version in seen:
            problems.add(f"releases ({r.version})", "duplicate version")
        seen.add(r.version)
    return tuple(rels)


def _routes(problems: Problems, where: str, raw: Any) -> CoreSdkRoutes:
    e = Entry(problems, where, raw, {"apt", "rpm", "pip_index", "pip_requirement", "tarball", "runfile",
                                     "meta_package", "gfx_package"})
    apt = rpm = None
    if e.get("apt", False) not in (_MISSING, None):
        a = Entry(problems, f"{where}: apt", e.raw["apt"], {"key_url", "keyring", "format", "suite", "components",
                                                           "repos"})
        fmt = a.text("format")
        if fmt not in ("deb822", "one-line"):
            a.fail("format", f"expected deb822 or one-line, got {fmt!r}")
        apt = AptRepo(key_url=a.url("key_url"), keyring=a.text("keyring"), format=fmt, suite=a.text("suite"),
                      components=a.strs("components"), repos=MappingProxyType(a.url_map("repos")))
    if e.get("rpm", False) not in (_MISSING, None):
        r = Entry(problems, f"{where}: rpm", e.raw["rpm"], {"key_url", "repos"})
        rpm = RpmRepo(key_url=r.url("key_url"), repos=MappingProxyType(r.url_map("repos")))
    req = e.opt_text("pip_requirement", required=False)
    if req is not None and "{gfx}" not in req:
        e.fail("pip_requirement", "needs the {gfx} placeholder for the device extra")
    gfx_pkg = e.opt_text("gfx_package", required=False)
    if gfx_pkg is not None and "{gfx}" not in gfx_pkg:
        e.fail("gfx_package", "needs the {gfx} placeholder")
    tarball = e.opt_url("tarball", required=False)
    if tarball is not None and "{family}" not in tarball:
        e.fail("tarball", "needs the {family} placeholder")
    return CoreSdkRoutes(apt=apt, rpm=rpm, pip_index=e.opt_url("pip_index", required=False),
                         pip_requirement=req, tarball=tarball, runfile=e.opt_url("runfile", required=False),
                         meta_package=e.opt_text("meta_package", required=False), gfx_package=gfx_pkg)


# --------------------------------------------------------------------------- torch_wheels.json

INDEX_BASE = "https://download.pytorch.org/whl/"


WheelFile = tuple[tuple[Wheel, ...], TheRock | None, tuple[HsaOverride, ...], tuple[dict[str, Any], ...],
                  tuple[WheelIndex, ...], tuple[VendorWheel, ...]]


# what a wheel row's "uncertain" note can be about ("newest" passes over rows uncertain in gfx or python)
WHEEL_FACTS = ("gfx", "python", "index", "torchvision", "torchaudio", "triton", "rocm")

def parse_wheels(doc: Any, problems: Problems) -> WheelFile:
    top = _top(problems, doc, {"_meta", "indexes", "wheels", "vendor_wheels", "therock", "hsa_overrides",
                               "unresolved"}, {"indexes", "wheels", "therock", "hsa_overrides"})
    if top is None:
        return (), None, (), (), (), ()
    _meta_ok(problems, top.get("_meta"))

    def build_index(where: str, raw: Any) -> WheelIndex:
        e = Entry(problems, where, raw, {"name", "url", "vendor", "channel", "rocm", "device_extras", "uncertain",
                                          "notes", "sources"})
        name = e.text("name")
        vendor = e.text("vendor")
        if vendor not in INDEX_VENDORS:
            e.fail("vendor", f"expected one of {INDEX_VENDORS}, got {vendor!r}")
        channel = e.text("channel")
        if channel not in INDEX_CHANNELS:
            e.fail("channel", f"expected one of {INDEX_CHANNELS}, got {channel!r}")
        url = e.url("url")
        if vendor == "pytorch" and name.startswith("rocm") and url.rstrip("/") != INDEX_BASE + name:
            e.fail("url", f"{url!r} does not match index {name!r}")
        return WheelIndex(name=name, url=url, vendor=vendor, channel=channel, rocm=e.opt_text("rocm"),
                          device_extras=e.opt_gfx_list("device_extras"),
                          uncertain=e.opt_text("uncertain", required=False),
                          notes=e.opt_text("notes", required=False), sources=e.sources())

    indexes = _each(problems, top.get("indexes", []), "indexes", build_index)
    index_names: set[str] = set()
    index_urls: set[str] = set()
    for ix in indexes:
        if ix.name in index_names:
            problems.add(f"indexes ({ix.name})", "duplicate index name")
        if ix.url.rstrip("/") in index_urls:
            problems.add(f"indexes ({ix.name})", f"duplicate index url {ix.url}")
        index_names.add(ix.name)
        index_urls.add(ix.url.rstrip("/"))

    def build(where: str, raw: Any) -> Wheel:
        e = Entry(problems, where, raw, {
            "torch", "index", "index_url", "torchvision", "torchaudio", "triton", "python", "gfx", "rocm",
            "bundles_rocm", "uncertain", "uncertain_facts", "notes", "sources"})
        index = e.text("index")
        if not re.match(r"^rocm\d+\.\d+(\.\d+)?$", index):
            e.fail("index", f"expected rocmX.Y[.Z], got {index!r}")
        url = e.url("index_url")
        if url.rstrip("/") != INDEX_BASE + index:
            e.fail("index_url", f"{url!r} does not match index {index!r}")
        py = e.strs("python", check=lambda s: None if re.match(r"^3\.\d+t?$", s) else f"not a python version {s!r}")
        uncertain = e.opt_text("uncertain", required=False)
        facts = e.strs("uncertain_facts", required=False,
                       check=lambda s: None if s in WHEEL_FACTS else f"not one of {', '.join(WHEEL_FACTS)}: {s!r}")
        if facts and not uncertain:
            e.fail("uncertain_facts", "names uncertain facts without an 'uncertain' note saying why")
        if uncertain and not facts:  # a note that does not say what it is about: every fact is in doubt
            facts = WHEEL_FACTS
        return Wheel(
            torch=e.version("torch"), index=index, index_url=url,
            torchvision=e.opt_version("torchvision"), torchaudio=e.opt_version("torchaudio"),
            triton=e.opt_version("triton"), python=py, gfx=e.opt_gfx_list("gfx"),
            rocm=e.opt_version("rocm"), bundles_rocm=e.opt_flag("bundles_rocm"),
            uncertain=uncertain, uncertain_facts=facts,
            notes=e.opt_text("notes", required=False), sources=e.sources(),
        )

    wheels = _each(problems, top.get("wheels", []), "wheels", build)
    seen: dict[tuple[str, str], Wheel] = {}
    for w in wheels:
        if w.index not in index_names:
            problems.add(f"wheels ({w.torch} {w.index})", f"index {w.index!r} is not in the indexes list")
        prev = seen.get((w.torch, w.index))
        if prev is not None:
            what = ("contradicting gfx/python lists" if (prev.gfx, prev.python) != (w.gfx, w.python)
                    else "same contents")
            problems.add(f"wheels ({w.torch} {w.index})", f"duplicate (torch, index) row ({what})")
        seen[(w.torch, w.index)] = w

    def build_vendor(where: str, raw: Any) -> VendorWheel:
        e = Entry(problems, where, raw, {"sdk", "torch", "torchvision", "torchaudio", "index",
                                          "device_extra_required", "uncertain", "notes", "sources"})
        index = e.text("index")
        if index not in index_names:
            e.fail("index", f"{index!r} is not in the indexes list")
        return VendorWheel(sdk=e.version("sdk"), torch=e.version("torch"),
                           torchvision=e.opt_version("torchvision"),
                           torchaudio=e.opt_version("torchaudio"), index=index,
                           device_extra_required=e.flag("device_extra_required"),
                           uncertain=e.opt_text("uncertain", required=False),
                           notes=e.opt_text("notes", required=False), sources=e.sources())

    vendor = _each(problems, top.get("vendor_wheels", []), "vendor_wheels", build_vendor)
    seen_v: set[tuple[str, str]] = set()
    for v in vendor:
        if (v.torch, v.index) in seen_v:
            problems.add(f"vendor_wheels ({v.torch} {v.index})", "duplicate (torch, index) row")
        seen_v.add((v.torch, v.index))

    therock = None
    try:
        t = Entry(problems, "therock", top.get("therock"), {
            "multi_arch_index", "multi_arch_index_nightly", "rocm10_index", "device_extras", "install_example",
            "legacy_family_indexes", "notes", "sources"})
        therock = TheRock(
            multi_arch_index=t.url("multi_arch_index"),
            multi_arch_index_nightly=t.opt_url("multi_arch_index_nightly"),
            rocm10_index=t.opt_url("rocm10_index"), device_extras=t.gfx_list("device_extras"),
            install_example=t.opt_text("install_example"),
            legacy_family_indexes=t.strs("legacy_family_indexes", required=False,
                                         check=lambda s: None if _is_https(s) else f"not an https URL {s!r}"),
            notes=t.opt_text("notes", required=False), sources=t.sources(),
        )
    except _Bad:
        pass

    def build_override(where: str, raw: Any) -> HsaOverride:
        e = Entry(problems, where, raw, {"gfx", "value", "only_when_wheel_lacks", "reason", "sources"})
        value = e.opt_text("value")
        if value is not None and not re.match(r"^\d+\.\d+\.\d+$", value):
            e.fail("value", f"expected major.minor.stepping, got {value!r}")
        return HsaOverride(gfx=e.gfx_list("gfx"), value=value,
                           only_when_wheel_lacks=e.flag("only_when_wheel_lacks", default=False),
                           reason=e.text("reason"), sources=e.sources())

    overrides = _each(problems, top.get("hsa_overrides", []), "hsa_overrides", build_override)
    seen_gfx: set[str] = set()
    for o in overrides:
        for g in o.gfx:
            if g in seen_gfx:
                problems.add(f"hsa_overrides ({g})", "gfx listed twice")
            seen_gfx.add(g)

    def build_unresolved(where: str, raw: Any) -> dict[str, Any]:
        e = Entry(problems, where, raw, {"torch", "torchvision", "python", "uncertain", "sources"})
        return {"torch": e.version("torch"), "torchvision": e.opt_version("torchvision"),
                "python": e.strs("python", required=False), "uncertain": e.text("uncertain"),
                "sources": e.sources()}

    unresolved = _each(problems, top.get("unresolved", []), "unresolved", build_unresolved)
    if therock is not None:
        for label, u in (("multi_arch_index", therock.multi_arch_index),
                         ("multi_arch_index_nightly", therock.multi_arch_index_nightly),
                         ("rocm10_index", therock.rocm10_index)):
            if u is not None and u.rstrip("/") not in index_urls:
                problems.add("therock", f"{label} {u} is not in the indexes list")
    return tuple(wheels), therock, tuple(overrides), tuple(unresolved), tuple(indexes), tuple(vendor)


# --------------------------------------------------------------------------- docker_images.json


def parse_docker(doc: Any, problems: Problems) -> tuple[tuple[DockerImage, ...], tuple[str, ...], tuple[str, ...]]:
    top = _top(problems, doc, {"_meta", "images", "run_flags", "sources"}, {"images", "run_flags", "sources"})
    if top is None:
        return (), (), ()
    _meta_ok(problems, top.get("_meta"))

    def build(where: str, raw: Any) -> DockerImage:
        e = Entry(problems, where, raw, {
            "tag", "exists", "rocm", "torch", "ubuntu", "python", "confidence", "note", "sources"})
        tag = e.text("tag")
        if not tag.startswith("rocm/"):
            e.fail("tag", f"expected a rocm/ image, got {tag!r}")
        conf = e.text("confidence")
        if conf not in ("high", "medium"):
            e.fail("confidence", f"expected high or medium, got {conf!r}")
        return DockerImage(tag=tag, exists=e.opt_flag("exists"), rocm=e.opt_version("rocm"),
                           torch=e.opt_version("torch"), ubuntu=e.opt_text("ubuntu"),
                           python=e.opt_text("python"), confidence=conf,
                           note=e.opt_text("note", required=False), sources=e.sources())

    images = _each(problems, top.get("images", []), "images", build)
    flags: tuple[str, ...] = ()
    srcs: tuple[str, ...] = ()
    rf = top.get("run_flags")
    if not isinstance(rf, list) or not all(isinstance(x, str) and x.startswith("--") for x in rf):
        problems.add("run_flags", "expected a list of --flags")
    else:
        flags = tuple(rf)
    s = top.get("sources")
    if not isinstance(s, list) or not s or not all(isinstance(x, str) and _is_https(x) for x in s):
        problems.add("sources", "needs at least one https:// source URL")
    else:
        srcs = tuple(s)
    seen_im: dict[str, DockerImage] = {}
    for im in images:
        prev = seen_im.get(im.tag)
        if prev is not None:
            same = (prev.exists, prev.rocm, prev.torch, prev.ubuntu, prev.python) == (
                im.exists, im.rocm, im.torch, im.ubuntu, im.python)
            problems.add(f"images ({im.tag})", "duplicate tag" + ("" if same else " with different contents"))
        seen_im[im.tag] = im
    return tuple(images), flags, srcs


# --------------------------------------------------------------------------- known_issues.json


def _predicate(e: Entry, i: int, raw: Any) -> tuple[str, Any]:
    if not isinstance(raw, dict) or len(raw) != 1:
        e.fail("when", f"[{i}] must be an object with exactly one predicate")
    (name, arg), = raw.items()
    kind = PREDICATES.get(name)
    if kind is None:
        e.fail("when", f"[{i}] unknown predicate {name!r}")
    ok = True
    if kind in ("gfx-list", "family-list", "str-list"):
        ok = isinstance(arg, list) and bool(arg) and all(isinstance(x, str) and x for x in arg)
        if ok and kind == "gfx-list":
            ok = all(_GFX.match(x) for x in arg)
        if ok and kind == "family-list":
            ok = all(x in FAMILIES for x in arg)
        if ok:
            arg = tuple(arg)
    elif kind == "bool":
        ok = isinstance(arg, bool)
    elif kind == "true":
        ok = arg is True
    elif kind == "build":
        ok = arg in ("cuda", "cpu", "rocm")
    elif kind == "regex":
        try:
            lazy_re.compile(arg)
        except (re.error, TypeError):
            ok = False
    elif kind == "env-pair":
        ok = isinstance(arg, list) and len(arg) == 2 and all(isinstance(x, str) for x in arg)
        if ok:
            try:
                lazy_re.compile(arg[1])
            except re.error:
                ok = False
            arg = tuple(arg)
    elif kind == "specifier":
        try:
            from packaging.specifiers import SpecifierSet

            SpecifierSet(arg)
        except (ValueError, TypeError):  # packaging's InvalidSpecifier
            ok = False
    if not ok:
        e.fail("when", f"[{i}] bad argument for {name!r} ({kind}): {arg!r}")
    return name, arg


def _checked(text: str) -> lazy_re.Pattern:
    """A known issue's pattern, compiled now: a bad one is the knowledge base's error when it loads, not a
    crash in a later diagnosis (raises re.error). Its literal spaces match a hard-wrapped line too (wrap_rx)."""
    pattern = lazy_re.compile(wrap_tolerant(text), re.IGNORECASE | re.MULTILINE)
    pattern.compiled  # noqa: B018 - compiles it
    return pattern


def _fix_env(e: Entry) -> Mapping[str, str]:
    env = e.get("env", False)
    if env is _MISSING:
        env = {}
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        e.fail("env", "expected an object of NAME: value strings")
    return MappingProxyType(dict(env))


# a kernel parameter as the kernel's command line spells it: name, module.name, name=value (value: no spaces, no quotes)
_KERNEL_ARG = lazy_re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)?(?:=[A-Za-z0-9_.,:+-]+)?")


def _kernel_args(e: Entry) -> KernelArgs:
    raw = e.get("kernel_args", False)
    if raw is _MISSING:
        return KernelArgs()
    if not isinstance(raw, dict) or not set(raw) <= {"add", "remove"}:
        e.fail("kernel_args", "expected {\"add\": [...], \"remove\": [...]} of kernel command-line parameters")
        return KernelArgs()
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("add", "remove"):
        items = raw.get(key, [])
        if not isinstance(items, list) or not all(isinstance(a, str) and _KERNEL_ARG.fullmatch(a) for a in items):
            e.fail("kernel_args", f"{key}: expected kernel parameters such as iommu=pt or amdgpu.runpm=0, got {items!r}")
            items = []
        lists[key] = tuple(items)
    if not lists["add"] and not lists["remove"]:
        e.fail("kernel_args", "an empty kernel_args: leave it out")
    return KernelArgs(add=lists["add"], remove=lists["remove"])


def _move_to(e: Entry) -> MoveTo:
    raw = e.get("move_to", False)
    if raw is _MISSING:
        return MoveTo()
    if not isinstance(raw, dict) or not raw or not set(raw) <= {"kernel", "linux-firmware"} \
            or not all(v in MOVE_DIRECTIONS for v in raw.values()):
        e.fail("move_to", f"expected {{\"kernel\" and/or \"linux-firmware\": one of {', '.join(MOVE_DIRECTIONS)}}}, "
                          f"got {raw!r}")
        return MoveTo()
    return MoveTo(kernel=raw.get("kernel"), firmware=raw.get("linux-firmware"))


def _fix_plan(e: Entry) -> str | None:
    plan = e.opt_text("plan", required=False)
    if plan is not None and plan not in PLANS:
        e.fail("plan", f"unknown plan {plan!r} (known: {', '.join(PLANS)})")
    return plan



def _regexes(e: Entry, key: str, *, required: bool = False) -> list[lazy_re.Pattern]:
    """The entry's list of regular expressions under ``key``, each compiled and checked (a bad one fails the entry)."""
    out: list[lazy_re.Pattern] = []
    for s in e.strs(key, required=required) or ():
        try:
            out.append(_checked(s))
        except re.error as exc:
            e.fail(key, f"bad regex {s!r}: {exc}")
    return out

def parse_issues(doc: Any, problems: Problems) -> tuple[KnownIssue, ...]:
    top = _top(problems, doc, {"_meta", "issues"}, {"issues"})
    if top is None:
        return ()
    _meta_ok(problems, top.get("_meta"))

    def build(where: str, raw: Any) -> KnownIssue:
        e = Entry(problems, where, raw, {
            "id", "severity", "title", "signatures", "when", "predict", "cause", "fix", "uncertain", "sources",
            "unless", "explains", "contradicted_when", "symptom", "symptom_signatures",
            "stated_signatures", "cause_in_branches"})
        iid = e.text("id")
        if not re.match(r"^[a-z0-9][a-z0-9-]*$", iid):
            e.fail("id", f"expected lower-case-with-dashes, got {iid!r}")
        sev = e.text("severity")
        if sev not in SEVERITIES:
            e.fail("severity", f"expected one of {SEVERITIES}, got {sev!r}")
        sigs = _regexes(e, "signatures", required=True)
        symptom_sigs = _regexes(e, "symptom_signatures")
        stated_sigs = _regexes(e, "stated_signatures")
        unless = _regexes(e, "unless")
        explains = e.strs("explains", required=False) or ()
        raw_when = e.get("when", True)
        if not isinstance(raw_when, list):
            e.fail("when", "expected a list of {predicate: argument}")
        when = tuple(_predicate(e, i, w) for i, w in enumerate(raw_when))
        raw_against = e.get("contradicted_when", False)
        if raw_against is _MISSING:
            raw_against = []
        if not isinstance(raw_against, list):
            e.fail("contradicted_when", "expected a list of {predicate: argument}")
        contradicted_when = tuple(_predicate(e, i, w) for i, w in enumerate(raw_against))
        predict = e.flag("predict")
        if predict and not when:
            e.fail("predict", "true needs a non-empty 'when'")
        if not sigs and not symptom_sigs and not stated_sigs and not predict:
            e.fail("signatures", "an issue with no signatures must be predictable (predict: true)")
        fe = Entry(problems, f"{where}: fix", e.get("fix", True),
                   {"summary", "commands", "env", "plan", "kernel_args", "move_to", "branches", "service"})
        raw_branches = fe.get("branches", False)
        if raw_branches is _MISSING:
            raw_branches = []
        if not isinstance(raw_branches, list):
            fe.fail("branches", "expected a list of {when, summary, commands, env, plan}")
        branches = []
        for n, raw in enumerate(raw_branches):
            be = Entry(problems, f"{where}: fix: branches[{n}]", raw,
                       {"when", "summary", "commands", "env", "plan", "kernel_args", "move_to"})
            raw_bw = be.get("when", True)
            if not isinstance(raw_bw, list) or not raw_bw:
                be.fail("when", "expected a non-empty list of {predicate: argument}: the facts this branch needs")
            branches.append(FixBranch(when=tuple(_predicate(be, i, w) for i, w in enumerate(raw_bw)),
                                      summary=be.text("summary"), commands=be.strs("commands", required=False),
                                      env=_fix_env(be), plan=_fix_plan(be), kernel_args=_kernel_args(be),
                                      move_to=_move_to(be)))
        if e.flag("cause_in_branches", default=False) and not branches:
            e.fail("cause_in_branches", "true needs fix branches: each branch is one of the causes")
        service = fe.opt_text("service", required=False)
        if service is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9@._-]*", service):
            fe.fail("service", f"expected a systemd service's name (ollama, ollama.service), got {service!r}")
        fix = Fix(summary=fe.text("summary"), commands=fe.strs("commands", required=False),
                  env=_fix_env(fe), plan=_fix_plan(fe), kernel_args=_kernel_args(fe),
                  move_to=_move_to(fe), branches=tuple(branches), service=service)
        return KnownIssue(id=iid, severity=sev, title=e.text("title"), signatures=tuple(sigs), when=when,
                          predict=bool(predict), cause=e.text("cause"), fix=fix, sources=e.sources(),
                          uncertain=e.opt_text("uncertain", required=False), unless=tuple(unless),
                          explains=tuple(explains), contradicted_when=contradicted_when,
                          symptom=e.flag("symptom", default=False), symptom_signatures=tuple(symptom_sigs),
                          stated_signatures=tuple(stated_sigs),
                          cause_in_branches=e.flag("cause_in_branches", default=False))

    issues = _each(problems, top.get("issues", []), "issues", build)
    seen: set[str] = set()
    for k in issues:
        if k.id in seen:
            problems.add(f"issues ({k.id})", "duplicate id")
        seen.add(k.id)
    # every id written in the file, valid entries or not: a broken entry is reported once, on its own
    written = {i.get("id") for i in top.get("issues", []) if isinstance(i, dict)} if isinstance(top.get("issues"), list) else seen
    for k in issues:
        for other in k.explains:
            if other not in written or other == k.id:
                problems.add(f"issues ({k.id})", f"explains unknown issue {other!r}")
    return tuple(issues)
