"""Steps taken ahead of their turn, so that the calls they will make are already out.

The run commits one step at a time, in its queue's order, as it always has; that order
is what makes a run replay and resume exactly. What takes the time is the calls: with
``--concurrency`` above 1, before the goal first in the queue takes its step, each goal
behind it (as many as may be in flight) has its next step taken *ahead of its turn*,
against the graph as committed. A call it reaches is started then, and answered when the
goal's turn makes the same call (same proposer, request and occurrence). Goals are
looked at in queue order until the calls out fill the concurrency.

A step (an effect producer, ``kernel.solve.effects``) is advanced to its first call and
no further: it reads through its view, a recalled record or a history it asks
for (``Observe``) is read and handed to it (nothing is recorded), an attempt it opens
(``OpenAttempt``) is handed to it as it would be opened (nothing is buffered), and the
call it then asks for is started, by whoever the call names (the run's model, the
sandbox, a tool's runner), when the budget the goal holds covers its estimate and
nothing recorded or answered before will serve it. Nothing is performed, so there is
nothing to undo. A step that changes something before its first call (a write ends the
advance, and so does an artifact it must register first, children or another entity
whose ids it needs, or a question to a person, who is asked on the turn only) or an
error its turn will meet again (a ``KernelError``) has nothing to start.

A call whose turn asks for something else (an earlier step in the round changed what
the goal sees) is not used: it is counted, and what it cost is told at the end of the
run (``Outcome.calls_unused``, ``unused_cost_usd``); nothing of it enters the run.
"""

from __future__ import annotations

from collections.abc import Callable

from kernel.core.goal_node import GoalNode
from kernel.errors import KernelError
from kernel.runtime import progress
from kernel.runtime.gate import amount
from kernel.runtime.kernel import Kernel
from kernel.solve import moves
from kernel.solve.effects import (
    AskPerson,
    ChildIds,
    Done,
    HireQuestion,
    ModelCall,
    NewChild,
    NewChildren,
    NewId,
    OpenAttempt,
    Recall,
    Register,
)
from kernel.solve.perform import first_request, proposer_of
from kernel.solve.steps import BY_MOVE
from kernel.solve.view import KernelView

# How far behind the head a goal may be and still be looked at, in multiples of the
# concurrency: far enough to pass over goals whose next step only writes.
LOOK_FURTHER = 4

Opening = Callable[[GoalNode], moves.Move | None]


def look_ahead(k: Kernel, queue: list[str], opening: Opening) -> None:
    """Start the next calls of the goals behind ``queue[0]``, in queue order, until as
    many calls are out as the run's concurrency allows, the head's own among them (a goal
    whose next step writes before it calls has nothing to start, and is passed over until
    it has taken that step); drop the calls of goals that left the queue. ``opening`` is
    the move a goal's turn starts with (None: nothing to take ahead)."""
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
        if not _take_ahead(k, goal_id, opening):
            calls.writes_first.add(goal_id)


def _take_ahead(k: Kernel, goal_id: str, opening: Opening) -> bool:
    """Whether the step, taken ahead, started a call."""
    try:
        move = opening(k.tree.get(goal_id))
        if move is None:
            return False
        with progress.watching(None):  # nothing told to the watcher
            _advance(k, move)
    except KernelError:  # its turn meets it again, in order
        return False
    return k.calls.waiting(goal_id)


def _advance(k: Kernel, move: moves.Move) -> None:
    """Advance the step ``move`` starts (and the steps it leads to with nothing changed
    but log lines and a verification riding the goal's move, which the next step's
    call does not show: verify, then the leaf step) to its first call, and start that
    call."""
    view = KernelView(k)
    while True:
        body = BY_MOVE[type(move)].body(view, move)
        try:
            reached = first_request(body)
            while not isinstance(reached, (Done, ModelCall)):
                if isinstance(reached, OpenAttempt):  # as it would be opened: nothing buffered
                    reached = first_request(body, k.attempts.next(
                        reached.goal_id, reached.resolver_id,
                        plan_artifact_id=reached.plan_artifact_id,
                        input_artifact_ids=reached.input_artifact_ids, feedback=reached.feedback))
                    continue
                if isinstance(reached, Register | ChildIds | NewChildren | NewChild | NewId
                              | AskPerson | HireQuestion) \
                        or k.proposals.has_pending():
                    return  # a resumed run serves what it recorded: nothing to start
                found = reached.read()  # read, and handed to the step: nothing recorded
                if isinstance(reached, Recall) and found is not None:
                    return  # the record answers: no call
                reached = first_request(body, found)
        finally:
            body.close()
        if isinstance(reached, ModelCall):
            _start(k, reached)
            return
        if not reached.changes.only_riding() or not isinstance(reached.then, moves.Move):
            return
        move = reached.then


def _start(k: Kernel, call: ModelCall) -> None:
    """Start ``call`` when the goal's own budget covers it (drawing on the goals above is
    a write, left to its turn)."""
    proposer = proposer_of(k, call.answerer)
    estimate = k.proposals.estimate(call.request, proposer)
    if k.budget.covers(call.goal_id, amount(estimate.cost_usd, estimate.seconds)):
        k.proposals.start_ahead(call.request, proposer)
