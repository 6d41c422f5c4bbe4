"""The one normaliser for signature matching (wizard/parsers/match_text.py) and the compiler's wrap rule
(wizard/kb/wrap_rx.py): each paste habit undone, what merely looks like one left alone, lines mapped back to the
original, and the rewritten patterns still linear."""

from __future__ import annotations

import json
import re
import time

import pytest

from wizard.diagnose import diagnose
from wizard.kb import load_kb
from wizard.kb.wrap_rx import WRAPPED_SPACE, wrap_tolerant
from wizard.model import EvidenceText, Facts
from wizard.parsers.match_text import match_text

pytestmark = pytest.mark.unit

INCOMPATIBLE = "HSA Error:  Incompatible kernel and userspace, GPU disabled. Upgrade amdgpu."


@pytest.mark.parametrize(("pasted", "printed"), [
    ("\x1b[31mRuntimeError\x1b[0m: boom\r\n", "RuntimeError: boom\n"),
    ("HIP\u00a0error:\u202finvalid\u2009device", "HIP error: invalid device"),
    ("\ufeffin\u200bvalid de\u00advice", "invalid device"),
    ("custom device \u201c/dev/kfd\u201d: it\u2019s", 'custom device "/dev/kfd": it\'s'),
    ("add \u2013skip-torch-cuda-test or \u2014device=/dev/kfd", "add --skip-torch-cuda-test or --device=/dev/kfd"),
    ("device &quot;/dev/kfd&quot; &#39;a&#x27; &gt; &lt; &amp;amp; &#8220;", "device \"/dev/kfd\" 'a' > < &amp; \""),
    ("Nov 30 05:00:00 host ollama[123]: msg", "msg"),
    ("2025-11-29T10:00:02+0000 box kernel: msg", "msg"),
    ("Nov  3 05:00:00 host kernel: [   12.345678] amdgpu: msg", "amdgpu: msg"),
    ("[    3.5] kfd kfd: amdgpu: msg", "kfd kfd: amdgpu: msg"),
    ("kernel: msg", "msg"),
    ("ollama-1  | msg\nollama_1 | msg", "msg\nmsg"),
    ("> > msg\n>\n+ msg", "msg\n\nmsg"),
    ('time=2024-11-30T05:00:00.000Z level=ERROR source=server.go:123 msg="a \\"b\\"" error="x"',
     'a "b" error="x"'),
    ("time=2024-11-30T05:00:00.000Z level=INFO msg=hello count=3", "hello count=3"),
    ('"E: Unable to locate package rocm"', "E: Unable to locate package rocm"),
    ("'it\\'s \\\\ here'", "it's \\ here"),
])
def test_each_paste_habit_is_undone(pasted: str, printed: str) -> None:
    assert match_text(pasted).text == printed


@pytest.mark.parametrize("text", [
    "it fails \u2014 again, and \u2013 not a flag",  # a dash in prose, not before a flag
    ">>> import torch\n>>> torch.cuda.is_available()",  # Python's prompt is no Markdown quote
    "Available providers:\n'TensorrtExecutionProvider, CPUExecutionProvider'",  # a quoted line of output
    "a&#10;b &#0; &bogus; &amp",  # a line break or no character by reference, an unknown or unended one
    "+1 vote\n$ rocminfo\n-> here",
    'device "/dev/kfd": "a" and "b"',
    "C:\\Users\\me",  # a backslash that escapes nothing a string literal escapes
    "time=now msg=hello",  # not a slog line: no level
])
def test_what_only_looks_like_a_paste_habit_stays(text: str) -> None:
    assert match_text(text).text == text


def test_a_quoted_string_keeps_its_lines_mapped_back() -> None:
    m = match_text("first\n" + json.dumps('one\ntwo "2"\nthree') + "\nlast")
    assert m.text == 'first\none\ntwo "2"\nthree\nlast'
    assert [m.line_of(r) for r in range(5)] == [0, 1, 1, 1, 2]
    assert match_text("one\ntwo").lines == ()


def _facts(text: str, first_line: int = 1) -> Facts:
    return Facts(texts=(EvidenceText("paste.txt", text, first_line, "text", True),), origin="test")


