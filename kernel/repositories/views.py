"""What the read-only views show (status, the story of a run, lookups by id): reads
that serve people, not the loop."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypedDict, cast

from kernel.store.base import GraphStore


class LogLine(TypedDict):
    id: str
    tier: int
    goal_id: str | None
    category: str
    summary: str
    detail: str | None
    seq: int
    wall_time: str | None


class Node(TypedDict):
    props: dict[str, Any]
    neighbours: list[dict[str, Any]]


def counts_by_label(store: GraphStore) -> dict[str, int]:
    return {r["label"]: r["nodes"] for r in store.run("admin/count_by_label")}


def counts_by_type(store: GraphStore) -> dict[str, int]:
    return {r["type"]: r["relationships"] for r in store.run("admin/count_by_type")}


def constraint_titles(store: GraphStore, ids: Iterable[str]) -> dict[str, str]:
    """Each constraint's title by id (ids not in the graph are left out)."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    return {r["id"]: r["title"] for r in store.run("constraint/get_many", {"ids": wanted})}


def log_of_run(store: GraphStore, run_id: str, max_tier: int) -> list[LogLine]:
    return cast(list[LogLine], store.run("log/of_run", {"run_id": run_id, "max_tier": max_tier}))


def attempts_of_goal(store: GraphStore, goal_id: str) -> list[dict[str, Any]]:
    """The goal's attempts' stored properties, in order."""
    return [dict(r["attempt"]) for r in store.run("attempt/of_goal", {"goal_id": goal_id})]


def latest_run(store: GraphStore) -> str | None:
    rows = store.run("lookup/latest_run")
    return str(rows[0]["id"]) if rows else None


def latest_run_with_final_artifact(store: GraphStore) -> str | None:
    rows = store.run("lookup/latest_run_with_final_artifact")
    return str(rows[0]["id"]) if rows else None


def ids_by_prefix(store: GraphStore, label: str, prefix: str, limit: int) -> list[str]:
    """Ids of ``label`` nodes starting with ``prefix``; ``label`` is a checked identifier."""
    return [str(r["id"]) for r in store.run("lookup/ids_by_prefix",
                                            {"prefix": prefix, "limit": limit},
                                            {"label": label})]


def node(store: GraphStore, ident: str, label: str) -> Node:
    """A node's properties and neighbours; ``label`` is a checked identifier."""
    return cast(Node, store.run("lookup/node", {"id": ident}, {"label": label})[0])


def artifact_record(store: GraphStore, artifact_id: str) -> dict[str, Any] | None:
    """An artifact node's properties as stored, or None."""
    rows = store.run("artifact/record", {"artifact_id": artifact_id})
    return dict(rows[0]["artifact"]) if rows else None
