"""Helpers for the reading tests: what the mentions reader says of a text, and what detection reads from a paste."""

from __future__ import annotations

from pathlib import Path

from wizard.host import open_recorded
from wizard.model import Facts
from wizard.parsers.mentions import read_mentions
from wizard.probes import detect


def said(text: str, kind: str) -> list[str]:
    """The values the mentions reader finds of one kind in ``text``."""
    return [m.value for m in read_mentions(text) if m.kind == kind]


def detect_paste(tmp_path: Path, text: str) -> Facts:
    """Detection's facts of a recorded machine whose only evidence is ``text`` as its paste.txt."""
    (tmp_path / "paste.txt").write_text(text, encoding="utf-8")
    return detect(open_recorded(str(tmp_path)))
