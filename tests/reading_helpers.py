"""Helpers for the reading tests: what the mentions reader says of a text, and what detection reads from a paste."""

from __future__ import annotations

from pathlib import Path

from wizard.host import open_recorded
from wizard.model import Facts
from wizard.parsers import mentions
from wizard.parsers.mentions import Mention
from wizard.probes import detect


def read_mentions(text: str, command: str | None = None) -> tuple[Mention, ...]:
    """The mentions reader without its guard (``never_raises``): a bug in a rule fails the test that reads the line,
    rather than reading as "nothing said", which a near-miss assertion would take for a pass."""
    return mentions.read_mentions.__wrapped__(text, command)  # type: ignore[attr-defined,no-any-return]


def said(text: str, kind: str) -> list[str]:
    """The values the mentions reader finds of one kind in ``text``."""
    return [m.value for m in read_mentions(text) if m.kind == kind]


def detect_paste(tmp_path: Path, text: str) -> Facts:
    """Detection's facts of a recorded machine whose only evidence is ``text`` as its paste.txt; a probe that failed
    on it (detect keeps going and lists it in ``errors``) fails the test, rather than reading as a fact not found."""
    (tmp_path / "paste.txt").write_text(text, encoding="utf-8")
    facts = detect(open_recorded(str(tmp_path)))
    assert not facts.errors, facts.errors
    return facts
