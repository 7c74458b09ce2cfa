"""Schema bootstrap: idempotent, recorded in the graph, refuses graphs from newer kernels."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kernel.errors import SchemaVersionError
from kernel.schema import LATEST_VERSION, MIGRATIONS, init_schema, schema_version
from kernel.store import GraphStore, open_store
from kernel.store.ontology import LABELS


def _left_at(store: GraphStore, version: int) -> None:
    """The graph as a kernel that knew migrations up to ``version`` only left it."""
    store.execute_adhoc("MATCH (m:Migration) WHERE m.version >= $v DETACH DELETE m",
                        {"v": version}, write=True)
    store.run("schema/record_migration", {
        "id": f"migration:{version:04d}", "name": MIGRATIONS[version - 1].name,
        "version": version, "applied_at": "2026-01-01T00:00:00+00:00"})


def test_init_loads_the_boot_graph_once(store: GraphStore) -> None:
    assert schema_version(store) == 0
    first = init_schema(store)
    assert (first.from_version, first.to_version) == (0, LATEST_VERSION)
    assert first.applied == [m.name for m in MIGRATIONS]
    counts = {r["label"]: r["nodes"] for r in store.run("admin/count_by_label")}
    assert counts["Resolver"] == 3 and counts["Actor"] == 1 and counts["Capability"] == 24

    # A boot resolver's statistics change; a second init must not reset them.
    store.execute_adhoc("MATCH (r:Resolver {id: 'resolver:claude-code-0'}) SET r.usage_count = 7",
                        {}, write=True)
    second = init_schema(store)
    assert second.applied == []
    rows = store.execute_adhoc(
        "MATCH (r:Resolver {id: 'resolver:claude-code-0'}) RETURN r.usage_count AS n", {},
        write=False).records()
    assert rows == [{"n": 7}]
    migrations = store.run("schema/list_migrations")
    assert [m["version"] for m in migrations] == [m.version for m in MIGRATIONS]


def test_every_label_gets_a_unique_id(initialised: GraphStore) -> None:
    for spec in LABELS:
        initialised.execute_adhoc(f"CREATE (:{spec.name} {{id: 'dup'}})", {}, write=True)
        with pytest.raises(Exception, match=r"(?i)unique|already exists"):
            initialised.execute_adhoc(f"CREATE (:{spec.name} {{id: 'dup'}})", {}, write=True)


def test_a_graph_from_a_newer_kernel_is_refused(initialised: GraphStore) -> None:
    initialised.run("schema/record_migration", {
        "id": "migration:9999", "name": "from the future", "version": LATEST_VERSION + 1,
        "applied_at": "2030-01-01T00:00:00+00:00"})
    with pytest.raises(SchemaVersionError, match="upgrade the kernel"):
        init_schema(initialised)


def test_a_graph_of_an_older_kernel_gets_captions_and_one_cost_field(
        initialised: GraphStore) -> None:
    """Migration 2 on data written before it: nodes without a caption take their title,
    slug, summary or name; a resolver's avg_cost (USD) becomes avg_cost_micros."""
    initialised.execute_adhoc(
        "CREATE (:Constraint {id: 'constraint:old', title: 'exits 1'}) "
        "CREATE (:LogEntry {id: 'log:old', summary: 'RESOLVE using x'}) "
        "CREATE (:FailureMode {id: 'failure:old', slug: 'violated_x'}) "
        "CREATE (:Resolver {id: 'resolver:old', caption: 'old', avg_cost: 0.25})", {}, write=True)
    initialised.run("schema/record_migration", {  # as a kernel that knew only v1 left it
        "id": "migration:0001", "name": "boot graph", "version": 1,
        "applied_at": "2026-01-01T00:00:00+00:00"})
    initialised.execute_adhoc("MATCH (m:Migration) WHERE m.version > 1 DETACH DELETE m", {},
                              write=True)
    report = init_schema(initialised)
    assert report.applied == [m.name for m in MIGRATIONS[1:]]
    rows = initialised.execute_adhoc(
        "MATCH (n) WHERE n.id IN ['constraint:old', 'log:old', 'failure:old', 'resolver:old'] "
        "RETURN n.id AS id, n.caption AS caption, n.avg_cost AS usd, "
        "n.avg_cost_micros AS micros ORDER BY id", {}, write=False).records()
    assert rows == [
        {"id": "constraint:old", "caption": "exits 1", "usd": None, "micros": None},
        {"id": "failure:old", "caption": "violated_x", "usd": None, "micros": None},
        {"id": "log:old", "caption": "RESOLVE using x", "usd": None, "micros": None},
        {"id": "resolver:old", "caption": "old", "usd": None, "micros": 250000.0},
    ]


