"""The replayable resolved-plan file: a ResolvedPlan as JSON, and back.

Every run writes one (``runs/<id>/plan.json``); ``rocm-wizard --plan FILE.json --yes`` replays it
on an identical machine without resolving anything again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wizard import lazy_re
from wizard.inputs import InputError, shell_path
from wizard.model import Action, ResolvedPlan, StepPlan, to_jsonable
from wizard.plan_file import _NAME_RE
from wizard.record import fields

FORMAT = "rocm-wizard-resolved-plan/2"  # /2: step 0 is the preflight; no separate preflight list
MAX_BYTES = 4 << 20  # a resolved plan is tens of KiB; a larger file is not one
_REQUIREMENT = lazy_re.compile(r"^[a-z0-9_.-]{1,64}$")


class PlanFileError(Exception):
    pass


def dumps(plan: ResolvedPlan) -> str:
    return json.dumps({"format": FORMAT, "plan": to_jsonable(plan)}, indent=1) + "\n"


def is_plan_file(path: str) -> bool:
    p = Path(path)
    if p.suffix != ".json" or not p.is_file():
        return False
    try:
        with open(p, encoding="utf-8") as fh:
            head = fh.read(200)
    except OSError:
        return False
    return FORMAT in head


def _tuple(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_tuple(x) for x in v)
    return v


_BOOL = ("root", "as_user", "destructive", "idempotent", "repeat")
_STRS = ("argv", "changes", "requires")
_ARGVS = ("check", "undo")  # a list of strings or null
_INTS = ("ok_codes", "redact")


def _strs(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _check_action(d: Any) -> None:
    """Each field of a resolved-plan action has its type (a hand-edited file cannot smuggle a string
    where a flag or a command line belongs)."""
    if not isinstance(d, dict):
        raise PlanFileError("an action is not a JSON object")
    unknown = sorted(set(d) - {f.name for f in fields(Action)})
    if unknown:
        raise PlanFileError(f"an action has an unknown key {unknown[0]!r}")
    for k, v in d.items():
        ok = (isinstance(v, bool) if k in _BOOL else _strs(v) if k in _STRS
              else v is None or _strs(v) if k in _ARGVS
              else isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in v) if k in _INTS
              else v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0) if k == "timeout"
              else isinstance(v, list) and all(_strs(p) and len(p) == 2 for p in v) if k == "env"
              else v is None or isinstance(v, str))
        if not ok:
            raise PlanFileError(f"an action's key {k!r} has the wrong type ({type(v).__name__})")
    if not all(_REQUIREMENT.match(r) for r in d.get("requires", ())):
        raise PlanFileError("an action's key 'requires': a requirement is lower-case letters, digits, '.', '_', '-'")


def _action(d: dict[str, Any]) -> Action:
    _check_action(d)
    kw = {k: _tuple(v) for k, v in d.items() if k in {f.name for f in fields(Action)}}
    kw["argv"] = tuple(str(a) for a in kw.get("argv", ()))
    if not kw["argv"]:
        raise PlanFileError("an action has an empty argv")
    if kw.get("env"):
        kw["env"] = tuple((str(k), str(v)) for k, v in kw["env"])
    return Action(**kw)


def action_to_json(action: Action) -> dict[str, Any]:
    out: dict[str, Any] = to_jsonable(action)
    return out


def action_from_json(d: dict[str, Any]) -> Action:
    """An action back from its JSON form (what a journal's rollback record holds)."""
    return _action(d)


def _step(d: dict[str, Any]) -> StepPlan:
    kw = {k: v for k, v in d.items() if k in {f.name for f in fields(StepPlan)}}
    kw["actions"] = tuple(_action(a) for a in d.get("actions", ()))
    kw["params"] = tuple((str(k), _tuple(v)) for k, v in d.get("params", ()))
    kw["notes"] = tuple(d.get("notes", ()))
    kw["effects"] = tuple(str(e) for e in d.get("effects", ()))
    kw["check"] = _action(d["check"]) if d.get("check") is not None else None
    return StepPlan(**kw)


def _name(v: Any) -> str:
    """A plan's name: it becomes file names (the export's playbook, the progress file) and script text."""
    if not isinstance(v, str) or not _NAME_RE.match(v):
        raise PlanFileError("key 'name': a plan name is 1-64 letters, digits, '.', '_' or '-', starting with a letter "
                            "or digit")
    return v


def _state_dir(v: Any) -> str | None:
    if v is None:
        return None
    try:
        return shell_path(v, "key 'state_dir'") if isinstance(v, str) else shell_path("", "key 'state_dir'")
    except InputError as exc:
        raise PlanFileError(str(exc)) from None


def loads(text: str, where: str = "plan file") -> ResolvedPlan:
    try:
        if len(text) > MAX_BYTES:
            raise PlanFileError(f"{where}: larger than {MAX_BYTES >> 20} MiB; not a resolved plan")
        doc = json.loads(text)
        if doc.get("format") != FORMAT:
            raise PlanFileError(f"{where}: key 'format': expected {FORMAT!r}")
        d = doc["plan"]
        return ResolvedPlan(
            name=_name(d["name"]),
            title=str(d.get("title", d["name"])),
            why=str(d.get("why", "")),
            target=tuple((str(k), _tuple(v)) for k, v in d.get("target", ())),
            steps=tuple(_step(s) for s in d["steps"]),
            source_file=d.get("source_file"),
            state_dir=_state_dir(d.get("state_dir")),
            machine=tuple((str(k), str(v)) for k, v in d.get("machine", ())),
        )
    except PlanFileError as exc:
        msg = str(exc)
        raise PlanFileError(msg if msg.startswith(where) else f"{where}: {msg}") from None
    except RecursionError:
        raise PlanFileError(f"{where}: not a readable resolved plan (nested too deeply)") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise PlanFileError(f"{where}: not a readable resolved plan ({type(exc).__name__}: {exc})") from None


def load(path: str | Path) -> ResolvedPlan:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise PlanFileError(f"{path}: cannot read ({exc.strerror})") from None
    return loads(text, str(path))
