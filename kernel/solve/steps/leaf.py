"""Step 7, leaf: a verified goal that is a leaf resolves; one that is not goes through the
gate towards decomposition."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.kg import reuse
from kernel.proposals import Proposal
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.solve import moves
from kernel.solve.effects import Done, Effects, Flow, ModelCall, Request, StepChanges, Transition, Wake
from kernel.solve.steps._shared import S, request_for
from kernel.solve.view import StepView


def classify(view: StepView, move: moves.Leaf) -> Effects[list[str] | moves.Gate]:
    """Proposal `classify_leaf` (at the depth cap: constraint_exhausted without a call); a
    leaf is resolved, any other goal goes through the gate."""
    goal, sigma_path = move.goal, move.sigma_path
    if goal.depth >= view.config.max_depth:
        leaf = models.LeafClassification(is_leaf=True, leaf_kind="constraint_exhausted",
                                         leaf_reason="maximum depth reached")
    else:
        leaf = yield from _classification(view, goal)
    if not leaf.is_leaf:
        return Done(moves.Gate(goal, sigma_path))
    changes = GoalChanges(leaf_kind=leaf.leaf_kind or "atomic", leaf_reason=leaf.leaf_reason)
    if goal.is_root:  # a leaf root is its own final artifact
        changes |= GoalChanges(final_artifact_id=goal.output_artifact_id,
                               sigma_system=sigma_path)
    woken = view.wakes(goal)
    kind = leaf.leaf_kind or "atomic"
    said = f"resolved as {'an' if kind[0] in 'aeiou' else 'a'} {kind} leaf (sigma_v={goal.sigma_v})"
    return Done(woken, StepChanges((Wake(tuple(woken)), Transition(goal.id, S.RESOLVED, changes),
                                    Flow(goal.id, said))))


def _classification(view: StepView,
                    goal: GoalNode) -> Generator[Request, Any, models.LeafClassification]:
    """The record of the goal's kind when it settles the question, else the model's."""
    recall = view.leaf_record(goal)
    if recall is not None:
        found = yield recall
        if found is not None:
            return reuse.leaf_classification(found)
    request = request_for(goal, ops.CLASSIFY_LEAF,
                          view.constraints(view.roles(goal.id)["selected"]),
                          output=view.stored_output(goal.output_artifact_id),
                          inherited=view.inherited(goal))
    proposal: Proposal[models.LeafClassification] = yield ModelCall(ops.CLASSIFY_LEAF, request)
    return proposal.output
