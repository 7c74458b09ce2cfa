"""A decomposed goal whose children have all resolved: resolved once its constraints hold
over its parts (the root after the global consistency check, with its assembled artifact)."""

from __future__ import annotations

from kernel.core.goal_node import GoalChanges
from kernel.solve import composite, moves
from kernel.solve.effects import Done, Flow, StepChanges, Transition, Wake
from kernel.solve.steps._shared import S
from kernel.solve.verification import is_arithmetic
from kernel.solve.view import StepView


def compose(view: StepView, move: moves.Compose) -> Done[list[str] | moves.Consistency
                                                          | moves.Assemble]:
    """A decomposed goal whose children have all resolved resolves once its arithmetic
    constraints hold over them (`kernel/solve/composite.py`, below); the root only after
    steps 12 and 13."""
    goal = view.goal(move.goal.id)
    checked = StepChanges()
    arithmetic = [c for c in view.constraints(view.roles(goal.id)["selected"])
                  if is_arithmetic(c)]
    if arithmetic:
        facts, missing = view.subtree_facts(goal)
        checked, again = composite.judged(goal, arithmetic, facts, missing,
                                          view.config.max_reopens)
        if again is not None:
            return Done(again, checked)
    if not goal.parent_id:
        if (goal.feedback or {}).get("assembly"):  # consistent already: assembling again
            return Done(moves.Assemble(goal), checked)
        return Done(moves.Consistency(goal), checked)
    woken = view.wakes(goal)
    return Done(woken, checked + StepChanges((
        Wake(tuple(woken)), Transition(goal.id, S.RESOLVED, GoalChanges(leaf_kind=None)),
        Flow(goal.id, "resolved: every child is resolved"))))
