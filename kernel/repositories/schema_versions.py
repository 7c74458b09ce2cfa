"""The graph's schema version and its migrations, as the graph records them."""

from __future__ import annotations

from kernel.store.base import GraphStore
from kernel.store.ontology import CONSTRAINT_ROLES


def version(store: GraphStore) -> int:
    """0 for a graph that was never initialised."""
    rows = store.run("schema/get_version")
    return int(rows[0]["version"]) if rows else 0


def record_migration(store: GraphStore, migration_id: str, name: str, number: int,
                     applied_at: str) -> None:
    store.run("schema/record_migration", {"id": migration_id, "name": name,
                                          "version": number, "applied_at": applied_at})


def backfill_captions(store: GraphStore) -> None:
    """Migration 2: a caption on every node; one resolver cost field."""
    store.run("schema/backfill_captions")


def drop_capabilities(store: GraphStore, tags: list[str]) -> None:
    """Migration 3: capabilities a boot tool claimed but its sandbox cannot serve."""
    store.run("schema/drop_unserved_capabilities", {"tags": tags})


def backfill_spend_totals(store: GraphStore) -> None:
    """Migration 4: each run's spend split by who was paid; each goal's subtree spend."""
    store.run("schema/backfill_spend_totals")


def label_statuses(store: GraphStore) -> None:
    """Migration 5 and the end of an import: goals and attempts take the labels their status
    and verdict imply (what Neo4j Browser's style colours)."""
    store.run("schema/status_labels")


def constraint_role_lists(store: GraphStore) -> None:
    """Migration 6 and the end of an import: one HAS_CONSTRAINT edge per goal and
    constraint, its roles a list in the kernel's order, in place of one edge per role."""
    store.run("schema/constraint_role_lists", {"roles": list(CONSTRAINT_ROLES)})
