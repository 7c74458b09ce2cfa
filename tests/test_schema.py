"""Schema bootstrap: idempotent, recorded in the graph, refuses graphs from newer kernels."""

from __future__ import annotations

import pytest

from kernel.errors import SchemaVersionError
from kernel.schema import LATEST_VERSION, MIGRATIONS, init_schema, schema_version
from kernel.store import GraphStore
from kernel.store.ontology import LABELS


def test_init_loads_the_boot_graph_once(store: GraphStore) -> None:
    assert schema_version(store) == 0
    first = init_schema(store)
    assert (first.from_version, first.to_version) == (0, LATEST_VERSION)
    assert first.applied == [m.name for m in MIGRATIONS]
    counts = {r["label"]: r["nodes"] for r in store.run("admin/count_by_label")}
    assert counts["Resolver"] == 3 and counts["Actor"] == 1 and counts["Capability"] == 26

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
