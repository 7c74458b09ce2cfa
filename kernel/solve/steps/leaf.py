"""Step 7, leaf: a verified goal that is a leaf resolves; one that is not goes through the
gate towards decomposition."""

from __future__ import annotations

from kernel.core.goal_node import GoalChanges
from kernel.kg import reuse
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.runtime.gate import ask
from kernel.runtime.kernel import Kernel
from kernel.solve import moves, prompt_inputs
from kernel.solve.steps._shared import (
    S,
    constraints_of,
    request_for,
    wake_dependents,
)


def classify(k: Kernel, move: moves.Leaf) -> list[str] | moves.Gate:
    """Proposal `classify_leaf` (at the depth cap: constraint_exhausted without a call); a
    leaf is resolved, any other goal goes through the gate."""
    goal, sigma_path = move.goal, move.sigma_path
    goal_id = goal.id
    if goal.depth >= k.config.max_depth:
        leaf = models.LeafClassification(is_leaf=True, leaf_kind="constraint_exhausted",
                                         leaf_reason="maximum depth reached")
    else:
        leaf = reuse.leaf_before(k, goal) or ask(
            k, goal_id, ops.CLASSIFY_LEAF, request_for(goal, ops.CLASSIFY_LEAF,
                                                       constraints_of(k, goal_id, "selected"),
                                                       output=prompt_inputs.stored_output(
                                                           k, goal.output_artifact_id),
                                                       inherited=prompt_inputs.inherited_view(
                                                           k, goal))
        ).output
    if leaf.is_leaf:
        changes = GoalChanges(leaf_kind=leaf.leaf_kind or "atomic", leaf_reason=leaf.leaf_reason)
        if goal.is_root:  # a leaf root is its own final artifact
            changes |= GoalChanges(final_artifact_id=goal.output_artifact_id,
                                   sigma_system=sigma_path)
        woken = wake_dependents(k, goal)
        k.run.will_wake(woken)
        k.tree.transition(goal_id, S.RESOLVED, changes)
        kind = leaf.leaf_kind or "atomic"
        k.log.flow(goal_id, f"resolved as {'an' if kind[0] in 'aeiou' else 'a'} {kind} leaf "
                            f"(sigma_v={goal.sigma_v})")
        return woken
    return moves.Gate(goal, sigma_path)
