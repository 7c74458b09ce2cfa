"""Planning mode: introspect a hard goal against its constraints before anything runs.

Three proposals (constraints, the task DAG, approach surveys), each budget-gated and
recorded in the ledger; everything else is computed here: validation of the DAG, the
feasibility rollup with the status rule, the waterfall, constraint walls, which tasks
must be surveyed, and the repair. The model's stated totals are checked by Z3 and the
computed values win. The plan document is stored as an artifact of the run's root goal,
and the tasks become goals of the run (with their dependencies), so the plan can be
explored in the graph.
"""

from __future__ import annotations

import json
from typing import Any

from kernel.core.envelopes import ConstraintSpec, Lineage, Provenance
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.goals import GoalSpec
from kernel.core.state_machine import Status
from kernel.errors import Refused
from kernel.plan import feasibility as f
from kernel.plan.z3check import longest_chain_is, sum_is
from kernel.proposals import Out, ProposerUnavailable
from kernel.protocol import Operation, PermanentError
from kernel.protocol import operations as ops
from kernel.protocol.plan_models import (
    ApproachSurvey,
    ExtractedConstraints,
    PlanConstraint,
    PlanTask,
    TaskDag,
    TaskSurvey,
)
from kernel.refusal import RefusalReason, refuse
from kernel.runtime.gate import CLAUDE_ID, BudgetDenied, ask
from kernel.runtime.kernel import Kernel

SCHEMA = "kernel-plan/1"


class PlanRefused(Refused):
    """The planner cannot produce a plan (budget, an unusable proposal)."""


def make_plan(k: Kernel, root_id: str, verifications: list[dict] | None = None,
              ) -> dict[str, Any]:
    """Plan the run's root goal; returns the plan document (also stored in the graph)."""
    goal = k.tree.get(root_id)
    extracted: ExtractedConstraints = _ask(k, goal, ops.PLAN_CONSTRAINTS, {})
    constraints = extracted.constraints
    flags: list[str] = _constraint_flags(goal.description, constraints)
    dag: TaskDag = _ask(k, goal, ops.PLAN_TASKS, {
        "constraints": [c.model_dump(mode="json") for c in constraints]})
    problems = f.validate_dag(dag.tasks)
    if problems:
        refuse(k.ledger, root_id, RefusalReason.INVALID_PROPOSAL,
               f"the task DAG is invalid: {'; '.join(problems)}", operation="plan_tasks",
               failure=problems[0])
        raise PlanRefused(f"the proposed task DAG is invalid: {'; '.join(problems)}")
    tasks = dag.tasks
    rollups = f.rollup(constraints, tasks)
    claims = _check_claims(dag, constraints, tasks, rollups, flags)
    walls = f.walls(rollups, tasks)
    triggers = f.survey_triggers(tasks, walls)
    surveys: list[TaskSurvey] = []
    if triggers:
        survey: ApproachSurvey = _ask(k, goal, ops.SURVEY_APPROACHES, {
            "tasks": [{**t.model_dump(mode="json"), "why": triggers[t.id]}
                      for t in tasks if t.id in triggers],
            "constraints": [c.model_dump(mode="json") for c in constraints],
            "rollup": [r.as_dict() for r in rollups]})
        surveys = _usable_surveys(survey, triggers, flags)
    fixed = f.repair(constraints, tasks, surveys) if any(
        r.status == "UNSAT" for r in rollups) else None
    document = _document(goal, constraints, extracted.open_questions, dag, rollups, claims,
                         walls, triggers, surveys, fixed, flags, verifications or [])
    if fixed is not None and not fixed.feasible:
        reports = [refuse(k.ledger, root_id, RefusalReason.NO_FEASIBLE_REPAIR,
                          f"no choice of surveyed approaches meets {b['constraint_id']}",
                          constraint=b["constraint_id"], best=b["best_mid"], op=b["op"],
                          limit=b["limit"]) for b in fixed.blocking]
        document["refusal"] = {"reason": RefusalReason.NO_FEASIBLE_REPAIR.value,
                               "constraints": fixed.blocking,
                               "to_proceed": [r.to_proceed[0] for r in reports]}
    _store(k, goal, document, tasks)
    return document


