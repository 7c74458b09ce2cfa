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
from kernel.kg.context import StepHistory
from kernel.kg.history import ResolverOutcome
from kernel.kg.routing import route
from kernel.proposals import Proposal
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.runtime.gate import CLAUDE_ID
from kernel.solve import moves
from kernel.solve.effects import (
    Decision,
    Done,
    Effects,
    ModelCall,
    NewArtifact,
    StepChanges,
    Transition,
    Wake,
)
from kernel.solve.steps._shared import DEFAULT_CAPABILITY, NOT_RESOLVERS, S, request_for
from kernel.solve.view import StepView


def select_resolver(view: StepView, move: moves.SelectResolver) -> Effects[list[str]
                                                                         | moves.Grow]:
    """Registry candidates for the required capabilities plus tools that succeeded on
    similar goals, ranked by their record on similar patterns, then by the registry's
    order (learned routing, `docs/knowledge-graph.md`); with one candidate or a record that
    singles one out, no call; otherwise proposal `rank_resolvers` with the history block,
    and a plan naming tools outside the candidates falls back to rank 1; the tool plan is
    an artifact. No candidate at all: BUILD."""
    goal = view.goal(move.goal.id)
    capabilities = goal.required_capabilities or [DEFAULT_CAPABILITY]
    past = StepHistory.model_validate((yield view.history(goal, "route")))
    candidates = _candidates(view, goal, capabilities, past.resolver_outcomes)
    if not candidates:  # step 10: find, build or hire a tool for it
        return Done(moves.Grow(goal, missing=sorted(capabilities)[0]))
    routing = route(candidates, past.resolver_outcomes, view.config.route_min_successes,
                    past.modality_candidates)
    candidates = routing.ranked
    selected = view.roles(goal.id)["selected"]
    if len(candidates) == 1 or routing.chosen is not None:
        chosen = routing.chosen or candidates[0]
        plan = ToolPlan(steps=[ToolStep(resolver_id=chosen.id, capability=capabilities[0])])
        rationale = routing.rationale if routing.chosen else "the only candidate"
    else:
        listing = candidate_listing(view.registered(), candidates, routing.rates,
                                    past.resolver_outcomes)
        proposal: Proposal[models.ResolverRanking] = yield ModelCall(
            ops.RANK_RESOLVERS, request_for(
                goal, ops.RANK_RESOLVERS, view.constraints(selected),
                past.block(goal.summary, view.config.context_chars), candidates=listing))
        plan, rationale = plan_from_ranking(proposal.output, candidates, capabilities[0])
    return Done([goal.id], _planned(goal, plan, candidates, rationale, selected))


def candidate_listing(summary: list[dict[str, Any]], candidates: list[Candidate],
                      rates: dict[str, float],
                      outcomes: list[ResolverOutcome]) -> list[dict[str, Any]]:
    """Each candidate as the ranking prompt shows it: what it is and provides (its
    description and capability tags, from the registry's ``summary``), how it matched,
    and its record: overall, and on goals like this one (successes, failures, the
    failure modes it met)."""
    registered = {row["id"]: row for row in summary}
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


def _candidates(view: StepView, goal: GoalNode, capabilities: list[str],
                outcomes: list[ResolverOutcome]) -> list[Candidate]:
    """Registry candidates for the capabilities, plus (learned routing) tools that solved
    goals of this kind even when their capability tags do not name what identification
    asked for, unless they have already failed on this very goal."""
    candidates = [c for c in view.candidates(capabilities, goal.modality)
                  if c.id not in NOT_RESOLVERS]
    failed_here = {a.resolver_id for a in view.tried(goal) if a.verdict == "UNSAT"}
    proven = {o.resolver_id for o in outcomes if o.successes > 0} - \
        {c.id for c in candidates} - failed_here - NOT_RESOLVERS
    if proven:
        candidates += [c for c in view.candidates([], goal.modality) if c.id in proven]
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


def _planned(goal: GoalNode, plan: ToolPlan, candidates: list[Candidate], rationale: str,
             selected: list[str]) -> StepChanges:
    """The tool plan as an artifact, and the goal moved on to resolve with it."""
    text = plan.model_dump_json()
    artifact = NewArtifact(
        goal.id, text, type="tool_plan", format="json",
        lineage=Lineage(node_id=goal.id, resolver_id=CLAUDE_ID, constraint_ids=selected),
        key=f"plan:{goal.id}:{goal.attempt_count}:{hashlib.sha256(text.encode()).hexdigest()}",
        # a plan is stored with the commit that names it the goal's: none yet, none stored
        unseen=goal.plan_artifact_id is None)
    return StepChanges((
        Wake((goal.id,)),
        Transition(goal.id, S.RESOLVING, GoalChanges(
            resolver_id=plan.final_resolver_id if len(plan.steps) == 1 else None),
            made=(("plan_artifact_id", artifact),)),
        Decision(goal.id, "resolver_selection", tuple(c.id for c in candidates),
                 plan.final_resolver_id, rationale)))
