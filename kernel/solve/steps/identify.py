"""Step 2, identify constraints: the proposal's constraints stored content-addressed, with
the core added, inherited ones left out (B6), the required capabilities and the goal's
pattern linked to similar ones."""

from __future__ import annotations

from kernel.core.constraints import constraint_signature
from kernel.core.goal_node import GoalChanges
from kernel.kg import context as kg_context
from kernel.kg import reuse
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.runtime import progress
from kernel.runtime.gate import ask
from kernel.runtime.kernel import Kernel
from kernel.solve import moves, prompt_inputs
from kernel.solve.steps._shared import (
    DEFAULT_CAPABILITY,
    S,
    constraints_of,
    enter,
    proposed_specs,
    request_for,
)


def identify(k: Kernel, move: moves.Identify) -> list[str]:
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
    goal_id = move.goal.id
    goal = enter(k, goal_id, S.IDENTIFYING_CONSTRAINTS)
    inherited = constraints_of(k, goal_id, "inherited")
    reused = reuse.identified_before(k, goal, inherited)
    if reused is not None:  # the same question was asked and answered, and it held
        specs, needed, source = reused
        k.log.decision(goal_id, "identification_reused", candidates=[source], chosen=source,
                       rationale="the constraints identified for a verified goal with the "
                                 "same description, summary, core and inherited constraints, "
                                 "asked of the same source (script content or model); "
                                 "'kernel solve --fresh' asks again")
        progress.report("reused", f"identify_constraints from {source}", goal_id,
                        goal.summary)
    else:
        _, context = kg_context.block(k, goal, "identify")
        proposal = ask(k, goal_id, ops.IDENTIFY_CONSTRAINTS,
                       request_for(goal, ops.IDENTIFY_CONSTRAINTS, inherited, context,
                                   inherited=prompt_inputs.inherited_view(k, goal)))
        found: models.IdentifiedConstraints = proposal.output
        specs, needed = proposed_specs(k, goal_id, found.constraints), found.required_capabilities
    held = k.constraints.roles(goal_id)
    eligible = set(k.constraints.upsert(specs, ride=k.run)) | \
        set(held["core"]) | set(held["coupling"])  # stored with the step's commit
    capabilities = sorted(set(needed)) or [DEFAULT_CAPABILITY]
    # The goal's pattern (its summary and the structure of its constraints), linked to
    # the similar patterns the vector index finds, stored by the step's commit.
    signature = constraint_signature(k.constraints.get_many(eligible))
    pattern = k.patterns.row(goal.summary, signature,
                             k.patterns.similar(goal.summary, signature))
    k.run.will_wake([goal_id])
    k.constraints.set_role(k.run, goal_id, "eligible", eligible, S.IDENTIFYING_CONSTRAINTS,
                           S.SELECTING_CONSTRAINTS,
                           GoalChanges(required_capabilities=capabilities,
                                       pattern_id=pattern["id"]),
                           pattern=pattern, capabilities=capabilities)
    k.log.flow(goal_id, f"identified {len(eligible)} eligible constraints")
    return [goal_id]
