"""Plan files (``plans/*.toml``): a strict loader and validator.

A plan is data: a title, a paragraph on when to choose it, a target (ROCm release / stream, torch
version and wheel index, or a Docker image) and an ordered list of steps with parameters. Versions,
URLs and tags are looked up in the knowledge base by the planner; a plan names its target only.

Schema (every key not listed is an error)::

    title = "..."                      # required, one line
    why = "..."                        # required, when to choose this plan
    [target]                           # required
    stream = "legacy"                  # legacy | core-sdk | pip | docker (required)
    rocm = "6.2.4"                     # system ROCm release (legacy, core-sdk)
    torch = "2.5.1"                    # exact version, or "newest"
    index = "rocm6.2"                  # a wheel index name, "auto" (newest upstream index carrying
                                       # the GPU), or "therock" (TheRock multi-arch index)
    image = "auto"                     # docker: "auto" or a rocm/pytorch tag the KB knows
    [[steps]]
    kind = "backup"                    # one of STEP_KINDS; hyphens are accepted ("pip-pin")
    title = "..."                      # optional
    <kind-specific parameters>         # see STEP_PARAMS

A plan whose destructive step comes before a backup step is rejected here, at load time.
Every error is a :class:`PlanError` whose one-line message names the file, the key and the problem.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PLANS_DIR = Path(__file__).resolve().parent / "plans"

STEP_KINDS = (
    "backup", "purge", "rocm_install", "secure_boot", "groups", "pip_pin", "env", "docker", "reboot", "verify",
)
# kinds that remove or overwrite something: each must come after a backup step
DESTRUCTIVE_KINDS = frozenset({"purge", "rocm_install", "secure_boot", "pip_pin", "env"})
STREAMS = ("legacy", "core-sdk", "pip", "docker")
PURGE_STREAMS = ("legacy", "core-sdk", "distro")

# kind -> {param: (type check, description)}; "title" is accepted for every kind
_STR = (str,)
STEP_PARAMS: dict[str, dict[str, tuple[type, ...]]] = {
    "backup": {},
    "purge": {"streams": (list,)},
    "rocm_install": {"usecase": _STR, "dkms": _STR},
    "secure_boot": {},
    "groups": {},
    "pip_pin": {"venv": _STR},
    "env": {},
    "docker": {"launcher": _STR},
    "reboot": {},
    "verify": {},
}
TOP_KEYS = {"title": _STR, "why": _STR, "target": (dict,), "steps": (list,)}
TARGET_KEYS = {"stream": _STR, "rocm": _STR, "torch": _STR, "index": _STR, "image": _STR}
_USECASE_RE = re.compile(r"^[a-z][a-z0-9]*(,[a-z][a-z0-9]*)*$")
_VERSION_RE = re.compile(r"^\d+(\.\d+){1,3}$")
_INDEX_RE = re.compile(r"^(auto|therock|rocm\d+(\.\d+){1,2})$")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class PlanError(Exception):
    """Unknown plan or malformed plan file. ``message`` is one line: file, key, problem."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Target:
    stream: str
    rocm: str | None = None
    torch: str | None = None
    index: str | None = None
    image: str | None = None


@dataclass(frozen=True)
class StepSpec:
    kind: str
    title: str | None = None
    params: tuple[tuple[str, Any], ...] = ()

    def param(self, name: str, default: Any = None) -> Any:
        for k, v in self.params:
            if k == name:
                return v
        return default


@dataclass(frozen=True)
class PlanFile:
    name: str  # the plan id: the file name without .toml
    title: str
    why: str
    target: Target
    steps: tuple[StepSpec, ...]
    path: str  # where it was read from
    builtin: bool = False

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(s.kind for s in self.steps)


def normalize_kind(kind: str) -> str:
    return kind.strip().replace("-", "_")


def _check_type(where: str, key: str, value: Any, types: tuple[type, ...]) -> None:
    if not isinstance(value, types) or isinstance(value, bool) and bool not in types:
        want = " or ".join("string" if t is str else "table" if t is dict else "array" if t is list else t.__name__
                           for t in types)
        raise PlanError(f"{where}: key '{key}': expected a {want}, got {type(value).__name__}")


def _one_line(where: str, key: str, value: str, *, empty_ok: bool = False) -> str:
    text = " ".join(value.split())
    if not text and not empty_ok:
        raise PlanError(f"{where}: key '{key}': must not be empty")
    return text


