"""Status labels: goals carry :Resolved / :Failed / :Parked / :Stale and attempts :Sat /
:Unsat, set by the very commits that change status and verdict, so a style (Neo4j
Browser's) can colour them; an export and import brings them back."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from kernel.graph_io import export_graph, import_graph
from kernel.store import GraphStore
from kernel.store.ontology import REL_TYPES
from tests.solve.test_consistency import _run

GOAL_LABELS = {"resolved": "Resolved", "infeasible": "Failed", "gated": "Parked"}
VERDICT_LABELS = {"SAT": "Sat", "UNSAT": "Unsat"}
STATUS_LABELS = {*GOAL_LABELS.values(), *VERDICT_LABELS.values(), "Stale"}


def _labelled(store: GraphStore) -> dict[str, tuple[set[str], set[str]]]:
    """Each goal's and attempt's status labels, beside the ones its properties imply."""
    found: dict[str, tuple[set[str], set[str]]] = {}
    goals = store.execute_adhoc("MATCH (g:Goal) RETURN g.id AS id, g.status AS status, "
                                "g.stale AS stale, labels(g) AS labels", {}, write=False)
    for row in goals.records():
        implied = {GOAL_LABELS[row["status"]]} if row["status"] in GOAL_LABELS else set()
        implied |= {"Stale"} if row["stale"] else set()
        found[row["id"]] = (set(row["labels"]) & STATUS_LABELS, implied)
    attempts = store.execute_adhoc("MATCH (a:Attempt) RETURN a.id AS id, a.verdict AS verdict, "
                                   "labels(a) AS labels", {}, write=False)
    for row in attempts.records():
        implied = {VERDICT_LABELS[row["verdict"]]} if row["verdict"] in VERDICT_LABELS else set()
        found[row["id"]] = (set(row["labels"]) & STATUS_LABELS, implied)
    return found


def _all_labels(found: dict[str, tuple[set[str], set[str]]]) -> list[str]:
    return sorted(label for labels, _ in found.values() for label in labels)


def test_commits_keep_status_labels_in_step_and_an_import_restores_them(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    _, _, outcome = _run(initialised_graph, tmp_path, conflict=True)  # reopens the root
    assert outcome.status == "resolved"
    found = _labelled(initialised_graph)
    wrong: dict[str, Any] = {k: v for k, v in found.items() if v[0] != v[1]}
    assert not wrong, wrong
    labels = _all_labels(found)
    assert labels.count("Stale") == 2  # the superseded first decomposition
    assert "Resolved" in labels and "Sat" in labels

    exported = io.StringIO()
    export_graph(initialised_graph, exported)
    initialised_graph.drop_all()
    path = tmp_path / "graph.jsonl"
    path.write_text(exported.getvalue())
    import_graph(initialised_graph, path)
    assert _labelled(initialised_graph) == found



def test_neo4j_knows_every_relationship_type_before_any_edge_of_it(
        initialised_graph: GraphStore, request: pytest.FixtureRequest) -> None:
    """A starter query naming a type no edge has yet (COMPOSED_OF before any build) draws
    no 'relationship type does not exist' warning in the Browser."""
    if initialised_graph.dialect != "neo4j":
        pytest.skip("FalkorDB registers types with an index per type")
    import neo4j

    uri, password = request.getfixturevalue("neo4j_server")
    assert not initialised_graph.execute_adhoc(
        "MATCH ()-[r:COMPOSED_OF]->() RETURN count(r) AS n", {}, write=False).rows[0][0]
    with neo4j.GraphDatabase.driver(uri, auth=("neo4j", password)) as driver, \
            driver.session(database=getattr(initialised_graph, "database", None)) as session:
        for rel_type in sorted(REL_TYPES):
            summary = session.run(f"EXPLAIN MATCH ()-[r:{rel_type}]->() RETURN r").consume()
            assert not summary.summary_notifications, (rel_type, summary.summary_notifications)
    assert not initialised_graph.execute_adhoc(
        "MATCH (n:SchemaInfo {id: 'schema:relationship-types'}) RETURN n", {}, write=False).rows
