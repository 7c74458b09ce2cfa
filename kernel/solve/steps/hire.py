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

import hashlib
from typing import Any

from kernel.core.envelopes import canonical_json
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.state_machine import Status, check_transition
from kernel.core.units import micros_to_usd, ms_to_seconds, seconds_to_ms, usd_to_micros
from kernel.errors import KernelError
from kernel.protocol import HireAnswer
from kernel.protocol import operations as ops
from kernel.protocol.intake_models import IntakeAnswer
from kernel.refusal import RefusalReason, refuse
from kernel.runtime.gate import ask
from kernel.runtime.kernel import Kernel
from kernel.solve.tools import register
from kernel.store.base import GraphStore
from resolvers.human import HUMAN_ID, HumanProposer, Parked

S = Status
BUDGET_TAG = "budget"
# Upper bounds of the budget classes, in micro-dollars of the goal's remaining budget.
BUDGET_CLASSES = ((100_000, "under_0.10_usd"), (1_000_000, "under_1_usd"),
                  (10_000_000, "under_10_usd"), (100_000_000, "under_100_usd"))


def budget_class(remaining_micros: int) -> str:
    for bound, name in BUDGET_CLASSES:
        if remaining_micros < bound:
            return name
    return "100_usd_or_more"


def request_fingerprint(capability_tag: str, build_constraints: list[dict[str, Any]],
                        budget_cls: str, scope: str | None = None) -> str:
    constraints = sorted(({k: c.get(k) for k in ("type", "domain", "title", "payload")}
                          for c in build_constraints), key=canonical_json)
    body = {"capability_tag": capability_tag, "build_constraints": constraints,
            "budget_class": budget_cls}
    if scope is not None:
        body["scope"] = scope
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()


def hire(k: Kernel, goal: GoalNode, gap: dict[str, Any], reason: str,
         to: Status, changes: GoalChanges | None = None, supersede: bool = False) -> list[str]:
    """Park the goal on the request for ``gap`` (moving it to ``to``), unless the same
    request was already declined (the goal is refused) or delivered to no avail.
    ``supersede``: the goal's earlier request of the same tag is done with (delivered)."""
    fingerprint = gap["fingerprint"]
    rows = k.store.run("hire/by_fingerprint", {"fingerprint": fingerprint})
    existing = rows[0]["request"] if rows else None
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
    opened = k.run.commit("hire/open", {
        "goal_id": goal.id, "from": current.value, "to": to.value,
        "changes": ((changes or GoalChanges()) | GoalChanges(
            awaiting=props["id"] if not existing else existing["id"],
            capability_gap=gap)).to_properties(),
        "fingerprint": fingerprint, "capability_tag": gap["capability_tag"], "props": props,
        "supersede": supersede,
    }, what=f"park {goal.id} on a HIRE request")
    k.log.flow(goal.id, f"HIRE ({reason}): a human is asked for '{gap['capability_tag']}' "
                           f"({opened[0]['id']})")
    return [goal.id]


def on_answer(k: Kernel, goal: GoalNode) -> list[str]:
    """A goal parked on a request: apply its answer, or keep waiting."""
    request = k.store.run("hire/get", {"id": goal.require("awaiting")})[0]["request"]
    gap = goal.gap()
    if request["status"] == "declined":
        return hire(k, goal, gap, request["reason"], goal.status)
    if request["status"] == "delivered":
        if request.get("resolver_id"):
            return _hand_over(k, goal, request["resolver_id"], gap)
        return hire(k, goal, gap, request["reason"], goal.status)
    payload = {"request_id": request["id"], "capability_tag": request["capability_tag"],
               "reason": request["reason"], "rationale": request.get("rationale", ""),
               "goal_summary": goal.summary,
               "remaining_usd": micros_to_usd(k.budget.remaining(goal.id).cost),
               "remaining_seconds": ms_to_seconds(k.budget.remaining(goal.id).time),
               "attempts": goal.attempt_count}
    human = HumanProposer(k.store, k.human_prompt)
    try:
        proposal = ask(k, goal.id, ops.HIRE, ops.HIRE.request(
            goal_id=goal.id, goal_description=goal.description,
            payload=payload), resolver_id=HUMAN_ID, proposer=human)
    except Parked:
        return []
    answer: HireAnswer = proposal.output
    return _apply(k, goal, request, gap, answer)