def parse_plan(data: Any, *, name: str, path: str, builtin: bool = False) -> PlanFile:
    """Validate an already-decoded TOML document. Raises PlanError."""
    where = path
    if not isinstance(data, dict):
        raise PlanError(f"{where}: key '(top)': a plan file is a TOML table")
    for key, value in data.items():
        if key not in TOP_KEYS:
            raise PlanError(f"{where}: key '{key}': unknown key (allowed: {', '.join(TOP_KEYS)})")
        _check_type(where, key, value, TOP_KEYS[key])
    for key in TOP_KEYS:
        if key not in data:
            raise PlanError(f"{where}: key '{key}': missing")
    title = _one_line(where, "title", data["title"])
    why = _one_line(where, "why", data["why"])

    tdata = data["target"]
    for key, value in tdata.items():
        if key not in TARGET_KEYS:
            raise PlanError(f"{where}: key 'target.{key}': unknown key (allowed: {', '.join(TARGET_KEYS)})")
        _check_type(where, f"target.{key}", value, TARGET_KEYS[key])
    stream = tdata.get("stream")
    if stream is None:
        raise PlanError(f"{where}: key 'target.stream': missing (one of {', '.join(STREAMS)})")
    if stream not in STREAMS:
        raise PlanError(f"{where}: key 'target.stream': unknown stream {stream!r} (one of {', '.join(STREAMS)})")
    rocm = tdata.get("rocm")
    if rocm is not None and not _VERSION_RE.match(rocm):
        raise PlanError(f"{where}: key 'target.rocm': not a release version: {rocm!r}")
    torch = tdata.get("torch")
    if torch is not None and torch != "newest" and not _VERSION_RE.match(torch):
        raise PlanError(f"{where}: key 'target.torch': not a version or \"newest\": {torch!r}")
    index = tdata.get("index")
    if index is not None and not _INDEX_RE.match(index):
        raise PlanError(f"{where}: key 'target.index': not an index name, \"auto\" or \"therock\": {index!r}")
    image = tdata.get("image")
    if image is not None and not (image == "auto" or re.match(r"^(rocm/pytorch:)?[A-Za-z0-9_.-]+$", image)):
        raise PlanError(f"{where}: key 'target.image': not \"auto\" or a rocm/pytorch tag: {image!r}")
    target = Target(stream=stream, rocm=rocm, torch=torch, index=index, image=image)

    steps: list[StepSpec] = []
    for i, sdata in enumerate(data["steps"]):
        sk = f"steps[{i}]"
        if not isinstance(sdata, dict):
            raise PlanError(f"{where}: key '{sk}': a step is a table ([[steps]])")
        raw_kind = sdata.get("kind")
        if raw_kind is None:
            raise PlanError(f"{where}: key '{sk}.kind': missing")
        if not isinstance(raw_kind, str):
            raise PlanError(f"{where}: key '{sk}.kind': expected a string, got {type(raw_kind).__name__}")
        kind = normalize_kind(raw_kind)
        if kind not in STEP_KINDS:
            raise PlanError(f"{where}: key '{sk}.kind': unknown step kind {raw_kind!r} "
                            f"(known: {', '.join(STEP_KINDS)})")
        allowed = STEP_PARAMS[kind]
        params: list[tuple[str, Any]] = []
        title_s: str | None = None
        for key, value in sdata.items():
            if key == "kind":
                continue
            if key == "title":
                _check_type(where, f"{sk}.title", value, _STR)
                title_s = _one_line(where, f"{sk}.title", value)
                continue
            if key not in allowed:
                ok = ", ".join(["title", *allowed]) or "title"
                raise PlanError(f"{where}: key '{sk}.{key}': unknown parameter for step kind {kind!r} "
                                f"(allowed: {ok})")
            _check_type(where, f"{sk}.{key}", value, allowed[key])
            params.append((key, _check_param(where, f"{sk}.{key}", kind, key, value)))
        steps.append(StepSpec(kind=kind, title=title_s, params=tuple(params)))
    if not steps:
        raise PlanError(f"{where}: key 'steps': a plan needs at least one step")

    _check_order(where, steps)
    _check_target_fits_steps(where, target, steps)
    return PlanFile(name=name, title=title, why=why, target=target, steps=tuple(steps), path=path, builtin=builtin)


def _check_param(where: str, key: str, kind: str, param: str, value: Any) -> Any:
    if kind == "purge" and param == "streams":
        if not value or not all(isinstance(v, str) and v in PURGE_STREAMS for v in value):
            raise PlanError(f"{where}: key '{key}': a non-empty list of {', '.join(PURGE_STREAMS)}")
        return tuple(dict.fromkeys(value))
    if kind == "rocm_install" and param == "usecase":
        if not _USECASE_RE.match(value):
            raise PlanError(f"{where}: key '{key}': not a comma-separated list of amdgpu-install usecases: {value!r}")
    if kind == "rocm_install" and param == "dkms" and value not in ("auto", "yes", "no"):
        raise PlanError(f"{where}: key '{key}': one of auto, yes, no (got {value!r})")
    if param in ("venv", "launcher"):
        if value != "auto" and not (value.startswith("/") or value.startswith("~/")) or "\n" in value:
            raise PlanError(f"{where}: key '{key}': \"auto\", an absolute path or ~/path (got {value!r})")
    return value