def test_an_older_boot_graph_stops_claiming_what_the_sandbox_cannot_do(
        initialised: GraphStore) -> None:
    """Migration 3: codex-tools-0 no longer provides web_search or package_install; a
    capability another resolver provides stays."""
    initialised.execute_adhoc(
        "MATCH (r:Resolver {id: 'resolver:codex-tools-0'}) "
        "SET r.capabilities = r.capabilities + ['web_search', 'package_install'] "
        "CREATE (r)-[:PROVIDES]->(:Capability {id: 'capability:web_search', tag: 'web_search'}) "
        "CREATE (r)-[:PROVIDES]->(p:Capability {id: 'capability:package_install', "
        "tag: 'package_install'}) "
        "CREATE (:Resolver {id: 'resolver:pip-0'})-[:PROVIDES]->(p)", {}, write=True)
    _left_at(initialised, 2)
    assert init_schema(initialised).applied == [m.name for m in MIGRATIONS[2:]]
    rows = initialised.execute_adhoc(
        "MATCH (c:Capability) WHERE c.tag IN ['web_search', 'package_install'] "
        "OPTIONAL MATCH (r:Resolver)-[:PROVIDES]->(c) RETURN c.tag AS tag, r.id AS by",
        {}, write=False).records()
    assert rows == [{"tag": "package_install", "by": "resolver:pip-0"}]
    codex = initialised.run("registry/get", {"id": "resolver:codex-tools-0"})[0]["resolver"]
    assert not {"web_search", "package_install"} & set(codex["capabilities"])


def test_processes_opening_one_fresh_graph_at_once_all_get_it(
        store: GraphStore, data_dir: Path) -> None:
    """Four stores (as four `kernel solve` processes would) initialise one fresh graph at
    the same moment: none fails on an index another just made, the migrations run once."""
    from tests.conftest import store_settings

    others = [open_store(store_settings(store, data_dir)) for _ in range(4)]
    start = threading.Barrier(len(others))

    def init(other: GraphStore) -> list[str]:
        start.wait()
        return init_schema(other).applied

    try:
        with ThreadPoolExecutor(len(others)) as pool:
            applied = list(pool.map(init, others))
    finally:
        for other in others:
            other.close()
    assert schema_version(store) == LATEST_VERSION
    counts = {r["label"]: r["nodes"] for r in store.run("admin/count_by_label")}
    assert counts["Resolver"] == 3 and counts["Migration"] == len(MIGRATIONS)
    if store.dialect == "falkordb":  # one at a time: the first brings it forward
        assert sorted(map(len, applied)) == [0, 0, 0, len(MIGRATIONS)]


