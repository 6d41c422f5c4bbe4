"""One writer's words in one text: the segments a paste was cut into (``wizard/parsers/paste.py``) joined again.

A pasted thread reaches the readers cut where its shape changes: the reporter's prose, a fenced block with the
settings, then "now it works"; another person's post between. Reading what one person said across those cuts needs
their segments in one text, in line order, each line at its own line number (blank lines stand for what lies between
them, another person's post among it), so that a match there names the line it is on.
"""

from __future__ import annotations

from collections.abc import Iterable

from wizard.model import Evidence, EvidenceText
from wizard.parsers.match_text import evidence_line
from wizard.record import record


@record
class Words:
    """One writer's segments of one source joined in line order."""

    source: str
    first_line: int
    text: str
    own: bool
    post: int  # the first post it holds (the posts of one source come in line order)
    parts: int  # how many texts it joins
    overlapping: bool = False  # two of them hold the same line (the one given first keeps it)

    def evidence(self, pos: int) -> Evidence:
        """The line at ``pos`` of the text, with its line number in the source."""
        row, line = evidence_line(self.text, pos, pos)
        return Evidence(self.source, self.first_line + row, line)


def joined_words(texts: Iterable[EvidenceText], reporter_runs: bool) -> list[Words]:
    """Each writer's texts of one source joined in line order, in the order the writers first come: another person's
    post by itself; the reporter's (``own``) texts all in one, or, with ``reporter_runs``, in runs of consecutive
    posts, another person's post ending a run.

    The rules differ on purpose. A signature describes the failure, which the reporter's words state wherever in the
    thread they are (``wizard.diagnose``: all in one). A fix that worked is an action, then words saying it worked, in
    one stretch of the reporter's words (``wizard.fix_worked``: runs): words after another person's post may confirm
    that post's proposal instead, so the reporter's answer to it is a run of its own (the one after the proposal)."""
    texts = list(texts)
    others: dict[str, list[int]] = {}
    if reporter_runs:
        for t in texts:
            if not t.own:
                others.setdefault(t.source, []).append(t.post)
    groups: dict[tuple[str, bool, int], list[EvidenceText]] = {}
    for t in texts:
        if not t.own:
            run = t.post
        elif reporter_runs:
            run = sum(1 for p in others.get(t.source, ()) if p < t.post)
        else:
            run = -1
        groups.setdefault((t.source, t.own, run), []).append(t)
    out: list[Words] = []
    for (source, own, _run), parts in groups.items():
        lines: dict[int, str] = {}
        overlapping = False
        for t in parts:
            for i, line in enumerate(t.text.split("\n")):
                if t.first_line + i in lines:
                    overlapping = True
                else:
                    lines[t.first_line + i] = line
        lo, hi = min(lines), max(lines)
        body = "\n".join(lines.get(n, "") for n in range(lo, hi + 1))
        out.append(Words(source, lo, body, own, min(t.post for t in parts), len(parts), overlapping))
    return out
