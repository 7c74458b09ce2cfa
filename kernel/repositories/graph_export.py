"""What exports and imports read and merge (``kernel.graph_io``); labels, types and
vector properties are identifiers the caller checked against the ontology."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kernel.store.base import GraphStore, Row


def unknown_labels(store: GraphStore, known: list[str]) -> dict[str, int]:
    """Nodes of labels outside ``known`` (an export leaves them out), by label."""
    return {str(r["label"]): int(r["nodes"])
            for r in store.run("admin/count_unknown_labels", {"known": known})}


def nodes_page(store: GraphStore, label: str, after: str, limit: int) -> list[Row]:
    """Up to ``limit`` ``label`` nodes with ids after ``after``."""
    return store.run("graph_io/export_nodes_page", {"after": after, "limit": limit},
                     {"label": label})


def relationships(store: GraphStore, label: str, ids: list[str]) -> list[Row]:
    """The outgoing relationships of the ``label`` nodes ``ids``."""
    return store.run("graph_io/export_relationships", {"ids": ids}, {"label": label})


def existing_ids(store: GraphStore, label: str, ids: list[str]) -> set[str]:
    return {str(r["id"]) for r in store.run("graph_io/existing_ids", {"ids": ids},
                                            {"label": label})}


def checkpoint(store: GraphStore, checkpoint_id: str) -> tuple[int, bool] | None:
    """(last line imported, done) of an import, or None when it never started."""
    rows = store.run("graph_io/get_checkpoint", {"id": checkpoint_id})
    return (int(rows[0]["line"]), bool(rows[0]["done"])) if rows else None


def set_checkpoint(store: GraphStore, checkpoint_id: str, line: int, done: bool,
                   source: str) -> None:
    store.run("graph_io/set_checkpoint", {"id": checkpoint_id, "line": line, "done": done,
                                          "source": source, "caption": f"import of {source}"})


def merge_nodes(store: GraphStore, label: str, rows: list[dict[str, Any]],
                vector_prop: str | None = None) -> None:
    """Merge ``rows`` (id, props[, vector]) as ``label`` nodes, in one batch."""
    if vector_prop is None:
        store.run_batched("graph_io/merge_nodes", rows, identifiers={"label": label},
                          batch_size=len(rows))
    else:
        store.run_batched("graph_io/merge_nodes_vector", rows,
                          identifiers={"label": label, "prop": vector_prop},
                          batch_size=len(rows))


def merge_relationships(store: GraphStore, rel_type: str, from_label: str, to_label: str,
                        rows: list[dict[str, Any]], *, keyed: bool,
                        dedupe: Callable[[Mapping[str, Any]], tuple[Any, ...]]) -> int:
    """Merge ``rows`` (from_id, to_id, props[, key]) in one batch; how many were merged."""
    name = "graph_io/merge_keyed_relationships" if keyed else "graph_io/merge_relationships"
    return store.run_batched(
        name, rows, batch_size=len(rows),
        identifiers={"type": rel_type, "from_label": from_label, "to_label": to_label},
        dedupe=dedupe)
