"""Plan files (``plans/*.toml``): a strict loader and validator.

A plan is data: a title, a paragraph on when to choose it, a target (ROCm release / stream, torch
version and wheel index, or a Docker image, and the venv) and an ordered list of steps with parameters.
Versions, URLs and tags are looked up in the knowledge base by the planner; a plan names its target only.

Schema (every key not listed is an error)::

    title = "..."                      # required, one line
    why = "..."                        # required, when to choose this plan
    [target]                           # required
    stream = "legacy"                  # legacy | core-sdk | pip | docker | driver (required)
    rocm = "6.2.4"                     # system ROCm release (legacy, core-sdk, driver), or "newest":
                                       # the newest release of the stream whose facts the KB has
    torch = "2.5.1"                    # exact version, or "newest"
    index = "rocm6.2"                  # a wheel index name, "auto" (newest upstream index carrying
                                       # the GPU), "therock" (AMD's index with the GPU's device
                                       # extra) or "core-sdk" (AMD's torch for the target release)
    channel = "stable"                 # stable (default) | nightly: which AMD indexes may be used
    image = "auto"                     # docker: "auto" or a rocm/pytorch tag the KB knows
    venv = "auto"                      # where torch goes: "auto", /path or ~/path
    [[steps]]
    kind = "backup"                    # a step kind of the registry (wizard.steps); "pip-pin" == "pip_pin"
    title = "..."                      # optional
    <kind-specific parameters>         # the fields of the kind's Params record

Step kinds, their parameters, which are destructive, which target keys and streams they need: all
declared by the step modules themselves (``KIND``), so this loader has no list of its own. A plan whose
destructive step comes before a backup step is rejected here, at load time. Every error is a
:class:`PlanError` whose one-line message names the file, the key and the problem.
"""

from __future__ import annotations

import re
import tomllib
import typing
from pathlib import Path
from typing import Any

from wizard import lazy_re
from wizard.fix_plans import PLANS_DIR, normalize_kind
from wizard.record import field_types, fields, record


STREAMS = ("legacy", "core-sdk", "pip", "docker", "driver")
CHANNELS = ("stable", "nightly")
TOP_KEYS: dict[str, tuple[type, ...]] = {"title": (str,), "why": (str,), "target": (dict,), "steps": (list,)}
TARGET_KEYS: dict[str, tuple[type, ...]] = {"stream": (str,), "rocm": (str,), "torch": (str,), "index": (str,),
                                            "image": (str,), "venv": (str,), "channel": (str,)}
_VERSION_RE = lazy_re.compile(r"^\d+(\.\d+){1,3}$")
_INDEX_RE = lazy_re.compile(r"^(auto|therock|core-sdk|rocm\d+(\.\d+){1,2})$")
_TARGET_WORDS = {"rocm": "ROCm release", "torch": "torch version (or \"newest\")", "index": "wheel index",
                 "image": "image (\"auto\" or a tag)"}
_NAME_RE = lazy_re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class PlanError(Exception):
    """Unknown plan or malformed plan file. ``message`` is one line: file, key, problem."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@record
class Target:
    stream: str
    rocm: str | None = None
    torch: str | None = None
    index: str | None = None
    image: str | None = None
    venv: str = "auto"
    channel: str = "stable"  # "nightly" also allows AMD's nightly indexes (never a stable release)


@record
class StepSpec:
    kind: str
    title: str | None = None
    params: Any = None  # the kind's Params record, validated


@record
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
    if rocm is not None and rocm != "newest" and not _VERSION_RE.match(rocm):
        raise PlanError(f"{where}: key 'target.rocm': not a release version or \"newest\": {rocm!r}")
    torch = tdata.get("torch")
    if torch is not None and torch != "newest" and not _VERSION_RE.match(torch):
        raise PlanError(f"{where}: key 'target.torch': not a version or \"newest\": {torch!r}")
    index = tdata.get("index")
    if index is not None and not _INDEX_RE.match(index):
        raise PlanError(f"{where}: key 'target.index': not an index name, \"auto\", \"therock\" or "
                       f"\"core-sdk\": {index!r}")
    image = tdata.get("image")
    if image is not None and not (image == "auto" or re.match(r"^(rocm/pytorch:)?[A-Za-z0-9_.-]+$", image)):
        raise PlanError(f"{where}: key 'target.image': not \"auto\" or a rocm/pytorch tag: {image!r}")
    venv = tdata.get("venv", "auto")
    if venv != "auto":
        from wizard.inputs import InputError, shell_path, shown

        try:  # the venv lands in shell files and root's argv: absolute, no control character, no '..'
            venv = "~/" + shell_path(venv[1:], "")[1:] if venv.startswith("~/") else shell_path(venv, "")
        except InputError:
            raise PlanError(f"{where}: key 'target.venv': \"auto\", an absolute path or ~/path without "
                            f"control characters or '..' (got {shown(repr(venv))})") from None
    channel = tdata.get("channel", "stable")
    if channel not in CHANNELS:
        raise PlanError(f"{where}: key 'target.channel': one of {', '.join(CHANNELS)} (got {channel!r})")
    target = Target(stream=stream, rocm=rocm, torch=torch, index=index, image=image, venv=venv, channel=channel)

    from wizard.steps import registry

    kinds = registry()
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
        if kind not in kinds:
            raise PlanError(f"{where}: key '{sk}.kind': unknown step kind {raw_kind!r} "
                            f"(known: {', '.join(kinds)})")
        title_s: str | None = None
        values: dict[str, Any] = {}
        fields = _param_fields(kinds[kind].params)
        for key, value in sdata.items():
            if key == "kind":
                continue
            if key == "title":
                _check_type(where, f"{sk}.title", value, (str,))
                title_s = _one_line(where, f"{sk}.title", value)
                continue
            if key not in fields:
                ok = ", ".join(["title", *fields])
                hint = " (the venv is set in [target] now: venv = ...)" if key == "venv" else ""
                raise PlanError(f"{where}: key '{sk}.{key}': unknown parameter for step kind {kind!r} "
                                f"(allowed: {ok}){hint}")
            values[key] = _typed(where, f"{sk}.{key}", value, fields[key])
        try:
            params = kinds[kind].params(**values)
        except ValueError as exc:
            bad = next(iter(values), "(params)")
            raise PlanError(f"{where}: key '{sk}.{bad}': {exc}") from None
        steps.append(StepSpec(kind=kind, title=title_s, params=params))
    if not steps:
        raise PlanError(f"{where}: key 'steps': a plan needs at least one step")

    _check_order(where, steps)
    _check_target_fits_steps(where, target, steps)
    return PlanFile(name=name, title=title, why=why, target=target, steps=tuple(steps), path=path, builtin=builtin)


def _param_fields(cls: type) -> dict[str, Any]:
    """A Params record's fields and their types (str, bool, int or tuple[str, ...])."""
    hints = field_types(cls)
    return {f.name: hints[f.name] for f in fields(cls)}