def _ask(k: Kernel, goal: GoalNode, op: Operation[Out], payload: dict[str, Any]) -> Out:
    """A budget-gated proposal; anything short of a usable one refuses the plan."""
    operation = op.name
    try:
        proposal = ask(k, goal.id, op, op.request(
            goal.id, goal_description=goal.description,
            payload={"goal_summary": goal.summary, **payload}))
    except BudgetDenied as denied:
        refuse(k.ledger, goal.id, RefusalReason.BUDGET_EXHAUSTED,
               f"{operation}: the planning budget cannot pay for it",
               needed_usd=max(denied.estimate.cost - denied.remaining.cost, 0) / 1e6,
               needed_seconds=max(denied.estimate.time - denied.remaining.time, 0) / 1e3)
        raise PlanRefused(f"{operation}: the planning budget is exhausted; raise --budget") \
            from None
    except (PermanentError, ProposerUnavailable) as exc:  # paid for and recorded by ask
        mode = getattr(exc, "failure_mode", "model_unavailable")
        refuse(k.ledger, goal.id, RefusalReason.INVALID_PROPOSAL, f"{operation}: {exc}",
               operation=operation, failure=mode)
        raise PlanRefused(f"{operation}: no usable proposal: {exc}") from None
    return proposal.output


def _constraint_flags(goal_text: str, constraints: list[PlanConstraint]) -> list[str]:
    flags = []
    for c in constraints:
        if c.kind == "explicit" and c.source_text and \
                c.source_text.lower() not in goal_text.lower():
            flags.append(f"{c.id}: explicit, but its source text is not in the goal")
        if c.kind == "implicit" and not c.removal_consequence:
            flags.append(f"{c.id}: implicit without a removal consequence")
    return flags


def _check_claims(dag: TaskDag, constraints: list[PlanConstraint], tasks: list[PlanTask],
                  rollups: list[f.Rollup], flags: list[str]) -> list[dict[str, Any]]:
    """Z3 re-derives the computed totals and checks the model's stated ones."""
    by_id = {c.id: c for c in constraints}
    rolled = {r.constraint_id: r for r in rollups}
    for r in rollups:  # the kernel's own arithmetic, checked independently
        ok = sum_is([f.estimate(t, r.metric, "mid") for t in tasks], r.totals["mid"]) \
            if r.aggregation == "sum" else longest_chain_is(
                {t.id: f.estimate(t, r.metric, "mid") for t in tasks},
                {t.id: t.depends_on for t in tasks}, r.totals["mid"]) \
            if r.aggregation == "critical_path" else True
        if not ok:
            raise PlanRefused(f"internal check failed: Z3 disagrees with the rollup of "
                              f"{r.constraint_id}")
    checked = []
    for claim in dag.claims:
        constraint, rollup = by_id.get(claim.constraint_id), rolled.get(claim.constraint_id)
        if constraint is None or rollup is None:
            flags.append(f"claim about {claim.constraint_id}: no such checkable constraint")
            continue
        values = {t.id: f.estimate(t, rollup.metric, claim.estimate) for t in tasks}
        agrees = sum_is(list(values.values()), claim.value) if rollup.aggregation == "sum" else \
            longest_chain_is(values, {t.id: t.depends_on for t in tasks}, claim.value) \
            if rollup.aggregation == "critical_path" else claim.value == rollup.totals[claim.estimate]
        if not agrees:
            flags.append(f"the narrative states {claim.constraint_id} {claim.estimate} = "
                         f"{claim.value}; computed {rollup.totals[claim.estimate]} (computed wins)")
        checked.append({**claim.model_dump(mode="json"), "computed": rollup.totals[claim.estimate],
                        "agrees": agrees})
    return checked


def _usable_surveys(survey: ApproachSurvey, triggers: dict[str, list[str]],
                    flags: list[str]) -> list[TaskSurvey]:
    usable = []
    for s in survey.surveys:
        if s.task_id not in triggers:
            flags.append(f"survey of {s.task_id} ignored: the task did not trigger one")
            continue
        distinct = {a.id for a in s.approaches}
        if len(distinct) < 2 or len(distinct) != len(s.approaches):
            flags.append(f"survey of {s.task_id}: fewer than two distinct approaches")
        usable.append(s)
    missing = sorted(set(triggers) - {s.task_id for s in usable})
    for task_id in missing:
        flags.append(f"{task_id} triggered a survey the proposal did not give")
    return usable


