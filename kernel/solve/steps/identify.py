"""Step 2, identify constraints: the proposal's constraints stored content-addressed, with
the core added, inherited ones left out (B6), the required capabilities and the goal's
pattern linked to similar ones."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from kernel.core.constraints import constraint_signature
from kernel.core.envelopes import Constraint, ConstraintSpec
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.kg import reuse
from kernel.kg.context import StepHistory
from kernel.proposals import Proposal
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.solve import moves
from kernel.solve.effects import (
    Change,
    Decision,
    Done,
    Effects,
    Flow,
    ModelCall,
    Progress,
    Request,
    SetRole,
    StepChanges,
    StoreConstraints,
    Wake,
)
from kernel.solve.steps._shared import DEFAULT_CAPABILITY, S, request_for, settled_specs
from kernel.solve.view import StepView

REUSED = ("the constraints identified for a verified goal with the same description, "
          "summary, core and inherited constraints, asked of the same source (script "
          "content or model); 'kernel solve --fresh' asks again")


def identify(view: StepView, move: moves.Identify) -> Effects[list[str]]:
    """Proposal `identify_constraints` (with the constraints applied to similar goals); a
    logic constraint must come in a form verification decides (`{check: arith, expr}` over
    named metrics, `{check: test, tests}`, `{check: tool_contract}`;
    `kernel/solve/checkable.py`), otherwise it is re-typed semantic, the reason kept in its
    payload (`retyped`) and the goal's log; the kernel stores them content-addressed, adds
    the core and any coupling constraint a conflict pushed to the goal, removes inherited
    ones (B6), records the required capabilities. The core
    itself was checked together by Z3 at intake: a contradiction is refused before any
    spend, naming a minimal conflict; a core constraint implied by the others is pointed
    out."""
    goal = view.goal(move.goal.id)
    roles = view.roles(goal.id)
    specs, needed, told = yield from _identified(view, goal, view.constraints(roles["inherited"]))
    new = [spec.with_id() for spec in specs]
    held = view.constraints(roles["core"] + roles["coupling"])
    eligible = frozenset(c.id for c in [*new, *held])
    capabilities = tuple(sorted(set(needed)) or [DEFAULT_CAPABILITY])
    # The goal's pattern (its summary and the structure of its constraints), linked to
    # the similar patterns the vector index finds, stored by the step's commit.
    by_id = {c.id: c for c in [*held, *new]}
    pattern = view.pattern(goal.summary, constraint_signature(by_id.values()))
    return Done([goal.id], StepChanges((
        *told, StoreConstraints(tuple(specs)), Wake((goal.id,)),
        SetRole(goal.id, "eligible", eligible, S.IDENTIFYING_CONSTRAINTS,
                S.SELECTING_CONSTRAINTS,
                GoalChanges(required_capabilities=list(capabilities), pattern_id=pattern["id"]),
                pattern=pattern, capabilities=capabilities),
        Flow(goal.id, f"identified {len(eligible)} eligible constraints"))))


def _identified(view: StepView, goal: GoalNode, inherited: list[Constraint]) -> Generator[
        Request, Any, tuple[list[ConstraintSpec], list[str], tuple[Change, ...]]]:
    """The constraints and capabilities identified for the goal, and what the log says of
    them: those of an earlier goal asking the same question of the same source when a
    verified record holds them, else the model's."""
    found = yield view.identified_record(goal, inherited)
    if found is not None:  # the same question was asked and answered, and it held
        specs, needed, source = reuse.identification(found)
        return specs, needed, (
            Decision(goal.id, "identification_reused", (source,), source, REUSED),
            Progress("reused", f"identify_constraints from {source}", goal.id, goal.summary))
    rows = yield view.history(goal, "identify")
    context = StepHistory.model_validate(rows).block(goal.summary, view.config.context_chars)
    proposal: Proposal[models.IdentifiedConstraints] = yield ModelCall(
        ops.IDENTIFY_CONSTRAINTS, request_for(goal, ops.IDENTIFY_CONSTRAINTS, inherited,
                                              context, inherited=view.inherited(goal)))
    specs, notes = settled_specs(proposal.output.constraints)
    return specs, proposal.output.required_capabilities, \
        tuple(Flow(goal.id, note) for note in notes)
