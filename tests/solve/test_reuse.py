"""Experience that replaces model calls: the same question asked again is answered by
the verified record, recorded in the ledger; a different question is asked."""

from __future__ import annotations

from pathlib import Path

from kernel.core.envelopes import ConstraintSpec, Provenance
from kernel.core.ledger import load_entries
from kernel.solve.dispatch import solve
from kernel.store import GraphStore
from tests.solve.test_paths import ESSAY, _start, direct_leaf

CORE = [ConstraintSpec(type="semantic", domain="writing", title="fits on one page",
                       provenance=Provenance(source="human"))]


def _operations(graph: GraphStore, run_id: str) -> list[tuple[str, str]]:
    return [(e.kind, e.operation) for e in load_entries(graph, run_id)[2]
            if e.kind in ("proposal", "observation") and not e.operation.startswith("history/")]


def test_the_same_question_is_answered_by_the_record(initialised_graph: GraphStore,
                                                     tmp_path: Path) -> None:
    first, root = _start(initialised_graph, tmp_path, ESSAY, direct_leaf())
    assert solve(first, root).status == "resolved"
    assert _operations(initialised_graph, first.run.run_id) == [
        ("proposal", "identify_constraints"), ("proposal", "resolve"),
        ("proposal", "verify_semantic"), ("proposal", "classify_leaf")]

    again, root2 = _start(initialised_graph, tmp_path, ESSAY, direct_leaf())
    assert solve(again, root2).status == "resolved"
    assert _operations(initialised_graph, again.run.run_id) == [
        ("observation", "reuse/identify"), ("proposal", "resolve"),
        ("proposal", "verify_semantic"), ("observation", "reuse/classify_leaf")]
    # the identified constraint is the same stored constraint, selected and judged again
    roles = [again.constraints.roles(root2)["selected"], first.constraints.roles(root)["selected"]]
    assert roles[0] == roles[1] and len(roles[0]) == 1
    recorded = next(e for e in load_entries(initialised_graph, again.run.run_id)[2]
                    if e.operation == "reuse/identify").data()["rows"]
    assert recorded["goal_id"] == root and [c["title"] for c in recorded["constraints"]] == [
        "mentions the new flags"]

    # other core constraints: another question, so the model is asked
    other, root3 = _start(initialised_graph, tmp_path, ESSAY, direct_leaf(), core=CORE)
    solve(other, root3)
    assert _operations(initialised_graph, other.run.run_id)[0] == (
        "proposal", "identify_constraints")


def test_a_leaf_classification_is_reused_only_from_the_same_source(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    """An edited script is another source: its own classification is asked, not the one
    the earlier script gave; the earlier script, asked again, is served the record."""
    for name in "abc":
        (tmp_path / name).mkdir()
    first, root = _start(initialised_graph, tmp_path / "a", ESSAY, direct_leaf())
    assert solve(first, root).status == "resolved"
    edited = [*direct_leaf()[:3], {**direct_leaf()[3], "output": {
        "is_leaf": True, "leaf_kind": "atomic", "leaf_reason": "one short note"}}]
    other, root2 = _start(initialised_graph, tmp_path / "b", ESSAY, edited)
    assert solve(other, root2).status == "resolved"
    assert _operations(initialised_graph, other.run.run_id)[-1] == ("proposal", "classify_leaf")
    assert other.tree.get(root2).leaf_reason == "one short note"
    same, root3 = _start(initialised_graph, tmp_path / "c", ESSAY, direct_leaf())
    assert solve(same, root3).status == "resolved"
    assert _operations(initialised_graph, same.run.run_id)[-1] == (
        "observation", "reuse/classify_leaf")
