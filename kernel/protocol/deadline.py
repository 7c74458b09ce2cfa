"""The moment a call must be over by: the run's wall-time cap, handed to whichever
resolver answers the call (on the run's thread or one of its own), so a model that sends
its answer a byte at a time cannot hold the run past its cap.

>>> seconds_left() is None
True
>>> with call_deadline(time.monotonic() + 60):
...     0 < (seconds_left() or 0) <= 60
True
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextvars import ContextVar

_DEADLINE: ContextVar[float | None] = ContextVar("call_deadline", default=None)


@contextlib.contextmanager
def call_deadline(at: float | None) -> Iterator[None]:
    """Calls made in the block must end by ``at`` (``time.monotonic``; None: no cap)."""
    token = _DEADLINE.set(at)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def seconds_left() -> float | None:
    """What is left before the current call's deadline (None: it has none)."""
    at = _DEADLINE.get()
    return None if at is None else at - time.monotonic()
