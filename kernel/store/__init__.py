"""The graph store: one interface (:class:`GraphStore`), two backends, named Cypher statements."""

from __future__ import annotations

from kernel.paths import cypher_dir
from kernel.settings import KernelSettings
from kernel.store.base import GraphStore, QueryResult, Row
from kernel.store.queries import QueryCatalog

__all__ = ["GraphStore", "QueryResult", "Row", "open_store"]


def open_store(settings: KernelSettings | None = None) -> GraphStore:
    """Connect to the graph the settings name, starting the embedded server if needed."""
    settings = settings or KernelSettings.load()
    target = settings.target()
    if target.backend == "embedded":
        from kernel.store.embedded_server import EmbeddedServer
        from kernel.store.falkordb_backend import FalkorDBStore

        assert target.data_dir is not None and target.database is not None
        server = EmbeddedServer(target.data_dir, fsync=settings.embedded_fsync)
        return FalkorDBStore(QueryCatalog(cypher_dir(), "falkordb"), server, target.database)

    from kernel.store.neo4j_backend import Neo4jStore
    from kernel.store.write_gate import WriteGate

    password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else None
    # Keyed by database, not by URI: one server reached by two spellings is one graph.
    gate = WriteGate(settings.data_dir, f"neo4j:{target.database or '(default)'}")
    return Neo4jStore(QueryCatalog(cypher_dir(), "neo4j"), target.uri, settings.neo4j_user,
                      password, target.database, gate=gate)
