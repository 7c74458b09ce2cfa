"""Steps taken ahead of their turn, so that the calls they will make are already out.

The run commits one step at a time, in its queue's order, as it always has; that order
is what makes a run replay and resume exactly. What takes the time is the calls: with
``--concurrency`` above 1, before the goal first in the queue takes its step, each goal
behind it (as many as may be in flight) takes its own next step *ahead of its turn*,
against the graph as committed: reads only. The first write, ledger entry or call it
reaches ends it (``LookaheadStop``); a call it reached is started then, and answered
when the goal's turn makes the same call (same proposer, request and occurrence). Goals
are looked at in queue order until the calls out fill the concurrency. What the step
changed in memory is rewound, so the run goes on as if it had not been taken.

A call whose turn asks for something else (an earlier step in the round changed what
the goal sees) is not used: it is counted, and what it cost is told at the end of the
run (``Outcome.calls_unused``, ``unused_cost_usd``); nothing of it enters the run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from kernel.errors import LookaheadStop
from kernel.runtime import progress
from kernel.runtime.kernel import Kernel

# How far behind the head a goal may be and still be looked at, in multiples of the
# concurrency: far enough to pass over goals whose next step only writes.
LOOK_FURTHER = 4


def look_ahead(k: Kernel, queue: list[str], step: Callable[[Kernel, str], object]) -> None:
    """Start the next calls of the goals behind ``queue[0]``, in queue order, until as
    many calls are out as the run's concurrency allows, the head's own among them (a goal
    whose next step writes before it calls has nothing to start, and is passed over until
    it has taken that step); drop the calls of goals that left the queue."""
    calls = k.calls
    if not calls.ahead or k.proposals.replaying:
        return
    queued = set(queue)
    calls.drop(lambda goal_id: goal_id in queued)
    calls.watcher = progress.current()
    # the head's own call needs a place, unless it is already out
    room = calls.concurrency - (0 if calls.waiting(queue[0]) else 1)
    for goal_id in queue[1:calls.concurrency * LOOK_FURTHER]:
        if calls.in_flight() >= room:
            break
        if calls.waiting(goal_id) or goal_id in calls.writes_first:
            continue
        if not _take_ahead(k, goal_id, step):
            calls.writes_first.add(goal_id)


def _take_ahead(k: Kernel, goal_id: str, step: Callable[[Kernel, str], object]) -> bool:
    """Whether the step, taken ahead, started a call. It ends at what it reaches first (a
    write, a ledger entry, its call), or at an error its turn will meet again, in order."""
    with _ahead_of_turn(k), contextlib.suppress(LookaheadStop, Exception):
        step(k, goal_id)
    return k.calls.waiting(goal_id)


@contextlib.contextmanager
def _ahead_of_turn(k: Kernel) -> Iterator[None]:
    """Reads only, nothing told to the watcher, and what changed in memory rewound."""
    run_mark, log_mark = k.run.mark(), k.log.mark()
    k.store.lookahead = True
    try:
        with progress.watching(None):
            yield
    finally:
        k.store.lookahead = False
        k.run.rewind(run_mark)
        k.log.rewind(log_mark)