def _apply(k: Kernel, goal: GoalNode, request: dict[str, Any], gap: dict[str, Any],
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
        k.run.commit("hire/decline", {"goal_id": goal.id, "status": status.value,
                                      "request_id": request["id"], "answer": recorded},
                     what=f"decline {request['id']}")
        k.log.flow(goal.id, f"infeasible: the human declined '{gap['capability_tag']}'")
        return [goal.parent_id] if goal.parent_id else []
    if answer.kind == "add_budget":
        k.run.commit("hire/add_budget", {
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


def retry_with(k: Kernel, goal: GoalNode, changes: GoalChanges) -> None:
    """Send a goal back to resolver selection with ``changes``, from where it stands."""
    status = goal.status
    if status == S.VERIFYING:  # UNSAT, retry with another resolver
        k.tree.transition(goal.id, S.SELECTING_RESOLVER, changes)
    else:  # selecting a resolver already, or pending (next_action selects one)
        k.tree.update(goal.id, status, changes)


def resume_changes(k: Kernel, goal: GoalNode, gap: dict[str, Any],
                   retry: bool) -> GoalChanges:
    """What a goal parked on BUILD or HIRE changes when it may go on: ``retry`` sends it
    back to resolver selection with a fresh allowance of tries (and the gap's capability
    when that names a tool); otherwise it continues the step it was parked in."""
    if not retry:
        return GoalChanges(awaiting=None)
    allowance = goal.try_allowance or goal.max_attempts
    changes = GoalChanges(awaiting=None, plan_artifact_id=None, output_artifact_id=None,
                          max_attempts=goal.attempt_count + allowance)
    if gap["capability_tag"] != BUDGET_TAG:
        changes |= GoalChanges(required_capabilities=[gap["capability_tag"]])
    return changes


class HireAnswerError(KernelError):
    """An answer cannot be recorded for that request; the message says why."""


INTAKE_TAG = "goal_intake"  # the requests that hold step 1's questions


def record_answer(store: GraphStore, request_id: str, answer: HireAnswer | IntakeAnswer) -> None:
    """Store a human's answer for the kernel to apply on resume (``kernel hire answer``):
    an intake question takes an intake answer (or a refusal), any other request a HIRE
    answer."""
    rows = store.run("hire/get", {"id": request_id})
    if not rows:
        raise HireAnswerError(f"no capability request {request_id!r}; 'kernel hire list' "
                              "shows the open ones")
    status = rows[0]["request"]["status"]
    if status != "requested":
        raise HireAnswerError(f"{request_id} is {status}, not open: a request is answered once")
    asks_intake = rows[0]["request"]["capability_tag"] == INTAKE_TAG
    if asks_intake and isinstance(answer, HireAnswer) and answer.kind != "decline":
        raise HireAnswerError(f"{request_id} asks about the goal itself: answer with --intake "
                              "FILE (or --decline to reject the goal)")
    if not asks_intake and isinstance(answer, IntakeAnswer):
        raise HireAnswerError(f"{request_id} asks for a capability, not about the goal: "
                              "answer with --resolver, --add-budget or --decline")
    tool = answer.tool if isinstance(answer, HireAnswer) else None
    if tool is not None and tool.id and store.run("registry/get", {"id": tool.id}):
        raise HireAnswerError(f"a resolver {tool.id} is already registered: give the "
                              "tool another id")
    if not store.run("hire/record_answer", {"id": request_id, "answer": answer.model_dump_json()}):
        raise HireAnswerError(f"{request_id} was answered meanwhile")


def list_requests(store: GraphStore, statuses: list[str] | None = None) -> list[dict[str, Any]]:
    return [{**r["request"], "goals": [g for g in r["goals"] if g.get("id")]}
            for r in store.run("hire/list", {"statuses": statuses or []})]


def runs_waiting_on(store: GraphStore, request_id: str) -> list[str]:
    """The runs with a goal parked on the request (the ones to resume once answered)."""
    return sorted({g["run_id"] for r in list_requests(store) if r["id"] == request_id
                   for g in r["goals"] if g.get("run_id")})
