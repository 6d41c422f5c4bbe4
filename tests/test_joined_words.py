"""One writer's words joined in line order (wizard/parsers/writers.py), the one owner for wizard.diagnose's joined
posts and wizard.fix_worked's stretches of words, and the one cut of an evidence line from a match
(wizard/parsers/match_text.py evidence_line): the run rule each reader uses, its near misses, the line numbers kept."""

from __future__ import annotations

import pytest

from wizard.fix_worked import fix_actions, worked_fixes
from wizard.kb import load_kb
from wizard.model import Evidence, EvidenceText
from wizard.parsers.match_text import EVIDENCE_CHARS, evidence_line
from wizard.parsers.writers import joined_words

pytestmark = pytest.mark.unit


def _t(text: str, line: int, own: bool = True, post: int = 0, kind: str = "text") -> EvidenceText:
    return EvidenceText("paste.txt", text, line, kind, own, post=post)


# the reporter's post 0 (two segments around a fenced block), another person's post 1, the reporter's post 2
THREAD = [_t("I set the variable", 2), _t("export X=1", 4, kind="env.txt"), _t("did you reboot?", 7, False, 1),
          _t("now it works", 10, post=2)]


def test_the_reporters_posts_in_one_text_for_signatures_in_runs_for_a_fix_that_worked() -> None:
    whole = joined_words(THREAD, reporter_runs=False)
    assert [(w.own, w.first_line, w.post, w.parts) for w in whole] == [(True, 2, 0, 3), (False, 7, 1, 1)]
    assert whole[0].text.split("\n") == ["I set the variable", "", "export X=1", "", "", "", "", "",
                                         "now it works"]  # what lies between: blank lines, each line at its number
    runs = joined_words(THREAD, reporter_runs=True)
    assert [(w.own, w.first_line, w.post, w.parts) for w in runs] == [(True, 2, 0, 2), (False, 7, 1, 1),
                                                                       (True, 10, 2, 1)]
    assert runs[0].text == "I set the variable\n\nexport X=1" and runs[2].text == "now it works"


def test_another_persons_posts_stay_apart_and_other_sources_too() -> None:
    texts = [_t("a", 1, False, 1), _t("b", 3, False, 2), EvidenceText("other.txt", "c", 5, "text", True, post=0),
             _t("d", 6)]
    for runs in (False, True):
        assert [(w.source, w.text, w.own) for w in joined_words(texts, reporter_runs=runs)] == [
            ("paste.txt", "a", False), ("paste.txt", "b", False), ("other.txt", "c", True), ("paste.txt", "d", True)]
    # without another person's post between them, the reporter's posts are one run
    assert [w.text for w in joined_words([_t("a", 1), _t("EDIT: b", 2, post=1)], reporter_runs=True)] == ["a\nEDIT: b"]


def test_texts_holding_the_same_lines_are_marked_the_first_given_keeps_them() -> None:
    (w,) = joined_words([_t("one\ntwo", 1), _t("TWO\nthree", 2)], reporter_runs=False)
    assert w.overlapping and w.text == "one\ntwo\nthree" and w.parts == 2
    (near,) = joined_words([_t("one\ntwo", 1), _t("three", 3)], reporter_runs=False)  # adjacent: no overlap
    assert not near.overlapping and near.text == "one\ntwo\nthree"


def test_a_words_evidence_is_the_line_at_a_position_with_its_number() -> None:
    (w,) = joined_words([_t("first\n  second line  ", 5)], reporter_runs=False)
    assert w.evidence(w.text.index("line")) == Evidence("paste.txt", 6, "second line")
    assert w.evidence(0) == Evidence("paste.txt", 5, "first")


def test_evidence_line_cuts_the_matched_line_or_lines() -> None:
    text = "before\n  a match here \nnext\n\nlast"
    start = text.index("match")
    assert evidence_line(text, start, start + 5) == (1, "a match here")
    # a match over several lines: those lines in one, blank ones left out
    assert evidence_line(text, start, text.index("last")) == (1, "a match here / next / last")
    assert evidence_line(text, 0, 0) == (0, "before")
    long = "x" * (EVIDENCE_CHARS + 50)
    assert evidence_line(long, 10, 12) == (0, "x" * EVIDENCE_CHARS)


def test_a_fix_that_worked_reads_within_the_reporters_run_not_across_a_proposal() -> None:
    actions = fix_actions(load_kb().known_issue("rdna2-variant-needs-override"))  # type: ignore[arg-type]
    said = [_t("I set HSA_OVERRIDE_GFX_VERSION=10.3.0", 2), _t("and now it works", 3, post=1)]
    (hit,) = worked_fixes(said, actions)
    assert hit.action.line == 2 and hit.confirmed.line == 3 and not hit.proposed
    # near miss: another person's post between the action and "now it works" ends the run: no claim spans it
    across = [said[0], _t("have you tried rebooting?", 3, False, 1), _t("and now it works", 4, post=2)]
    assert worked_fixes(across, actions) == []
