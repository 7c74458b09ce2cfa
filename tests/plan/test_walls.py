"""Walls by their definition: a smallest set of tasks whose removal brings an UNSAT
constraint within its limit. On parallel branches that takes a task of each; brute force
over every subset of small random plans agrees with the planner and with check-plan."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings

from kernel.plan import feasibility as f
from kernel.plan import recompute
from kernel.plan.checks import check_plan
from kernel.plan.compose import SurveyUnusable, compose
from kernel.protocol.plan_models import (
    Approach,
    ApproachSurvey,
    ExtractedConstraints,
    PlanConstraint,
    PlanTask,
    Range,
    TaskDag,
    TaskSurvey,
)
from tests.plan.test_properties import LIMITS, _constraints, _paths, dags


def _task(task_id: str, weeks: float, cost: float, after: list[str]) -> PlanTask:
    return PlanTask(id=task_id, title=task_id.replace("_", " "), type="build",
                    estimates={"weeks": Range(low=weeks * 0.8, mid=weeks, high=weeks * 1.3),
                               "cost_usd": Range(low=cost * 0.9, mid=cost, high=cost * 1.2)},
                    confidence=0.8, depends_on=after)


# A database migration: after the design, two branches side by side (the schema and its
# data copy; the application's changes and their tests), joined by a rehearsal.
MIGRATION = [
    _task("design", 1, 2000, []),
    _task("schema", 2, 3000, ["design"]),
    _task("replicate", 4, 4000, ["schema"]),
    _task("app_changes", 3, 5000, ["design"]),
    _task("apptest", 2.5, 2000, ["app_changes"]),
    _task("rehearsal", 1, 1500, ["replicate", "apptest"]),
    _task("cutover", 0.5, 1000, ["rehearsal"]),
    _task("verify", 0.5, 800, ["cutover"]),
    _task("decommission", 0.5, 500, ["verify"]),
]
TIME = PlanConstraint(id="time", title="done within 6.5 weeks", kind="explicit",
                      type="logic", metric="weeks", aggregation="critical_path", op="<=",
                      limit=6.5, unit="weeks", source_text="within 6.5 weeks")


def test_a_time_limit_broken_on_two_parallel_branches_has_a_wall_on_each() -> None:
    rolled = f.rollup([TIME], MIGRATION)
    assert rolled[0].status == "UNSAT"  # design 1 + schema 2 + replicate 4 + ... = 9.5
    (wall,) = f.walls(rolled, MIGRATION)
    cluster = set(wall["cluster"])
    # the branch through replicate is 9.5 weeks, the one through apptest 9: freeing one
    # leaves the other over 6.5
    assert cluster & {"schema", "replicate"} and cluster & {"app_changes", "apptest"}, cluster
    assert len(cluster) == 2 or cluster & {"design", "rehearsal", "cutover", "verify",
                                          "decommission"}
    assert {t["task_id"] for t in wall["tasks"]} >= {"replicate", "apptest"}


def _survey(triggers: dict[str, list[str]], rollups: list[f.Rollup]) -> ApproachSurvey:
    """For every triggered task, a faster and a slower way."""
    by_id = {t.id: t for t in MIGRATION}
    return ApproachSurvey(surveys=[TaskSurvey(task_id=task_id, approaches=[
        Approach(id=f"{task_id}_fast", title=f"{task_id}, fast",
                 estimates={"weeks": Range(low=0.1, mid=0.2, high=0.3),
                            "cost_usd": by_id[task_id].estimates["cost_usd"]},
                 confidence=0.7),
        Approach(id=f"{task_id}_slow", title=f"{task_id}, careful",
                 estimates={"weeks": by_id[task_id].estimates["weeks"],
                            "cost_usd": by_id[task_id].estimates["cost_usd"]},
                 confidence=0.9)]) for task_id in sorted(triggers)])


def test_check_plan_recomputes_the_planners_parallel_wall() -> None:
    extracted = ExtractedConstraints(constraints=[TIME])
    doc, _ = compose("migrate the orders database within 6.5 weeks", "run:test", extracted,
                     TaskDag(tasks=MIGRATION), _survey)
    plan = doc.as_json()
    (wall,) = plan["walls"]
    assert set(plan["survey"]["triggers"]) >= set(wall["cluster"])  # each wall task surveyed
    results = {r.id: r for r in check_plan(plan)}
    assert results["4.0"].passed, results["4.0"].detail
    # a wall of the old kind (one task of one branch) is caught
    broken = {**plan, "walls": [{**wall, "cluster": ["replicate"]}]}
    assert not {r.id: r for r in check_plan(broken)}["4.0"].passed
    wrong_excess = {**plan, "walls": [{**wall, "excess": wall["excess"] + 1}]}
    assert not {r.id: r for r in check_plan(wrong_excess)}["4.0"].passed


def _mid(tasks: list[PlanTask], c: PlanConstraint, removed: set[str]) -> float:
    """The constraint's mid total with ``removed`` at zero, by brute force."""
    assert c.metric is not None
    metric = c.metric

    def value(task_id: str) -> float:
        task = next(t for t in tasks if t.id == task_id)
        return 0.0 if task_id in removed else task.estimates[metric].mid

    if c.aggregation == "sum":
        return sum(value(t.id) for t in tasks)
    return max(sum(value(i) for i in chain) for chain in _paths(tasks))


