"""Step 3, select constraints (parsimony): the kernel keeps only eligible constraints the
proposal names, and always the core and coupling ones and those the part answers for."""

from __future__ import annotations

from kernel.proposals import Proposal
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.solve import moves
from kernel.solve.effects import Decision, Done, Effects, ModelCall, SetRole, StepChanges, Wake
from kernel.solve.steps._shared import S, by_id_or_title, request_for
from kernel.solve.view import StepView


def select_constraints(view: StepView, move: moves.SelectConstraints) -> Effects[list[str]]:
    """With one eligible constraint, no call; otherwise proposal `select_constraints`,
    then the kernel keeps only eligible ones (by id or exact title) and always the core;
    the inherited constraints the part answers for (`owed`) are selected either way."""
    goal = view.goal(move.goal.id)
    roles = view.roles(goal.id)
    eligible = roles["eligible"]
    owed = set(roles["owed"])  # what the parent's decomposition gave this part to answer for
    if len(eligible) <= 1:
        chosen = set(eligible) | owed  # nothing to choose between: no call
    else:
        offered = view.constraints(eligible)
        proposal: Proposal[models.SelectedConstraints] = yield ModelCall(
            ops.SELECT_CONSTRAINTS, request_for(goal, ops.SELECT_CONSTRAINTS, offered))
        # The kernel decides: only eligible constraints count (named by id or exact title),
        # and the human's core and any coupling constraint always stay.
        named = by_id_or_title(offered, proposal.output.constraint_ids)
        chosen = named | ((set(roles["core"]) | set(roles["coupling"])) & set(eligible))
        if not chosen:
            chosen = set(eligible)
        chosen |= owed
    rationale = "parsimonious selection, core kept" \
        + (", the inherited ones this part answers for added" if owed else "")
    return Done([goal.id], StepChanges((
        Wake((goal.id,)),
        SetRole(goal.id, "selected", frozenset(chosen), S.SELECTING_CONSTRAINTS,
                S.SELECTING_RESOLVER),
        Decision(goal.id, "constraint_selection", tuple(sorted(set(eligible) | owed)),
                 sorted(chosen), rationale))))
