"""Known-issue signatures survive the ways people paste: every firing text of tests/data/known_issue_texts.json,
mangled one way at a time as a forum, a browser, a logger or a JSON dump mangles it, still fires its known issue,
and every near miss, mangled the same way, still does not.

Each mangling is one real paste habit:

* ``nbsp``: a browser copies rendered HTML's ``&nbsp;`` as U+00A0 (the character that reference names);
  ``thin_space`` / ``narrow_nbsp``: U+2009 / U+202F, what typographic auto-format
  (and French locales' number formatting) puts where a space was; ``zero_width``: U+200B inside words (what
  renderers insert as a break opportunity) and a U+FEFF byte order mark before a pasted file's text.
* ``smart_quotes``: Word, macOS and forum editors turn ' and " into ‘ ’ “ ”.
* ``en_dash`` / ``em_dash``: the same auto-correct turns a quoted flag's ``--`` into – or —.
* ``html_entities`` / ``html_entities_39``: text scraped from a rendered page keeps ``&quot; &#x27; &gt; &lt;
  &amp;`` (Python's ``html.escape``) or ``&#39;``.
* ``wrap80`` / ``wrap80_indent``: a long line hard-wrapped at a space at or before column 80 (terminal copy,
  an e-mail client's hard wrap), the continuation flush or indented.
* ``journald``, ``journald_kernel``, ``kernel_time``, ``compose``, ``md_quote``, ``diff_plus``, ``slog``: a
  prefix on every line, from journalctl's short format ("Nov 30 05:00:00 host ollama[123]: ", "... host kernel: "),
  dmesg's "[   12.345678] ", ``docker compose logs``' "service-1  | " (what its ``--no-log-prefix`` leaves out), a
  Markdown quote "> ", a diff's "+ ", and Go's log/slog TextHandler ("time=... level=ERROR source=FILE:LINE
  msg=\"...\"": "Keys and values are quoted with [strconv.Quote] if they contain Unicode space characters,
  non-printing characters, '\"' or '='",
  golang/go@9755db5406b84dd84fa5432382bfabc801a34ed3:src/log/slog/text_handler.go);
  journalctl's formats: journalctl(1), https://manpages.debian.org/stretch/systemd/journalctl.1.
* ``json_string`` / ``python_string``: the whole text inside a JSON or Python string literal (quotes escaped,
  newlines as a literal backslash-n).
"""

from __future__ import annotations

import html
import json
import re
from typing import Any, Callable

import pytest

from tests.test_known_issues_texts import CASES, _facts
from wizard.diagnose import diagnose

pytestmark = pytest.mark.unit


def _each_line(prefix: str) -> Callable[[str], str]:
    return lambda text: "\n".join(prefix + line for line in text.split("\n"))


def _spaces(char: str) -> Callable[[str], str]:
    return lambda text: text.replace(" ", char)


def _zero_width(text: str) -> str:
    """U+200B after the first character of every word of four or more, and a byte order mark first."""
    return "\ufeff" + re.sub(r"(?<=\b\w)(?=\w{3})", "\u200b", text)


def _smart_quotes(text: str) -> str:
    text = re.sub(r"(^|(?<=[\s(\[{=]))\"", "\u201c", text)
    text = text.replace('"', "\u201d")
    text = re.sub(r"(^|(?<=[\s(\[{=]))'", "\u2018", text)
    return text.replace("'", "\u2019")


def _dash(char: str) -> Callable[[str], str]:
    return lambda text: re.sub(r"(?<![\w-])--(?=\w)", char, text)


def _wrap(indent: str) -> Callable[[str], str]:
    def wrap(text: str) -> str:
        out = []
        for line in text.split("\n"):
            while len(line) > 80:
                cut = line.rfind(" ", 1, 81)
                if cut <= len(indent):
                    cut = line.find(" ", 81)
                if cut == -1:
                    break
                out.append(line[:cut])
                line = indent + line[cut + 1:]
            out.append(line)
        return "\n".join(out)
    return wrap


def _slog(text: str) -> str:
    return "\n".join('time=2024-11-30T05:00:00.000Z level=ERROR source=server.go:123 msg='
                     + json.dumps(line, ensure_ascii=False) for line in text.split("\n"))


def _python_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"


MANGLINGS: dict[str, Callable[[str], str]] = {
    "nbsp": _spaces("\u00a0"),
    "thin_space": _spaces("\u2009"),
    "narrow_nbsp": _spaces("\u202f"),
    "zero_width": _zero_width,
    "smart_quotes": _smart_quotes,
    "en_dash": _dash("\u2013"),
    "em_dash": _dash("\u2014"),
    "html_entities": lambda text: html.escape(text, quote=True),
    "html_entities_39": lambda text: html.escape(text, quote=True).replace("&#x27;", "&#39;"),
    "wrap80": _wrap(""),
    "wrap80_indent": _wrap("    "),
    "journald": _each_line("Nov 30 05:00:00 host ollama[123]: "),
    "journald_kernel": _each_line("Nov 30 05:00:00 host kernel: "),
    "kernel_time": _each_line("[   12.345678] "),
    "compose": _each_line("ollama-1  | "),
    "md_quote": _each_line("> "),
    "diff_plus": _each_line("+ "),
    "slog": _slog,
    "json_string": lambda text: json.dumps(text, ensure_ascii=False),
    "python_string": _python_string,
}


# What the normaliser and the wrap rule leave: a wrap inside a part of a signature that spans "anything on the line"
# ([^\n]*, .*) is not bridged (bridging those would join unrelated lines: an lspci line's vendor and the next
# device's revision).
GAPS = {
    ("gpu-not-responding-rev-ff", "wrap80"): "[^\\n]* from the vendor to (rev ff): one lspci line, wrapped inside it",
    ("gpu-not-responding-rev-ff", "wrap80_indent"): "the same, the continuation indented",
}


def _pairs(key: str) -> list[Any]:
    """(issue, mangling) for every case whose text the mangling changes."""
    return [pytest.param(issue, name, id=f"{issue}-{name}",
                         marks=[pytest.mark.xfail(reason=GAPS[issue, name], strict=True)] if (issue, name) in GAPS
                         and key == "fires" else [])
            for issue in sorted(CASES) for name, mangle in MANGLINGS.items()
            if mangle(CASES[issue][key]) != CASES[issue][key]]


def _fires(issue: str, facts: dict[str, Any], text: str) -> bool:
    return issue in [f.id for f in diagnose(_facts(facts, text))]


@pytest.mark.parametrize(("issue", "mangling"), _pairs("fires"))
def test_a_mangled_text_still_fires(issue: str, mangling: str) -> None:
    case = CASES[issue]
    assert _fires(issue, case.get("facts", {}), case["fires"]), "the plain text does not fire"
    assert _fires(issue, case.get("facts", {}), MANGLINGS[mangling](case["fires"]))


@pytest.mark.parametrize(("issue", "mangling"), _pairs("near_miss"))
def test_a_mangled_near_miss_still_does_not_fire(issue: str, mangling: str) -> None:
    case = CASES[issue]
    facts = case.get("near_facts", case.get("facts", {}))
    assert not _fires(issue, facts, MANGLINGS[mangling](case["near_miss"]))
