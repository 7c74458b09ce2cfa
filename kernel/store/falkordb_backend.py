"""The embedded backend: FalkorDB over RESP through the official ``falkordb`` client.

Dialect facts handled here and only here: unique constraints are a
``GRAPH.CONSTRAINT`` command (not Cypher) created asynchronously after a range
index; read-only statements go through ``GRAPH.RO_QUERY``; a graph that was never
written does not exist yet, so listing its indexes must tolerate that.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import falkordb
import redis

from kernel.disk_space import STORE_HEADROOM, full_message
from kernel.errors import StatementError, StoreError, StoreUnavailableError
from kernel.store.base import GraphStore, QueryResult, Row
from kernel.store.embedded_server import QUERY_MEMORY_BYTES, EmbeddedServer
from kernel.store.falkordb_params import params_header
from kernel.store.queries import NamedQuery, QueryCatalog
from kernel.store.values import plain
from kernel.store.write_gate import WriteGate, graph_lock

_CONSTRAINT_WAIT = 30.0
_INDEX_WAIT = 300.0  # an index over a large graph is filled in the background

ADHOC_TIMEOUT_MS = 15_000  # a person's read-only statement, stopped by the server


@dataclass
class _SchemaSeen:
    """The graph's indexes and unique constraints, as listed under the schema lock."""
    indexes: set[tuple[str, str, str]]
    constraints: dict[str, str] = field(default_factory=dict)


