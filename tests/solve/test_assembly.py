"""The assembled deliverable is verified as a whole before the run resolves: the root's
tests run on the assembled code; a failing or empty assembly is asked again once with
the violation trace, then the root is refused with it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kernel.core.envelopes import ConstraintSpec, Provenance
from kernel.core.ledger import load_entries
from kernel.protocol.solve_models import ResolutionOutput
from kernel.solve.dispatch import solve
from kernel.store import GraphStore
from resolvers.sandbox.runner import default_workspace_root
from resolvers.scripted import ScriptedProposer
from tests.sandbox_support import needs_sandbox
from tests.solve import scripts as s
from tests.starting import start

GOAL = "Write count_words and count_lines"
TESTS = {"test_main.py": "from main import count_lines, count_words\n\n\n"
                         "def test_counts():\n"
                         "    assert count_words('a  b c') == 3\n"
                         "    assert count_lines('a\\nb') == 2\n"}
WORDS = "def count_words(text):\n    return len(text.split())\n"
LINES = "def count_lines(text):\n    return len(text.splitlines())\n"
CORE = ConstraintSpec(type="logic", domain="software", title="the counts are right",
                      payload={"check": "test", "tests": ["test_counts"]},
                      provenance=Provenance(source="human"))


def _code(goal: str, content: str, tests: dict[str, str] | None = None) -> dict[str, Any]:
    return {"operation": "resolve", "goal": goal, "cost_usd": 0.05, "seconds": 5,
            "output": {"artifact_type": "code", "format": "python", "content": content,
                       "tests": tests or {}}}


def _entries(assembled: list[str]) -> list[dict[str, Any]]:
    return [
        {"operation": "identify_constraints", "goal": "*", "repeat": True,
         "output": {"constraints": [], "required_capabilities": ["generate_code"]}},
        _code("write count_words and*", WORDS + "\n\n" + LINES, TESTS),
        s.leaf("write count_words and*", False),
        s.decompose("write count_words and*", [("words", "count the words", 1.0),
                                              ("lines", "count the lines", 1.0)], []),
        _code("count the words", WORDS), _code("count the lines", LINES),
        *[{"operation": "assemble", "goal": "write count_words and*", "cost_usd": 0.02,
           "output": {"content": text, "format": "python"}} for text in assembled],
    ]


def _run(graph: GraphStore, tmp_path: Path, assembled: list[str]) -> tuple[Any, Any]:
    script = s.write(tmp_path / "script.yaml", _entries(assembled),
                     fallback={"classify_leaf": {"output": {
                         "is_leaf": True, "leaf_kind": "atomic", "leaf_reason": "small"}}})
    kernel, root = start(graph, GOAL, [CORE], 2.0, 600, ScriptedProposer.from_file(script),
                         tmp_path, default_workspace_root())
    return kernel, solve(kernel, root)


@pytest.mark.slow
@needs_sandbox
def test_an_assembly_that_breaks_the_root_s_tests_does_not_resolve(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    kernel, outcome = _run(initialised_graph, tmp_path, [WORDS, WORDS])  # count_lines lost
    assert outcome.status == "infeasible"
    entries = load_entries(initialised_graph, kernel.run.run_id)[2]
    assert [e.operation for e in entries if e.kind == "proposal"].count("assemble") == 2
    refusal = [e.data() for e in entries if e.kind == "refusal"][-1]
    assert refusal["reasons"] == ["ASSEMBLY_VIOLATES_CONSTRAINTS"]
    assert "test_counts" in refusal["detail"] and "ImportError" in refusal["detail"]
    assert kernel.tree.get(outcome.root_id).final_artifact_id is None


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("first", ["", "   \n\n"])
def test_an_empty_or_broken_assembly_is_asked_again_with_its_trace(
        first: str, initialised_graph: GraphStore, tmp_path: Path) -> None:
    kernel, outcome = _run(initialised_graph, tmp_path, [first, WORDS + "\n\n" + LINES])
    assert outcome.status == "resolved", outcome
    root = kernel.tree.get(outcome.root_id)
    final = ResolutionOutput.model_validate_json(
        kernel.artifacts.read(root.require("final_artifact_id")))
    assert final.content == WORDS + "\n\n" + LINES
    assert final.tests == TESTS  # the root's own tests, kept in the deliverable
