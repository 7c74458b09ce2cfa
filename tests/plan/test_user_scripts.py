"""Planning on a user's own proposals: whatever the survey gives, the planner refuses or
writes a plan its own check-plan accepts, and a refusal names every constraint left
UNSAT."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from kernel.plan import feasibility as f
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
from tests.plan.test_properties import _constraints, dags
from tests.plan.test_walls import MIGRATION, TIME

COST = PlanConstraint(id="cost", title="under $15,000", kind="explicit", type="logic",
                      metric="cost_usd", aggregation="sum", op="<=", limit=15000, unit="USD",
                      source_text="under $15,000")
ROLLBACK = PlanConstraint(id="rollback", title="the old database stays until verified",
                          kind="implicit", type="semantic",
                          removal_consequence="a failed cutover loses orders")
GOAL = "migrate the orders database within 6.5 weeks and under $15,000"


def _scaled(r: Range, by: float) -> Range:
    return Range(low=r.low * by, mid=r.mid * by, high=r.high * by)


def _a_little_better(triggers: dict[str, list[str]], rollups: list[f.Rollup]) -> ApproachSurvey:
    """Two approaches per triggered task, each a little faster or cheaper: never enough
    for 6.5 weeks or $15,000."""
    by_id = {t.id: t for t in MIGRATION}
    return ApproachSurvey(surveys=[TaskSurvey(task_id=task_id, approaches=[
        Approach(id=f"{task_id}_quick", title=f"{task_id}, a little quicker",
                 estimates={"weeks": _scaled(by_id[task_id].estimates["weeks"], 0.9),
                            "cost_usd": by_id[task_id].estimates["cost_usd"]},
                 confidence=0.7),
        Approach(id=f"{task_id}_lean", title=f"{task_id}, a little cheaper",
                 estimates={"weeks": by_id[task_id].estimates["weeks"],
                            "cost_usd": _scaled(by_id[task_id].estimates["cost_usd"], 0.95)},
                 confidence=0.7)]) for task_id in sorted(triggers)])


def test_a_refusal_names_every_constraint_the_closest_choice_leaves_unsat() -> None:
    """Time and cost both stay UNSAT whatever is chosen; the minimal conflict is one of
    them, and the refusal names the other too, with what it reaches."""
    doc, fixed = compose(GOAL, "run:test", ExtractedConstraints(constraints=[TIME, COST,
                                                                           ROLLBACK]),
                         TaskDag(tasks=MIGRATION), _a_little_better)
    assert fixed is not None and doc.refusal is not None
    assert sorted(doc.refusal.closest["unmet"]) == ["cost", "time"]
    assert len(doc.refusal.conflict) == 1
    (words,) = doc.refusal.to_proceed
    for constraint in ("cost", "time"):
        assert f"'{constraint}'" in words, words
    assert "the closest choice leaves 'cost' (mid " in words and "UNSAT too" in words
    failed = [r for r in check_plan(doc.as_json()) if not r.passed]
    assert not failed, failed


def test_check_plan_fails_a_refusal_that_leaves_out_a_constraint_still_unsat() -> None:
    """Its words cut back to the minimal conflict, or its closest choice said to leave
    less UNSAT than it does: 5.7 fails either way."""
    doc, _ = compose(GOAL, "run:test", ExtractedConstraints(constraints=[TIME, COST,
                                                                       ROLLBACK]),
                     TaskDag(tasks=MIGRATION), _a_little_better)
    plan = doc.as_json()
    (words,) = plan["refusal"]["to_proceed"]
    quiet = copy.deepcopy(plan)
    quiet["refusal"]["to_proceed"] = [words.split("; the closest choice")[0]]
    hidden = copy.deepcopy(quiet)
    hidden["refusal"]["closest"]["unmet"] = ["time"]
    for damaged in (quiet, hidden):
        failed = {r.id: r.detail for r in check_plan(damaged) if not r.passed}
        assert set(failed) == {"5.7"}, failed
    assert "does not name cost" in {r.id: r.detail for r in check_plan(quiet)}["5.7"]


OTHER = PlanConstraint(id="accuracy", title="accuracy at least 0.9", kind="implicit",
                       type="logic", metric="accuracy", aggregation="projection", op=">=",
                       limit=0.9, projection=Range(low=0.8, mid=0.92, high=0.95),
                       removal_consequence="the result is not worth having")


@st.composite
def approaches(draw: st.DrawFn, task: PlanTask, constraint_ids: list[str]) -> list[Approach]:
    """Zero to three approaches: ids and titles sometimes repeated, estimates anywhere
    around the task's, a projection sometimes of a constraint the plan lacks."""
    found = []
    for n in range(draw(st.sampled_from([2] * 8 + [3] * 3 + [1, 0]))):
        estimates = {}
        for metric, r in task.estimates.items():
            by = draw(st.sampled_from([0.0, 0.25, 0.5, 1.0, 1.5]))
            estimates[metric] = _scaled(r, by)
        projections = {}
        if draw(st.integers(0, 5)) == 0:
            cid = draw(st.sampled_from([*constraint_ids, "uptime"]))
            mid = draw(st.sampled_from([0.85, 0.91, 0.97]))
            projections[cid] = Range(low=mid - 0.05, mid=mid, high=mid + 0.02)
        tag = draw(st.sampled_from([str(n)] * 12 + ["same"]))
        found.append(Approach(id=f"{task.id}_{tag}", title=f"{task.id} way {tag}",
                              estimates=estimates, confidence=draw(st.floats(0, 1)),
                              projections=projections))
    return found


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dags(), st.integers(1, 150), st.integers(1, 60), st.booleans(),
       st.lists(st.integers(0, 8), max_size=2), st.data())
