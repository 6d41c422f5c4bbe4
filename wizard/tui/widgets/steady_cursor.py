"""A text cursor that holds still when the app runs without animations.

Textual's ``Input`` and ``TextArea`` blink their cursor on a 0.5 s timer: a screenshot shows it or not
depending on when it is taken, which the machine's load decides. With animations off
(``TEXTUAL_ANIMATIONS=none``: the user's choice for a slow or remote terminal, and how the tests run) the
wizard's text cursors do not blink either: shown steadily while the widget has focus.
"""

from __future__ import annotations

from typing import TypeVar

from textual.widgets import Input, TextArea

W = TypeVar("W", Input, TextArea)


def steady_cursor(widget: W) -> W:
    """``widget`` with its cursor blinking unless the app's animation level is ``none``."""
    widget.cursor_blink = widget.app.animation_level != "none"
    return widget
