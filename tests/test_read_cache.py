"""The read cache a stepping run uses, on the real store: a repeated read is served from
memory, a write that changes state empties the cache, an observation write does not, and
outside ``read_cache`` nothing is cached."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel.core.goals import GoalChanges, GoalSpec, GoalTree
from kernel.core.run import Run
from kernel.core.state_machine import Status
from kernel.schema import init_schema
from kernel.store.base import GraphStore
from kernel.store.queries import QueryFileError, parse_query_file


def _run_with_goal(store: GraphStore) -> tuple[Run, GoalTree, str]:
    init_schema(store)
    run = Run.start(store, "cache")
    tree = GoalTree(run)
    return run, tree, tree.create_root(GoalSpec("a goal", "a goal"))


def test_reads_are_served_until_a_write_and_logs_keep_them(embedded_store: GraphStore) -> None:
    run, tree, goal_id = _run_with_goal(embedded_store)
    stats = embedded_store.stats
    with embedded_store.read_cache():
        stats.reset()
        tree.get(goal_id)
        tree.view(goal_id)
        tree.get(goal_id)
        assert stats.calls["goal/get"] == 1 and stats.hits["goal/get"] == 2
        run.pending_logs.append({"id": "log:cache-test", "goal_id": goal_id,
                                 "props": {"id": "log:cache-test", "summary": "x"}})
        run.flush()  # an observation: the goal read stays valid
        assert tree.get(goal_id).status == Status.PENDING
        assert stats.calls["goal/get"] == 1
        tree.update(goal_id, Status.PENDING, GoalChanges(leaf_reason="changed"))
        assert tree.get(goal_id).leaf_reason == "changed"  # the write emptied the cache
        assert stats.calls["goal/get"] == 2
    stats.reset()
    tree.get(goal_id)
    tree.get(goal_id)
    assert stats.calls["goal/get"] == 2 and not stats.hits


def test_a_cache_mark_that_does_not_fit_the_statement_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.cypher"
    path.write_text("// mode: write\n// cache: read\nMATCH (n) SET n.x = 1 RETURN n\n")
    with pytest.raises(QueryFileError, match="cache: read"):
        parse_query_file("bad", None, path)


def test_a_write_drops_only_the_reads_it_names(embedded_store: GraphStore) -> None:
    _run, tree, goal_id = _run_with_goal(embedded_store)
    stats = embedded_store.stats
    with embedded_store.read_cache():
        stats.reset()
        embedded_store.run("constraint/of_goal", {"goal_id": goal_id})  # empty, and kept
        tree.get(goal_id)
        tree.update(goal_id, Status.PENDING, GoalChanges(leaf_reason="changed"))
        embedded_store.run("constraint/of_goal", {"goal_id": goal_id})
        assert tree.get(goal_id).leaf_reason == "changed"
        # goal/update names goal/get, not constraint/of_goal
        assert stats.calls["constraint/of_goal"] == 1 and stats.hits["constraint/of_goal"] == 1
        assert stats.calls["goal/get"] == 2


def test_the_audit_catches_a_write_that_does_not_name_a_read_it_changes(
        embedded_store: GraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    from kernel.store.base import StaleReadError

    _run, tree, goal_id = _run_with_goal(embedded_store)
    queries = embedded_store.catalog._queries
    monkeypatch.setitem(queries, "goal/update",
                        dataclasses.replace(queries["goal/update"], changes=frozenset()))
    with embedded_store.read_cache():
        tree.get(goal_id)
        tree.update(goal_id, Status.PENDING, GoalChanges(leaf_reason="changed"))
        with pytest.raises(StaleReadError, match=r"goal/get: one of the writes since it was "
                                                 r"read \(goal/update\)"):
            tree.get(goal_id)


@pytest.mark.parametrize(("text", "message"), [
    ("// mode: read\n// changes: goal/get\nRETURN 1\n", "is for a write"),
    ("// mode: write\n// cache: keep\n// changes: goal/get\nRETURN 1\n", "is for a write"),
])
def test_a_changes_mark_that_does_not_fit_is_refused(tmp_path: Path, text: str,
                                                      message: str) -> None:
    path = tmp_path / "bad.cypher"
    path.write_text(text)
    with pytest.raises(QueryFileError, match=message):
        parse_query_file("bad", None, path)


def test_a_changes_mark_must_name_cached_reads(tmp_path: Path) -> None:
    from kernel.store.queries import QueryCatalog

    (tmp_path / "w.cypher").write_text("// mode: write\n// changes: r\nCREATE (:X)\n")
    (tmp_path / "r.cypher").write_text("// mode: read\nMATCH (x:X) RETURN x\n")
    with pytest.raises(QueryFileError, match="names no statement marked"):
        QueryCatalog(tmp_path, "falkordb")