def _document(goal: GoalNode, constraints: list[PlanConstraint], questions: list[str],
              dag: TaskDag, rollups: list[f.Rollup], claims: list[dict], walls: list[dict],
              triggers: dict[str, list[str]], surveys: list[TaskSurvey],
              fixed: f.Repair | None, flags: list[str],
              verifications: list[dict]) -> dict[str, Any]:
    tasks = dag.tasks
    time_rollup = next((r for r in rollups if r.aggregation == "critical_path"), None)
    cost_rollup = _cost_rollup(rollups)
    document: dict[str, Any] = {
        "schema": SCHEMA, "run_id": goal.run_id, "goal": goal.description,
        "constraints": [c.model_dump(mode="json") for c in constraints],
        "open_questions": questions,
        "tasks": [t.model_dump(mode="json") for t in tasks],
        "narrative": dag.narrative, "claims": claims,
        "rollup": [r.as_dict() for r in rollups],
        "critical_path": _critical(tasks, time_rollup),
        "waterfall": _waterfall(tasks, cost_rollup),
        "walls": walls,
        "survey": {"triggers": triggers,
                   "surveys": [s.model_dump(mode="json") for s in surveys]},
        "repair": None if fixed is None else _repair_section(fixed, cost_rollup),
        "refusal": None, "flags": flags, "verifications": verifications,
    }
    return document


def _cost_rollup(rollups: list[f.Rollup]) -> f.Rollup | None:
    """The rollup a waterfall shows: a summed cost metric, else any summed metric."""
    summed = [r for r in rollups if r.aggregation == "sum"]
    return next((r for r in summed if r.metric.startswith("cost")), None) or \
        next(iter(summed), None)


def _repair_section(fixed: f.Repair, cost_rollup: f.Rollup | None) -> dict[str, Any]:
    """The repaired plan beside the original: its choices, tasks, rollups and views."""
    cost_id = cost_rollup.constraint_id if cost_rollup else None
    return {
        "feasible": fixed.feasible, "chosen": fixed.chosen,
        "tasks": [t.model_dump(mode="json") for t in fixed.tasks],
        "rollup": [r.as_dict() for r in fixed.rollups],
        "critical_path": _critical(fixed.tasks, next(
            (r for r in fixed.rollups if r.aggregation == "critical_path"), None)),
        "waterfall": _waterfall(fixed.tasks, next(
            (r for r in fixed.rollups if cost_id and r.constraint_id == cost_id), None)),
        "cost": fixed.cost}


def _critical(tasks: list[PlanTask], r: f.Rollup | None) -> dict[str, Any] | None:
    if r is None:
        return None
    return {"constraint_id": r.constraint_id, "metric": r.metric, "tasks": r.path,
            "totals": r.totals}


def _waterfall(tasks: list[PlanTask], r: f.Rollup | None) -> dict[str, Any] | None:
    if r is None:
        return None
    return {"constraint_id": r.constraint_id, "metric": r.metric, "limit": r.limit,
            "rows": f.waterfall(tasks, r.metric, r.limit)}


def _store(k: Kernel, goal: GoalNode, document: dict[str, Any],
           tasks: list[PlanTask]) -> None:
    """The plan in the graph: its constraints, the tasks as goals with dependencies, and
    the document as an artifact of the root."""
    specs = [ConstraintSpec(type=c["type"], domain=c.get("metric") or "general",
                            title=c["title"], payload={k2: c[k2] for k2 in
                                                       ("op", "limit", "unit", "aggregation")
                                                       if c.get(k2) is not None},
                            provenance=Provenance(source="resolver", resolver_id=CLAUDE_ID))
             for c in document["constraints"]]
    ids = k.constraints.upsert(specs)
    k.constraints.add_roles(k.run, goal.id, {"eligible": ids})
    children = {}
    existing = {c["decomposition_key"]: c["id"] for c in
                k.store.run("goal/children_keys", {"goal_id": goal.id})}
    for task in tasks:
        key = f"task:{task.id}"
        children[task.id] = existing.get(key) or k.tree.create_child(
            goal.id, GoalSpec(task.title, f"{task.id}: {task.title}", "text",
                                 purpose="plan_task"), decomposition_key=key)
    k.deps.add(k.run, goal.id, sorted((children[t.id], children[d])
                                         for t in tasks for d in t.depends_on))
    artifact = k.artifacts.register(
        goal.id, json.dumps(document, indent=2, sort_keys=True), type="plan",
        format="json", metadata={"schema": SCHEMA},
        lineage=Lineage(node_id=goal.id, resolver_id=CLAUDE_ID, constraint_ids=ids),
        key=f"plan:{goal.id}")
    k.tree.update(goal.id, Status.PENDING, GoalChanges(plan_document_id=artifact.id))
