"""GoalNode is the stored Goal node exactly: every property a statement writes is a
declared field, every field is written by some statement, and a node read back from the
real store validates field for field (JSON-valued properties parsed)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from kernel.core.goal_node import JSON_FIELDS, STEP_FIELDS, GoalChanges, GoalNode
from kernel.core.goals import GoalSpec, GoalTree
from kernel.core.run import Run
from kernel.store import GraphStore
from kernel.store.queries import QueryCatalog
from tests.solve.test_consistency import _run

CYPHER = Path(__file__).resolve().parents[2] / "cypher"
FIELDS = set(GoalNode.model_fields)


def _written_by_statements() -> set[str]:
    """Goal properties the named statements set: ``v.name =`` for every variable bound
    to ``:Goal``, and the step fields ``g += $changes`` writes."""
    written: set[str] = set()
    texts = {q.text for dialect in ("falkordb", "neo4j") for q in QueryCatalog(CYPHER, dialect)}
    for text in texts:  # as expanded: a fragment's `g` is the statement's goal
        for var in set(re.findall(r"\((\w+):Goal\b", text)):
            written |= set(re.findall(rf"\b{var}\.(\w+)\s*=(?!=)", text))
            if re.search(rf"\b{var}\s*\+=\s*\$changes", text):
                written |= STEP_FIELDS
            if re.search(rf"\bCREATE \({var}:Goal\b", text):
                written.add("<created>")
    return written


def _created(tree: GoalTree) -> dict[str, Any]:
    root = tree.create_root(GoalSpec("Write a haiku about graphs", max_attempts=2))
    return tree.store.run("goal/get", {"goal_id": root})[0]["view"]["goal"]


def _same(node: GoalNode, raw: dict[str, Any]) -> None:
    for name, value in raw.items():
        held = getattr(node, name)
        if name in JSON_FIELDS:
            value = json.loads(value)
            held = held.model_dump(mode="json") if hasattr(held, "model_dump") else held
        assert held == value, name


def test_every_written_property_is_a_field_and_every_field_is_written(run: Run) -> None:
    tree = GoalTree(run)
    root = _created(tree)
    child = tree.create_child(root["id"], GoalSpec("Build a counter", purpose="build",
                                                   builds_capability="count_syllables"),
                              decomposition_key="1:counter")
    created = set(root) | set(tree.store.run("goal/get", {"goal_id": child})[0]["view"]["goal"])
    written = (_written_by_statements() - {"<created>"}) | created
    assert written - FIELDS == set(), "statements write properties GoalNode does not declare"
    assert FIELDS - written == set(), "GoalNode declares properties no statement writes"


def test_a_created_goal_reads_back_field_for_field(run: Run) -> None:
    raw = _created(GoalTree(run))
    _same(GoalNode.model_validate(raw), raw)


@pytest.mark.slow
def test_every_goal_of_a_run_that_reopens_reads_back_field_for_field(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    kernel, _, outcome = _run(initialised_graph, tmp_path, conflict=True)
    assert outcome.status == "resolved"
    ids = [r["id"] for r in kernel.store.run("goal/tree", {"run_id": kernel.run.run_id})]
    raws = [kernel.store.run("goal/get", {"goal_id": i})[0]["view"]["goal"] for i in ids]
    assert any(r.get("stale") for r in raws) and any(r.get("verification") for r in raws)
    for raw in raws:
        _same(GoalNode.model_validate(raw), raw)


def test_a_property_the_model_does_not_declare_fails_the_read(run: Run) -> None:
    raw = _created(GoalTree(run))
    with pytest.raises(ValidationError, match=r"extra_forbidden|Extra inputs"):
        GoalNode.model_validate({**raw, "mood": "cheerful"})


def test_changes_write_only_what_they_name_with_json_fields_as_sorted_text() -> None:
    changes = GoalChanges(awaiting=None, feedback={"b": 1, "a": [2]})
    assert changes.to_properties() == {"awaiting": None, "feedback": '{"a": [2], "b": 1}'}
    merged = changes | GoalChanges(awaiting="capreq:1", reopened=2)
    assert merged.to_properties() == {"awaiting": "capreq:1", "reopened": 2,
                                      "feedback": '{"a": [2], "b": 1}'}
    with pytest.raises(ValidationError):
        GoalChanges.model_validate({"status": "resolved"})  # never through a step change


def test_changes_reach_the_store_in_the_order_they_were_named() -> None:
    resume = GoalChanges(awaiting=None, plan_artifact_id=None, max_attempts=3)
    merged = GoalChanges(feedback={"a": 1}) | resume | GoalChanges(required_capabilities=["x"])
    assert list(merged.to_properties()) == ["feedback", "awaiting", "plan_artifact_id",
                                            "max_attempts", "required_capabilities"]
