"""Planning mode: introspect a hard goal against its constraints before anything runs.

Three proposals (constraints, the task DAG, approach surveys), each budget-gated and
recorded in the ledger. The DAG is validated here (an invalid one refuses the plan);
every number is computed from the proposals by ``compose.py``. A refusal is recorded in
the ledger; the plan document is stored as an artifact of the run's root goal, and the
tasks become goals of the run (with their dependencies), so the plan can be explored in
the graph.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from kernel.core.artifacts import Artifacts
from kernel.core.dag import Dependencies
from kernel.core.envelopes import ConstraintSpec, Lineage, Provenance
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.goals import GoalSpec
from kernel.core.state_machine import Status
from kernel.plan import feasibility as f
from kernel.plan.compose import (
    ConstraintsIncomplete,
    PlanRefused,
    SurveyUnusable,
    check_complete,
    compose,
    refusal_facts,
)
from kernel.plan.digest import SCHEMA
from kernel.plan.document import PlanDocument
from kernel.proposals import Out, ProposerUnavailable
from kernel.protocol import Operation, PermanentError
from kernel.protocol import operations as ops
from kernel.protocol.plan_models import (
    ApproachSurvey,
    ExtractedConstraints,
    TaskDag,
)
from kernel.refusal import RefusalReason, refuse
from kernel.repositories import goals
from kernel.runtime.gate import CLAUDE_ID, BudgetDenied, Gated, ask
from kernel.runtime.start import Starting


class Planning(Starting, Gated, Protocol):
    """What planning works with (the run's context has it all): what a run starts with
    (its run, whose commits store the plan; the goal tree, the root read and the tasks
    made its children; the constraint engine, the planned constraints), the gate's parts
    (each of its three proposals is a budget-gated call, a refusal recorded in its
    ledger), the dependencies between the tasks and the artifacts (the plan document)."""

    @property
    def deps(self) -> Dependencies: ...

    @property
    def artifacts(self) -> Artifacts: ...


def make_plan(k: Planning, root_id: str, verifications: list[dict[str, Any]] | None = None,
              ) -> dict[str, Any]:
    """Plan the run's root goal; returns the plan document (also stored in the graph)."""
    goal = k.tree.get(root_id)
    extracted: ExtractedConstraints = _ask(k, goal, ops.PLAN_CONSTRAINTS, {})
    constraints = extracted.constraints
    try:  # before the task DAG is asked for: nothing more is paid for a plan not written
        check_complete(goal.description, constraints)
    except ConstraintsIncomplete as incomplete:
        refuse(k.proposals.ledger, root_id, RefusalReason.INVALID_PROPOSAL, str(incomplete),
               operation=ops.PLAN_CONSTRAINTS.name, failure="; ".join(incomplete.problems))
        raise
    dag: TaskDag = _ask(k, goal, ops.PLAN_TASKS, {
        "planned_constraints": [c.model_dump(mode="json") for c in constraints]})
    problems = f.validate_dag(dag.tasks)
    if problems:
        refuse(k.proposals.ledger, root_id, RefusalReason.INVALID_PROPOSAL,
               f"the task DAG is invalid: {'; '.join(problems)}", operation="plan_tasks",
               failure=problems[0])
        raise PlanRefused(f"the proposed task DAG is invalid: {'; '.join(problems)}")
    tasks = dag.tasks

    def ask_survey(triggers: dict[str, list[str]], rollups: list[f.Rollup]) -> ApproachSurvey:
        return _ask(k, goal, ops.SURVEY_APPROACHES, {
            "tasks": [{**t.model_dump(mode="json"), "why": triggers[t.id]}
                      for t in tasks if t.id in triggers],
            "planned_constraints": [c.model_dump(mode="json") for c in constraints],
            "rollup": [r.as_dict() for r in rollups]})

    try:
        document, fixed = compose(goal.description, goal.run_id, extracted, dag, ask_survey,
                                  verifications)
    except SurveyUnusable as unusable:  # a plan from it would fail check-plan: none is written
        refuse(k.proposals.ledger, root_id, RefusalReason.INVALID_PROPOSAL, str(unusable),
               operation=ops.SURVEY_APPROACHES.name, failure="; ".join(unusable.problems))
        raise
    if fixed is not None and not fixed.feasible:
        unmet = (fixed.closest or {}).get("unmet") or []
        refuse(k.proposals.ledger, root_id, RefusalReason.NO_FEASIBLE_REPAIR,
               f"no choice of surveyed approaches meets {', '.join(fixed.conflict)} together"
               f" (the closest leaves {', '.join(unmet)} UNSAT)",
               conflict=fixed.conflict, **refusal_facts(
                   fixed, [w.model_dump() for w in document.walls]))
    return _store(k, goal, document)


def _ask(gate: Gated, goal: GoalNode, op: Operation[Out], payload: dict[str, Any]) -> Out:
    """A budget-gated proposal; anything short of a usable one refuses the plan."""
    operation = op.name
    try:
        proposal = ask(gate, goal.id, op, op.request(
            goal.id, goal_description=goal.description,
            payload={"goal_summary": goal.summary, **payload}))
    except BudgetDenied as denied:
        refuse(gate.proposals.ledger, goal.id, RefusalReason.BUDGET_EXHAUSTED,
               f"{operation}: the planning budget cannot pay for it",
               needed_usd=max(denied.estimate.cost - denied.remaining.cost, 0) / 1e6,
               needed_seconds=max(denied.estimate.time - denied.remaining.time, 0) / 1e3)
        raise PlanRefused(f"{operation}: the planning budget is exhausted; raise --budget") \
            from None
    except (PermanentError, ProposerUnavailable) as exc:  # paid for and recorded by ask
        mode = getattr(exc, "failure_mode", "model_unavailable")
        refuse(gate.proposals.ledger, goal.id, RefusalReason.INVALID_PROPOSAL,
               f"{operation}: {exc}", operation=operation, failure=mode)
        raise PlanRefused(f"{operation}: no usable proposal: {exc}") from None
    return proposal.output


def _store(k: Planning, goal: GoalNode, document: PlanDocument) -> dict[str, Any]:
    """The plan in the graph (its constraints, the tasks as goals with dependencies, and
    the document as an artifact of the root); returns the document as stored."""
    specs = [ConstraintSpec(type=c.type, domain=c.metric or "general", title=c.title,
                            payload={name: value for name in ("op", "limit", "unit",
                                                              "aggregation")
                                     if (value := getattr(c, name)) is not None},
                            provenance=Provenance(source="resolver", resolver_id=CLAUDE_ID))
             for c in document.constraints]
    ids = k.constraints.upsert(specs)
    k.constraints.add_roles(k.run, goal.id, {"eligible": ids})
    children = {}
    existing = goals.children_keys(k.run.store, goal.id)
    tasks = document.tasks
    for task in tasks:
        key = f"task:{task.id}"
        children[task.id] = existing.get(key) or k.tree.create_child(
            goal.id, GoalSpec(task.title, f"{task.id}: {task.title}", "text",
                                 purpose="plan_task"), decomposition_key=key)
    k.deps.add(k.run, goal.id, sorted((children[t.id], children[d])
                                         for t in tasks for d in t.depends_on))
    stored = document.as_json()
    artifact = k.artifacts.register(
        goal.id, json.dumps(stored, indent=2, sort_keys=True), type="plan",
        format="json", metadata={"schema": SCHEMA},
        lineage=Lineage(node_id=goal.id, resolver_id=CLAUDE_ID, constraint_ids=ids),
        key=f"plan:{goal.id}")
    k.tree.update(goal.id, Status.PENDING, GoalChanges(plan_document_id=artifact.id))
    return stored