def test_the_planner_refuses_or_writes_a_plan_check_plan_accepts(
        tasks: list[PlanTask], cost_limit: int, time_limit: int, projected: bool,
        unsure: list[int], data: st.DataObject) -> None:
    """Over generated scripts (their constraints complete: the explicit ones quote the
    goal, an implicit one says what its removal costs), with surveys given, missing, short
    of approaches or projecting constraints that are not there: compose refuses (naming
    why), or every check-plan assertion passes."""
    tasks = [t.model_copy(update={"confidence": 0.1}) if i in unsure else t
             for i, t in enumerate(tasks)]
    constraints = [*_constraints(cost_limit, time_limit), ROLLBACK, *([OTHER] if projected
                                                                    else [])]
    ids = [c.id for c in constraints]
    by_id = {t.id: t for t in tasks}

    def survey(triggers: dict[str, list[str]], rollups: list[f.Rollup]) -> ApproachSurvey:
        asked = sorted(triggers) + data.draw(st.lists(st.sampled_from(sorted(by_id)),
                                                      max_size=1, unique=True))
        given = [t for t in asked if data.draw(st.integers(0, 29)) > 0]  # some left out
        return ApproachSurvey(surveys=[
            TaskSurvey(task_id=t, approaches=data.draw(approaches(by_id[t], ids)))
            for t in dict.fromkeys(given)])

    try:
        doc, _ = compose(f"a goal under ${cost_limit} within {time_limit} hours",
                         "run:generated", ExtractedConstraints(constraints=constraints),
                         TaskDag(tasks=tasks), survey)
    except SurveyUnusable as refused:
        assert refused.problems and all(p for p in refused.problems)
        event("refused (unusable survey)")
        return
    failed = [(r.id, r.detail) for r in check_plan(doc.as_json()) if not r.passed]
    assert not failed, failed
    event("repaired" if doc.repair and doc.repair.feasible else
          "refused (no feasible repair)" if doc.refusal else "nothing to repair")


def _only(task_ids: set[str]) -> Any:
    def survey(triggers: dict[str, list[str]], rollups: list[f.Rollup]) -> ApproachSurvey:
        answered = _a_little_better(triggers, rollups)
        return ApproachSurvey(surveys=[s for s in answered.surveys if s.task_id in task_ids])
    return survey


def test_a_refusal_for_a_missing_survey_names_every_unsat_constraint() -> None:
    with pytest.raises(SurveyUnusable) as refused:
        compose(GOAL, "run:test", ExtractedConstraints(constraints=[TIME, COST, ROLLBACK]),
                TaskDag(tasks=MIGRATION), _only({"replicate"}))
    said = str(refused.value)
    assert "app_changes has no survey (pushes time to UNSAT, pushes cost to UNSAT)" in said
    assert "one below its mid cost_usd 5000 or weeks 3" in said
    assert "UNSAT as planned: 'time' mid 9.5 against <= 6.5, 'cost' mid 19800 against " \
        "<= 15000" in said
