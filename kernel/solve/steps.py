"""The step handlers of the SOLVE loop (steps 2-9). Each returns the goals to enqueue next.

Every handler is safe to run again after a crash: proposals already recorded are served
from the ledger, spends are idempotent per proposal, an open attempt is continued, and
children of an unfinished decomposition are found by their key.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from kernel.core.constraints import constraint_signature
from kernel.core.dag import DagNode, find_cycle, topological_order
from kernel.core.envelopes import (
    Constraint,
    ConstraintSpec,
    Lineage,
    Provenance,
    ToolPlan,
    ToolStep,
    Verification,
)
from kernel.core.goals import GoalSpec
from kernel.core.state_machine import Status
from kernel.kg import context as kg_context
from kernel.kg.routing import route
from kernel.protocol import Operation, ResolveRequest
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.refusal import RefusalReason, refuse
from kernel.runtime.gate import CLAUDE_ID, amount, ask
from kernel.runtime.kernel import Kernel
from kernel.solve import composite, consistency
from kernel.solve.assemble import assemble
from kernel.solve.grow import grow
from kernel.solve.tools import runner_for
from kernel.solve.verify import verify

S = Status
DEFAULT_CAPABILITY = "generate_code"
SELF_MODEL = "resolver:self-model-0"


def _request(goal: dict[str, Any], operation: Operation[Any],
             constraints: list[Constraint] | None = None, context: str = "",
             **payload: Any) -> ResolveRequest:
    return operation.request(goal["id"], goal_description=goal["description"],
                             constraints=constraints or [], context=context,
                             payload={"goal_summary": goal["summary"], **payload})


def _enter(k: Kernel, goal_id: str, state: Status) -> dict[str, Any]:
    """The goal, moved into the step's state first if it is resuming from pending."""
    goal = k.tree.get(goal_id)
    if goal["status"] == S.PENDING:
        k.tree.transition(goal_id, state)
        goal = k.tree.get(goal_id)
    return goal


def _constraints(k: Kernel, goal_id: str, role: str) -> list[Constraint]:
    return k.constraints.get_many(k.constraints.roles(goal_id)[role])


def _by_id_or_title(constraints: list[Constraint], names: list[str]) -> set[str]:
    """Constraint ids a proposal names, by id or by exact title (scripts cannot know ids)."""
    by_title = {c.title: c.id for c in constraints}
    ids = {c.id for c in constraints}
    return {n if n in ids else by_title[n] for n in names if n in ids or n in by_title}


# -- step 2: identify constraints --------------------------------------------------------
def identify(k: Kernel, goal_id: str) -> list[str]:
    goal = _enter(k, goal_id, S.IDENTIFYING_CONSTRAINTS)
    inherited = _constraints(k, goal_id, "inherited")
    _, context = kg_context.block(k, goal, "identify")
    proposal = ask(k, goal_id, ops.IDENTIFY_CONSTRAINTS,
                   _request(goal, ops.IDENTIFY_CONSTRAINTS, inherited, context))
    found: models.IdentifiedConstraints = proposal.output
    specs = [ConstraintSpec(type=c.type, domain=c.domain, title=c.title, payload=c.payload,
                            provenance=Provenance(source="resolver", resolver_id=CLAUDE_ID))
             for c in found.constraints]
    eligible = set(k.constraints.upsert(specs)) | set(k.constraints.roles(goal_id)["core"])
    capabilities = sorted(set(found.required_capabilities)) or [DEFAULT_CAPABILITY]
    # The goal's pattern (its summary and the structure of its constraints), linked to
    # the similar patterns the vector index finds.
    signature = constraint_signature(k.constraints.get_many(eligible))
    pattern = k.patterns.link(goal["summary"], signature)[0]
    k.run.will_wake([goal_id])
    k.constraints.set_role(k.run, goal_id, "eligible", eligible, S.IDENTIFYING_CONSTRAINTS,
                           S.SELECTING_CONSTRAINTS, {"required_capabilities": capabilities,
                                                     "pattern_id": pattern},
                           pattern_id=pattern, capabilities=capabilities)
    k.log.flow(goal_id, f"identified {len(eligible)} eligible constraints")
    return [goal_id]


