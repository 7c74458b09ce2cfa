"""Step 11, HIRE: ask a human for what the system could neither find nor build.

A capability request is identified by its fingerprint, sha256 of the canonical
{capability_tag, build_constraints, budget_class} (a budget request also names its goal
and operation, since more money for one goal says nothing about another). The same
fingerprint is never asked twice: a declined request ends the goals that need it, an
open one parks them together, a delivered one hands them its tool. A parked goal
waits in the graph; the answer, from ``kernel hire answer`` or the terminal, is recorded
in the ledger when the kernel applies it.
"""

from __future__ import annotations

from typing import Any

from kernel.core.envelopes import canonical_json
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.state_machine import Status, check_transition
from kernel.core.units import micros_to_usd, ms_to_seconds, seconds_to_ms, usd_to_micros
from kernel.protocol import HireAnswer
from kernel.protocol import operations as ops
from kernel.protocol.errors import Parked
from kernel.protocol.resolver_ids import HUMAN_ID
from kernel.refusal import RefusalReason, refuse
from kernel.repositories import requests
from kernel.runtime.gate import ask
from kernel.runtime.installed import resolvers
from kernel.runtime.kernel import Kernel
from kernel.solve import moves
from kernel.solve.capability_requests import BUDGET_TAG, resume_changes, retry_with
from kernel.solve.tools import register

S = Status


def hire(k: Kernel, move: moves.Hire) -> list[str]:
    """A capability request by fingerprint, never asked twice; the goal is parked (moved
    to the move's status); the answer (a tool, more budget, or a refusal) is a recorded
    proposal from `actor:human`. A request declined before refuses the goal; one delivered
    before hands over its tool, unless that tool already failed here."""
    goal, gap, reason, to = move.goal, move.gap, move.reason, move.to
    changes, supersede = move.changes, move.supersede
    fingerprint = gap["fingerprint"]
    existing = requests.by_fingerprint(k.store, fingerprint)
    tried = {a.resolver_id for a in k.attempts.of_goal(goal.id)}
    if existing and existing["status"] == "declined":
        return k.refuse_goal(goal, RefusalReason.HIRE_DECLINED,
                       f"{existing['id']} for '{gap['capability_tag']}' was declined before; "
                       "the same request is never asked twice", capability=gap["capability_tag"])
    if existing and existing["status"] == "delivered":
        delivered = existing.get("resolver_id")
        if delivered and delivered not in tried:
            return _hand_over(k, goal, delivered, gap)
        return k.refuse_goal(goal, RefusalReason.ATTEMPTS_EXHAUSTED,
                       f"{existing['id']} was answered before and the answer did not satisfy "
                       "this goal; the same request is never asked twice",
                       attempts=str(goal.attempt_count),
                       constraints=f"the '{gap['capability_tag']}' request")
    current = goal.status
    if current != to:
        check_transition(current, to)
    props = {"id": k.run.new_id("capreq"), "fingerprint": fingerprint,
             "capability_tag": gap["capability_tag"], "reason": reason, "status": "requested",
             "budget_class": gap["budget_class"], "rationale": gap.get("rationale", ""),
             "build_constraints": canonical_json(gap.get("build_constraints", [])),
             "run_id": k.run.run_id, "goal_id": goal.id, "seq": k.run.seq,
             "caption": f"requested: {gap['capability_tag']}"}
    opened = requests.open_request(k.run, {
        "goal_id": goal.id, "from": current.value, "to": to.value,
        "changes": ((changes or GoalChanges()) | GoalChanges(
            awaiting=props["id"] if not existing else existing["id"],
            capability_gap=gap)).to_properties(),
        "fingerprint": fingerprint, "capability_tag": gap["capability_tag"], "props": props,
        "supersede": supersede,
    }, what=f"park {goal.id} on a HIRE request")
    k.log.flow(goal.id, f"HIRE ({reason}): a human is asked for '{gap['capability_tag']}' "
                           f"({opened})")
    return [goal.id]


