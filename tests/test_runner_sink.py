"""The engine's output sink: however the child's output is cut into chunks, the view gets the same
lines (carriage-return redraws collapsed, unterminated long lines shown) and the log gets the bytes."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

import pytest

from wizard.runner import events as ev
from wizard.runner.engine import _Sink

pytestmark = pytest.mark.unit


def _lines_of(data: bytes, chunks: list[int]) -> tuple[list[str], bytes]:
    got: list[str] = []
    log = io.BytesIO()
    sink = _Sink(log, lambda e: got.extend(e.lines) if isinstance(e, ev.OutputLines) else None, 0, 0)
    at = 0
    for n in chunks:
        sink.feed(data[at:at + n])
        at += n
    if at < len(data):
        sink.feed(data[at:])
    sink.close()
    return got, log.getvalue()


def _expected(data: bytes) -> list[str]:
    if not data:
        return []
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    return [p.decode("utf-8", "replace").rstrip("\r").rsplit("\r", 1)[-1] for p in parts]


ALPHABET = st.sampled_from([b"a", b"b", b"\n", b"\r", b" ", "é".encode(), "✔".encode(), b"\x1b[1m"])


@settings(max_examples=300, deadline=None)
@given(st.lists(ALPHABET, max_size=80).map(b"".join), st.lists(st.integers(1, 7), max_size=40))
def test_any_chunking_gives_the_same_lines(data: bytes, chunks: list[int]) -> None:
    got, logged = _lines_of(data, chunks)
    assert logged == data
    # a UTF-8 sequence cut between chunks must not turn into replacement characters
    assert got == _expected(data)


def test_progress_bar_redraws_keep_the_last_drawing() -> None:
    got, _ = _lines_of(b"start\n 10%\r 50%\r100%\ndone\n", [9, 4, 100])
    assert got == ["start", "100%", "done"]


def test_a_line_without_end_is_shown_once_it_is_long() -> None:
    got: list[str] = []
    sink = _Sink(io.BytesIO(), lambda e: got.extend(e.lines) if isinstance(e, ev.OutputLines) else None, 0, 0)
    sink.feed(b"x" * 65536)
    assert got == []  # still waiting for its end
    sink.feed(b"x" * 4464 + b"tail")
    assert got == ["x" * 70000 + "tail"]  # shown without its end, not held forever
    sink.feed(b" more\n")
    sink.close()
    assert got == ["x" * 70000 + "tail", " more"]
