"""Schema bootstrap and forward migrations, tracked in the graph itself.

``kernel db init`` is idempotent: it ensures the constraints and indexes of the
ontology (cheap when present), then applies, in order, every migration newer than
the graph's ``SchemaInfo.version``, recording each in the same statement that
moves the version. A graph written by a newer kernel is refused, not touched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from kernel.errors import SchemaVersionError
from kernel.paths import seeds_dir
from kernel.repositories import schema_versions
from kernel.store.base import GraphStore
from kernel.store.ontology import LABELS, REL_TYPES, VECTORS

if TYPE_CHECKING:
    from kernel.core.artifacts import BlobStore
    from kernel.graph_io import ImportReport

BOOT_SEED = "boot.graph.jsonl"


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    apply: Callable[[GraphStore], None]


def _load_boot_graph(store: GraphStore) -> None:
    from kernel.graph_io import import_graph

    import_graph(store, seeds_dir() / BOOT_SEED)


def _backfill_captions(store: GraphStore) -> None:
    schema_versions.backfill_captions(store)


def _drop_unserved_capabilities(store: GraphStore) -> None:
    schema_versions.drop_capabilities(store, ["package_install", "web_search"])


def _backfill_spend_totals(store: GraphStore) -> None:
    schema_versions.backfill_spend_totals(store)


def _label_statuses(store: GraphStore) -> None:
    schema_versions.label_statuses(store)


def _constraint_role_lists(store: GraphStore) -> None:
    schema_versions.constraint_role_lists(store)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "boot graph: resolvers, capabilities, human actor", _load_boot_graph),
    Migration(2, "a caption on every node; one resolver cost field", _backfill_captions),
    Migration(3, "codex-tools-0 claims only what its sandbox can do",
              _drop_unserved_capabilities),
    Migration(4, "each run's spend split by model, sandbox and tool; each goal's subtree spend",
              _backfill_spend_totals),
    Migration(5, "status labels on goals and attempts (:Resolved, :Sat, ...)", _label_statuses),
    Migration(6, "one HAS_CONSTRAINT edge per goal and constraint, its roles a list",
              _constraint_role_lists),
)
LATEST_VERSION = MIGRATIONS[-1].version


@dataclass(frozen=True)
class InitReport:
    from_version: int
    to_version: int
    applied: list[str]


def schema_version(store: GraphStore) -> int:
    """0 for a graph that was never initialised."""
    return schema_versions.version(store)


def ensure_schema(store: GraphStore) -> None:
    """Constraints and indexes for the whole ontology; every call is idempotent."""
    for spec in LABELS:
        store.ensure_unique_id(spec.name)
        for prop in spec.indexed:
            store.ensure_index(spec.name, prop)
    store.ensure_relationship_types(REL_TYPES)
    for vector in VECTORS:
        store.ensure_vector_index(vector.label, vector.prop, vector.dimensions, vector.index_name)
    store.settle_schema()


def init_schema(store: GraphStore) -> InitReport:
    """Bring the graph to :data:`LATEST_VERSION` (one process at a time per graph)."""
    with store.schema_held():
        return _init_schema(store)


def _init_schema(store: GraphStore) -> InitReport:
    current = schema_version(store)
    if current > LATEST_VERSION:
        raise SchemaVersionError(
            f"this graph is at schema v{current} but this kernel knows only up to "
            f"v{LATEST_VERSION}: upgrade the kernel before using this graph"
        )
    ensure_schema(store)
    applied = []
    for migration in MIGRATIONS:
        if migration.version <= current:
            continue
        migration.apply(store)
        _record(store, migration, migration.name)
        applied.append(migration.name)
    return InitReport(current, max(current, LATEST_VERSION), applied)


def seed_graph(store: GraphStore, path: Path, blobs: BlobStore | None = None) -> ImportReport:
    """Import a ``kernel-graph`` file and leave the graph at :data:`LATEST_VERSION`:
    what ``kernel graph import`` does to seed a deployment."""
    from kernel.graph_io import import_graph

    with store.schema_held():
        ensure_schema(store)  # unique ids and indexes before the first merge
    report = import_graph(store, path, blobs=blobs, max_schema=LATEST_VERSION)
    with store.schema_held():
        report.schema_to = adopt_schema(store, report.source_schema)
    return report


def adopt_schema(store: GraphStore, source_version: int) -> int:
    """After an import: a graph that was never initialised takes the source's schema
    version, because the imported data already went through those migrations (running
    the boot graph again would reset what the source learnt), then moves forward to
    :data:`LATEST_VERSION` like any other. Returns the version reached. The caller holds
    the store's schema lock."""
    if schema_version(store) == 0:
        for migration in MIGRATIONS:
            if migration.version <= source_version:
                _record(store, migration, f"{migration.name} (carried by an import)")
    return _init_schema(store).to_version


def _record(store: GraphStore, migration: Migration, name: str) -> None:
    schema_versions.record_migration(store, f"migration:{migration.version:04d}", name,
                                     migration.version,
                                     datetime.now(UTC).isoformat(timespec="seconds"))