def _as_dicts(tasks: list[PlanTask]) -> list[dict[str, Any]]:
    return [t.model_dump(mode="json") for t in tasks]


@settings(max_examples=120, deadline=None)
@given(dags(), LIMITS, LIMITS)
def test_a_wall_is_a_smallest_set_whose_removal_frees_its_constraint(
        tasks: list[PlanTask], cost_limit: int, time_limit: int) -> None:
    constraints = _constraints(cost_limit, time_limit)
    rolled = f.rollup(constraints, tasks)
    checker = recompute.walls([c.model_dump(mode="json") for c in constraints],
                              _as_dicts(tasks),
                              recompute.rollup([c.model_dump(mode="json") for c in constraints],
                                               _as_dicts(tasks)))
    for wall in f.walls(rolled, tasks):
        c = next(c for c in constraints if c.id == wall["constraint_id"])
        assert c.limit is not None
        cluster = set(wall["cluster"])
        assert _mid(tasks, c, cluster) <= c.limit + 1e-9  # it frees the constraint
        smallest = next(size for size in range(len(tasks) + 1)
                        for chosen in itertools.combinations([t.id for t in tasks], size)
                        if _mid(tasks, c, set(chosen)) <= c.limit + 1e-9)
        assert len(cluster) == smallest
        assert wall["cluster"] == checker[c.id]


def test_a_wall_task_no_survey_covered_refuses_the_plan_naming_it_and_the_fix() -> None:
    """A plan with a wall task unsurveyed would fail check-plan's 4.4: none is written;
    the refusal names the task, why it needed a survey and what to add."""
    def only_replicate(triggers: dict[str, list[str]],
                       rollups: list[f.Rollup]) -> ApproachSurvey:
        answered = _survey(triggers, rollups)
        return ApproachSurvey(surveys=[s for s in answered.surveys
                                       if s.task_id == "replicate"])

    with pytest.raises(SurveyUnusable) as refused:
        compose("migrate the orders database within 6.5 weeks", "run:test",
                ExtractedConstraints(constraints=[TIME]), TaskDag(tasks=MIGRATION),
                only_replicate)
    (problem,) = refused.value.problems
    assert problem.startswith("app_changes has no survey (pushes time to UNSAT): add a "
                              "survey with task_id app_changes to the survey_approaches "
                              "proposal, with at least two approaches, one below its mid "
                              "weeks 3"), problem
    assert "UNSAT as planned: 'time' mid 9.5 against <= 6.5" in str(refused.value)
