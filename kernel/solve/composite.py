"""A decomposed goal's arithmetic constraints, decided again over its parts (Z3, sigma 1.0).

Each part met its own constraints; none of them sees the whole. Children inherit their
parent's constraints as already met (B6), so a budget like ``cost_usd <= 5`` or a total
like ``sum_latency_ms <= 500`` is only true of the goal once its parts are added up.
When the last child resolves, the goal's arithmetic constraints are checked with facts
about its subtree:

* ``cost_usd``, ``seconds``: what the goal and everything below it spent, superseded
  attempts included (that money was spent on this goal);
* ``parts`` and ``sum_<m>``, ``max_<m>``, ``min_<m>``: over the metrics the solution's
  leaves report (the live leaves below it; build subgoals made tools, not parts);
* any other name: the goal's own output metrics, as when it was verified.

A violation reopens the goal with the violation trace as its feedback (its subtree is
invalidated, history kept), within the contradiction budget; past it, the goal is refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kernel.core.artifacts import Artifacts
from kernel.core.envelopes import Check, Constraint
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.state_machine import Status
from kernel.core.units import micros_to_usd, ms_to_seconds
from kernel.protocol import solve_models as models
from kernel.refusal import RefusalReason
from kernel.repositories import goals
from kernel.solve.effects import Decision, Flow, RefuseGoal, Reopen, StepChanges
from kernel.solve.verification import arith_check, part_facts
from kernel.store.base import GraphStore

S = Status


def judged(goal: GoalNode, arithmetic: list[Constraint], facts: dict[str, float],
           missing: dict[str, list[str]], max_reopens: int,
           ) -> tuple[StepChanges, list[str] | None]:
    """The check of the goal's arithmetic constraints over its parts' ``facts``, told in
    its log; then None when they hold, otherwise the goals to run next (the reopened
    goal, or the parent of a refused one) with the reopening or refusal."""
    checks = [arith_check(c, facts) for c in arithmetic]
    failed = [c for c in checks if not c.passed]
    told = StepChanges((Decision(
        goal.id, "composite_check", tuple(c.id for c in arithmetic),
        "UNSAT" if failed else "SAT",
        f"{len(checks) - len(failed)}/{len(checks)} arithmetic constraints hold over "
        f"{int(facts['parts'])} parts",
        (("checks", [c.model_dump(mode="json") for c in checks]),)),))
    if not failed:
        return told, None
    return _violated(told, goal, failed, {c.id: c.title for c in arithmetic}, missing,
                     max_reopens)


def subtree_facts(store: GraphStore, artifacts: Artifacts, goal: GoalNode,
                  ) -> tuple[dict[str, float], dict[str, list[str]]]:
    """The facts above, and for each metric some leaves report and others do not, the
    leaves that leave it out (it then has no total)."""
    rows = goals.subtree_parts(store, goal.id)
    live = live_solution(rows, goal.id)
    parents = {r["parent_id"] for r in rows if r["id"] in live}
    leaves = [r for r in rows if r["id"] in live - parents - {goal.id}]
    metrics = {r["id"]: _metrics(artifacts, r["output_artifact_id"]) for r in leaves}
    own = _metrics(artifacts, goal.output_artifact_id)
    names = sorted({n for m in metrics.values() for n in m})
    missing = {n: sorted(i for i, m in metrics.items() if n not in m) for n in names}
    facts = {**own, **part_facts([metrics[r["id"]] for r in leaves]),
             "cost_usd": micros_to_usd(sum(int(r["cost_spent"] or 0) for r in rows)),
             "seconds": ms_to_seconds(sum(int(r["time_spent"] or 0) for r in rows))}
    return facts, {n: ids for n, ids in missing.items() if ids}


def live_solution(rows: Sequence[Mapping[str, Any]], goal_id: str) -> set[str]:
    """Ids of the goal and its live descendants that are not build subgoals or below one."""
    children: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        children.setdefault(row["parent_id"], []).append(row)
    live, frontier = {goal_id}, [goal_id]
    while frontier:
        for child in children.get(frontier.pop(), []):
            if not child["stale"] and child["purpose"] != "build":
                live.add(child["id"])
                frontier.append(child["id"])
    return live


def _metrics(artifacts: Artifacts, artifact_id: str | None) -> dict[str, float]:
    if not artifact_id:
        return {}
    return models.ResolutionOutput.model_validate_json(artifacts.read(artifact_id)).metrics


def _violated(told: StepChanges, goal: GoalNode, failed: list[Check], titles: dict[str, str],
              missing: dict[str, list[str]], max_reopens: int,
              ) -> tuple[StepChanges, list[str]]:
    names = ", ".join(sorted(titles[c.constraint_id] for c in failed))
    trace = [c.model_dump(mode="json") for c in failed]
    reopened = goal.reopened
    if reopened >= max_reopens:
        return told + RefuseGoal(goal, RefusalReason.PARTS_VIOLATE_CONSTRAINT,
                                 f"its parts together violate {names}: {trace}",
                                 (("constraints", names), ("count", str(reopened)))), \
            [goal.parent_id] if goal.parent_id else []
    return told + Reopen(goal.id, S.SELECTING_RESOLVER, GoalChanges(
        reopened=reopened + 1,
        feedback={"summary": f"the parts together violate {names}", "violations": trace,
                  "metrics_not_reported_by": missing}),
        Flow(goal.id, f"reopened: the parts together violate {names}")), [goal.id]
