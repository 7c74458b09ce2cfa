"""Warming Neo4j (``kernel db warm``): the statements a run sends are planned before it
sends them, the scripted workloads are rehearsed in transactions rolled back, and nothing
is written.

Neo4j records each statement's invocations with their compile time (``db.stats``, on by
default): a text planned ahead compiles from the cache, a text met first plans there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kernel.bench.solve import bench_solve
from kernel.bench.warm_up import warm_up
from kernel.cli.app import app
from kernel.store.base import GraphStore, Statement
from tests.conftest import store_env

KEPT = "CYPHER replan=skip "


def _counts(store: GraphStore) -> tuple[Any, ...]:
    nodes = store.execute_adhoc("MATCH (n) RETURN count(n), sum(size(keys(n)))", {},
                                write=False).rows[0]
    edges = store.execute_adhoc("MATCH ()-[r]->() RETURN count(r)", {}, write=False).rows[0]
    return (*nodes, *edges)


def _now(store: GraphStore) -> int:
    return int(store.execute_adhoc("RETURN timestamp() AS t", {}, write=False).rows[0][0])


def _compiles(store: GraphStore, since: int, until: int | None = None
              ) -> list[tuple[str, int, int]]:
    """Each invocation of a kernel statement in [since, until), in time order: its text,
    when it started (ms) and its compile time (µs)."""
    calls = []
    for row in store.execute_adhoc("CALL db.stats.retrieve('QUERIES') YIELD data RETURN data",
                                   {}, write=False).rows:
        data = row[0]
        if not str(data.get("query", "")).startswith(KEPT):
            continue
        for call in data.get("invocations", []):
            at = int(call["startTimestampMillis"])
            if at >= since and (until is None or at < until):
                calls.append((str(data["query"]), at, int(call["elapsedCompileTimeInUs"])))
    return sorted(calls, key=lambda call: call[1])


def _first_compiles(store: GraphStore, since: int, until: int | None) -> dict[str, int]:
    """Each kernel statement text invoked in [since, until): its first compile time (µs)."""
    first: dict[str, int] = {}
    for text, _, compile_us in _compiles(store, since, until):
        first.setdefault(text, compile_us)
    return first


@pytest.mark.slow
@pytest.mark.neo4j
def test_a_warmed_server_plans_nothing_a_run_sends_and_the_warm_up_writes_nothing(
        neo4j_store: GraphStore) -> None:
    from kernel.schema import init_schema

    store = neo4j_store
    init_schema(store)
    store.execute_adhoc("CALL db.clearQueryCaches()", {}, write=True)
    store.execute_adhoc("CALL db.stats.collect('QUERIES')", {}, write=True)
    before = _counts(store)
    started = _now(store)
    report = warm_up(store, tree_goals=3, flywheel=False, rounds=0)
    warmed_at = _now(store)
    assert _counts(store) == before  # every statement rolled back
    assert report.planned >= 30 and report.refused == () and not report.skipped
    assert report.collected > report.planned  # the same text and types planned once

    bench_solve(store, 3)
    planning = _first_compiles(store, started, warmed_at)
    run = _first_compiles(store, warmed_at, None)
    # Every text the run sent was planned ahead...
    assert set(run) - set(planning) == set()
    # ...so the run found each in the cache: its compiles are a small part of planning.
    assert sum(run.values()) * 10 < sum(planning.values()), (sum(run.values()),
                                                            sum(planning.values()))


@pytest.mark.neo4j
def test_a_plan_serves_values_of_every_length(neo4j_store: GraphStore) -> None:
    """Neo4j keys a plan by each string's and list's length (rounded up to a power of ten)
    unless told not to; the servers the kernel starts are told not to, so a commit carrying
    longer texts or lists than the warm-up's finds the plan the warm-up made."""
    from kernel.schema import init_schema

    store = neo4j_store
    init_schema(store)
    store.execute_adhoc("CALL db.clearQueryCaches()", {}, write=True)
    store.execute_adhoc("CALL db.stats.collect('QUERIES')", {}, write=True)
    started = _now(store)
    for length in (1, 5, 50, 500):  # each in a bucket of its own
        store.run("constraint/get_many", {"ids": [f"c{i}" for i in range(length)]})
    compiles = [compile_us for text, _, compile_us in _compiles(store, started)
                if "$ids" in text]
    assert len(compiles) == 4, compiles
    planned, *served = compiles
    assert max(served) * 5 < planned, compiles  # looked up, not planned again


@pytest.mark.slow
@pytest.mark.neo4j
def test_a_rehearsal_runs_every_statement_of_the_workloads_and_leaves_the_graph_as_it_was(
        neo4j_store: GraphStore) -> None:
    from kernel.schema import init_schema

    store = neo4j_store
    init_schema(store)
    store.execute_adhoc("CREATE (:Scratch {name: 'a user node'})", {}, write=True)
    before = _counts(store)
    report = warm_up(store, tree_goals=3, flywheel=False, rounds=2)
    assert _counts(store) == before  # every round rolled back: the user's node, nothing more
    assert report.cut_short == () and report.rounds == 2
    assert report.rehearsed == 2 * report.collected  # each statement, each round
    # The server ran the writes too (and rolled them back): a tree's steps each commit.
    assert report.rehearsed_writes >= 2 * 10, report
    store.execute_adhoc("MATCH (n:Scratch) DELETE n", {}, write=True)


def test_the_embedded_store_has_nothing_to_warm(store: GraphStore, tmp_path: Path) -> None:
    if store.dialect == "neo4j":
        assert store.plan_ahead([]).planned == 0
        assert store.rehearse([], 3).executed == 0
        return
    assert store.plan_ahead([Statement("admin/ping", {}, {})]).planned == 0
    assert store.rehearse([[Statement("admin/ping", {}, {})]], 3).executed == 0
    result = CliRunner().invoke(app, ["db", "warm", "--rounds", "2"],
                                env=store_env(store, tmp_path))
    assert result.exit_code == 0, result.output
    assert "nothing to warm" in result.output
    from kernel.store.embedded_server import EmbeddedServer

    assert not EmbeddedServer(tmp_path).status().running  # none started to say so


@pytest.mark.parametrize("how", ["default", "--no-warm", "KERNEL_NEO4J_WARM_UP=0"])
def test_kernel_db_init_warms_neo4j_unless_told_not_to(
        store: GraphStore, tmp_path: Path, how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from kernel.bench import warm_up as warming

    warmed: list[GraphStore] = []

    def fake(store: GraphStore, rounds: int) -> warming.WarmUp:
        warmed.append(store)
        return warming.WarmUp(7, 5, ("pattern/similar: no index",), 0.1, 0.2, (), rounds,
                              7 * rounds, 0.3)

    monkeypatch.setattr(warming, "warm_up", fake)
    env = store_env(store, tmp_path) | {
        "KERNEL_NEO4J_WARM_UP": "0" if how.startswith("KERNEL") else "1"}
    args = ["db", "init"] + (["--no-warm"] if how == "--no-warm" else [])
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 0, result.output
    expected = store.dialect == "neo4j" and how == "default"
    assert bool(warmed) == expected
    assert ("planned 5 statements" in result.output) == expected
    assert ("refused (its plan is kept all the same): pattern/similar" in result.output) \
        == expected
    assert ("rehearsed the workloads 2 time(s): ran 14 statements" in result.output) \
        == expected  # KERNEL_NEO4J_WARM_ROUNDS' default
