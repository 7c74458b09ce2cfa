"""Step 8, decompose: the proposal of the goal's parts, refused unless it says who
answers for each of the goal's logic constraints; the children are made next."""

from __future__ import annotations

from kernel.kg.context import StepHistory
from kernel.proposals import Proposal
from kernel.protocol import coverage
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.solve import moves
from kernel.solve.effects import Decision, Done, Effects, ModelCall, StepChanges
from kernel.solve.steps._shared import request_for
from kernel.solve.view import StepView

COVERAGE = ("who answers for each of the goal's constraints, as the decomposition says; "
            "each part is verified against its own")


def decompose(view: StepView, move: moves.Decompose) -> Effects[moves.MakeChildren]:
    """Proposal `decompose` (with how similar goals were decomposed, the goal's output and
    what it inherits), refused unless it says who answers for each of the goal's logic
    constraints, exactly once (a part, or the whole)."""
    goal = view.goal(move.goal.id)
    past = StepHistory.model_validate((yield view.history(goal, "decompose")))
    selected = view.constraints(view.roles(goal.id)["selected"])
    proposal: Proposal[models.Decomposition] = yield ModelCall(ops.DECOMPOSE, request_for(
        goal, ops.DECOMPOSE, selected, past.block(goal.summary, view.config.context_chars),
        feedback=goal.feedback, output=view.stored_output(goal.output_artifact_id),
        inherited=view.inherited(goal)))
    plan = proposal.output
    # the proposal was refused unless every logic constraint is answered for exactly once
    covered = coverage.coverage(selected, plan)
    told = StepChanges()
    if covered.answered_by:
        told += Decision(goal.id, "constraint_coverage", tuple(sorted(covered.answered_by)),
                         [f"{cid}: {who}" for cid, who in sorted(covered.answered_by.items())],
                         COVERAGE)
    return Done(moves.MakeChildren(goal, plan, goal.decompositions + 1, covered), told)
