"""Facts to JSON and back, exactly (every field of wizard.model's records): what a host's wizard
sends the controller in a fleet (``rocm-wizard fleet facts``), so the controller plans for that host
from its own facts. Not ``detect --json`` (a public view with its own field names), the model itself."""

from __future__ import annotations

import json
import types
import typing
from enum import Enum
from typing import Any, Union, get_args, get_origin

from wizard import record
from wizard.model import Facts, to_jsonable

FORMAT = "rocm-wizard-facts/1"


class FactsFormatError(ValueError):
    """The text is not a facts document of this format (garbage from a host)."""


def dumps(facts: Facts) -> str:
    return json.dumps({"format": FORMAT, "facts": to_jsonable(facts)}, sort_keys=True)


def loads(text: str) -> Facts:
    try:
        doc = json.loads(text)
    except ValueError:
        raise FactsFormatError("not JSON") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("facts"), dict):
        raise FactsFormatError(f"not a {FORMAT} document")
    try:
        value = _build(Facts, doc["facts"])
    except (TypeError, ValueError, KeyError) as exc:
        raise FactsFormatError(f"malformed facts: {exc}") from None
    assert isinstance(value, Facts)
    return value


def _build(tp: Any, data: Any) -> Any:
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        if data is None:
            return None
        options = [a for a in get_args(tp) if a is not type(None)]
        return _build(options[0], data)
    if record.is_record(tp) and isinstance(tp, type):
        if not isinstance(data, dict):
            raise TypeError(f"{tp.__name__}: expected an object")
        hints = record.field_types(tp)
        known = {f.name for f in record.fields(tp)}
        return tp(**{k: _build(hints[k], v) for k, v in data.items() if k in known})
    if origin is tuple:
        args = get_args(tp)
        if not isinstance(data, list):
            raise TypeError("expected a list")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_build(args[0], x) for x in data)
        return tuple(_build(a, x) for a, x in zip(args, data))
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp(data)
    if tp is Any or tp is typing.Any:
        return data
    if tp in (str, int, float, bool):
        if tp is float and isinstance(data, int):
            return float(data)
        if not isinstance(data, tp) or (tp is int and isinstance(data, bool)):
            raise TypeError(f"expected {tp.__name__}, got {type(data).__name__}")
        return data
    return data
