"""Property tests: the planner's numbers against an independent computation (check-plan
against corrupted plans: test_check_plan.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernel.plan import feasibility as f
from kernel.plan.checks import expected_status
from kernel.protocol.plan_models import PlanConstraint, PlanTask, Range

LIMITS = st.integers(min_value=1, max_value=400)


@st.composite
def dags(draw: st.DrawFn) -> list[PlanTask]:
    """Valid DAGs: each task depends only on earlier ones; the last depends on all sinks."""
    count = draw(st.integers(min_value=1, max_value=9))
    tasks = []
    for i in range(count):
        deps = sorted(draw(st.sets(st.integers(0, i - 1), max_size=3))) if i else []
        cost = sorted(draw(st.lists(st.integers(0, 100), min_size=3, max_size=3)))
        hours = sorted(draw(st.lists(st.integers(1, 40), min_size=3, max_size=3)))
        tasks.append(PlanTask(
            id=f"t{i}", title=f"task {i}", type="build",
            estimates={"cost_usd": Range(low=cost[0] / 4, mid=cost[1] / 4, high=cost[2] / 4),
                       "hours": Range(low=hours[0] / 2, mid=hours[1] / 2, high=hours[2] / 2)},
            confidence=draw(st.floats(0.3, 1)), depends_on=[f"t{d}" for d in deps]))
    used = {d for t in tasks for d in t.depends_on}
    sinks = [t.id for t in tasks[:-1] if t.id not in used]
    last = tasks[-1]
    tasks[-1] = last.model_copy(update={"depends_on": sorted(set(last.depends_on) | set(sinks))})
    return tasks


def _paths(tasks: list[PlanTask]) -> list[list[str]]:
    """Every dependency chain, by brute force (independent of the kernel's DAG code)."""
    deps = {t.id: t.depends_on for t in tasks}
    chains = [[t.id] for t in tasks]
    complete = []
    while chains:
        chain = chains.pop()
        extended = [[*chain, d] for d in deps[chain[-1]]]
        if extended:
            chains += extended
        else:
            complete.append(chain)
    return complete


def _constraints(cost_limit: int, time_limit: int) -> list[PlanConstraint]:
    return [PlanConstraint(id="cost", title="cost", kind="explicit", type="logic",
                           metric="cost_usd", aggregation="sum", op="<=", limit=cost_limit,
                           source_text=f"under ${cost_limit}"),
            PlanConstraint(id="time", title="time", kind="explicit", type="logic",
                           metric="hours", aggregation="critical_path", op="<=",
                           limit=time_limit, source_text=f"within {time_limit} hours")]


@settings(max_examples=150, deadline=None)
@given(dags(), LIMITS, LIMITS)
def test_rollup_path_waterfall_and_status_match_an_independent_computation(
        tasks: list[PlanTask], cost_limit: int, time_limit: int) -> None:
    assert f.validate_dag(tasks) == []
    rolled = {r.constraint_id: r for r in f.rollup(_constraints(cost_limit, time_limit), tasks)}
    for which in ("low", "mid", "high"):
        total = sum(getattr(t.estimates["cost_usd"], which) for t in tasks)
        assert rolled["cost"].totals[which] == pytest.approx(total)
        longest = max(sum(getattr(next(t for t in tasks if t.id == i).estimates["hours"],
                                  which) for i in chain) for chain in _paths(tasks))
        assert rolled["time"].totals[which] == pytest.approx(longest)
    for r in rolled.values():
        assert r.status == expected_status(r.totals, r.op, r.limit)
    rows = f.waterfall(tasks, "cost_usd", cost_limit)
    cumulative = [r["cumulative"] for r in rows]
    assert cumulative == sorted(cumulative)
    assert [r["remaining"] for r in rows] == sorted((r["remaining"] for r in rows), reverse=True)
    assert cumulative[-1] == pytest.approx(rolled["cost"].totals["mid"])
    position = {r["task_id"]: i for i, r in enumerate(rows)}
    assert all(position[d] < position[t.id] for t in tasks for d in t.depends_on)
