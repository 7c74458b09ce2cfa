"""Property tests: the planner's numbers against an independent computation, and
check-plan against corrupted plans."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernel.plan import feasibility as f
from kernel.plan.checks import check_plan, expected_status
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
                           metric="cost_usd", aggregation="sum", op="<=", limit=cost_limit),
            PlanConstraint(id="time", title="time", kind="explicit", type="logic",
                           metric="hours", aggregation="critical_path", op="<=",
                           limit=time_limit)]


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


def _document(tasks: list[PlanTask], cost_limit: int, time_limit: int) -> dict:
    constraints = _constraints(cost_limit, time_limit)
    rollups = f.rollup(constraints, tasks)
    time = next(r for r in rollups if r.constraint_id == "time")
    return json.loads(json.dumps({
        "schema": "kernel-plan/1", "run_id": "run:x", "goal": "cost and time",
        "constraints": [{**c.model_dump(mode="json"), "source_text": c.title}
                        for c in constraints] + [
            {"id": "i", "title": "implicit", "kind": "implicit", "type": "semantic",
             "removal_consequence": "it breaks"}],
        "tasks": [t.model_dump(mode="json") for t in tasks],
        "rollup": [r.as_dict() for r in rollups],
        "critical_path": {"constraint_id": "time", "metric": "hours", "tasks": time.path,
                          "totals": time.totals},
        "waterfall": {"constraint_id": "cost", "metric": "cost_usd", "limit": cost_limit,
                      "rows": f.waterfall(tasks, "cost_usd", cost_limit)},
        "walls": [], "survey": {"triggers": {}, "surveys": []}, "repair": None,
        "refusal": None, "flags": [], "verifications": []}))


@settings(max_examples=60, deadline=None)
@given(dags())
def test_a_computed_plan_passes_check_plan(tasks: list[PlanTask]) -> None:
    doc = _document(tasks, 10_000, 10_000)  # generous limits, confident tasks: no survey
    failed = [r for r in check_plan(doc) if not r.passed]
    assert not failed, failed



def _valid() -> dict:
    tasks = [PlanTask(id="a", title="a", type="research", confidence=0.9,
                      estimates={"cost_usd": Range(low=1, mid=2, high=3),
                                 "hours": Range(low=1, mid=1, high=2)}),
             PlanTask(id="b", title="b", type="build", confidence=0.9, depends_on=["a"],
                      estimates={"cost_usd": Range(low=2, mid=3, high=4),
                                 "hours": Range(low=2, mid=3, high=4)}),
             PlanTask(id="c", title="c", type="build", confidence=0.9, depends_on=["a", "b"],
                      estimates={"cost_usd": Range(low=1, mid=1, high=1),
                                 "hours": Range(low=1, mid=2, high=3)})]
    return _document(tasks, 100, 100)


def _corrupt(kind: str) -> dict:
    doc = copy.deepcopy(_valid())
    tasks = {t["id"]: t for t in doc["tasks"]}
    if kind == "cycle":
        tasks["b"]["depends_on"] = ["a", "c"]
    elif kind == "dangling":
        tasks["b"]["depends_on"] = ["a", "ghost"]
    elif kind == "negative":  # the reported total agrees: only the estimate is wrong
        tasks["b"]["estimates"]["cost_usd"]["low"] = -5
        doc["rollup"][0]["totals"]["low"] -= 7
    elif kind == "total":
        doc["rollup"][0]["totals"]["mid"] += 1
    elif kind == "status":
        doc["rollup"][0]["status"] = "UNSAT"
    elif kind == "waterfall":
        doc["waterfall"]["rows"][1]["cumulative"] = 0
    elif kind == "critical_path":
        doc["critical_path"]["tasks"] = ["a", "c"]
    return doc


def test_the_valid_reference_plan_passes() -> None:
    assert all(r.passed for r in check_plan(_valid()))


@pytest.mark.parametrize(("kind", "assertion"), [
    ("cycle", {"2.2"}), ("dangling", {"2.1", "2.2"}), ("negative", {"3.0"}),
    ("total", {"3.1"}), ("status", {"3.4"}), ("waterfall", {"3.2"}),
    ("critical_path", {"6.1"}),
])
def test_a_corrupted_plan_fails_the_exact_assertion(kind: str, assertion: set[str]) -> None:
    failed = {r.id for r in check_plan(_corrupt(kind)) if not r.passed}
    assert failed == assertion


def test_check_plan_cli_exits_non_zero_on_failure(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from kernel.cli.app import app

    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_corrupt("cycle")))
    result = CliRunner().invoke(app, ["check-plan", str(path)])
    assert result.exit_code == 1 and "FAIL 2.2 no cycles" in result.output