# -- step 3: select constraints (parsimony) -----------------------------------------------
def select_constraints(k: Kernel, goal_id: str) -> list[str]:
    goal = _enter(k, goal_id, S.SELECTING_CONSTRAINTS)
    roles = k.constraints.roles(goal_id)
    eligible = roles["eligible"]
    if len(eligible) <= 1:
        chosen = set(eligible)  # nothing to choose between: no call
    else:
        proposal = ask(k, goal_id, ops.SELECT_CONSTRAINTS, _request(goal, ops.SELECT_CONSTRAINTS,
                                            k.constraints.get_many(eligible)))
        picked: models.SelectedConstraints = proposal.output
        # The kernel decides: only eligible constraints count (named by id or exact title),
        # and the human's core and any coupling constraint always stay.
        named = _by_id_or_title(k.constraints.get_many(eligible), picked.constraint_ids)
        chosen = named | ((set(roles["core"]) | set(roles["coupling"])) & set(eligible))
        if not chosen:
            chosen = set(eligible)
    k.run.will_wake([goal_id])
    k.constraints.set_role(k.run, goal_id, "selected", chosen, S.SELECTING_CONSTRAINTS,
                           S.SELECTING_RESOLVER)
    k.log.decision(goal_id, "constraint_selection", candidates=sorted(eligible),
                   chosen=sorted(chosen), rationale="parsimonious selection, core kept")
    return [goal_id]


# -- step 4: select resolver (tool plan) ---------------------------------------------------
def select_resolver(k: Kernel, goal_id: str) -> list[str]:
    goal = _enter(k, goal_id, S.SELECTING_RESOLVER)
    capabilities = goal.get("required_capabilities") or [DEFAULT_CAPABILITY]
    candidates = [c for c in k.registry.candidates(capabilities, goal["modality"])
                  if c.id != SELF_MODEL]
    past, context = kg_context.block(k, goal, "route")
    # Learned routing: a tool that solved goals of this kind is a candidate even when
    # its capability tags do not name what identification asked for (unless it has
    # already failed on this very goal).
    failed_here = {a.resolver_id for a in k.attempts.of_goal(goal_id) if a.verdict == "UNSAT"}
    proven = {o.resolver_id for o in past.resolver_outcomes if o.successes > 0} - \
        {c.id for c in candidates} - failed_here - {SELF_MODEL}
    if proven:
        candidates += [c for c in k.registry.candidates([], goal["modality"]) if c.id in proven]
    if not candidates:  # step 10: find, build or hire a tool for it
        return grow(k, goal, missing=sorted(capabilities)[0])
    routing = route(candidates, past.resolver_outcomes, k.config.route_min_successes)
    candidates = routing.ranked
    if len(candidates) == 1 or routing.chosen is not None:
        chosen = routing.chosen or candidates[0]
        plan = ToolPlan(steps=[ToolStep(resolver_id=chosen.id, capability=capabilities[0])])
        rationale = routing.rationale if routing.chosen else "the only candidate"
    else:
        listing = [{"resolver_id": c.id, "label": c.label, "matched": c.matched,
                    "success_rate": c.success_rate, "rate_on_similar_goals": routing.rates[c.id]}
                   for c in candidates]
        proposal = ask(k, goal_id, ops.RANK_RESOLVERS, _request(goal, ops.RANK_RESOLVERS,
                                            _constraints(k, goal_id, "selected"), context,
                                            candidates=listing))
        ranked: models.ResolverRanking = proposal.output
        allowed = {c.id for c in candidates}
        steps = [ToolStep(resolver_id=s.resolver_id, capability=s.capability, params=s.params)
                 for s in ranked.steps if s.resolver_id in allowed]
        # The kernel decides: a plan naming tools outside the candidates falls back to rank 1.
        plan = ToolPlan(steps=steps or [ToolStep(resolver_id=candidates[0].id,
                                                 capability=capabilities[0])])
        rationale = ranked.rationale if steps else "proposal named no candidate; kernel rank 1"
    text = plan.model_dump_json()
    artifact = k.artifacts.register(
        goal_id, text, type="tool_plan", format="json",
        lineage=Lineage(node_id=goal_id, resolver_id=CLAUDE_ID,
                        constraint_ids=k.constraints.roles(goal_id)["selected"]),
        key=f"plan:{goal_id}:{goal['attempt_count']}:{hashlib.sha256(text.encode()).hexdigest()}")
    k.run.will_wake([goal_id])
    k.tree.transition(goal_id, S.RESOLVING, {
        "plan_artifact_id": artifact.id,
        "resolver_id": plan.final_resolver_id if len(plan.steps) == 1 else None})
    k.log.decision(goal_id, "resolver_selection", candidates=[c.id for c in candidates],
                   chosen=plan.final_resolver_id, rationale=rationale)
    return [goal_id]


