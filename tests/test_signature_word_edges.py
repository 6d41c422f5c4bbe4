"""Known-issue signatures match words, not the letters inside them: a pattern part that starts inside an everyday word
("stall" in "install", "conv" in "converted", "hang" in "change") is a false finding waiting for a paste that says
"pip install". Every signature is run over each ordered pair of such words; no part of a match may start mid-word."""

from __future__ import annotations

import pytest

from wizard.kb import load_kb

pytestmark = pytest.mark.unit

# everyday words with a failure word or a tool name inside them
WORDS = ("install", "installed", "reinstalling", "uninstall", "change", "exchange", "converted", "conversion",
         "convenient", "failover", "unfailing", "freezer", "hangar", "overhang", "shanghai", "abortion", "errorless",
         "hipster", "chip", "ship", "redefined", "forwarding", "submission", "commission", "ollama", "dllama",
         "procmail", "supportive", "timeouts", "notfound", "stalling", "crashcourse", "stuckey", "kernelized",
         "hardware", "software", "warnings", "denied", "permission", "dependency", "undefined", "segmentation")
PROSE = "\n".join(f"the {a} and then the {b}" for a in WORDS for b in WORDS)


def _mid_word(text: str, start: int) -> bool:
    return start > 0 and text[start - 1].isalnum() and text[start].isalnum()


def test_no_signature_part_starts_inside_an_everyday_word() -> None:
    bad: list[str] = []
    for issue in load_kb().known_issues():
        for pattern in (*issue.signatures, *issue.symptom_signatures, *issue.stated_signatures):
            rx = pattern.compiled
            for m in rx.finditer(PROSE):
                starts = [m.start()] + [m.start(g) for g in range(1, rx.groups + 1) if m.end(g) > m.start(g) >= 0]
                if any(_mid_word(PROSE, s) for s in starts):
                    line = PROSE[PROSE.rfind("\n", 0, m.start()) + 1:PROSE.find("\n", m.end())]
                    bad.append(f"{issue.id}: {rx.pattern[:80]!r} in {line!r}")
                    break
    assert not bad, "\n".join(bad)
