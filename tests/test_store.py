"""The store suite: runs unchanged against the embedded backend and against Neo4j."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from kernel.errors import ParameterError, StatementError, TemplateError, UnknownQueryError
from kernel.paths import cypher_dir
from kernel.schema import init_schema
from kernel.store import GraphStore
from kernel.store.queries import QueryCatalog


def _vector(seed: int, dims: int = 384) -> list[float]:
    rng = random.Random(seed)
    return [rng.uniform(-1, 1) for _ in range(dims)]


def _near(base: list[float], noise: float, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [v + rng.uniform(-noise, noise) for v in base]


def test_ping_round_trip(store: GraphStore) -> None:
    assert store.run("admin/ping") == [{"one": 1}]
    assert store.ping() > 0


def test_create_read_update_delete(store: GraphStore) -> None:
    store.run("bench/merge_node", {"id": "bench:a", "caption": "first"})
    rows = store.execute_adhoc("MATCH (n:Run {id: $id}) RETURN n.caption AS c", {"id": "bench:a"},
                               write=False).records()
    assert rows == [{"c": "first"}]
    store.run("bench/merge_node", {"id": "bench:a", "caption": "second"})
    rows = store.execute_adhoc("MATCH (n:Run) RETURN n.id AS id, n.caption AS c", {},
                               write=False).records()
    assert rows == [{"id": "bench:a", "c": "second"}]
    store.run("bench/cleanup")
    assert store.run("admin/count_by_label") == []


def test_merge_is_idempotent(store: GraphStore) -> None:
    rows = [{"id": f"bench:{i}", "caption": str(i)} for i in range(50)]
    for _ in range(3):
        assert store.run_batched("bench/merge_nodes", rows, batch_size=20) == 50
    assert store.run("admin/count_by_label") == [{"label": "Run", "nodes": 50}]


def test_failing_statement_leaves_nothing_behind(initialised: GraphStore) -> None:
    store = initialised
    before = store.run("admin/count_by_label")
    # The second CREATE breaks the unique constraint after the first one ran.
    with pytest.raises(StatementError):
        store.execute_adhoc(
            "CREATE (:Run {id: 'run:fresh'}) WITH 1 AS x CREATE (:Resolver {id: 'resolver:self-model-0'})",
            {}, write=True)
    assert store.run("admin/count_by_label") == before
    # A runtime error late in a statement also rolls back what it wrote first.
    with pytest.raises(StatementError):
        store.execute_adhoc("CREATE (:Run {id: 'run:x'}) WITH 1 AS x RETURN 1 / 0 AS boom", {},
                            write=True)
    assert store.run("admin/count_by_label") == before


def test_unique_id_is_enforced(initialised: GraphStore) -> None:
    with pytest.raises(StatementError):
        initialised.execute_adhoc("CREATE (:Resolver {id: 'resolver:claude-code-0'})", {},
                                  write=True)


def test_read_only_statements_cannot_write(store: GraphStore) -> None:
    with pytest.raises(StatementError, match="--write"):
        store.execute_adhoc("CREATE (:Run {id: 'run:nope'})", {}, write=False)
    assert store.run("admin/count_by_label") == []


def test_plain_values_come_back_the_same_way(store: GraphStore) -> None:
    store.execute_adhoc(
        "CREATE (:Run {id: 'run:v', i: 3, f: 2.5, s: 'x', b: true, l: [1, 2]})", {}, write=True)
    result = store.execute_adhoc("MATCH (n:Run) RETURN n, n.l AS l, {k: n.i} AS m", {},
                                 write=False).records()
    assert result == [{
        "n": {"labels": ["Run"],
              "properties": {"id": "run:v", "i": 3, "f": 2.5, "s": "x", "b": True, "l": [1, 2]}},
        "l": [1, 2],
        "m": {"k": 3},
    }]


def test_vector_query_returns_nearest_first_with_similarity_in_unit_range(
        initialised: GraphStore) -> None:
    store = initialised
    base = _vector(1)
    patterns = {
        "goal_pattern:same": base,
        "goal_pattern:near": _near(base, 0.2, 2),
        "goal_pattern:far": _near(base, 1.5, 3),
        "goal_pattern:opposite": [-v for v in base],
    }
    for pid, vec in patterns.items():
        store.run("vector/set_goal_pattern_embedding", {"id": pid, "summary": pid, "vector": vec})
    rows = store.run("vector/nearest_goal_patterns", {"candidates": 4, "vector": base})
    assert [r["id"] for r in rows] == ["goal_pattern:same", "goal_pattern:near",
                                       "goal_pattern:far", "goal_pattern:opposite"]
    sims = [r["similarity"] for r in rows]
    assert all(0.0 <= s <= 1.0 + 1e-6 for s in sims)
    assert sims == sorted(sims, reverse=True)
    assert math.isclose(sims[0], 1.0, abs_tol=1e-4)
    assert math.isclose(sims[-1], 0.0, abs_tol=1e-4)


@pytest.mark.neo4j
def test_a_quantized_vector_index_from_before_is_made_again_unquantized(
        neo4j_store: GraphStore) -> None:
    """Neo4j quantizes vector indexes by default (scores off by up to 1e-3); one made so by
    an earlier kernel is dropped and made again when the schema is ensured."""
    from kernel.schema import init_schema

    init_schema(neo4j_store)
    neo4j_store.run("schema/drop_index", identifiers={"index_name": "goal_pattern_embedding"})
    neo4j_store.execute_adhoc(
        "CREATE VECTOR INDEX goal_pattern_embedding FOR (n:GoalPattern) ON (n.embedding) "
        "OPTIONS {indexConfig: {`vector.dimensions`: 384, "
        "`vector.similarity_function`: 'cosine'}}", {}, write=True)

    def quantized() -> bool:
        made = {row["name"]: row for row in neo4j_store.run("schema/show_indexes")}
        return bool(made["goal_pattern_embedding"]["config"]["vector.quantization.enabled"])

    assert quantized()
    with neo4j_store.schema_held():  # as init_schema ensures it
        neo4j_store.ensure_vector_index("GoalPattern", "embedding", 384,
                                        "goal_pattern_embedding")
    assert not quantized()


@pytest.mark.neo4j
def test_neo4j_is_emptied_in_batches(neo4j_store: GraphStore,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """One transaction deleting a large graph would exceed Neo4j's transaction memory."""
    from kernel.store import base

    monkeypatch.setattr(base, "DELETE_BATCH", 3)
    neo4j_store.execute_adhoc("UNWIND range(1, 10) AS i CREATE (:Run {id: 'run:' + i})", {},
                              write=True)
    neo4j_store.drop_all()
    assert neo4j_store.execute_adhoc("MATCH (n) RETURN count(n) AS n", {},
                                     write=False).records() == [{"n": 0}]