# -- step 5: resolve (one TRY attempt) ----------------------------------------------------
def resolve(k: Kernel, goal_id: str) -> list[str]:
    goal = _enter(k, goal_id, S.RESOLVING)
    plan = ToolPlan.model_validate_json(k.artifacts.read(goal["plan_artifact_id"]))
    history = k.attempts.of_goal(goal_id)
    if history and history[-1].verdict is None and history[-1].output_artifact_id:
        k.run.will_wake([goal_id])
        k.tree.transition(goal_id, S.VERIFYING)  # a crash came after the output was paid for
        return [goal_id]
    opened = _open_attempt(k, goal, plan)
    if opened is None:
        return grow(k, goal)
    attempt, index = opened
    selected = _constraints(k, goal_id, "selected")
    feedback = json.loads(goal["feedback"]) if goal.get("feedback") else None
    _, context = kg_context.block(k, goal, "resolve")
    request = _request(goal, ops.RESOLVE, selected, context,
                       inputs=goal.get("input_artifact_ids", []))
    request = request.model_copy(update={"feedback": feedback})
    proposal = ask(k, goal_id, ops.RESOLVE, request, resolver_id=plan.final_resolver_id, pay=False,
                   proposer=runner_for(k, plan.final_resolver_id))
    output: models.ResolutionOutput = proposal.output
    artifact = k.artifacts.register(
        goal_id, output.model_dump_json(), type=output.artifact_type, format="json",
        metadata={"content_format": output.format, "ledger_index": proposal.ledger_index},
        lineage=Lineage(node_id=goal_id, resolver_id=plan.final_resolver_id,
                        constraint_ids=[c.id for c in selected],
                        input_artifact_ids=goal.get("input_artifact_ids", [])),
        key=f"proposal:{proposal.ledger_hash}")
    k.budget.record(goal_id, amount(proposal.cost_usd, proposal.seconds), plan.final_resolver_id,
                    "resolve", attempt_id=attempt, output_artifact_id=artifact.id,
                    proposal=proposal.ledger_hash)
    k.run.will_wake([goal_id])
    k.tree.transition(goal_id, S.VERIFYING)
    k.log.flow(goal_id, f"RESOLVE using {plan.final_resolver_id} (attempt {index})")
    return [goal_id]


def _open_attempt(k: Kernel, goal: dict[str, Any], plan: ToolPlan) -> tuple[str, int] | None:
    """(id, index) of the attempt a crash interrupted, or of the next one (None: exhausted)."""
    history = k.attempts.of_goal(goal["id"])
    if history and history[-1].verdict is None and history[-1].output_artifact_id is None:
        return history[-1].id, history[-1].attempt_index
    if goal["attempt_count"] >= goal["max_attempts"]:
        return None
    attempt = k.attempts.open(goal["id"], plan.final_resolver_id,
                              plan_artifact_id=goal["plan_artifact_id"],
                              input_artifact_ids=goal.get("input_artifact_ids", []),
                              feedback=json.loads(goal["feedback"]) if goal.get("feedback")
                              else None)
    return attempt.id, attempt.attempt_index