def on_answer(k: Kernel, move: moves.HireAnswered) -> list[str] | moves.Hire:
    """A goal parked on a request: apply its answer, or keep waiting; a request that was
    answered meanwhile by someone else goes back through HIRE."""
    goal = move.goal
    request = requests.get(k.store, goal.require("awaiting"))
    assert request is not None, goal.awaiting  # a goal parks on a request it raised
    gap = goal.gap()
    if request["status"] == "declined":
        return moves.Hire(goal, gap, request["reason"], goal.status)
    if request["status"] == "delivered":
        if request.get("resolver_id"):
            return _hand_over(k, goal, request["resolver_id"], gap)
        return moves.Hire(goal, gap, request["reason"], goal.status)
    payload = {"request_id": request["id"], "capability_tag": request["capability_tag"],
               "reason": request["reason"], "rationale": request.get("rationale", ""),
               "goal_summary": goal.summary,
               "remaining_usd": micros_to_usd(k.budget.remaining(goal.id).cost),
               "remaining_seconds": ms_to_seconds(k.budget.remaining(goal.id).time),
               "attempts": goal.attempt_count}
    human = resolvers().hire_human(k.run, k.human_prompt)
    try:
        proposal = ask(k, goal.id, ops.HIRE, ops.HIRE.request(
            goal_id=goal.id, goal_description=goal.description,
            payload=payload), resolver_id=HUMAN_ID, proposer=human)
    except Parked:
        return []
    answer: HireAnswer = proposal.output
    return _apply(k, goal, request, gap, answer)


def _apply(k: Kernel, goal: GoalNode, request: requests.Request, gap: dict[str, Any],
           answer: HireAnswer) -> list[str]:
    status = goal.status
    recorded = answer.model_dump_json()
    if answer.kind == "decline":
        detail = f"{request['id']}: {answer.note or 'declined'}"
        if gap["capability_tag"] == BUDGET_TAG:
            refuse(k.ledger, goal.id, RefusalReason.BUDGET_EXHAUSTED, detail,
                   needed_usd=gap["needed_usd"], needed_seconds=gap["needed_seconds"])
        else:
            refuse(k.ledger, goal.id, RefusalReason.HIRE_DECLINED, detail,
                   capability=gap["capability_tag"])
        check_transition(status, S.INFEASIBLE)
        requests.decline(k.run, {"goal_id": goal.id, "status": status.value,
                                      "request_id": request["id"], "answer": recorded},
                     what=f"decline {request['id']}")
        k.log.flow(goal.id, f"infeasible: the human declined '{gap['capability_tag']}'")
        return [goal.parent_id] if goal.parent_id else []
    if answer.kind == "add_budget":
        requests.add_budget(k.run, {
            "goal_id": goal.id, "status": status.value, "request_id": request["id"],
            "answer": recorded, "cost": usd_to_micros(answer.add_usd),
            "time": seconds_to_ms(answer.add_seconds), "event_id": k.run.new_id("budget"),
            "changes": resume_changes(k, goal, gap, retry=request["reason"] != "over_budget",
                                      ).to_properties(),
        }, what=f"add the budget {request['id']} was answered with")
        k.log.flow(goal.id, f"HIRE answered: +${answer.add_usd} and +{answer.add_seconds}s")
        return [goal.id]
    assert answer.tool is not None
    tool = answer.tool
    resolver_id = tool.id or f"resolver:{gap['capability_tag'].replace('_', '-')}-" \
                             f"{request['id'][-8:].lower()}"
    register(k, tool, resolver_id=resolver_id, goal=goal, builder_id=HUMAN_ID,
             lineage_inputs=[], replaces=sorted({a.resolver_id for a in
                                                 k.attempts.of_goal(goal.id)}),
             goal_changes=resume_changes(k, goal, gap, retry=request["reason"] != "over_budget"),
             request_id=request["id"], key=request["id"])
    k.log.flow(goal.id, f"HIRE answered: a human registered {resolver_id}")
    return [goal.id]


def _hand_over(k: Kernel, goal: GoalNode, resolver_id: str,
               gap: dict[str, Any]) -> list[str]:
    """The request was answered for another goal: this one uses the same tool, unasked."""
    retry_with(k, goal, resume_changes(k, goal, gap, retry=True))
    k.log.flow(goal.id, f"uses {resolver_id}, delivered for the same request before")
    return [goal.id]
