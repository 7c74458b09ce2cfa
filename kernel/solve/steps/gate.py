"""The gate: sigma_path below tau_global blocks decomposition and backtracks to the
weakest ancestor (B7), with a bounded number of reopenings."""

from __future__ import annotations

from kernel.core.confidence import weakest_ancestor
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.refusal import RefusalReason, remedy
from kernel.solve import moves
from kernel.solve.effects import (
    Decision,
    Done,
    Flow,
    Refusal,
    Reopen,
    StepChanges,
    StoreVerification,
    Transition,
    Wake,
)
from kernel.solve.steps._shared import S
from kernel.solve.view import StepView


def gate(view: StepView, move: moves.Gate) -> Done[list[str]]:
    """σ_path < τ_global blocks decomposition; the weakest ancestor (deepest on ties) is
    reopened and its subtree invalidated (B7); after 3 reopenings of the same goal the run
    refuses with `CONTRADICTION_BUDGET_EXCEEDED` instead of looping."""
    # A verification still pending rides the move to DECOMPOSING; a backtrack reads and
    # moves more than this goal, so it is stored first there.
    goal, sigma_path = move.goal, move.sigma_path
    if sigma_path < goal.tau_global:
        gated = StepChanges((StoreVerification(), Transition(goal.id, S.GATED, GoalChanges(
            gated_reason=f"sigma_path {sigma_path} < tau_global {goal.tau_global}"))))
        return backtrack(view, goal, gated)
    return Done([goal.id], StepChanges((Wake((goal.id,)), Transition(goal.id, S.DECOMPOSING))))


def backtrack(view: StepView, gated: GoalNode, changes: StepChanges) -> Done[list[str]]:
    """B7: reopen the weakest ancestor on the path (deepest on ties) and invalidate below.
    (The gated goal's own sigma_v, which a pending verification may not have stored yet,
    decides nothing here: it is the target only when no goal above it is judged.)"""
    path = view.path(gated.id)
    weakest = weakest_ancestor(path[:-1]) or weakest_ancestor(path)
    target = gated.id if weakest is None else weakest
    reopened = view.goal(target).reopened
    limit = view.config.max_reopens
    if reopened >= limit:
        facts = (("count", str(reopened)), ("limit", str(limit)))
        said = remedy(RefusalReason.CONTRADICTION_BUDGET_EXCEEDED, view.run_id, **dict(facts))
        return Done([gated.parent_id] if gated.parent_id else [], changes + StepChanges((
            Refusal(target, RefusalReason.CONTRADICTION_BUDGET_EXCEEDED,
                    f"confidence stayed below tau_global after {reopened} reopenings", facts),
            Transition(gated.id, S.PENDING), Transition(gated.id, S.INFEASIBLE),
            Flow(gated.id, f"infeasible: {said}"))))
    again = GoalChanges(reopened=reopened + 1)
    if target == gated.id:  # nothing above to blame: rerun it
        return Done([gated.id], changes + StepChanges((
            Transition(gated.id, S.PENDING), Reopen(gated.id, S.SELECTING_RESOLVER, again))))
    return Done([target], changes + Reopen(target, S.SELECTING_RESOLVER, again, Decision(
        gated.id, "backtrack", tuple(p.id for p in path), target,
        "weakest sigma_v on the path")))
