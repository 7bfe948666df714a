"""SIGTERM stops a run as Ctrl+C does: the run's own KeyboardInterrupt handling saves what
finished and says so (Python's default would end the process with nothing said)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While inside, SIGTERM raises KeyboardInterrupt in the main thread (elsewhere a
    handler cannot be set, and nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _as_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _as_sigint(_signum: int, frame: FrameType | None) -> None:
    """Do what SIGINT's Python handler does (asyncio's, which cancels the run, or Python's);
    when SIGINT is ignored (a job a shell started in the background inherits that), raise
    KeyboardInterrupt here, so SIGTERM still stops the run."""
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    else:
        raise KeyboardInterrupt
