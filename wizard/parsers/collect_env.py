"""``python -m torch.utils.collect_env`` output.

"N/A", "None", "Could not collect" and "No CUDA" become None. GPU lines look like
``AMD Radeon RX 7900 XTX (gfx1100)`` or ``GPU 0: AMD Instinct MI250X (gfx90a:sramecc+:xnack-)``,
either after the key on one line or on the following lines.
"""

from __future__ import annotations

from wizard import lazy_re
from wizard.model import GFX_TARGET
from wizard.parsers._text import canonical_name, lines, never_raises, none_if_na
from wizard.record import record

_KV_RE = lazy_re.compile(r"^\s*([A-Za-z][A-Za-z0-9 _./()-]*?)\s*:\s*(.*?)\s*$")
_GPU_LINE_RE = lazy_re.compile(r"^\s*GPU\s+(\d+)\s*:\s*(.*?)\s*$")
_GFX_RE = lazy_re.compile(rf"\(({GFX_TARGET})((?::[\w+-]+)*)\)\s*$")
_LIB_RE = lazy_re.compile(r"^\s*\[(pip3?|conda)\]\s+(.*?)\s*$")
_PIP_SPEC_RE = lazy_re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:===?|@)\s*(\S+)")
_CONDA_RE = lazy_re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s+(\S+)")
_BANNER_RE = lazy_re.compile(r"^\s*Collecting environment information\.*\s*")
_VERSION_HEAD_RE = lazy_re.compile(r"^\d+\.\d+(?:\.\d+)?")

_KEYS = {
    "pytorch version": "torch_version",
    "is debug build": "is_debug_build",
    "cuda used to build pytorch": "cuda_build",
    "rocm used to build pytorch": "rocm_build",
    "os": "os",
    "gcc version": "gcc",
    "clang version": "clang",
    "cmake version": "cmake",
    "libc version": "libc",
    "python version": "python_version",
    "python platform": "python_platform",
    "is cuda available": "cuda_available",
    "cuda runtime version": "cuda_runtime",
    "gpu models and configuration": "gpus",
    "hip runtime version": "hip_runtime",
    "miopen runtime version": "miopen_runtime",
}


@record
class CollectEnvGpu:
    index: int | None
    name: str  # "AMD Radeon RX 7900 XTX"
    gfx: str | None  # "gfx1100"
    features: str | None = None  # ":sramecc+:xnack-" when present
    line: int = 0


@record
class CollectEnv:
    torch_version: str | None = None
    is_debug_build: bool | None = None
    cuda_build: str | None = None
    rocm_build: str | None = None  # "6.2.41133-dd7f95766"
    os: str | None = None
    gcc: str | None = None
    clang: str | None = None
    cmake: str | None = None
    libc: str | None = None
    python_version: str | None = None  # raw, e.g. "3.10.12 (main, ...) [GCC 11.4.0] (64-bit runtime)"
    python_platform: str | None = None
    cuda_available: bool | None = None
    cuda_runtime: str | None = None
    gpus: tuple[CollectEnvGpu, ...] = ()
    gpu_text: str | None = None  # raw one-line value (e.g. "Device 66a1" on old versions)
    hip_runtime: str | None = None
    miopen_runtime: str | None = None
    pip: tuple[tuple[str, str], ...] = ()  # (normalised name, version) from [pip3] lines
    conda: tuple[tuple[str, str], ...] = ()  # (normalised name, version) from [conda] lines

    @property
    def python_short(self) -> str | None:
        """"3.10.12" from the raw Python version."""
        m = _VERSION_HEAD_RE.match(self.python_version or "")
        return m.group(0) if m else None

    def library(self, name: str) -> str | None:
        """Version of a library from [pip3] lines, else [conda] lines."""
        key = canonical_name(name)
        for group in (self.pip, self.conda):
            for n, v in group:
                if n == key:
                    return v
        return None


def _bool(value: str | None) -> bool | None:
    v = (value or "").strip().lower()
    if v in ("true", "yes"):
        return True
    if v in ("false", "no"):
        return False
    return None


def _gpu(index: int | None, text: str, no: int) -> CollectEnvGpu | None:
    text = text.strip()
    if none_if_na(text) is None:
        return None
    m = _GFX_RE.search(text)
    if m:
        return CollectEnvGpu(index, text[: m.start()].strip(), m.group(1), m.group(2) or None, no)
    return CollectEnvGpu(index, text, None, None, no)


@never_raises(CollectEnv)
def parse_collect_env(text: object) -> CollectEnv:
    values: dict[str, str | None] = {}
    gpus: list[CollectEnvGpu] = []
    pip: list[tuple[str, str]] = []
    conda: list[tuple[str, str]] = []
    in_gpus = False
    for no, line in lines(text):
        line = _BANNER_RE.sub("", line)  # pastes that lost the newline after the banner
        lm = _LIB_RE.match(line)
        if lm:
            in_gpus = False
            kind, spec = lm.group(1), lm.group(2)
            if kind.startswith("pip"):
                sm = _PIP_SPEC_RE.match(spec)
                if sm:
                    pip.append((canonical_name(sm.group(1)), sm.group(2)))
            else:
                cm = _CONDA_RE.match(spec)
                if cm:
                    conda.append((canonical_name(cm.group(1)), cm.group(2)))
            continue
        gm = _GPU_LINE_RE.match(line)
        if gm and in_gpus:
            g = _gpu(int(gm.group(1)), gm.group(2), no)
            if g:
                gpus.append(g)
            continue
        km = _KV_RE.match(line)
        if km:
            field = _KEYS.get(km.group(1).strip().lower())
            if field is None:
                if not line[:1].isspace():
                    in_gpus = False
                continue
            if field in values:
                continue  # first occurrence wins (a pasted second report does not mix in)
            value = km.group(2)
            values[field] = value
            in_gpus = field == "gpus"
            if in_gpus:
                g = _gpu(None, value, no)
                if g and not _GPU_LINE_RE.match(value):
                    gpus.append(g)
            continue
        if not line.strip():
            in_gpus = False
    return CollectEnv(
        torch_version=none_if_na(values.get("torch_version")),
        is_debug_build=_bool(values.get("is_debug_build")),
        cuda_build=none_if_na(values.get("cuda_build")),
        rocm_build=none_if_na(values.get("rocm_build")),
        os=none_if_na(values.get("os")),
        gcc=none_if_na(values.get("gcc")),
        clang=none_if_na(values.get("clang")),
        cmake=none_if_na(values.get("cmake")),
        libc=none_if_na(values.get("libc")),
        python_version=none_if_na(values.get("python_version")),
        python_platform=none_if_na(values.get("python_platform")),
        cuda_available=_bool(values.get("cuda_available")),
        cuda_runtime=none_if_na(values.get("cuda_runtime")),
        gpus=tuple(gpus),
        gpu_text=none_if_na(values.get("gpus")),
        hip_runtime=none_if_na(values.get("hip_runtime")),
        miopen_runtime=none_if_na(values.get("miopen_runtime")),
        pip=tuple(pip),
        conda=tuple(conda),
    )
