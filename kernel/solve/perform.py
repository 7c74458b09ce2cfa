"""The one place a step's effects happen: its requests performed, its changes committed.

A step written as an effect producer (``kernel.solve.effects``) yields requests and
returns its changes; ``drive`` runs it on its turn. Each ``ModelCall`` goes through the
budget gate (``kernel.runtime.gate.ask``: estimate, pre-check, a denial escalated to
HIRE by dispatch, the spend recorded) and ``Proposals``, which records it in the ledger
or serves it from there on resume and replay; each ``Recall`` is recorded the same way.
Then the step's changes are applied in order, which makes its commit (what is pending
rides the statement that takes it, see ``kernel.core.run``).

``first_request`` is the other way to drive a step: ahead of its turn, up to its first
request and no further (``kernel.solve.lookahead`` starts that request's call).
"""

from __future__ import annotations

from typing import Any, TypeVar

from kernel.runtime.gate import ask
from kernel.runtime.kernel import Kernel
from kernel.solve.effects import (
    Decision,
    Done,
    Effects,
    Flow,
    ModelCall,
    Recall,
    Reopen,
    Request,
    SetRole,
    StepChanges,
    Transition,
    Wake,
)

N = TypeVar("N")


def drive(k: Kernel, body: Effects[N]) -> N:
    """Take a step on its turn: perform each request it yields, send it the result, and
    commit the changes it returns; what follows it."""
    try:
        request = next(body)
        while True:
            request = body.send(perform(k, request))
    except StopIteration as stop:
        done: Done[N] = stop.value
    finally:
        body.close()  # a request that raised (a denial, a failed call) ends the step
    apply(k, done.changes)
    return done.then


def perform(k: Kernel, request: Request) -> Any:
    """The result of one request, on the step's turn."""
    if isinstance(request, ModelCall):
        return ask(k, request.goal_id, request.operation, request.request,
                   resolver_id=request.resolver_id, pay=request.pay)
    return k.proposals.recall(request.name, request.goal_id, request.read)


def apply(k: Kernel, changes: StepChanges) -> None:
    """Write a step's changes, in order."""
    for change in changes.changes:
        if isinstance(change, Wake):
            k.run.will_wake(list(change.goal_ids))
        elif isinstance(change, Transition):
            k.tree.transition(change.goal_id, change.to, change.changes)
        elif isinstance(change, SetRole):
            k.constraints.set_role(k.run, change.goal_id, change.role, change.ids,
                                   change.from_status, change.to)
        elif isinstance(change, Flow):
            k.log.flow(change.goal_id, change.text)
        elif isinstance(change, Decision):
            k.log.decision(change.goal_id, change.decision, candidates=list(change.candidates),
                           chosen=change.chosen, rationale=change.rationale, **dict(change.extra))
        elif isinstance(change, Reopen):
            invalidated = k.tree.reopen(change.goal_id, change.to, change.changes)
            k.log.flow(change.goal_id, f"{change.flow}; {invalidated.said()}")
        else:
            k.refuse_goal(change.goal, change.reason, change.detail, **dict(change.facts))


def first_request(body: Effects[N], answer: Any = None) -> Request | Done[N]:
    """Advance a step (sent ``answer`` if it is under way) to its next request, or to its
    end when it asks for nothing more; nothing is performed or applied."""
    try:
        return body.send(answer)
    except StopIteration as stop:
        done: Done[N] = stop.value
        return done


__all__ = ["Recall", "apply", "drive", "first_request", "perform"]