def test_an_emptied_graph_keeps_its_schema(store: GraphStore,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Emptied in batches, nodes and relationships alike; initialising it again brings
    the boot graph back without asking for one index or constraint."""
    from kernel.store import base

    init_schema(store)
    boot = store.execute_adhoc("MATCH (n) RETURN count(n) AS n", {}, write=False).records()
    store.execute_adhoc("UNWIND range(1, 10) AS i CREATE (:Run {id: 'run:' + i})"
                        "-[:DEPENDS_ON]->(:Goal {id: 'node:' + i})", {}, write=True)
    monkeypatch.setattr(base, "DELETE_BATCH", 3)
    batches = []
    real_run = base.GraphStore.run

    def run(self: GraphStore, name: str, *args: Any, **kwargs: Any) -> Any:
        batches.append(name)
        return real_run(self, name, *args, **kwargs)

    monkeypatch.setattr(base.GraphStore, "run", run)
    store.empty()
    assert batches.count("admin/delete_all") > 3
    assert store.execute_adhoc("MATCH (n) RETURN count(n) AS n", {},
                               write=False).records() == [{"n": 0}]
    batches.clear()
    init_schema(store)
    # (Neo4j registers the relationship types each time: no index, nothing built)
    assert not [name for name in batches if "create" in name
                or name == "schema/register_relationship_type"], batches
    assert store.execute_adhoc("MATCH (n) RETURN count(n) AS n", {},
                               write=False).records() == boot


def test_unknown_query_name_is_named(store: GraphStore) -> None:
    with pytest.raises(UnknownQueryError, match=r"admin/pnig.*did you mean admin/ping"):
        store.run("admin/pnig")


def test_missing_and_unexpected_parameters_are_named(store: GraphStore) -> None:
    with pytest.raises(ParameterError, match=r"needs parameter\(s\) \$caption"):
        store.run("bench/merge_node", {"id": "bench:x"})
    with pytest.raises(ParameterError, match=r"does not use parameter\(s\) \$oops"):
        store.run("admin/ping", {"oops": 1})


def test_templates_only_take_ontology_names(store: GraphStore) -> None:
    with pytest.raises(TemplateError, match="not a known label"):
        store.run("graph_io/existing_ids", {"ids": []}, {"label": "Run) DETACH DELETE (x"})


@pytest.mark.slow
@pytest.mark.neo4j
def test_a_server_refusing_a_user_after_wrong_passwords_is_said_not_a_crash(
        neo4j_server: tuple[str, str]) -> None:
    """After a few wrong passwords Neo4j refuses even the right one for a few seconds
    (AuthenticationRateLimit, not an AuthError): one line naming the settings to check."""
    import time

    from kernel.errors import StoreUnavailableError
    from kernel.store.neo4j_backend import Neo4jStore

    uri, password = neo4j_server
    catalog = QueryCatalog(cypher_dir(), "neo4j")
    said = []
    for given in ["wrong"] * 4 + [password]:
        try:
            Neo4jStore(catalog, uri, "neo4j", given).close()
        except StoreUnavailableError as exc:
            said.append(str(exc))
    assert any("refused user 'neo4j'" in line and "try again" in line for line in said), said
    # The server's lock on the user (5 s by default) ends before the next tests: waited
    # for by trying the right password again, not by sleeping past it.
    deadline = time.monotonic() + 60
    while True:
        try:
            Neo4jStore(catalog, uri, "neo4j", password).close()
            break
        except StoreUnavailableError:
            assert time.monotonic() < deadline, "the server still refuses the right password"
            time.sleep(0.2)
