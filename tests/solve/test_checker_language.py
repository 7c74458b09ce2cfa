"""The checker language: a logic constraint a model identifies as an expression is decided
by Z3 (σ 1.0 on pass, the violating facts on failure); one in no checkable form is re-typed
semantic when the proposal is taken, visibly, and judged below certainty."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kernel.core.envelopes import ConstraintType
from kernel.errors import ConfigError
from kernel.solve.checkable import settle
from kernel.solve.constraint_text import parse_constraint
from kernel.solve.dispatch import solve
from kernel.solve.verification import CLAIM_SIGMA
from kernel.store import GraphStore
from resolvers.sandbox.runner import default_workspace_root
from resolvers.scripted import ScriptedProposer
from tests.solve.scripts import write
from tests.starting import start

LOGIC = ConstraintType.LOGIC


@pytest.mark.parametrize(("payload", "kept"), [
    ({"check": "arith", "expr": "rows <= 10 and cost_usd < 1"}, True),
    ({"check": "test", "tests": ["test_rows"]}, True),
    ({"check": "test"}, True),
    ({"check": "tool_contract"}, True),
    ({"op": "<=", "value": 5}, False),
    ({"check": "arith", "expr": "rows <=< 10"}, False),
    ({"check": "arith"}, False),
    ({"check": "test", "tests": "test_rows"}, False),
    ({}, False),
])
def test_only_checkable_forms_stay_logic(payload: dict[str, Any], kept: bool) -> None:
    kind, stored, problem = settle(LOGIC, payload)
    assert (kind == LOGIC) is kept and (problem is None) is kept
    if not kept:
        assert stored["retyped"]["from"] == "logic" and stored["original"] == payload


def test_a_semantic_constraint_is_left_as_it_is() -> None:
    rubric = {"rubric": "clear"}
    assert settle(ConstraintType.SEMANTIC, rubric) == (ConstraintType.SEMANTIC, rubric, None)


def test_prose_logic_from_the_command_line_is_tests_or_refused() -> None:
    assert parse_constraint("logic:tests:all tests pass").payload == {"check": "test",
                                                                      "tests": []}
    with pytest.raises(ConfigError, match="a logic constraint is decided by a program"):
        parse_constraint("logic:docs:has a readme")


def _script(tmp_path: Path, rows: int) -> ScriptedProposer:
    constraint = {"type": "logic", "domain": "data", "explicit": True}
    path = write(tmp_path / "checker.yaml", [
        {"operation": "identify_constraints", "goal": "*", "output": {"constraints": [
            {**constraint, "title": "at most ten rows",
             "payload": {"check": "arith", "expr": "rows <= 10"}},
            {**constraint, "title": "five or fewer",
             "payload": {"op": "<=", "value": 5}}]}},
        {"operation": "resolve", "goal": "*", "repeat": True, "output": {
            "artifact_type": "doc", "format": "markdown", "content": "the rows",
            "metrics": {"rows": rows}}},
        {"operation": "verify_semantic", "goal": "*", "repeat": True, "output": {"checks": [
            {"constraint_id": "five or fewer", "passed": True, "sigma": 1.0,
             "rubric_trace": "looks fine"}]}},
        {"operation": "select_constraints", "goal": "*", "repeat": True, "output": {
            "constraint_ids": ["at most ten rows", "five or fewer"], "rationale": "both"}},
    ], fallback={"classify_leaf": {"output": {"is_leaf": True, "leaf_kind": "atomic",
                                              "leaf_reason": "one step"}},
                 "generate_feedback": {"output": {"summary": "fewer rows",
                                                  "failure_mode": "too_many_rows"}}})
    return ScriptedProposer.from_file(path)


@pytest.mark.parametrize("rows", [7, 12])
def test_a_model_identified_expression_is_decided_by_z3(initialised_graph: GraphStore,
                                                        tmp_path: Path, rows: int) -> None:
    kernel, root = start(initialised_graph, "List the rows", [], budget_usd=1.0,
                         time_seconds=300, proposer=_script(tmp_path, rows), data_dir=tmp_path,
                         workspace_root=default_workspace_root(), max_attempts=1)
    solve(kernel, root)
    first = kernel.attempts.of_goal(root)[0]
    constraints = {c.id: c for c in kernel.constraints.get_many(
        [c.constraint_id for c in first.verification.checks])}
    by_title = {constraints[c.constraint_id].title: (constraints[c.constraint_id], c)
                for c in first.verification.checks}
    decided, z3_check = by_title["at most ten rows"]
    # decided by Z3 over a number only the output reports: a claim, so sigma < 1
    assert decided.type == LOGIC and z3_check.sigma_i == CLAIM_SIGMA
    assert z3_check.detail["claimed"] == ["rows"]
    assert z3_check.passed is (rows <= 10)
    if rows > 10:
        assert z3_check.detail["violated_by"] == {"rows": rows}
    judged, judgment = by_title["five or fewer"]
    assert judged.type == ConstraintType.SEMANTIC
    assert judged.payload["retyped"]["from"] == "logic"
    assert judgment.sigma_i < 1.0 and judgment.detail["sigma_capped_from"] == 1.0
    logged = [str(row) for row in kernel.log.entries()]
    assert any("'five or fewer' was proposed as logic but no deterministic check" in line
               for line in logged), logged
