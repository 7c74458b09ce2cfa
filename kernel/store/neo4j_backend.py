"""The production backend: Neo4j 5 through the official ``neo4j`` driver.

Each named statement runs in its own managed transaction (read routing for
``read`` statements, which the server enforces as read-only).

Neo4j reads at read-committed isolation: a transaction of many reads sees each commit
that lands between them, so no read transaction is a snapshot. An export holds the
graph still the way the embedded store does: every write statement of a kernel process
passes the data directory's write gate (``kernel.store.write_gate``), which the export
holds alone while it reads.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import neo4j
from kernel.errors import StatementError, StoreUnavailableError
from kernel.store.base import GraphStore, QueryResult, Row
from kernel.store.queries import NamedQuery, QueryCatalog
from kernel.store.values import plain
from kernel.store.write_gate import WriteGate
from neo4j import GraphDatabase, RoutingControl
from neo4j import exceptions as neo4j_errors

HOW_TO_START = (
    "start it with 'docker compose up -d' in the repository (see README), "
    "set NEO4J_PASSWORD to the password in your .env, "
    "or drop KERNEL_GRAPH / --graph to use the embedded store"
)


DELETE_BATCH = 10_000  # nodes per transaction when emptying the database


class Neo4jStore(GraphStore):
    dialect = "neo4j"

    def __init__(self, catalog: QueryCatalog, uri: str, user: str, password: str | None,
                 database: str | None = None, gate: WriteGate | None = None) -> None:
        """``gate``: the write gate of the data directory the kernel's processes share
        (``open_store`` passes it); without one, an export cannot pause writes."""
        super().__init__(catalog)
        self.uri = uri
        self.database = database
        self._gate = gate
        if password is None:
            raise StoreUnavailableError(f"no password for Neo4j at {uri}: {HOW_TO_START}")
        # No server notifications: the driver logs each as a warning on stderr, where they
        # would land in every command's output. The kernel's statements are checked by the
        # linter and the tests on both backends; what Neo4j would say of them is either a
        # property or type not written yet (a graph grows) or the subquery scoping by an
        # inner WITH that 5.26 deprecates, which the statements share with FalkorDB's Cypher.
        self._driver = GraphDatabase.driver(uri, auth=(user, password),
                                            notifications_min_severity="OFF")
        try:
            self._driver.verify_connectivity()
        except neo4j_errors.AuthError as exc:
            self._driver.close()
            raise StoreUnavailableError(
                f"Neo4j at {uri} rejected user {user!r}: set NEO4J_USER / NEO4J_PASSWORD"
            ) from exc
        except (neo4j_errors.ServiceUnavailable, OSError, ValueError) as exc:
            self._driver.close()
            raise StoreUnavailableError(f"Neo4j at {uri} is unreachable ({exc}); {HOW_TO_START}") \
                from exc

    def _execute(self, query: NamedQuery, text: str, params: dict[str, Any]) -> list[Row]:
        result = self._call(query.name, text, params, read_only=query.mode == "read")
        return result.records()

    def execute_adhoc(self, text: str, params: Mapping[str, Any], *, write: bool) -> QueryResult:
        return self._call("(ad-hoc)", text, dict(params), read_only=not write)

    def _call(self, name: str, text: str, params: dict[str, Any], *, read_only: bool) -> QueryResult:
        routing = RoutingControl.READ if read_only else RoutingControl.WRITE
        gated = self._gate.writing() if self._gate is not None and not read_only \
            else contextlib.nullcontext()
        try:
            with gated:  # held until the commit is acknowledged, so it lands whole
                records, summary, keys = self._driver.execute_query(
                    text, params, routing_=routing, database_=self.database,
                )
        except neo4j_errors.ServiceUnavailable as exc:
            raise StoreUnavailableError(f"lost Neo4j at {self.uri} ({exc}); {HOW_TO_START}") from exc
        except neo4j_errors.Neo4jError as exc:
            message = exc.message or str(exc)
            if read_only and "read" in message.lower() and "write" in message.lower():
                message = "this statement writes: pass --write to run it"
            raise StatementError(name, message) from exc
        rows = [[plain(record[key]) for key in keys] for record in records]
        counters = {} if read_only else {
            name: int(count) for name, count in vars(summary.counters).items()
            if isinstance(count, int) and not isinstance(count, bool) and count and
            not name.startswith("_")}
        return QueryResult(list(keys), rows, counters)

    @contextlib.contextmanager
    def writes_paused(self) -> Iterator[bool]:
        if self._gate is None:
            yield False
            return
        with self._gate.paused():
            yield True

    # -- schema ------------------------------------------------------------------
    def ensure_unique_id(self, label: str) -> None:
        self.run("schema/create_unique_id", identifiers={"label": label})

    def ensure_relationship_types(self, rel_types: Iterable[str]) -> None:
        """Nothing to do: Neo4j resolves a relationship type when a statement runs."""

    def ensure_index(self, label: str, prop: str) -> None:
        self.run("schema/create_range_index", identifiers={"label": label, "prop": prop})

    def ensure_vector_index(self, label: str, prop: str, dimensions: int, index_name: str) -> None:
        """Made unquantized; an index made before that (quantized, Neo4j's default) is made
        again, since its scores differ from the embedded store's by up to 1e-3."""
        made = self.run("schema/vector_index_options", {"index_name": index_name})
        if made and made[0]["config"].get("vector.quantization.enabled", False):
            self.run("schema/drop_index", identifiers={"index_name": index_name})
        self.run(
            "schema/create_vector_index",
            identifiers={"label": label, "prop": prop, "index_name": index_name,
                         "dimensions": str(dimensions)},
        )
        self.run("schema/await_indexes")

    def drop_all(self) -> None:
        """Every node, in batches (see cypher/neo4j/admin/delete_all); the schema stays."""
        while self.run("admin/delete_all", {"batch": DELETE_BATCH})[0]["deleted"]:
            pass

    def describe(self) -> dict[str, Any]:
        info = self._driver.get_server_info()
        return {
            "backend": "Neo4j",
            "uri": self.uri,
            "database": self.database or "(default)",
            "server": f"{info.agent} (protocol {'.'.join(map(str, info.protocol_version))})",
        }

    def close(self) -> None:
        if self._gate is not None:
            self._gate.close()
        self._driver.close()


__all__ = ["Neo4jStore", "neo4j"]

