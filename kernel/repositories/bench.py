"""What the benchmarks write and probe: synthetic nodes, trees and knowledge graphs under
``bench:`` ids, and their removal. Nothing here runs in a solve."""

from __future__ import annotations

from typing import Any

from kernel.store.base import GraphStore

# The parts of a synthetic knowledge graph, each written by its own statement.
KG_PARTS = {"resolvers": "bench/kg_resolvers", "patterns": "bench/kg_patterns",
            "similar_to": "bench/kg_similar", "constraints": "bench/kg_constraints",
            "goals": "bench/kg_goals", "attempts": "bench/kg_attempts"}


def ping(store: GraphStore) -> None:
    store.run("admin/ping")


def merge_node(store: GraphStore, node_id: str, caption: str) -> None:
    store.run("bench/merge_node", {"id": node_id, "caption": caption})


def merge_nodes(store: GraphStore, rows: list[dict[str, Any]], batch_size: int) -> None:
    store.run_batched("bench/merge_nodes", rows, batch_size=batch_size)


def cleanup(store: GraphStore) -> None:
    """Remove the ``bench:`` nodes the store benchmark merged."""
    store.run("bench/cleanup")


def create_tree(store: GraphStore, run_id: str, rows: list[dict[str, Any]], *,
                chunk: int, link_batch: int) -> None:
    """Goals of a synthetic tree (id, parent_id, seq, depth, time, depends_on), ``chunk``
    per statement, then their edges, ``link_batch`` per statement."""
    for start in range(0, len(rows), chunk):
        store.run("bench/create_goals", {"run_id": run_id, "rows": rows[start:start + chunk]})
    store.run_batched("bench/link_goals", rows, batch_size=link_batch)


def remove_tree(store: GraphStore, run_id: str) -> None:
    store.run("bench/cleanup_goals", {"run_id": run_id})


def seed_kg_part(store: GraphStore, part: str, rows: list[dict[str, Any]], batch: int) -> None:
    """One part of a synthetic knowledge graph (see ``KG_PARTS``)."""
    store.run_batched(KG_PARTS[part], rows, batch_size=batch)
