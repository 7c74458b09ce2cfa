"""The production backend: Neo4j 5 through the official ``neo4j`` driver.

Each named statement is one auto-commit transaction (one round trip: RUN and PULL go
out together; a managed transaction adds BEGIN and COMMIT) on a session the calling
thread keeps for the store's life, opened read-only for ``read`` statements so that
the server refuses a write there. A ``neo4j://`` URI that routes to a single server
is served by a direct (``bolt://``) driver: no routing table to fetch and refresh.
Commits are durable as on the embedded store with ``fsync=always``: Neo4j forces its
transaction log to disk before it acknowledges a commit.

Neo4j reads at read-committed isolation: a transaction of many reads sees each commit
that lands between them, so no read transaction is a snapshot. An export holds the
graph still the way the embedded store does: every write statement of a kernel process
passes the data directory's write gate (``kernel.store.write_gate``), which the export
holds alone while it reads.
"""

from __future__ import annotations

import contextlib
import threading
import time
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

import neo4j
from kernel.errors import StatementError, StoreUnavailableError
from kernel.store.base import GraphStore, PlanAhead, QueryResult, Rehearsal, Row, Statement
from kernel.store.queries import NamedQuery, QueryCatalog
from kernel.store.values import plain
from kernel.store.write_gate import WriteGate
from neo4j import Driver, GraphDatabase, Session
from neo4j import exceptions as neo4j_errors

HOW_TO_START = (
    "start it with 'make neo4j' (its password: 'python3 neo4j/ctl.py env') or "
    "'docker compose up -d' in the repository (the password in your .env), then set "
    "NEO4J_PASSWORD; or drop KERNEL_GRAPH / --graph to use the embedded store"
)


