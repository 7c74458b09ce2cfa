"""What a run is doing right now, told to whoever watches it (the CLI's live view).

Progress is an observation, never an input: nothing here is stored or recorded, and no
decision reads it. The kernel reports four kinds of moments: a start-up *phase* (before
the first step, e.g. loading the proposer), a *step* beginning on a goal (its name and
attempt), a *call* going out (a model operation, or tests in the sandbox), which is
where a step spends its time, and that call *done* (with how long it took); a call
*reused* is one served from an identical request answered before in the graph. With
``--concurrency`` above 1 several goals' calls are out at once, and a call ends on the
thread that ran it: a watcher must take events from any thread. A watcher is installed
for a block of code with ``watching``; with none, reporting costs a context-variable
read.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Literal

Kind = Literal["phase", "step", "call", "done", "reused"]


@dataclass(frozen=True)
class Event:
    kind: Kind
    text: str  # the phase, the step's name or the operation
    goal_id: str | None = None
    goal: str | None = None  # the goal's summary
    attempt: int | None = None  # for a step that makes an attempt (resolve, verify)
    at: float = field(default_factory=time.monotonic)
    took: float | None = None  # a call done: its seconds
    cost_usd: float | None = None  # a call done: what it was charged (a sandbox run too)


Watcher = Callable[[Event], None]
_watcher: ContextVar[Watcher | None] = ContextVar("kernel_progress", default=None)

# How a call reads on screen: what the kernel waits for while it is out.
CALLS = {"run_tests": "running the tests in the sandbox", "run_tool": "running a built tool",
         "hire": "waiting for a person"}


# Each goal's summary as a step reported it, so a call whose request does not carry the
# summary (tests in the sandbox, an intake question) still names its goal by it.
_NAMES: dict[str, str] = {}
_REMEMBERED = 10_000


def _named(event: Event) -> Event:
    if event.goal_id is None:
        return event
    if event.goal:
        if len(_NAMES) >= _REMEMBERED:
            _NAMES.clear()
        _NAMES[event.goal_id] = event.goal
        return event
    known = _NAMES.get(event.goal_id)
    return event if known is None else replace(event, goal=known)


def report(kind: Kind, text: str, goal_id: str | None = None, goal: str | None = None,
           attempt: int | None = None, took: float | None = None,
           cost_usd: float | None = None) -> None:
    """Tell the watcher, if there is one."""
    watcher = _watcher.get()
    if watcher is not None:
        watcher(_named(Event(kind, text, goal_id, goal, attempt, took=took, cost_usd=cost_usd)))


def current() -> Watcher | None:
    """The watcher of this thread's block, to hand to a thread that reports for it."""
    return _watcher.get()


def tell(watcher: Watcher | None, event: Event) -> None:
    """Report ``event`` to ``watcher`` (from any thread)."""
    if watcher is not None:
        watcher(_named(event))


@contextlib.contextmanager
def watching(watcher: Watcher | None) -> Iterator[None]:
    """Send the progress of the code inside the block to ``watcher`` (None: to no one)."""
    token = _watcher.set(watcher)
    try:
        yield
    finally:
        _watcher.reset(token)
