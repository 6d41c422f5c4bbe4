"""SIGTERM, SIGHUP and SIGINT while a run, resume or rollback goes on: a stop, never an orphan.

While a run holds the lock, these signals only ask the engine to stop (the run's cancel event, with
the signal's name as the reason). The action running then has its process group stopped by the shell
(SIGTERM, a grace period, SIGKILL, and a wait until the group is empty), the engine journals the
interruption, the run service releases the lock, and the command exits non-zero. Nothing is torn
by the signal itself: no ``KeyboardInterrupt`` lands in the middle of a journal write, and the lock
is never released while a child of the run is alive, so an immediate ``resume`` cannot start the
same action a second time beside the first. Handlers are installed only in the main thread (a
front end that runs the service on a worker thread handles its own signals and sets the event), and
never for a signal the process was started with ignored (``nohup``: the run goes on when the terminal closes).
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from types import FrameType
from typing import Iterator

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


class StopRequest(threading.Event):
    """A cancel event that says why it was set."""

    def __init__(self) -> None:
        super().__init__()
        self.reason: str | None = None

    def request(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
        self.set()


def reason_of(cancel: threading.Event) -> str | None:
    reason = getattr(cancel, "reason", None)
    return reason if isinstance(reason, str) else None


@contextmanager
def stop_on_signals(cancel: threading.Event | None) -> Iterator[threading.Event]:
    """The event the engine watches (``cancel``, or a new one), set by any of STOP_SIGNALS meanwhile."""
    event: threading.Event = cancel if cancel is not None else StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield event
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if isinstance(event, StopRequest):
            event.request(f"interrupted by {name}")
        else:
            event.set()

    # A signal ignored when the wizard started stays ignored: `nohup rocm-wizard --plan X --yes &` asked for
    # a run that outlives its terminal, so its SIGHUP (and a background job's SIGINT) is nobody's stop.
    old = {s: signal.signal(s, handler) for s in STOP_SIGNALS if signal.getsignal(s) is not signal.SIG_IGN}
    try:
        yield event
    finally:
        for s, h in old.items():
            signal.signal(s, h)
