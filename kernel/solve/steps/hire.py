"""Step 11, HIRE: ask a human for what the system could neither find nor build.

A capability request is identified by its fingerprint, sha256 of the canonical
{capability_tag, build_constraints, budget_class} (a budget request also names its goal
and operation, since more money for one goal says nothing about another). The same
fingerprint is never asked twice: a declined request ends the goals that need it, an
open one parks them together, a delivered one hands them its tool. A parked goal
waits in the graph; the answer, from ``kernel hire answer`` or the terminal, is recorded
in the ledger when the kernel applies it.

Both steps are effect producers: they read the requests and the budget through the
view, ask the person with a ``HireQuestion`` (the loop records the answer, or finds
none yet), take the ids their commits create with ``NewId``, and return the request
raised, or the answer applied, as their changes.
"""

from __future__ import annotations

from typing import Any

from kernel.core.envelopes import canonical_json
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.state_machine import Status, check_transition
from kernel.core.units import micros_to_usd, ms_to_seconds, seconds_to_ms, usd_to_micros
from kernel.proposals import Proposal
from kernel.protocol import HireAnswer
from kernel.protocol import operations as ops
from kernel.protocol.resolver_ids import HUMAN_ID
from kernel.refusal import RefusalReason
from kernel.repositories.requests import Request
from kernel.solve import moves
from kernel.solve.capability_requests import BUDGET_TAG, resumed, retried
from kernel.solve.effects import (
    DeclineRequest,
    Done,
    Effects,
    Flow,
    GrantBudget,
    HireQuestion,
    NewId,
    OpenRequest,
    Refusal,
    RefuseGoal,
    RegisterTool,
    StepChanges,
)
from kernel.solve.steps._shared import wake_parent
from kernel.solve.view import StepView

S = Status


def hire(view: StepView, move: moves.Hire) -> Effects[list[str]]:
    """A capability request by fingerprint, never asked twice; the goal is parked (moved
    to the move's status); the answer (a tool, more budget, or a refusal) is a recorded
    proposal from `actor:human`. A request declined before refuses the goal; one delivered
    before hands over its tool, unless that tool already failed here."""
    goal, gap, reason, to = move.goal, move.gap, move.reason, move.to
    fingerprint = gap["fingerprint"]
    existing = view.request_raised(fingerprint)
    tried = {a.resolver_id for a in view.tried(goal)}
    if existing and existing["status"] == "declined":
        return Done(wake_parent(goal), StepChanges((RefuseGoal(
            goal, RefusalReason.HIRE_DECLINED,
            f"{existing['id']} for '{gap['capability_tag']}' was declined before; "
            "the same request is never asked twice",
            (("capability", gap["capability_tag"]),)),)))
    if existing and existing["status"] == "delivered":
        delivered = existing.get("resolver_id")
        if delivered and delivered not in tried:
            return Done([goal.id], _hand_over(goal, delivered, gap))
        return Done(wake_parent(goal), StepChanges((RefuseGoal(
            goal, RefusalReason.ATTEMPTS_EXHAUSTED,
            f"{existing['id']} was answered before and the answer did not satisfy "
            "this goal; the same request is never asked twice",
            (("attempts", str(goal.attempt_count)),
             ("constraints", f"the '{gap['capability_tag']}' request"))),)))
    current = goal.status
    if current != to:
        check_transition(current, to)
    request_id, seq = yield NewId("capreq")  # taken even to join an open request
    props = {"id": request_id, "fingerprint": fingerprint,
             "capability_tag": gap["capability_tag"], "reason": reason, "status": "requested",
             "budget_class": gap["budget_class"], "rationale": gap.get("rationale", ""),
             "build_constraints": canonical_json(gap.get("build_constraints", [])),
             "run_id": view.run_id, "goal_id": goal.id, "seq": seq,
             "caption": f"requested: {gap['capability_tag']}"}
    awaited = existing["id"] if existing else request_id  # the request the commit finds
    parked = OpenRequest(
        goal.id, current, to, (move.changes or GoalChanges()) | GoalChanges(
            awaiting=awaited, capability_gap=gap),
        fingerprint, gap["capability_tag"], tuple(props.items()), move.supersede)
    return Done([goal.id], StepChanges((parked, Flow(
        goal.id, f"HIRE ({reason}): a human is asked for '{gap['capability_tag']}' "
                 f"({awaited})"))))