# -- step 6-9: verify, then leaf / decompose / gate / retry -------------------------------
def verify_step(k: Kernel, goal_id: str) -> list[str]:
    goal = k.tree.get(goal_id)
    attempt = k.attempts.of_goal(goal_id)[-1]
    output = models.ResolutionOutput.model_validate_json(k.artifacts.read(goal["output_artifact_id"]))
    if attempt.verdict is None:
        verification = verify(k, goal, _constraints(k, goal_id, "selected"), output)
        failed = verification.failed()
        titles = {c.id: c.title for c in _constraints(k, goal_id, "selected")}
        k.attempts.record_verification(attempt.id, verification,
                                       failure_slug=_failure_slug(failed, titles) if failed
                                       else None)
        goal = k.tree.get(goal_id)
    verification = Verification.model_validate_json(goal["verification"])
    sigma_path = k.confidence.recompute_subtree(goal_id)[goal_id]
    sat = verification.verdict == "SAT" and verification.sigma_v >= goal["tau_local"]
    if sat:
        return _after_sat(k, goal, sigma_path)
    return _after_unsat(k, goal, verification)


def _failure_slug(failed: list, titles: dict[str, str]) -> str:
    """A readable, stable failure mode: a cause a check diagnosed itself (a forged or
    missing test report), else the titles of the violated constraints."""
    diagnosed = sorted({str(c.detail["failure_mode"]) for c in failed
                        if isinstance(c.detail, dict) and c.detail.get("failure_mode")})
    if diagnosed:
        return "__".join(diagnosed)
    names = sorted({re.sub(r"[^a-z0-9]+", "_", titles.get(c.constraint_id, c.constraint_id)
                           .lower()).strip("_")[:40] for c in failed})
    return "violated_" + "__".join(names)[:120]


def _after_sat(k: Kernel, goal: dict[str, Any], sigma_path: float) -> list[str]:
    goal_id = goal["id"]
    if goal["depth"] >= k.config.max_depth:
        leaf = models.LeafClassification(is_leaf=True, leaf_kind="constraint_exhausted",
                                         leaf_reason="maximum depth reached")
    else:
        proposal = ask(k, goal_id, ops.CLASSIFY_LEAF, _request(goal, ops.CLASSIFY_LEAF,
                                            _constraints(k, goal_id, "selected")))
        leaf = proposal.output
    if leaf.is_leaf:
        final = {} if goal.get("parent_id") else {  # a leaf root is its own final artifact
            "final_artifact_id": goal["output_artifact_id"], "sigma_system": sigma_path}
        woken = _wake_dependents(k, goal)
        k.run.will_wake(woken)
        k.tree.transition(goal_id, S.RESOLVED, {"leaf_kind": leaf.leaf_kind or "atomic",
                                                "leaf_reason": leaf.leaf_reason, **final})
        k.log.flow(goal_id, f"resolved as a {leaf.leaf_kind or 'atomic'} leaf "
                            f"(sigma_v={goal['sigma_v']})")
        return woken
    if sigma_path < goal["tau_global"]:
        k.tree.transition(goal_id, S.GATED, {"gated_reason": f"sigma_path {sigma_path} < "
                                                            f"tau_global {goal['tau_global']}"})
        return backtrack(k, goal_id)
    k.run.will_wake([goal_id])
    k.tree.transition(goal_id, S.DECOMPOSING)
    return [goal_id]


