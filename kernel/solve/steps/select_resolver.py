"""Step 4, select resolver: candidates by capability and by their record on similar
goals (learned routing); a tool plan stored as an artifact."""

from __future__ import annotations

import hashlib
from typing import Any

from kernel.core.envelopes import (
    Lineage,
    ToolPlan,
    ToolStep,
)
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.registry import Candidate
from kernel.kg import context as kg_context
from kernel.kg.history import ResolverOutcome
from kernel.kg.routing import route
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.runtime.gate import CLAUDE_ID, ask
from kernel.runtime.kernel import Kernel
from kernel.solve import moves
from kernel.solve.steps._shared import (
    DEFAULT_CAPABILITY,
    NOT_RESOLVERS,
    S,
    constraints_of,
    enter,
    request_for,
)


def select_resolver(k: Kernel, move: moves.SelectResolver) -> list[str] | moves.Grow:
    """Registry candidates for the required capabilities plus tools that succeeded on
    similar goals, ranked by their record on similar patterns, then by the registry's
    order (learned routing, `docs/knowledge-graph.md`); with one candidate or a record that
    singles one out, no call; otherwise proposal `rank_resolvers` with the history block,
    and a plan naming tools outside the candidates falls back to rank 1; the tool plan is
    an artifact. No candidate at all: BUILD."""
    goal_id = move.goal.id
    goal = enter(k, goal_id, S.SELECTING_RESOLVER)
    capabilities = goal.required_capabilities or [DEFAULT_CAPABILITY]
    past, context = kg_context.block(k, goal, "route")
    candidates = _candidates(k, goal, capabilities, past.resolver_outcomes)
    if not candidates:  # step 10: find, build or hire a tool for it
        return moves.Grow(goal, missing=sorted(capabilities)[0])
    routing = route(candidates, past.resolver_outcomes, k.config.route_min_successes,
                    past.modality_candidates)
    candidates = routing.ranked
    if len(candidates) == 1 or routing.chosen is not None:
        chosen = routing.chosen or candidates[0]
        plan = ToolPlan(steps=[ToolStep(resolver_id=chosen.id, capability=capabilities[0])])
        rationale = routing.rationale if routing.chosen else "the only candidate"
    else:
        listing = candidate_listing(k, candidates, routing.rates, past.resolver_outcomes)
        proposal = ask(k, goal_id, ops.RANK_RESOLVERS, request_for(
            goal, ops.RANK_RESOLVERS, constraints_of(k, goal_id, "selected"), context,
            candidates=listing))
        plan, rationale = plan_from_ranking(proposal.output, candidates, capabilities[0])
    _commit_plan(k, goal, plan, candidates, rationale)
    return [goal_id]


def candidate_listing(k: Kernel, candidates: list[Candidate], rates: dict[str, float],
                      outcomes: list[ResolverOutcome]) -> list[dict[str, Any]]:
    """Each candidate as the ranking prompt shows it: what it is and provides (its
    description and capability tags), how it matched, and its record: overall, and on
    goals like this one (successes, failures, the failure modes it met)."""
    registered = {row["id"]: row for row in k.registry.summary()}
    record = {o.resolver_id: o for o in outcomes}
    listing = []
    for c in candidates:
        row = registered.get(c.id, {})
        past = record.get(c.id)
        entry: dict[str, Any] = {
            "resolver_id": c.id, "label": c.label,
            "provides": list(row.get("capabilities") or []), "matched": c.matched,
            "success_rate": c.success_rate, "rate_on_similar_goals": rates[c.id]}
        if row.get("description"):
            entry["description"] = row["description"]
        if past is not None:
            entry["on_similar_goals"] = {
                "succeeded": past.successes, "failed": past.failures,
                "best_sigma_v": past.best_sigma_v, "failure_modes": past.failure_modes}
        listing.append(entry)
    return listing


def _candidates(k: Kernel, goal: GoalNode, capabilities: list[str],
                outcomes: list[ResolverOutcome]) -> list[Candidate]:
    """Registry candidates for the capabilities, plus (learned routing) tools that solved
    goals of this kind even when their capability tags do not name what identification
    asked for, unless they have already failed on this very goal."""
    candidates = [c for c in k.registry.candidates(capabilities, goal.modality)
                  if c.id not in NOT_RESOLVERS]
    failed_here = {a.resolver_id for a in k.attempts.tried(goal) if a.verdict == "UNSAT"}
    proven = {o.resolver_id for o in outcomes if o.successes > 0} - \
        {c.id for c in candidates} - failed_here - NOT_RESOLVERS
    if proven:
        candidates += [c for c in k.registry.candidates([], goal.modality) if c.id in proven]
    return candidates


def plan_from_ranking(ranked: models.ResolverRanking, candidates: list[Candidate],
                      capability: str) -> tuple[ToolPlan, str]:
    """The kernel decides: only steps naming a candidate count; a ranking naming none
    falls back to the kernel's rank 1."""
    allowed = {c.id for c in candidates}
    steps = [ToolStep(resolver_id=s.resolver_id, capability=s.capability, params=s.params)
             for s in ranked.steps if s.resolver_id in allowed]
    if steps:
        return ToolPlan(steps=steps), ranked.rationale
    return (ToolPlan(steps=[ToolStep(resolver_id=candidates[0].id, capability=capability)]),
            "proposal named no candidate; kernel rank 1")


def _commit_plan(k: Kernel, goal: GoalNode, plan: ToolPlan, candidates: list[Candidate],
                 rationale: str) -> None:
    """The tool plan as an artifact, and the goal moved on to resolve with it."""
    text = plan.model_dump_json()
    artifact = k.artifacts.register(
        goal.id, text, type="tool_plan", format="json",
        lineage=Lineage(node_id=goal.id, resolver_id=CLAUDE_ID,
                        constraint_ids=k.constraints.roles(goal.id)["selected"]),
        key=f"plan:{goal.id}:{goal.attempt_count}:{hashlib.sha256(text.encode()).hexdigest()}",
        # a plan is stored with the commit that names it the goal's: none yet, none stored
        unseen=goal.plan_artifact_id is None)
    k.run.will_wake([goal.id])
    k.tree.transition(goal.id, S.RESOLVING, GoalChanges(
        plan_artifact_id=artifact.id,
        resolver_id=plan.final_resolver_id if len(plan.steps) == 1 else None))
    k.log.decision(goal.id, "resolver_selection", candidates=[c.id for c in candidates],
                   chosen=plan.final_resolver_id, rationale=rationale)
