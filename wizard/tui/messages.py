"""Messages the screens post to the app: what the user wants, as typed Textual messages (the way
Textual's own widgets report: ``OptionList.OptionHighlighted``). The app applies them; screens never
pick the next screen themselves."""

from __future__ import annotations

from textual.message import Message

from wizard.session import Move


class MoveRequested(Message):
    """A plain move of the stage machine (next, back, confirm, no, stop, later)."""

    def __init__(self, move: Move) -> None:
        super().__init__()
        self.move = move


class PlanChosen(Message):
    """A plan picked at Choose: a shipped plan's name or a plan file's path."""

    def __init__(self, spec: str) -> None:
        super().__init__()
        self.spec = spec


class RunConfirmed(Message):
    """The one question before the first change was answered yes."""


class RetryRequested(Message):
    """Retry the run that failed on this screen (never another run)."""

    def __init__(self, run_id: str | None) -> None:
        super().__init__()
        self.run_id = run_id


class ResumeRequested(Message):
    """Resume the pending run the Resume screen showed."""

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id


class RollbackRequested(Message):
    """Undo the run (after the confirmation that lists what will be undone)."""

    def __init__(self, run_id: str | None) -> None:
        super().__init__()
        self.run_id = run_id


class RunUpdated(Message):
    """The app to a stage screen: the run's fold (``session.run``) changed; ``lines`` is the output since the
    last one. Posted to the screen, so a screen that is not mounted yet handles it only after its mount."""

    def __init__(self, lines: tuple[str, ...]) -> None:
        super().__init__()
        self.lines = lines
