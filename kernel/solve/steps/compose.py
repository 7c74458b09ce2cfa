"""A decomposed goal whose children have all resolved: resolved once its constraints hold
over its parts (the root after the global consistency check, with its assembled artifact)."""

from __future__ import annotations

from kernel.core.goal_node import GoalChanges
from kernel.runtime.kernel import Kernel
from kernel.solve import composite
from kernel.solve.steps import consistency
from kernel.solve.steps._shared import (
    S,
    wake_dependents,
)
from kernel.solve.steps.assemble import assemble


def compose(k: Kernel, goal_id: str) -> list[str]:
    """All children resolved: the decomposed goal is resolved once its arithmetic
    constraints hold over its parts (the root only after the global consistency check,
    with its assembled artifact)."""
    goal = k.tree.get(goal_id)
    again = composite.check(k, goal)
    if again is not None:
        return again
    if not goal.parent_id:
        if (goal.feedback or {}).get("assembly"):  # consistent already: assembling again
            return assemble(k, goal)
        again = consistency.check(k, goal)
        return again if again is not None else assemble(k, goal)
    woken = wake_dependents(k, goal)
    k.run.will_wake(woken)
    k.tree.transition(goal_id, S.RESOLVED, GoalChanges(leaf_kind=None))
    k.log.flow(goal_id, "resolved: every child is resolved")
    return woken