def _check_order(where: str, steps: list[StepSpec]) -> None:
    backed_up = False
    for i, s in enumerate(steps):
        if s.kind == "backup":
            backed_up = True
        elif s.kind in DESTRUCTIVE_KINDS and not backed_up:
            raise PlanError(f"{where}: key 'steps[{i}].kind': destructive step {s.kind!r} comes before any "
                            "backup step (add a [[steps]] kind = \"backup\" before it)")


def _check_target_fits_steps(where: str, target: Target, steps: list[StepSpec]) -> None:
    kinds = [s.kind for s in steps]
    if "rocm_install" in kinds and target.rocm is None:
        raise PlanError(f"{where}: key 'target.rocm': step kind 'rocm_install' needs the target ROCm release")
    if "rocm_install" in kinds and target.stream not in ("legacy", "core-sdk"):
        raise PlanError(f"{where}: key 'target.stream': step kind 'rocm_install' needs stream legacy or core-sdk")
    if "pip_pin" in kinds:
        if target.torch is None:
            raise PlanError(f"{where}: key 'target.torch': step kind 'pip_pin' needs a torch version or \"newest\"")
        if target.index is None:
            raise PlanError(f"{where}: key 'target.index': step kind 'pip_pin' needs a wheel index")
        if target.index == "therock" and target.torch != "newest":
            raise PlanError(f"{where}: key 'target.torch': the therock index is used with torch = \"newest\"")
    if target.index == "auto" and target.torch != "newest":
        raise PlanError(f"{where}: key 'target.index': index \"auto\" goes with torch = \"newest\"")
    if "docker" in kinds and target.stream != "docker":
        raise PlanError(f"{where}: key 'target.stream': step kind 'docker' needs stream docker")
    if target.stream == "docker":
        if "docker" not in kinds:
            raise PlanError(f"{where}: key 'steps': stream docker needs a step of kind 'docker'")
        if target.image is None:
            raise PlanError(f"{where}: key 'target.image': stream docker needs an image (\"auto\" or a tag)")
        if "pip_pin" in kinds or "rocm_install" in kinds:
            raise PlanError(f"{where}: key 'steps': a docker plan installs nothing on the host")


def load_plan_file(path: str | Path, *, builtin: bool = False) -> PlanFile:
    p = Path(path)
    shown = str(path)
    if p.suffix != ".toml":
        raise PlanError(f"{shown}: key '(file)': a plan file ends in .toml")
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise PlanError(f"{shown}: key '(file)': no such file") from None
    except OSError as exc:
        raise PlanError(f"{shown}: key '(file)': cannot read ({exc.strerror or exc})") from None
    if len(raw) > 1 << 20:
        raise PlanError(f"{shown}: key '(file)': larger than 1 MiB; not a plan file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PlanError(f"{shown}: key '(file)': not UTF-8 text") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PlanError(f"{shown}: key '(syntax)': invalid TOML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise PlanError(f"{shown}: key '(syntax)': invalid TOML: nested too deeply") from None
    name = p.stem
    if not _NAME_RE.match(name):
        raise PlanError(f"{shown}: key '(file)': plan name {name!r} must be letters, digits, '.', '_' or '-'")
    return parse_plan(data, name=name, path=shown, builtin=builtin)


def builtin_plan_names() -> list[str]:
    try:
        return sorted(p.stem for p in PLANS_DIR.glob("*.toml") if _NAME_RE.match(p.stem) and p.stem != "probe")
    except OSError:
        return []


def builtin_plans() -> list[PlanFile]:
    """Every shipped plan, in catalogue order (ORDER first, then the rest by name)."""
    names = builtin_plan_names()
    ordered = [n for n in ORDER if n in names] + [n for n in names if n not in ORDER]
    return [load_plan_file(PLANS_DIR / f"{n}.toml", builtin=True) for n in ordered]


ORDER = ("pip-only", "therock-pip", "docker", "upgrade-7.2", "upgrade-6.4", "downgrade-6.2", "therock")


def load_plan(spec: str) -> PlanFile:
    """A shipped plan's name, or a path to a .toml file."""
    if not isinstance(spec, str) or not spec.strip() or "\x00" in spec:
        raise PlanError("(plan): key '(name)': empty plan name")
    s = spec.strip()
    if s.endswith(".toml") or "/" in s:
        return load_plan_file(Path(s).expanduser())
    if _NAME_RE.match(s) and (PLANS_DIR / f"{s}.toml").is_file() and s != "probe":
        return load_plan_file(PLANS_DIR / f"{s}.toml", builtin=True)
    known = ", ".join(builtin_plan_names()) or "none"
    raise PlanError(f"{s}: key '(name)': unknown plan (shipped plans: {known}; or give a path to a .toml file)")
