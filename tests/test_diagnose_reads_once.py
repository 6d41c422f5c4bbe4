"""A diagnosis normalises each text once (wizard/diagnose.py `_read`): the signatures search, and the predicates that
read a text (text_matches) read, the one normalised text (wizard/parsers/match_text.py)."""

from __future__ import annotations

from collections import Counter

import pytest

import wizard.diagnose as diagnose_module
from wizard.diagnose import PREDICATES, diagnose, diagnose_error_text
from wizard.model import EvidenceText, Facts, Gpu
from wizard.parsers.match_text import MatchText, match_text

pytestmark = pytest.mark.unit

MANGLED = "\x1b[31mRuntimeError\x1b[0m: HIP error: in\u200bvalid\u00a0device function\r\n"
TEXTS = (
    EvidenceText("paste.txt", "I run my model on an RX 6700", 2, "text", True, post=0),
    EvidenceText("paste.txt", MANGLED, 3, "text", True, post=0),
    EvidenceText("paste.txt", "have you set HSA_OVERRIDE_GFX_VERSION=10.3.0?", 6, "text", False, post=1),
    EvidenceText("paste.txt", "that worked, thanks!", 8, "text", True, post=2),
    EvidenceText("dmesg.txt", "[    3.5] amdgpu: loaded\r\n", 1, "dmesg.txt", True),
    EvidenceText("empty.txt", "", 1, "text", True),
)
FACTS = Facts(gpus=(Gpu(gfx="gfx1031", gfx_reported="gfx1031"),), origin="test", texts=TEXTS)


@pytest.fixture
def normalised(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Each text diagnose hands to the normaliser, counted."""
    seen: Counter[str] = Counter()

    def counting(text: str) -> MatchText:
        seen[text] += 1
        return match_text(text)

    monkeypatch.setattr(diagnose_module, "match_text", counting)
    return seen


def test_each_text_is_normalised_once_per_diagnosis(normalised: Counter[str]) -> None:
    found = diagnose(FACTS, "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!")
    assert found
    # the six texts, the error text, and the reporter's three segments joined in one: eight, none of them twice
    assert sum(normalised.values()) == len(TEXTS) + 2 and set(normalised.values()) == {1}


def test_an_error_text_with_facts_normalises_the_facts_texts_once_too(normalised: Counter[str]) -> None:
    diagnose_error_text("RuntimeError: HIP error: invalid device function", FACTS)
    assert sum(normalised.values()) == len(TEXTS) + 1 and set(normalised.values()) == {1}


def test_the_predicates_read_the_text_the_signatures_search() -> None:
    seen, searched = diagnose_module._read(FACTS, None)
    assert [t.text for t in seen.texts] == [match_text(t.text).text for t in TEXTS]
    by_line = {(s.text.source, s.text.first_line): s.text for s in searched}
    assert seen.texts[1] is by_line[("paste.txt", 3)]  # one normalised text, not an equal second one
    # text_matches sees the normalised words (a zero-width space and a no-break space in the pasted line) ...
    assert PREDICATES["text_matches"](seen, r"invalid device function") == [
        "paste.txt: invalid device function"]
    assert PREDICATES["text_matches"](FACTS, r"invalid device function") is None
    # ... and only those: a near miss stays a miss
    assert PREDICATES["text_matches"](seen, r"invalid device kernel") is None


def test_an_empty_text_is_not_searched_but_the_predicates_still_hold_it() -> None:
    seen, searched = diagnose_module._read(FACTS, None)
    assert len(seen.texts) == len(TEXTS) and seen.texts[-1].text == ""
    assert "empty.txt" not in {s.text.source for s in searched}
