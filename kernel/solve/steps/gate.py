"""The gate: sigma_path below tau_global blocks decomposition and backtracks to the
weakest ancestor (B7), with a bounded number of reopenings."""

from __future__ import annotations

from kernel.core.confidence import weakest_ancestor
from kernel.core.goal_node import GoalChanges
from kernel.refusal import RefusalReason, refuse
from kernel.runtime.kernel import Kernel
from kernel.solve import moves
from kernel.solve.steps._shared import (
    S,
    wake_parent,
)


def gate(k: Kernel, move: moves.Gate) -> list[str]:
    """σ_path < τ_global blocks decomposition; the weakest ancestor (deepest on ties) is
    reopened and its subtree invalidated (B7); after 3 reopenings of the same goal the run
    refuses with `CONTRADICTION_BUDGET_EXCEEDED` instead of looping."""
    # A verification still pending rides the move to DECOMPOSING; a backtrack reads and
    # moves more than this goal, so it is stored first there.
    goal, sigma_path = move.goal, move.sigma_path
    goal_id = goal.id
    if sigma_path < goal.tau_global:
        k.run.store_verification()
        k.tree.transition(goal_id, S.GATED, GoalChanges(gated_reason=f"sigma_path {sigma_path} < "
                                                            f"tau_global {goal.tau_global}"))
        return backtrack(k, goal_id)
    k.run.will_wake([goal_id])
    k.tree.transition(goal_id, S.DECOMPOSING)
    return [goal_id]


def backtrack(k: Kernel, gated_id: str) -> list[str]:
    """B7: reopen the weakest ancestor on the path (deepest on ties) and invalidate below."""
    path = k.confidence.path(gated_id)
    weakest = weakest_ancestor(path[:-1]) or weakest_ancestor(path)
    target = gated_id if weakest is None else weakest
    reopened = k.tree.get(target).reopened
    if reopened >= k.config.max_reopens:
        report = refuse(k.ledger, target, RefusalReason.CONTRADICTION_BUDGET_EXCEEDED,
                        f"confidence stayed below tau_global after {reopened} reopenings",
                        count=str(reopened), limit=str(k.config.max_reopens))
        k.tree.transition(gated_id, S.PENDING)
        k.tree.transition(gated_id, S.INFEASIBLE)
        k.log.flow(gated_id, f"infeasible: {report.to_proceed[0]}")
        return wake_parent(k, k.tree.get(gated_id))
    if target == gated_id:
        k.tree.transition(gated_id, S.PENDING)  # nothing above to blame: rerun it
        k.tree.reopen(gated_id, S.SELECTING_RESOLVER, GoalChanges(reopened=reopened + 1))
        return [gated_id]
    invalidated = k.tree.reopen(target, S.SELECTING_RESOLVER, GoalChanges(reopened=reopened + 1))
    k.log.decision(gated_id, "backtrack", candidates=[p.id for p in path], chosen=target,
                   rationale=f"weakest sigma_v on the path; {invalidated.said()}")
    return [target]
