"""The plan document is a model: every plan the planner writes is one, dumps to the same
bytes it was built from, and a document the planner could not have written is named."""

from __future__ import annotations

import doctest
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from kernel.plan import document as document_module
from kernel.plan.document import PlanDocument, shape_problems
from kernel.plan.session import example_goal, example_names, example_script, plan_goal
from kernel.store.base import GraphStore
from resolvers.scripted import ScriptedProposer
from tests.plan.test_check_plan import plans


def test_the_module_examples_hold() -> None:
    assert doctest.testmod(document_module).failed == 0


@pytest.mark.parametrize("name", example_names())
def test_every_shipped_plan_is_a_document_that_dumps_to_itself(
        name: str, initialised_graph: GraphStore, tmp_path: Path) -> None:
    script = example_script(name)
    goal, verifications = example_goal(script)
    written = plan_goal(initialised_graph, tmp_path, goal, ScriptedProposer.from_file(script),
                        {"proposer": "scripted", "script": str(script)}, 5.0, 600,
                        verifications)
    model = PlanDocument.model_validate(written)
    assert json.dumps(model.as_json(), sort_keys=True) == json.dumps(written, sort_keys=True)
    assert shape_problems(written) == []


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(plans())
def test_generated_plans_round_trip(doc: dict[str, Any]) -> None:
    assert json.dumps(PlanDocument.model_validate(doc).as_json(), sort_keys=True) == \
        json.dumps(doc, sort_keys=True)


def test_what_the_planner_never_writes_is_named() -> None:
    doc = next(iter(_a_plan()))
    assert shape_problems({**doc, "verdict": "feasible"}) == ["verdict: Extra inputs are not "
                                                              "permitted"]
    bad_task = {**doc["tasks"][0], "confidence": 1.5}
    problems = shape_problems({**doc, "tasks": [bad_task, *doc["tasks"][1:]]})
    assert problems and problems[0].startswith("tasks.0.confidence:")
    assert shape_problems([]) == ["document: Input should be a valid dictionary or instance "
                                  "of PlanDocument"]


def _a_plan() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    @settings(max_examples=1, deadline=None, suppress_health_check=list(HealthCheck))
    @given(plans())
    def take(doc: dict[str, Any]) -> None:
        found.append(doc)

    take()
    return found
