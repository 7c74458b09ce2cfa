"""What BUILD and HIRE share about capability requests: how a request is identified (its
fingerprint and budget class), and what a parked goal changes when it may go on."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from kernel.core.budget import Amount
from kernel.core.envelopes import canonical_json
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.state_machine import Status
from kernel.core.units import micros_to_usd, ms_to_seconds
from kernel.solve.effects import Transition, UpdateGoal

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


def retried(goal: GoalNode, changes: GoalChanges) -> Transition | UpdateGoal:
    """The change that sends a goal back to resolver selection with ``changes``, from
    where it stands."""
    if goal.status == S.VERIFYING:  # UNSAT, retry with another resolver
        return Transition(goal.id, S.SELECTING_RESOLVER, changes)
    # selecting a resolver already, or pending (next_action selects one)
    return UpdateGoal(goal.id, goal.status, changes)


def resumed(goal: GoalNode, gap: dict[str, Any], retry: bool) -> GoalChanges:
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


def budget_gap(goal: GoalNode, operation: str, estimate: Amount, remaining: Amount,
               tree: Mapping[str, Amount] | None = None) -> dict[str, Any]:
    """A budget denial as a request: scoped to the goal and operation that needed more.
    ``remaining`` is what the goal could draw on (its own and the goals' above it);
    ``tree`` (``BudgetEnforcer.tree_holdings``) what the whole tree holds, so the
    question says it: more is asked only when the tree cannot pay."""
    cls = budget_class(remaining.cost)
    needed = Amount(max(estimate.cost - remaining.cost, 0), max(estimate.time - remaining.time, 0))
    gap: dict[str, Any] = {
        "capability_tag": BUDGET_TAG, "build_constraints": [], "buildable": False,
        "rationale": f"{operation} needs ${micros_to_usd(needed.cost)} and "
                     f"{ms_to_seconds(needed.time)}s more than the goal and the goals above "
                     "it hold",
        "needed_usd": micros_to_usd(needed.cost), "needed_seconds": ms_to_seconds(needed.time),
        "budget_class": cls,
        "fingerprint": request_fingerprint(BUDGET_TAG, [], cls, scope=f"{goal.id}:{operation}")}
    if tree is not None:
        reachable, elsewhere = tree["reachable"], tree["elsewhere"]
        gap["rationale"] += (
            f"; the tree holds ${micros_to_usd(reachable.cost + elsewhere.cost)} and "
            f"{ms_to_seconds(reachable.time + elsewhere.time)}s: "
            f"${micros_to_usd(reachable.cost)} and {ms_to_seconds(reachable.time)}s with the "
            f"goal and above it, ${micros_to_usd(elsewhere.cost)} and "
            f"{ms_to_seconds(elsewhere.time)}s kept by its other open parts for their own "
            "work (resolved parts gave back what they did not spend)")
        gap["tree_holds"] = {"reachable_usd": micros_to_usd(reachable.cost),
                             "reachable_seconds": ms_to_seconds(reachable.time),
                             "elsewhere_usd": micros_to_usd(elsewhere.cost),
                             "elsewhere_seconds": ms_to_seconds(elsewhere.time)}
    return gap