def _after_unsat(k: Kernel, goal: dict[str, Any], verification: Any) -> list[str]:
    goal_id = goal["id"]
    history = k.attempts.of_goal(goal_id)
    trace = [c.model_dump(mode="json") for c in verification.failed()]
    _, context = kg_context.block(k, goal, "feedback")
    proposal = ask(k, goal_id, ops.GENERATE_FEEDBACK, _request(goal, ops.GENERATE_FEEDBACK,
                                        _constraints(k, goal_id, "selected"), context,
                                        violations=trace,
                                        history=[{"attempt": a.attempt_index, "verdict": a.verdict,
                                                  "sigma_v": a.sigma_v,
                                                  "failure_mode": a.failure_mode}
                                                 for a in history]))
    feedback: models.Feedback = proposal.output
    note = {"violations": trace, "diagnosis": feedback.model_dump(mode="json")}
    if feedback.rescope and goal.get("parent_id"):
        parent = k.tree.get(goal["parent_id"])
        reopened = int(parent.get("reopened") or 0)
        if reopened < k.config.max_reopens:  # the parent's decomposition is at fault
            k.run.will_wake([parent["id"]])
            k.tree.reopen(parent["id"], S.SELECTING_RESOLVER, {
                "reopened": reopened + 1,
                "feedback": {"rescope_from": goal_id, "summary": goal["summary"], **note}})
            k.log.decision(goal_id, "rescope", candidates=[goal_id, parent["id"]],
                           chosen=parent["id"], rationale=feedback.summary)
            return [parent["id"]]
    if goal["attempt_count"] < goal["max_attempts"] and not _stagnant(k, history):
        k.run.will_wake([goal_id])
        k.tree.transition(goal_id, S.RESOLVING, {"feedback": note,
                                                 "rescope_requested": feedback.rescope})
        k.log.flow(goal_id, f"RETRY {goal['attempt_count'] + 1}/{goal['max_attempts']} "
                            f"with feedback: {feedback.summary}")
        return [goal_id]
    return grow(k, goal, {"feedback": note})


def _stagnant(k: Kernel, history: list) -> bool:
    """sigma improved by less than epsilon over the last two attempts."""
    sigmas = [a.sigma_v for a in history if a.sigma_v is not None]
    if len(sigmas) < 3:
        return False
    return max(sigmas[-1] - sigmas[-2], sigmas[-2] - sigmas[-3]) < k.config.stagnation_epsilon


# -- step 8: decompose -----------------------------------------------------------------
def decompose(k: Kernel, goal_id: str) -> list[str]:
    goal = k.tree.get(goal_id)
    _, context = kg_context.block(k, goal, "decompose")
    feedback = {"feedback": json.loads(goal["feedback"])} if goal.get("feedback") else {}
    proposal = ask(k, goal_id, ops.DECOMPOSE, _request(
        goal, ops.DECOMPOSE, _constraints(k, goal_id, "selected"), context, **feedback))
    plan: models.Decomposition = proposal.output
    round_ = int(goal.get("decompositions", 0)) + 1
    keys = list(dict.fromkeys(c.key for c in plan.children))
    existing = {c["decomposition_key"]: c["id"] for c in
                k.store.run("goal/children_keys", {"goal_id": goal_id})}
    inherited = k.constraints.inherited_by_children_of(goal_id)
    ids: dict[str, str] = {}
    for child in plan.children:
        if child.key in ids:
            continue  # the kernel keeps the first child of a repeated key
        key = f"{round_}:{child.key}"
        ids[child.key] = existing.get(key) or k.tree.create_child(
            goal_id, GoalSpec(child.goal_description, child.goal_summary, child.modality,
                              input_artifact_ids=(goal["output_artifact_id"],)),
            inherited_ids=inherited, decomposition_key=key)
    edges = _acyclic_edges(k, goal_id, plan, ids)
    k.deps.add(k.run, goal_id, edges)
    weights = {ids[key]: next(c.relative_complexity for c in plan.children if c.key == key)
               for key in keys}
    if all(k.budget.remaining(cid).cost == 0 for cid in weights):
        k.budget.allocate_children(goal_id, weights)
    woken = topological_order(k.deps.children(goal_id))
    k.run.will_wake(woken)
    k.tree.transition(goal_id, S.PENDING, {"decompositions": round_})
    k.log.flow(goal_id, f"decomposed into {len(ids)} children, {len(edges)} dependencies")
    return woken


