"""The read cache a stepping run uses, on the real store: a repeated read is served from
memory, a write that changes state empties the cache, an observation write does not, and
outside ``read_cache`` nothing is cached."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
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
        run.step.pending_logs.append({"id": "log:cache-test", "goal_id": goal_id,
                                 "props": {"id": "log:cache-test", "summary": "x"}})
        run.flush()  # an observation: the goal read stays valid
        assert tree.get(goal_id).status == Status.PENDING
        assert stats.calls["goal/get"] == 1
        child = tree.create_child(goal_id, GoalSpec("a part", "a part"))
        other = tree.create_root(GoalSpec("another goal", "another goal"))
        for read in (goal_id, child, other):
            tree.get(read)
        calls = stats.calls["goal/get"]
        tree.update(child, Status.PENDING, GoalChanges(leaf_reason="changed"))
        # the write's answer is the child's next read; it drops the parent's read (its
        # view counts open children) and keeps the unrelated goal's
        assert tree.get(child).leaf_reason == "changed"
        tree.get(other)
        assert stats.calls["goal/get"] == calls
        tree.get(goal_id)
        assert stats.calls["goal/get"] == calls + 1
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
        # goal/update names goal/get, not constraint/of_goal; its answer is the next read
        assert stats.calls["constraint/of_goal"] == 1 and stats.hits["constraint/of_goal"] == 1
        assert stats.calls["goal/get"] == 1 and stats.hits["goal/get"] == 1


def test_the_audit_catches_a_write_that_does_not_name_a_read_it_changes(
        embedded_store: GraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    from kernel.store.read_cache import StaleReadError

    _run, tree, goal_id = _run_with_goal(embedded_store)
    catalog = embedded_store.catalog
    monkeypatch.setitem(catalog._checked, "goal/update",
                        dataclasses.replace(catalog.get("goal/update"), changes=frozenset(),
                                            refreshes=(), keyed_changes=()))
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
        QueryCatalog(tmp_path, "falkordb").check()
    with pytest.raises(QueryFileError, match="names no statement marked"):
        QueryCatalog(tmp_path, "falkordb").get("w")  # on first use too
    assert QueryCatalog(tmp_path, "falkordb").get("r").mode == "read"


_READ = "// mode: read\n// cache: read\nMATCH (x:X {id: $id}) RETURN x\n"


@pytest.mark.parametrize(("read", "write", "message"), [
    (_READ, "// refreshes: r\nMATCH (x:X {id: $id}) SET x.n = 1 RETURN x.n AS n",
     "does not return the column 'x'"),
    (_READ, "// refreshes: r\nMATCH (x:X) SET x.n = 1 RETURN x.n AS n, x",
     r"lacks its parameter\(s\) \['id'\]"),
    (_READ, "// changes: nothing\n// refreshes: r\nMATCH (x:X {id: $id}) SET x.n = 1 RETURN x",
     "'// changes:' does not name it"),
    (_READ, "// changes: r(touched)\nMATCH (x:X {id: $id}) SET x.n = 1 RETURN x.n AS n",
     "does not return the column 'touched'"),
    ("// mode: read\n// cache: read\nMATCH (x:X {id: $id, k: $k}) RETURN x\n",
     "// changes: r(touched)\nMATCH (x:X) SET x.n = 1 RETURN [x.id] AS touched",
     "exactly one parameter"),
    (_READ, "// changes: r(touched\nRETURN 1", "neither a statement name"),
    ("// mode: read\n// cache: read\nMATCH (x:X {id: $id}) RETURN x.n AS n\n",
     "// refreshes: r\nMATCH (x:X {id: $id}) SET x.n = 1 RETURN x.n AS n",
     "does not end 'RETURN name'"),
])
def test_a_refresh_or_keyed_change_that_does_not_fit_its_read_is_refused(
        tmp_path: Path, read: str, write: str, message: str) -> None:
    """A refreshing write returns the read's column and takes its parameters; a keyed
    change names a column the write returns, of a read with one parameter."""
    from kernel.store.queries import QueryCatalog
    (tmp_path / "r.cypher").write_text(read)
    (tmp_path / "w.cypher").write_text(f"// mode: write\n{write}\n")
    with pytest.raises(QueryFileError, match=message):
        QueryCatalog(tmp_path, "falkordb").check()


@contextlib.contextmanager
def _catalog(store: GraphStore, root: Path, files: dict[str, str]) -> Iterator[None]:
    """The store runs the statements in ``files`` while held (and its own afterwards: the
    fixture drops the graph with the shipped catalogue)."""
    from kernel.store.queries import QueryCatalog
    for name, text in files.items():
        (root / f"{name}.cypher").write_text(text)
    shipped, store.catalog = store.catalog, QueryCatalog(root, "falkordb")
    try:
        yield
    finally:
        store.catalog = shipped


def test_the_audit_refuses_a_refresh_that_differs_from_the_read(
        embedded_store: GraphStore, tmp_path: Path) -> None:
    """With the audit on (the tests' default), a write whose answer is not what the read
    returns fails at once rather than leaving a wrong answer in the cache."""
    from kernel.store.read_cache import StaleReadError
    with _catalog(embedded_store, tmp_path, {
        "r": "// mode: read\n// cache: read\nMATCH (x:X {id: $id}) WITH x.n AS n RETURN n\n",
        "w": "// mode: write\n// refreshes: r\n"
             "MERGE (x:X {id: $id}) SET x.n = $n RETURN $n + 1 AS n\n",
        "ok": "// mode: write\n// refreshes: r\n"
              "MERGE (x:X {id: $id}) SET x.n = $n RETURN x.n AS n\n",
    }), embedded_store.read_cache():
        embedded_store.run("ok", {"id": "a", "n": 1})
        assert embedded_store.run("r", {"id": "a"}) == [{"n": 1}]
        assert embedded_store.stats.hits["r"] == 1
        with pytest.raises(StaleReadError, match="w refreshes r"):
            embedded_store.run("w", {"id": "a", "n": 2})


def test_a_keyed_change_drops_the_ids_it_returns_or_everything(
        embedded_store: GraphStore, tmp_path: Path) -> None:
    """Only the answers for the returned ids go; no row, or a null, drops them all."""
    stats = embedded_store.stats
    n = {"a": 1, "b": 1}

    def read_both() -> int:
        for i in ("a", "b"):
            assert embedded_store.run("r", {"id": i}) == [{"n": n[i]}]
        return stats.calls["r"]

    with _catalog(embedded_store, tmp_path, {
        "r": "// mode: read\n// cache: read\nMATCH (x:X {id: $id}) RETURN x.n AS n\n",
        "w": "// mode: write\n// changes: r(touched)\n"
             "UNWIND $ids AS i MERGE (x:X {id: i}) SET x.n = $n\n"
             "WITH collect(i) AS ids WHERE size(ids) > 0\n"
             "RETURN CASE WHEN $all THEN null ELSE ids END AS touched\n",
    }), embedded_store.read_cache():
        embedded_store.run("w", {"ids": ["a", "b"], "n": 1, "all": False})
        stats.reset()
        assert read_both() == 2
        embedded_store.run("w", {"ids": ["a"], "n": 2, "all": False})
        n["a"] = 2
        assert read_both() == 3  # only a's answer was read again
        embedded_store.run("w", {"ids": ["b"], "n": 3, "all": True})
        n["b"] = 3
        assert read_both() == 5  # a null: both
        embedded_store.run("w", {"ids": [], "n": 4, "all": False})  # no row
        assert read_both() == 7
