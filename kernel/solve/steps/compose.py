"""A decomposed goal whose children have all resolved: resolved once its constraints hold
over its parts (the root after the global consistency check, with its assembled artifact)."""

from __future__ import annotations

from kernel.core.goal_node import GoalChanges
from kernel.runtime.kernel import Kernel
from kernel.solve import composite, moves
from kernel.solve.steps._shared import (
    S,
    wake_dependents,
)


def compose(k: Kernel, move: moves.Compose) -> list[str] | moves.Consistency | moves.Assemble:
    """A decomposed goal whose children have all resolved resolves once its arithmetic
    constraints hold over them (`kernel/solve/composite.py`, below); the root only after
    steps 12 and 13."""
    goal_id = move.goal.id
    goal = k.tree.get(goal_id)
    again = composite.check(k, goal)
    if again is not None:
        return again
    if not goal.parent_id:
        if (goal.feedback or {}).get("assembly"):  # consistent already: assembling again
            return moves.Assemble(goal)
        return moves.Consistency(goal)
    woken = wake_dependents(k, goal)
    k.run.will_wake(woken)
    k.tree.transition(goal_id, S.RESOLVED, GoalChanges(leaf_kind=None))
    k.log.flow(goal_id, "resolved: every child is resolved")
    return woken