def _acyclic_edges(k: Kernel, goal_id: str, plan: models.Decomposition,
                   ids: dict[str, str]) -> list[tuple[str, str]]:
    """The proposal's dependencies the kernel accepts: known keys, no self-edges, and no
    edge that would close a cycle (edges are taken in order; a closing one is dropped)."""
    accepted: list[tuple[str, str]] = []
    seqs = {cid: i for i, cid in enumerate(ids.values())}
    for dep in plan.dependencies:
        if dep.child not in ids or dep.depends_on not in ids or dep.child == dep.depends_on:
            continue
        edge = (ids[dep.child], ids[dep.depends_on])
        trial = [*accepted, edge]
        nodes = [DagNode(cid, seqs[cid], tuple(sorted({d for g, d in trial if g == cid})))
                 for cid in ids.values()]
        if find_cycle(nodes) is None:
            accepted.append(edge)
        else:
            k.log.decision(goal_id, "dependency_rejected", candidates=[list(edge)], chosen=None,
                           rationale="it would close a cycle")
    return sorted(set(accepted))


# -- composite resolution and backtracking -------------------------------------------------
def compose(k: Kernel, goal_id: str) -> list[str]:
    """All children resolved: the decomposed goal is resolved once its arithmetic
    constraints hold over its parts (the root only after the global consistency check,
    with its assembled artifact)."""
    goal = k.tree.get(goal_id)
    again = composite.check(k, goal)
    if again is not None:
        return again
    if not goal.get("parent_id"):
        again = consistency.check(k, goal)
        return again if again is not None else assemble(k, goal)
    woken = _wake_dependents(k, goal)
    k.run.will_wake(woken)
    k.tree.transition(goal_id, S.RESOLVED, {"leaf_kind": None})
    k.log.flow(goal_id, "resolved: every child is resolved")
    return woken


def backtrack(k: Kernel, gated_id: str) -> list[str]:
    """B7: reopen the weakest ancestor on the path (deepest on ties) and invalidate below."""
    from kernel.core.confidence import weakest_ancestor

    path = k.confidence.path(gated_id)
    weakest = weakest_ancestor(path[:-1]) or weakest_ancestor(path)
    target = gated_id if weakest is None else weakest
    reopened = int(k.tree.get(target).get("reopened") or 0)
    if reopened >= k.config.max_reopens:
        report = refuse(k.ledger, target, RefusalReason.CONTRADICTION_BUDGET_EXCEEDED,
                        f"confidence stayed below tau_global after {reopened} reopenings",
                        count=str(reopened), limit=str(k.config.max_reopens))
        k.tree.transition(gated_id, S.PENDING)
        k.tree.transition(gated_id, S.INFEASIBLE)
        k.log.flow(gated_id, f"infeasible: {report.to_proceed[0]}")
        return _wake_parent(k, k.tree.get(gated_id))
    if target == gated_id:
        k.tree.transition(gated_id, S.PENDING)  # nothing above to blame: rerun it
        k.tree.reopen(gated_id, S.SELECTING_RESOLVER, {"reopened": reopened + 1})
        return [gated_id]
    invalidated = k.tree.reopen(weakest, S.SELECTING_RESOLVER, {"reopened": reopened + 1})
    k.log.decision(gated_id, "backtrack", candidates=[p.id for p in path], chosen=weakest,
                   rationale=f"weakest sigma_v on the path; {invalidated} goals invalidated")
    return [weakest]


def _wake_dependents(k: Kernel, goal: dict[str, Any]) -> list[str]:
    woken = [r["id"] for r in k.store.run("goal/dependents", {"goal_id": goal["id"]})]
    return woken + _wake_parent(k, goal)


def _wake_parent(k: Kernel, goal: dict[str, Any]) -> list[str]:
    return [goal["parent_id"]] if goal.get("parent_id") else []