def on_answer(view: StepView, move: moves.HireAnswered) -> Effects[list[str] | moves.Hire]:
    """A goal parked on a request: apply its answer, or keep waiting; a request that was
    answered meanwhile by someone else goes back through HIRE."""
    goal = move.goal
    request = view.capability_request(goal.require("awaiting"))
    assert request is not None, goal.awaiting  # a goal parks on a request it raised
    gap = goal.gap()
    if request["status"] == "declined":
        return Done(moves.Hire(goal, gap, request["reason"], goal.status))
    if request["status"] == "delivered":
        if request.get("resolver_id"):
            return Done([goal.id], _hand_over(goal, request["resolver_id"], gap))
        return Done(moves.Hire(goal, gap, request["reason"], goal.status))
    left = view.budget_left(goal.id)
    payload = {"request_id": request["id"], "capability_tag": request["capability_tag"],
               "reason": request["reason"], "rationale": request.get("rationale", ""),
               "goal_summary": goal.summary,
               "remaining_usd": micros_to_usd(left.cost),
               "remaining_seconds": ms_to_seconds(left.time),
               "attempts": goal.attempt_count}
    proposal: Proposal[HireAnswer] | None = yield HireQuestion(ops.HIRE.request(
        goal_id=goal.id, goal_description=goal.description, payload=payload))
    if proposal is None:  # nobody answers now: the goal stays parked
        return Done([])
    answer = proposal.output
    if answer.kind == "decline":
        return _declined(goal, request, gap, answer)
    if answer.kind == "add_budget":
        event_id, _ = yield NewId("budget")
        return Done([goal.id], StepChanges((GrantBudget(
            goal.id, goal.status, request["id"], answer.model_dump_json(),
            usd_to_micros(answer.add_usd), seconds_to_ms(answer.add_seconds), event_id,
            resumed(goal, gap, retry=request["reason"] != "over_budget")), Flow(
            goal.id, f"HIRE answered: +${answer.add_usd} and +{answer.add_seconds}s"))))
    return _registered(view, goal, request, gap, answer)


def _declined(goal: GoalNode, request: Request, gap: dict[str, Any],
              answer: HireAnswer) -> Done[list[str]]:
    """The person declined: the goal is refused for what it asked (a capability, or
    more budget), and the request is never asked again."""
    detail = f"{request['id']}: {answer.note or 'declined'}"
    if gap["capability_tag"] == BUDGET_TAG:
        refusal = Refusal(goal.id, RefusalReason.BUDGET_EXHAUSTED, detail,
                          (("needed_usd", gap["needed_usd"]),
                           ("needed_seconds", gap["needed_seconds"])))
    else:
        refusal = Refusal(goal.id, RefusalReason.HIRE_DECLINED, detail,
                          (("capability", gap["capability_tag"]),))
    check_transition(goal.status, S.INFEASIBLE)
    return Done(wake_parent(goal), StepChanges((
        refusal, DeclineRequest(goal.id, goal.status, request["id"], answer.model_dump_json()),
        Flow(goal.id, f"infeasible: the human declined '{gap['capability_tag']}'"))))


def _registered(view: StepView, goal: GoalNode, request: Request, gap: dict[str, Any],
                answer: HireAnswer) -> Done[list[str]]:
    """The person gave a tool: it is registered as a reusable resolver (replacing those
    the goal tried) and the goal goes on with it."""
    assert answer.tool is not None
    resolver_id = answer.tool.id or f"resolver:{gap['capability_tag'].replace('_', '-')}-" \
                                    f"{request['id'][-8:].lower()}"
    return Done([goal.id], StepChanges((RegisterTool(
        answer.tool, resolver_id, goal, HUMAN_ID, lineage_inputs=(),
        replaces=tuple(sorted({a.resolver_id for a in view.tried(goal)})),
        goal_changes=resumed(goal, gap, retry=request["reason"] != "over_budget"),
        key=request["id"], request_id=request["id"]),
        Flow(goal.id, f"HIRE answered: a human registered {resolver_id}"))))


def _hand_over(goal: GoalNode, resolver_id: str, gap: dict[str, Any]) -> StepChanges:
    """The request was answered for another goal: this one uses the same tool, unasked."""
    return StepChanges((retried(goal, resumed(goal, gap, retry=True)),
                        Flow(goal.id, f"uses {resolver_id}, delivered for the same request "
                                      "before")))
