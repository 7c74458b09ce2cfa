"""Step 3, select constraints (parsimony): the kernel keeps only eligible constraints the
proposal names, and always the core and coupling ones and those the part answers for."""

from __future__ import annotations

from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.runtime.gate import ask
from kernel.runtime.kernel import Kernel
from kernel.solve import moves
from kernel.solve.steps._shared import (
    S,
    by_id_or_title,
    enter,
    request_for,
)


def select_constraints(k: Kernel, move: moves.SelectConstraints) -> list[str]:
    """With one eligible constraint, no call; otherwise proposal `select_constraints`,
    then the kernel keeps only eligible ones (by id or exact title) and always the core;
    the inherited constraints the part answers for (`owed`) are selected either way."""
    goal_id = move.goal.id
    goal = enter(k, goal_id, S.SELECTING_CONSTRAINTS)
    roles = k.constraints.roles(goal_id)
    eligible = roles["eligible"]
    owed = set(roles["owed"])  # what the parent's decomposition gave this part to answer for
    if len(eligible) <= 1:
        chosen = set(eligible) | owed  # nothing to choose between: no call
    else:
        proposal = ask(k, goal_id, ops.SELECT_CONSTRAINTS, request_for(goal, ops.SELECT_CONSTRAINTS,
                                            k.constraints.get_many(eligible)))
        picked: models.SelectedConstraints = proposal.output
        # The kernel decides: only eligible constraints count (named by id or exact title),
        # and the human's core and any coupling constraint always stay.
        named = by_id_or_title(k.constraints.get_many(eligible), picked.constraint_ids)
        chosen = named | ((set(roles["core"]) | set(roles["coupling"])) & set(eligible))
        if not chosen:
            chosen = set(eligible)
        chosen |= owed
    k.run.will_wake([goal_id])
    k.constraints.set_role(k.run, goal_id, "selected", chosen, S.SELECTING_CONSTRAINTS,
                           S.SELECTING_RESOLVER)
    k.log.decision(goal_id, "constraint_selection", candidates=sorted(set(eligible) | owed),
                   chosen=sorted(chosen), rationale="parsimonious selection, core kept"
                   + (", the inherited ones this part answers for added" if owed else ""))
    return [goal_id]
