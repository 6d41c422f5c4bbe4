"""A small YAML writer for the exported playbooks: block style, one key per line, so a person can
review and diff them. Strings that YAML could read as something else are double-quoted (JSON string
syntax, which YAML reads as the same string); multi-line strings are double-quoted with ``\\n``.
The wizard itself never needs a YAML parser (Ansible reads these files).

Ansible renders strings as Jinja on the controller, so every string that holds a template marker is
emitted ``!unsafe`` (passed as it is, never rendered) unless it is a :class:`Template`: a template the
wizard wrote itself. A venv path, a title, a mirror URL, a plan name or anything else from a machine, a
plan file or a flag is never code."""

from __future__ import annotations

import json
import re
from typing import Any

from wizard import lazy_re

_PLAIN = lazy_re.compile(r"^[A-Za-z_./][A-Za-z0-9_./@+-]*$")
_RESERVED = {"yes", "no", "true", "false", "on", "off", "null", "y", "n", "~"}
_JINJA = ("{{", "{%", "{#")
WIDTH = 110  # a long string goes on several lines (YAML's escaped line breaks), so lines stay reviewable
_UNIT = lazy_re.compile(r"\\u[0-9a-fA-F]{4}|\\.|.", re.S)


class Literal(str):
    """A string Ansible must pass as it is, never as a template (an action's argv, its environment)."""


class Template(str):
    """A Jinja template the wizard wrote itself (``{{ rocm_wizard_serial | default(0) }}``): the only kind of
    string emitted without ``!unsafe`` when it holds a template marker. Never build one from data."""


def in_template(path: object) -> str:
    """A controller path (the fleet directory) that a wizard-written :class:`Template` embeds: no brace in it, so it
    can never open a template of its own."""
    from wizard.fleet import FleetError

    text = str(path)
    if "{" in text or "}" in text:
        raise FleetError(f"{text}: a fleet directory with '{{' or '}}' in its path cannot be written into a playbook; "
                         "choose another")
    return text


def _quoted(text: str, indent: int) -> str:
    """A JSON string, folded with escaped line breaks after each \\n and every WIDTH characters (never inside an escape;
    a continuation that would start with a space writes it as \\x20, which folding would drop)."""
    body = json.dumps(text, ensure_ascii=False)[1:-1]
    if len(body) <= WIDTH:
        return f'"{body}"'
    lines, cur = [], ""
    for unit in _UNIT.findall(body):
        if len(cur) + len(unit) > WIDTH:
            lines.append(cur)
            cur = ""
        cur += "\\x20" if not cur and unit == " " else unit
        if unit == "\\n":  # a script's lines stay lines
            lines.append(cur)
            cur = ""
    if cur or not lines:
        lines.append(cur)
    pad = "\n" + " " * (indent + 2)
    return '"' + ("\\" + pad).join(lines) + '"'


def scalar(value: Any, indent: int = 0) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    text = str(value)
    if not isinstance(value, Template) and any(m in text for m in _JINJA):
        return "!unsafe " + _quoted(text, indent)
    if _PLAIN.match(text) and text.lower() not in _RESERVED and len(text) <= WIDTH:
        return text
    return _quoted(text, indent)


def dump(value: Any, indent: int = 0) -> list[str]:
    """``value`` (dicts, lists, scalars) as YAML lines, indented by ``indent`` spaces."""
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            return [pad + "{}"]
        out: list[str] = []
        for k, v in value.items():
            key = scalar(str(k))
            if isinstance(v, (dict, list)) and v:
                out.append(f"{pad}{key}:")
                out += dump(v, indent + (2 if isinstance(v, dict) else 2))
            else:
                out.append(f"{pad}{key}: {_inline(v, indent)}")
        return out
    if isinstance(value, list):
        if not value:
            return [pad + "[]"]
        out = []
        for item in value:
            if isinstance(item, (dict, list)) and item:
                inner = dump(item, indent + 2)
                out.append(f"{pad}- {inner[0].lstrip()}")
                out += inner[1:]
            else:
                out.append(f"{pad}- {_inline(item, indent)}")
        return out
    return [pad + scalar(value, indent)]


def _inline(v: Any, indent: int) -> str:
    if isinstance(v, dict):
        return "{}"
    if isinstance(v, list):
        return "[]"
    return scalar(v, indent)


def document(value: Any, header: list[str] | None = None) -> str:
    import textwrap

    comments = [f"# {w}".rstrip() for h in (header or []) for w in (textwrap.wrap(h, 150, subsequent_indent="  ") or [""])]
    lines = ["---", *comments, *dump(value)]
    return "\n".join(lines) + "\n"