def test_an_older_graph_gets_status_labels(initialised: GraphStore) -> None:
    """Migration 5: goals and attempts an older kernel wrote take the labels their status
    and verdict imply, and lose any that no longer hold."""
    initialised.execute_adhoc(
        "CREATE (:Goal {id: 'node:done', status: 'resolved'}), "
        "(:Goal:Resolved {id: 'node:old', status: 'pending', stale: true}), "
        "(:Goal {id: 'node:stuck', status: 'gated'}), "
        "(:Attempt {id: 'attempt:ok', verdict: 'SAT'}), (:Attempt {id: 'attempt:no', "
        "verdict: 'UNSAT'})", {}, write=True)
    _left_at(initialised, 3)
    assert init_schema(initialised).applied == [m.name for m in MIGRATIONS[3:]]
    rows = initialised.execute_adhoc(
        "MATCH (n) WHERE n.id IN ['node:done', 'node:old', 'node:stuck', 'attempt:ok', "
        "'attempt:no'] RETURN n.id AS id, labels(n) AS labels", {}, write=False).records()
    assert {r["id"]: sorted(r["labels"]) for r in rows} == {
        "node:done": ["Goal", "Resolved"], "node:old": ["Goal", "Stale"],
        "node:stuck": ["Goal", "Parked"], "attempt:ok": ["Attempt", "Sat"],
        "attempt:no": ["Attempt", "Unsat"]}


def test_a_vector_query_right_after_the_schema_is_ensured_is_answered(
        store: GraphStore) -> None:
    """Ensuring the schema returns once its indexes are built: FalkorDB refuses a vector
    query on an index it is still filling ("Invalid arguments for procedure"), which is
    what a run's first similarity lookup met on a fresh graph under load."""
    vector = "vecf32(e)" if store.dialect == "falkordb" else "e"
    store.execute_adhoc(
        "UNWIND range(1, 3000) AS i WITH i, [x IN range(1, 384) | rand()] AS e "
        f"CREATE (:GoalPattern {{id: 'pattern:' + toString(i), signature: 's', "
        f"summary: 'p', embedding: {vector}}})", {}, write=True)
    with store.schema_held():  # as init_schema ensures it, without the time it takes
        store.ensure_vector_index("GoalPattern", "embedding", 384, "goal_pattern_embedding")
        store.settle_schema()
    found = store.run("pattern/similar", {"vector": [0.5] * 384, "signature": "s",
                                          "candidates": 5, "exclude": "", "threshold": 0.0,
                                          "k": 3})
    assert found and all(row["id"].startswith("pattern:") for row in found)


def test_an_older_graph_gets_one_constraint_edge_per_pair(initialised: GraphStore) -> None:
    """Migration 6: the edges an older kernel wrote, one per role keyed by it, become one
    per goal and constraint listing the roles in the kernel's order; a pair already held
    that way is left as it is."""
    initialised.execute_adhoc(
        "CREATE (g:Goal {id: 'node:old'}), (c:Constraint {id: 'constraint:a'}), "
        "(d:Constraint {id: 'constraint:b'}), (n:Goal {id: 'node:new'}) "
        "CREATE (g)-[:HAS_CONSTRAINT {id: 'resolved', role: 'resolved'}]->(c) "
        "CREATE (g)-[:HAS_CONSTRAINT {id: 'core', role: 'core'}]->(c) "
        "CREATE (g)-[:HAS_CONSTRAINT {id: 'selected', role: 'selected'}]->(c) "
        "CREATE (g)-[:HAS_CONSTRAINT {id: 'owed', role: 'owed'}]->(d) "
        "CREATE (n)-[:HAS_CONSTRAINT {roles: ['eligible', 'selected']}]->(d)", {}, write=True)
    _left_at(initialised, 5)
    assert init_schema(initialised).applied == [m.name for m in MIGRATIONS[5:]]
    rows = initialised.execute_adhoc(
        "MATCH (g:Goal)-[h:HAS_CONSTRAINT]->(c:Constraint) RETURN g.id AS goal, "
        "c.id AS constraint, h.roles AS roles, h.id AS key, h.role AS role "
        "ORDER BY goal, constraint", {}, write=False).records()
    assert rows == [
        {"goal": "node:new", "constraint": "constraint:b", "roles": ["eligible", "selected"],
         "key": None, "role": None},
        {"goal": "node:old", "constraint": "constraint:a",
         "roles": ["core", "selected", "resolved"], "key": None, "role": None},
        {"goal": "node:old", "constraint": "constraint:b", "roles": ["owed"], "key": None,
         "role": None},
    ]