# The kernel's statements find nodes by unique id or an indexed property, so the plan Neo4j
# makes first is as good on a big graph as on a small one; but on a graph that grows (every
# new deployment, every benchmark) its statistics keep diverging, and Neo4j would plan each
# statement again, which costs more than running it (a step took 3 to 4x as long, measured).
KEEP_PLANS = "CYPHER replan=skip "
TRANSIENT_TRIES = 5  # an auto-commit statement the server rolled back (a deadlock) is run again


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
        self._schema_ensuring = False
        self._indexes_seen: dict[str, Row] | None = None  # listed once per schema_held
        if password is None:
            raise StoreUnavailableError(f"no password for Neo4j at {uri}: {HOW_TO_START}")
        self._auth = (user, password)
        self._local = threading.local()
        # Every live thread's sessions, closed with the store (a finished thread's go with it).
        self._sessions: weakref.WeakSet[Session] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._driver = self._connect(uri)
        if urlsplit(uri).scheme in ("neo4j", "neo4j+s", "neo4j+ssc"):
            self._driver = self._direct_if_single_server(uri)

    def _connect(self, uri: str) -> Driver:
        # No server notifications: the driver logs each as a warning on stderr, where they
        # would land in every command's output. The kernel's statements are checked by the
        # linter and the tests on both backends; what Neo4j would say of them is either a
        # property or type not written yet (a graph grows) or the subquery scoping by an
        # inner WITH that 5.26 deprecates, which the statements share with FalkorDB's Cypher.
        user = self._auth[0]
        driver = GraphDatabase.driver(uri, auth=self._auth, notifications_min_severity="OFF")
        try:
            driver.verify_connectivity()
        except neo4j_errors.AuthError as exc:
            driver.close()
            raise StoreUnavailableError(
                f"Neo4j at {uri} rejected user {user!r}: set NEO4J_USER / NEO4J_PASSWORD"
            ) from exc
        except neo4j_errors.ClientError as exc:
            driver.close()
            if not str(exc.code or "").startswith("Neo.ClientError.Security."):
                raise
            # Too many wrong passwords in a row: the server refuses even the right one a while.
            raise StoreUnavailableError(
                f"Neo4j at {uri} refused user {user!r} ({exc.message}): check NEO4J_USER / "
                "NEO4J_PASSWORD, then try again in a few seconds") from exc
        except (neo4j_errors.ServiceUnavailable, OSError, ValueError) as exc:
            driver.close()
            raise StoreUnavailableError(f"Neo4j at {uri} is unreachable ({exc}); {HOW_TO_START}") \
                from exc
        return driver

    def _direct_if_single_server(self, uri: str) -> Driver:
        """The routing driver's table for one server names one address for every role:
        a direct driver to that address does the same work without it."""
        try:
            rows = self.run("admin/routing_table", {"database": self.database})
        except StatementError:  # a server without the procedure: keep routing
            return self._driver
        addresses = {row["address"] for row in rows}
        if len(addresses) != 1 or {row["role"] for row in rows} != {"READ", "WRITE", "ROUTE"}:
            return self._driver
        parts = urlsplit(uri)
        scheme = parts.scheme.replace("neo4j", "bolt", 1)
        direct = urlunsplit((scheme, addresses.pop(), parts.path, "", ""))
        self._close_sessions()
        self._driver.close()
        return self._connect(direct)

    def _session(self, read_only: bool) -> Session:
        """This thread's session for reads or for writes, opened on first use."""
        key = "read" if read_only else "write"
        session = cast("Session | None", getattr(self._local, key, None))
        if session is None or session.closed():
            session = self._driver.session(
                database=self.database,
                default_access_mode=neo4j.READ_ACCESS if read_only else neo4j.WRITE_ACCESS)
            setattr(self._local, key, session)
            with self._lock:
                self._sessions.add(session)
        return session

    def _forget_session(self, read_only: bool) -> None:
        session = getattr(self._local, "read" if read_only else "write", None)
        if session is not None:
            setattr(self._local, "read" if read_only else "write", None)
            with contextlib.suppress(Exception):
                session.close()

    def _execute(self, query: NamedQuery, text: str, params: dict[str, Any]) -> list[Row]:
        if query.mode != "schema":
            text = KEEP_PLANS + text
        result = self._call(query.name, text, params, read_only=query.mode == "read")
        return result.records()

    def _as_run(self, statement: Statement) -> str | None:
        """The text a run sends for a recorded statement (what the warm-up plans and
        rehearses); None for a schema statement, which ``kernel db init`` has run."""
        query = self.catalog.get(statement.name)
        if query.mode == "schema":
            return None
        return KEEP_PLANS + query.render(statement.identifiers, statement.params)

    def plan_ahead(self, statements: Iterable[Statement]) -> PlanAhead:
        """Each distinct statement (its text and the types of its parameters, which key
        Neo4j's plan cache) is run once in a transaction of its own that is rolled back.
        Plans made in a transaction that has written are not kept for others, so each
        runs alone on the graph as committed: what it reads may be missing (it then does
        nothing), and a statement the server refuses at run time still leaves its plan."""
        started = time.perf_counter()
        seen: set[tuple[str, str]] = set()
        planned = 0
        refused: list[str] = []
        session = self._driver.session(database=self.database)
        try:
            for statement in statements:
                text = self._as_run(statement)
                if text is None:
                    continue
                key = (text, _plan_key(statement.params))
                if key in seen:
                    continue
                seen.add(key)
                planned += 1
                tx = session.begin_transaction()
                try:
                    tx.run(text, statement.params).consume()
                except neo4j_errors.ClientError as exc:
                    refused.append(f"{statement.name}: {exc.message or exc.code}")
                finally:
                    tx.rollback()
        except (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired) as exc:
            raise StoreUnavailableError(f"lost Neo4j at {self.uri} ({exc}); {HOW_TO_START}") \
                from exc
        finally:
            session.close()
        return PlanAhead(planned, tuple(refused), time.perf_counter() - started)

    def rehearse(self, workloads: Sequence[Sequence[Statement]], rounds: int) -> Rehearsal:
        """Each round runs each workload whole in one transaction that is rolled back:
        its statements see the workload's own writes, so the reads find what it made and
        the guarded commits do their work, and the JVM compiles those code paths (all but
        the final commit's). A statement the server refuses ends its workload's round."""
        started = time.perf_counter()
        executed = wrote = 0
        refused: list[str] = []
        session = self._driver.session(database=self.database)
        try:
            for _ in range(rounds):
                for workload in workloads:
                    ran, changed, why = self._rehearse_once(session, workload)
                    executed += ran
                    wrote += changed
                    if why is not None:
                        refused.append(why)
        except (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired) as exc:
            raise StoreUnavailableError(f"lost Neo4j at {self.uri} ({exc}); {HOW_TO_START}") \
                from exc
        finally:
            session.close()
        return Rehearsal(executed, wrote, tuple(refused), time.perf_counter() - started)

    def _rehearse_once(self, session: Session, workload: Sequence[Statement]
                       ) -> tuple[int, int, str | None]:
        """One workload in one transaction, rolled back: statements run, those that
        wrote, and why it stopped early if it did."""
        executed = wrote = 0
        tx = session.begin_transaction()
        try:
            for statement in workload:
                text = self._as_run(statement)
                if text is None:
                    continue
                summary = tx.run(text, statement.params).consume()
                executed += 1
                wrote += summary.counters.contains_updates
        except neo4j_errors.ClientError as exc:
            return executed, wrote, f"{statement.name}: {exc.message or exc.code}"
        finally:
            if not tx.closed():
                tx.rollback()
        return executed, wrote, None

    def execute_adhoc(self, text: str, params: Mapping[str, Any], *, write: bool) -> QueryResult:
        return self._call("(ad-hoc)", text, dict(params), read_only=not write)

    def _call(self, name: str, text: str, params: dict[str, Any], *, read_only: bool) -> QueryResult:
        gated = self._gate.writing() if self._gate is not None and not read_only \
            else contextlib.nullcontext()
        with gated:  # held until the commit is acknowledged, so it lands whole
            return self._tried(name, text, params, read_only)

    def _tried(self, name: str, text: str, params: dict[str, Any], read_only: bool) -> QueryResult:
        for attempt in range(TRANSIENT_TRIES):
            try:
                return self._auto_commit(text, params, read_only)
            except neo4j_errors.TransientError:
                if attempt == TRANSIENT_TRIES - 1:
                    raise
                time.sleep(0.05 * 2 ** attempt)
            except (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired) as exc:
                self._forget_session(read_only)
                raise StoreUnavailableError(f"lost Neo4j at {self.uri} ({exc}); {HOW_TO_START}") \
                    from exc
            except neo4j_errors.Neo4jError as exc:
                message = exc.message or str(exc)
                if read_only and "read" in message.lower() and "write" in message.lower():
                    message = "this statement writes: pass --write to run it"
                raise StatementError(name, message) from exc
        raise AssertionError("unreachable")

    def _auto_commit(self, text: str, params: dict[str, Any], read_only: bool) -> QueryResult:
        return _answer(self._session(read_only).run(neo4j.Query(text), params), read_only)

    @contextlib.contextmanager
    def writes_paused(self) -> Iterator[bool]:
        if self._gate is None:
            yield False
            return
        with self._gate.paused():
            yield True

    # -- schema ------------------------------------------------------------------
    @contextlib.contextmanager
    def schema_held(self) -> Iterator[None]:
        """Neo4j's schema statements are idempotent under concurrency (IF NOT EXISTS), so
        nothing is locked; the indexes are listed once while the schema is ensured, and
        only the missing ones are asked for (each schema statement is a transaction of its
        own, and every solve ensures the schema)."""
        self._schema_ensuring, self._indexes_seen = True, None
        try:
            yield
        finally:
            self._schema_ensuring, self._indexes_seen = False, None

    def _indexes(self) -> dict[str, Row]:
        """Every index by name (and every constraint, by its backing index's owner)."""
        if self._indexes_seen is not None:
            return self._indexes_seen
        seen: dict[str, Row] = {}
        for row in self.run("schema/show_indexes"):
            seen[str(row["name"])] = row
            if row["owner"]:
                seen.setdefault(str(row["owner"]), row)
        if self._schema_ensuring:
            self._indexes_seen = seen
        return seen

    def ensure_unique_id(self, label: str) -> None:
        if f"{label}_id_unique" not in self._indexes():
            self.run("schema/create_unique_id", identifiers={"label": label})

    def ensure_relationship_types(self, rel_types: Iterable[str]) -> None:
        """Register every type, so that naming one no edge has yet (COMPOSED_OF before any
        build) in a query draws no warning; a server before 5.26 (no dynamic types) keeps
        the warning and works all the same."""
        with contextlib.suppress(StatementError):
            self.run("schema/register_relationship_types", {"types": sorted(rel_types)})

    def ensure_index(self, label: str, prop: str) -> None:
        if f"{label}_{prop}" not in self._indexes():
            self.run("schema/create_range_index", identifiers={"label": label, "prop": prop})

    def ensure_vector_index(self, label: str, prop: str, dimensions: int, index_name: str) -> None:
        """Made unquantized; an index made before that (quantized, Neo4j's default) is made
        again, since its scores differ from the embedded store's by up to 1e-3."""
        made = self._indexes().get(index_name)
        quantized = made is not None and \
            bool((made["config"] or {}).get("vector.quantization.enabled", False))
        if made is not None and made["state"] == "ONLINE" and not quantized:
            return
        if quantized:
            self.run("schema/drop_index", identifiers={"index_name": index_name})
        self.run(
            "schema/create_vector_index",
            identifiers={"label": label, "prop": prop, "index_name": index_name,
                         "dimensions": str(dimensions)},
        )
        self.run("schema/await_indexes")

    def drop_all(self) -> None:
        """Every node, in batches (see cypher/neo4j/admin/delete_all); the schema stays."""
        self.empty()

    def describe(self) -> dict[str, Any]:
        info = self._driver.get_server_info()
        return {
            "backend": "Neo4j",
            "uri": self.uri,
            "database": self.database or "(default)",
            "server": f"{info.agent} (protocol {'.'.join(map(str, info.protocol_version))})",
        }

    def _close_sessions(self) -> None:
        with self._lock:
            sessions, self._sessions = list(self._sessions), weakref.WeakSet()
        for session in sessions:
            with contextlib.suppress(Exception):  # a connection already gone
                session.close()
        self._local = threading.local()

    def close(self) -> None:
        if self._gate is not None:
            self._gate.close()
        self._close_sessions()
        self._driver.close()


