"""Messages the screens post to the app: user intent as machine events (the app applies them)."""

from __future__ import annotations

from textual.message import Message


class Advance(Message):
    """Fire ``event`` on the session's state machine (``arg``: e.g. the chosen plan)."""

    def __init__(self, event: str, arg: str | None = None) -> None:
        super().__init__()
        self.event = event
        self.arg = arg
