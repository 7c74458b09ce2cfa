"""One HAS_CONSTRAINT edge per goal and constraint, its roles a list: written so by every
commit on both stores (a constraint a goal holds as core, eligible, selected and resolved
is one edge Neo4j Browser draws once), read back as roles by every reader, and kept so by
an export and import."""

from __future__ import annotations

import json
import re
from pathlib import Path

from kernel.paths import cypher_dir
from kernel.store import GraphStore
from kernel.store.ontology import CONSTRAINT_ROLES
from tests.graph_round_trip import assert_export_round_trips
from tests.solve.test_consistency import _run

_ORDER = re.compile(r"\[k IN (\[[^\]]*\])")


def _edges(store: GraphStore) -> list[tuple[str, str, list[str]]]:
    rows = store.execute_adhoc(
        "MATCH (g:Goal)-[h:HAS_CONSTRAINT]->(c:Constraint) "
        "RETURN g.id AS goal, c.id AS constraint, h.roles AS roles, keys(h) AS keys",
        {}, write=False).records()
    assert all(sorted(r["keys"]) == ["roles"] for r in rows), rows  # no per-role key left
    return sorted((r["goal"], r["constraint"], list(r["roles"])) for r in rows)


def test_every_statement_lists_roles_in_the_kernels_order() -> None:
    """The statements that write a role list spell the order out: each must be the one
    kernel.store.ontology.CONSTRAINT_ROLES gives (the migration takes it as a parameter)."""
    orders = {path.relative_to(cypher_dir()).as_posix(): found
              for path in cypher_dir().rglob("*.cypher")
              for found in _ORDER.findall(path.read_text())}
    assert len(orders) >= 5, orders
    expected = "[" + ", ".join(f"'{r}'" for r in CONSTRAINT_ROLES) + "]"
    assert {k: v for k, v in orders.items() if v != expected} == {}


def test_a_goal_holds_one_edge_per_constraint_listing_its_roles(
        initialised_graph: GraphStore, data_dir: Path, tmp_path: Path) -> None:
    kernel, root, outcome = _run(initialised_graph, tmp_path, conflict=True)
    assert outcome.status == "resolved"
    edges = _edges(initialised_graph)
    pairs = [(goal, constraint) for goal, constraint, _ in edges]
    assert len(pairs) == len(set(pairs))  # one edge per goal and constraint
    for _, _, roles in edges:
        assert roles and roles == [r for r in CONSTRAINT_ROLES if r in roles], roles
    assert max(len(roles) for _, _, roles in edges) >= 3  # e.g. eligible, selected, resolved
    # the readers see the roles the lists hold, the root's coupling among its selected
    held = kernel.constraints.roles(root)
    listed = {r: sorted(c for g, c, roles in edges if g == root and r in roles)
              for r in CONSTRAINT_ROLES}
    assert {r: sorted(ids) for r, ids in held.items()} == listed
    assert held["coupling"] and set(held["coupling"]) <= set(held["selected"])
    assert set(held["selected"]) == set(held["resolved"])  # resolved on SAT

    lines = assert_export_round_trips(initialised_graph, data_dir, tmp_path)
    written = [json.loads(line) for line in lines if '"HAS_CONSTRAINT"' in line]
    assert len(written) == len(edges) and all("key" not in w for w in written)
    assert _edges(initialised_graph) == edges