def _typed(where: str, key: str, value: Any, want: Any) -> Any:
    if want is str or want is bool or want is int:
        _check_type(where, key, value, (want,))
        return value
    if typing.get_origin(want) is tuple:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise PlanError(f"{where}: key '{key}': expected an array of strings, got {type(value).__name__}")
        return tuple(value)
    raise PlanError(f"{where}: key '{key}': this parameter cannot be set from a plan file")


def _check_order(where: str, steps: list[StepSpec]) -> None:
    from wizard.steps import kind

    backed_up = False
    for i, s in enumerate(steps):
        if s.kind == "backup":
            backed_up = True
        elif kind(s.kind).destructive and not backed_up:
            raise PlanError(f"{where}: key 'steps[{i}].kind': destructive step {s.kind!r} comes before any "
                            "backup step (add a [[steps]] kind = \"backup\" before it)")


def _check_target_fits_steps(where: str, target: Target, steps: list[StepSpec]) -> None:
    from wizard.steps import kind

    needed: set[str] = set()
    for s in steps:
        k = kind(s.kind)
        for key in k.target_needs:
            needed.add(key)
            if getattr(target, key) is None:
                raise PlanError(f"{where}: key 'target.{key}': step kind {s.kind!r} needs the target's "
                                f"{_TARGET_WORDS.get(key, key)}")
        if k.streams is not None and target.stream not in k.streams:
            raise PlanError(f"{where}: key 'target.stream': step kind {s.kind!r} needs stream "
                            f"{' or '.join(k.streams)}")
    if target.index == "therock" and target.torch != "newest":
        raise PlanError(f"{where}: key 'target.torch': the therock index is used with torch = \"newest\"")
    if target.index == "core-sdk" and (target.stream != "core-sdk" or target.rocm is None):
        raise PlanError(f"{where}: key 'target.index': index \"core-sdk\" needs stream = \"core-sdk\" and a "
                        "target rocm release")
    if target.index == "auto" and target.torch != "newest":
        raise PlanError(f"{where}: key 'target.index': index \"auto\" goes with torch = \"newest\"")
    if target.stream == "docker" and "image" not in needed:
        raise PlanError(f"{where}: key 'steps': stream docker needs a step that pulls the image (kind 'docker')")
    if target.stream == "docker" and target.image is None:
        raise PlanError(f"{where}: key 'target.image': stream docker needs an image (\"auto\" or a tag)")


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


ORDER = ("driver", "pip-only", "therock-pip", "docker", "core-sdk", "upgrade-7.2", "upgrade-6.4", "downgrade-6.2")


def load_plan(spec: str) -> PlanFile:
    """A shipped plan's name, or a path to a .toml file."""
    if not isinstance(spec, str) or not spec.strip() or "\x00" in spec:
        raise PlanError("no plan named: give a plan name (see `rocm-wizard plans`) or a path to a .toml file")
    s = spec.strip()
    if s.endswith(".toml") or "/" in s:
        return load_plan_file(Path(s).expanduser())
    if _NAME_RE.match(s) and (PLANS_DIR / f"{s}.toml").is_file() and s != "probe":
        return load_plan_file(PLANS_DIR / f"{s}.toml", builtin=True)
    known = ", ".join(builtin_plan_names()) or "none"
    raise PlanError(f"unknown plan {s!r}: the plans are {known} (`rocm-wizard plans` says which fit this machine), "
                    "or give a path to a plan .toml file")