def test_evidence_names_the_pasted_line_and_reads_unescaped() -> None:
    """A JSON dump on line 11 of the paste: the finding points at line 11 (not at the split-off line), its text the
    message as printed."""
    text = "first line\n" + json.dumps("intro\n" + INCOMPATIBLE)
    finding = next(f for f in diagnose(_facts(text, first_line=10)) if f.id == "incompatible-kernel-userspace")
    assert finding.matched is not None
    assert (finding.matched.line, finding.matched.text) == (11, INCOMPATIBLE)
    plain = next(f for f in diagnose(_facts("first line\n\n" + INCOMPATIBLE, first_line=10))
                 if f.id == "incompatible-kernel-userspace")
    assert plain.matched is not None and plain.matched.line == 12


def test_a_prefix_or_a_wrap_keeps_the_line_number() -> None:
    text = "Nov 30 05:00:00 host kernel: a\nNov 30 05:00:00 host kernel: HSA Error:  Incompatible kernel and\n" \
           "    userspace, GPU disabled. Upgrade amdgpu."
    finding = next(f for f in diagnose(_facts(text)) if f.id == "incompatible-kernel-userspace")
    assert finding.matched is not None and finding.matched.line == 2
    assert finding.matched.text == "HSA Error:  Incompatible kernel and / userspace, GPU disabled. Upgrade amdgpu."


@pytest.mark.parametrize(("pattern", "rewritten"), [
    ("invalid device", f"invalid{WRAPPED_SPACE}device"),
    ("a   b", f"a{WRAPPED_SPACE}b"),  # a run of spaces is one
    ("(HIP|hip) error", f"(HIP|hip){WRAPPED_SPACE}error"),
    ("(?<!not )\\bfoo bar", f"(?<!not )\\bfoo{WRAPPED_SPACE}bar"),  # a lookbehind keeps its fixed width
])
def test_a_literal_space_matches_a_wrap(pattern: str, rewritten: str) -> None:
    assert wrap_tolerant(pattern) == rewritten


@pytest.mark.parametrize("pattern", [
    "a +b", "a {2}b", "a ?b",  # the space is quantified
    "foo\\s+ bar", "foo \\s*bar", "x [^)]* y", "x . y", "x [ ,]y", "x\\W y", "x? y", "x* y", "x{0,3} y",
    "(?:the )?dev", "(?:a|\\s) b", "abc (?:\\s+x)", "a (\\s|b)", "[a b] c", "\\x20 a",
])
def test_a_space_beside_what_matches_a_blank_stays(pattern: str) -> None:
    """Where the space meets another blank-matching part, a run of blanks could split two ways: left as written."""
    assert wrap_tolerant(pattern) == pattern


def test_the_wrap_rule_matches_a_wrap_and_nothing_looser() -> None:
    rx = re.compile(wrap_tolerant("no match for argument: rocm$"), re.I | re.M)
    for text in ("No match for argument: rocm", "No match for\nargument: rocm", "No match for  \n    argument: rocm",
                 "No\tmatch for argument:   rocm"):
        assert rx.search(text), text
    for text in ("No matchfor argument: rocm", "No match for\n\nargument: rocm", "No match for\n-\nargument: rocm"):
        assert not rx.search(text), text  # no blank, a paragraph break, a line between: not one wrapped line


def test_every_known_issue_pattern_keeps_its_groups() -> None:
    for issue in load_kb().known_issues():
        for p in (*issue.signatures, *issue.symptom_signatures, *issue.stated_signatures, *issue.unless):
            original = re.sub(re.escape(WRAPPED_SPACE), " ", p.pattern)
            assert p.compiled.groups == re.compile(original).groups, (issue.id, original)


def test_rewritten_patterns_stay_linear_on_runs_of_blanks() -> None:
    """Every known-issue pattern over long runs of blanks and wrapped words costs no more than before its rewrite."""
    patterns = [p for i in load_kb().known_issues() for p in (*i.signatures, *i.symptom_signatures,
                                                              *i.stated_signatures, *i.unless)]
    words = sorted({w for p in patterns for w in re.findall(r"[A-Za-z]{3,}", p.pattern)})[:300]
    texts = ["a" + " " * 20000 + "b", " \t " * 7000, "   ".join(words), "\n    ".join(words),
             "".join(w + " " * 200 for w in words), "".join(w + " \n " * 50 for w in words[:60])]

    def cost(rxs: list[re.Pattern[str]]) -> float:
        t = time.perf_counter()
        for rx in rxs:
            for text in texts:
                rx.search(text)
        return time.perf_counter() - t

    new = [p.compiled for p in patterns]
    old = [re.compile(re.sub(re.escape(WRAPPED_SPACE), " ", p.pattern), p.compiled.flags) for p in patterns]
    before, after = cost(old), cost(new)
    assert after < 2 * before + 0.5, (before, after)