class FalkorDBStore(GraphStore):
    dialect = "falkordb"

    def __init__(self, catalog: QueryCatalog, server: EmbeddedServer, graph_name: str) -> None:
        super().__init__(catalog)
        self.server = server
        self.graph_name = graph_name
        self._constraints_created = False
        self._constraints_pending: set[str] = set()
        self._indexes_created = False
        self._schema_locked = False
        self._schema_seen: _SchemaSeen | None = None  # listed once per schema lock
        self._gate = WriteGate(server.data_dir, graph_name)
        password = server.ensure_running()
        self._db = falkordb.FalkorDB(unix_socket_path=str(server.socket), password=password)
        self._graph = self._db.select_graph(graph_name)
        with self._answering():
            exists = self._db.connection.exists(graph_name)
        if not exists:
            self.run("admin/create_graph")

    def _execute(self, query: NamedQuery, text: str, params: dict[str, Any]) -> list[Row]:
        result = self._call(query.name, text, params, read_only=query.mode == "read")
        return [dict(zip(result.columns, row, strict=True)) for row in result.rows]

    def execute_adhoc(self, text: str, params: Mapping[str, Any], *, write: bool) -> QueryResult:
        """A person's statement: read-only ones end after ``ADHOC_TIMEOUT_MS`` on the
        server itself, so one that never ends (its client gone or not) frees the server."""
        return self._call("(ad-hoc)", text, dict(params), read_only=not write,
                          timeout_ms=None if write else ADHOC_TIMEOUT_MS)

    def _call(self, name: str, text: str, params: dict[str, Any], *, read_only: bool,
              timeout_ms: int | None = None) -> QueryResult:
        header = params_header(params)
        problem = _unstorable(header, params)
        if problem:
            raise StatementError(name, problem)
        try:
            text = header + text
            with self._answering():
                if read_only:
                    result = self._graph.ro_query(text, timeout=timeout_ms)
                else:
                    with self._gate.writing():
                        result = self._graph.query(text)
        except redis.exceptions.ResponseError as exc:
            message = str(exc)
            if "read-only" in message:
                message = "this statement writes: pass --write to run it"
            elif "timed out" in message.lower():
                message = (f"it ran past {ADHOC_TIMEOUT_MS // 1000} s and was stopped: narrow it "
                           "(a LIMIT, a label, an indexed property)")
            elif "mem consumption exceeded" in message.lower():
                message = (f"it needed more than the {QUERY_MEMORY_BYTES >> 20} MiB a statement "
                           "may use and was stopped: narrow it")
            raise StatementError(name, message) from exc
        columns = [_column_name(h) for h in (result.header or [])]
        rows = [[plain(v) for v in row] for row in result.result_set]
        return QueryResult(columns, rows, _counters(result) if not read_only else {})

    @contextlib.contextmanager
    def _answering(self) -> Iterator[None]:
        """Around every command to the server: losing it (killed, stopped, its socket
        gone) is a fault of the store, reported in one line, not a kernel bug."""
        try:
            yield
        except redis.exceptions.ConnectionError as exc:
            if self.server.stopped_for_space():
                raise StoreUnavailableError(
                    full_message(self.server.db_dir, STORE_HEADROOM, "the embedded store")
                    + "; it stopped, and starts again with the next command") from exc
            raise StoreUnavailableError(
                f"lost the embedded server at {self.server.socket}: {exc}; "
                "run 'kernel db status' to check it"
            ) from exc

    @contextlib.contextmanager
    def writes_paused(self) -> Iterator[bool]:
        with self._gate.paused():
            yield True

    # -- schema ------------------------------------------------------------------
    @contextlib.contextmanager
    def schema_held(self) -> Iterator[None]:
        """The server creates an index that already exists as an error, and the
        ontology's indexes are created check-then-create: one process at a time. While
        the lock is held nobody else changes the schema, so the indexes and constraints
        are listed once and kept up to date here, not listed again for every label."""
        with self.server.holding(graph_lock(self.server.data_dir, self.graph_name, "schema")):
            self._schema_locked, self._schema_seen = True, None
            try:
                yield
            finally:
                self._schema_locked, self._schema_seen = False, None

    def _seen(self) -> _SchemaSeen:
        """What the schema holds: listed once per held lock, listed fresh otherwise."""
        if self._schema_seen is not None:
            return self._schema_seen
        seen = _SchemaSeen(self._indexed(), self._constraint_statuses())
        if self._schema_locked:
            self._schema_seen = seen
        return seen

    def _indexed(self) -> set[tuple[str, str, str]]:
        """(label, property, kind) of every existing index."""
        found = set()
        for row in self.run("schema/list_indexes"):
            for prop, kinds in (row["types"] or {}).items():
                for kind in kinds:
                    found.add((row["label"], prop, str(kind).upper()))
        return found

    def ensure_index(self, label: str, prop: str) -> None:
        seen = self._seen()
        if (label, prop, "RANGE") not in seen.indexes:
            self.run("schema/create_range_index", identifiers={"label": label, "prop": prop})
            seen.indexes.add((label, prop, "RANGE"))
            self._indexes_created = True

    def ensure_relationship_types(self, rel_types: Iterable[str]) -> None:
        seen = self._seen()
        for rel_type in rel_types:
            if (rel_type, "id", "RANGE") not in seen.indexes:
                self.run("schema/register_relationship_type", identifiers={"type": rel_type})
                seen.indexes.add((rel_type, "id", "RANGE"))
                self._indexes_created = True

    def ensure_unique_id(self, label: str) -> None:
        """Asks for the constraint; the server builds it in the background, and
        :meth:`settle_schema` waits for every one asked for (all at once, not in turn)."""
        self.ensure_index(label, "id")
        seen = self._seen()
        if label not in seen.constraints:
            try:
                with self._answering():
                    self._db.connection.execute_command(
                        "GRAPH.CONSTRAINT", "CREATE", self.graph_name, "UNIQUE", "NODE", label,
                        "PROPERTIES", 1, "id",
                    )
                self._constraints_created = True
            except redis.exceptions.ResponseError as exc:
                raise StoreError(f"cannot make {label}.id unique: {exc}") from exc
            seen.constraints[label] = "PENDING"
        if seen.constraints[label] != "OPERATIONAL":
            self._constraints_pending.add(label)

    def _await_constraints(self) -> None:
        """Until every unique constraint asked for is in force (or one cannot be)."""
        deadline = time.monotonic() + _CONSTRAINT_WAIT
        while self._constraints_pending:
            statuses = self._constraint_statuses()
            if self._schema_seen is not None:
                self._schema_seen.constraints.update(statuses)
            for label in sorted(self._constraints_pending):
                if statuses.get(label) == "FAILED":
                    self._constraints_pending.clear()
                    raise StoreError(
                        f"cannot make {label}.id unique: existing {label} nodes share an id")
            self._constraints_pending -= {label for label, status in statuses.items()
                                          if status == "OPERATIONAL"}
            if not self._constraints_pending:
                return
            if time.monotonic() > deadline:
                waiting = ", ".join(sorted(self._constraints_pending))
                self._constraints_pending.clear()
                raise StoreError(f"unique constraints on {waiting} (id) still not in force "
                                 f"after {_CONSTRAINT_WAIT:.0f}s")
            time.sleep(0.02)

    def _await_indexes(self) -> None:
        """Until every index is built, when this process asked for one."""
        if not self._indexes_created:
            return
        self._indexes_created = False
        deadline = time.monotonic() + _INDEX_WAIT
        while building := sorted(str(row["label"]) for row in self.run("schema/list_indexes")
                                 if row["status"] != "OPERATIONAL"):
            if time.monotonic() > deadline:
                raise StoreError(f"indexes on {', '.join(building)} still being built after "
                                 f"{_INDEX_WAIT:.0f}s")
            time.sleep(0.02)

    def settle_schema(self) -> None:
        """Waits for the unique constraints and the indexes asked for (a vector query on an
        index still being built fails: "Invalid arguments for procedure"). Then: the
        server logs each GRAPH.CONSTRAINT CREATE to its append-only file twice, so replaying that file
        after a crash fails the second copy ("Constraint already exists"). Compacting the
        file once constraints were created folds them into its snapshot, and the replay
        finds nothing to repeat."""
        self._await_constraints()
        self._await_indexes()
        if not self._constraints_created:
            return
        self._constraints_created = False
        with self.server.forking():
            self._wait_for_no_child()
            with self._answering():
                self._db.connection.execute_command("BGREWRITEAOF")
            self._wait_for_no_child()

    def _wait_for_no_child(self, timeout: float = 60.0) -> None:
        """Until the server has no child process (an AOF rewrite, a module's fork)."""
        deadline = time.monotonic() + timeout
        while True:
            with self._answering():
                info = self._db.connection.info("persistence")
            if not any(int(info.get(k, 0) or 0) for k in (
                    "aof_rewrite_in_progress", "rdb_bgsave_in_progress",
                    "module_fork_in_progress", "aof_rewrite_scheduled")):
                return
            if time.monotonic() > deadline:
                raise StoreError("the embedded server is still busy rewriting its log after "
                                 f"{timeout:.0f}s; try again shortly")
            time.sleep(0.02)

    def _constraint_statuses(self) -> dict[str, str]:
        """Status of each label's unique constraint on ``id`` alone."""
        return {str(row["label"]): str(row["status"])
                for row in self.run("schema/list_constraints")
                if list(row["properties"]) == ["id"] and row["type"] == "UNIQUE"}

    def ensure_vector_index(self, label: str, prop: str, dimensions: int, index_name: str) -> None:
        seen = self._seen()
        if (label, prop, "VECTOR") not in seen.indexes:
            self.run(
                "schema/create_vector_index",
                identifiers={"label": label, "prop": prop, "dimensions": str(dimensions)},
            )
            seen.indexes.add((label, prop, "VECTOR"))
            self._indexes_created = True

    def drop_all(self) -> None:
        try:
            with self._gate.writing(), self._answering():
                self._graph.delete()
        except redis.exceptions.ResponseError as exc:
            raise StoreError(f"cannot delete graph {self.graph_name}: {exc}") from exc
        self.run("admin/create_graph")

    def describe(self) -> dict[str, Any]:
        status = self.server.status()
        return {
            "backend": "embedded (FalkorDB)",
            "graph": self.graph_name,
            "data_dir": str(status.data_dir),
            "socket": str(status.socket),
            "server_pid": status.pid,
            "aof_bytes": status.aof_bytes,
        }

    def close(self) -> None:
        self._gate.close()
        self._db.connection.close()