def _answer(result: neo4j.Result, read_only: bool) -> QueryResult:
    """A statement's rows as plain values, and what a write changed."""
    keys = list(result.keys())
    rows = [[plain(record[key]) for key in keys] for record in result]
    summary = result.consume()
    counters = {} if read_only else {
        name: int(count) for name, count in vars(summary.counters).items()
        if isinstance(count, int) and not isinstance(count, bool) and count and
        not name.startswith("_")}
    return QueryResult(keys, rows, counters)


def _plan_key(params: Mapping[str, Any]) -> str:
    """What, with the text, tells Neo4j's plan cache one plan from another: each parameter's
    type as Cypher sees it (a map is a map whatever it holds; a list is a list of strings
    or of anything). The lengths Neo4j also keys by default are left out: the servers the
    kernel starts turn that off (see docs/graph-store.md)."""
    return ",".join(f"{name}:{_cypher_type(value)}" for name, value in sorted(params.items()))


def _cypher_type(value: Any) -> str:
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "INTEGER"
    if isinstance(value, float):
        return "FLOAT"
    if isinstance(value, str):
        return "STRING"
    if isinstance(value, Mapping):
        return "MAP"
    if isinstance(value, list | tuple):
        return "LIST<STRING>" if value and all(isinstance(v, str) for v in value) \
            else "LIST<ANY>"
    return "ANY"