def _unstorable(header: str, params: dict[str, Any]) -> str | None:
    """Why a parameter cannot travel to the server, if it cannot. The client inlines
    parameters into a C-string header: a NUL would cut it short, and text must be
    valid UTF-8. ``header`` is the parameters as they will be sent, so two C-speed checks
    on it clear almost every call; only one that fails them is walked value by value for
    the reason."""
    if "\x00" not in header:
        try:
            header.encode("utf-8")
            return None
        except UnicodeEncodeError:
            pass
    return _unstorable_value(params)


def _unstorable_value(value: Any) -> str | None:
    if isinstance(value, str):
        if "\x00" in value:
            return "a string parameter contains NUL (\\u0000), which the embedded store " \
                   "cannot hold"
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return "a string parameter is not valid Unicode text (a lone surrogate)"
        return None
    if isinstance(value, dict):
        items = [*value.keys(), *value.values()]
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        return None
    return next((p for p in map(_unstorable_value, items) if p), None)


def _column_name(header: Any) -> str:
    # The client gives [column_type, name] pairs.
    if isinstance(header, list | tuple) and len(header) == 2:
        return str(header[1])
    return str(header)


_COUNTERS = ("nodes_created", "nodes_deleted", "relationships_created",
             "relationships_deleted", "properties_set", "properties_removed", "labels_added",
             "indices_created", "indices_deleted")


def _counters(result: Any) -> dict[str, int]:
    """The write's statistics, as Neo4j names its counters."""
    found = {name: int(getattr(result, name, 0) or 0) for name in _COUNTERS}
    return {name: count for name, count in found.items() if count}
