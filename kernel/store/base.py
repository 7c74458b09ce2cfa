"""One graph-store interface over two backends (embedded FalkorDB, Neo4j).

The kernel only ever calls :meth:`GraphStore.run` with a statement name; each
call is one statement, and each statement is atomic on both backends (the
embedded store has no multi-statement transactions, so no kernel state change
may need two). Results come back as lists of plain dicts with plain values.
"""

from __future__ import annotations

import contextlib
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kernel.store.queries import NamedQuery, QueryCatalog
from kernel.store.read_cache import ReadCache
from kernel.store.stats import StatementStats

Row = dict[str, Any]
DELETE_BATCH = 10_000  # nodes per transaction when emptying a graph


@dataclass(frozen=True)
class QueryResult:
    """Columns and rows of an ad-hoc statement (``kernel query``)."""

    columns: list[str]
    rows: list[list[Any]]
    # What a write changed (nodes_created, properties_set, ...): only non-zero counts.
    counters: dict[str, int] = field(default_factory=dict)

    def records(self) -> list[Row]:
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


@dataclass(frozen=True)
class Statement:
    """A named statement as a run sent it: its name, parameters and template identifiers."""

    name: str
    params: dict[str, Any]
    identifiers: dict[str, str]


@dataclass(frozen=True)
class PlanAhead:
    """What ``GraphStore.plan_ahead`` did: statements planned, those the server refused
    to run on the graph as committed (each ``name: why``; a refusal at run time leaves
    the plan made), and the seconds it took."""

    planned: int
    refused: tuple[str, ...]
    seconds: float


@dataclass(frozen=True)
class Rehearsal:
    """What ``GraphStore.rehearse`` did: statements run (over every round), those of
    them that changed the graph (all rolled back), workloads cut short by a statement the
    server refused (each ``name: why``), and the seconds."""

    executed: int
    wrote: int
    refused: tuple[str, ...]
    seconds: float


class GraphStore(ABC):
    """A Cypher graph reached through named statements."""

    dialect: str = ""

    def __init__(self, catalog: QueryCatalog) -> None:
        self.catalog = catalog
        # Told of every statement run (kernel.bench.warm_up collects a run's statements).
        self.recorder: Callable[[Statement], None] | None = None
        self.stats = StatementStats()
        self.reads = ReadCache(lambda name: self.catalog.get(name), self.stats,
                               lambda query, text, values: self._execute(query, text, values),
                               audit=os.environ.get("KERNEL_AUDIT_READ_CACHE") == "1")

    # -- named statements -------------------------------------------------
    def run(
        self,
        name: str,
        params: Mapping[str, Any] | None = None,
        identifiers: Mapping[str, str] | None = None,
    ) -> list[Row]:
        """Run the named statement with its parameters; identifiers fill template slots.
        While a run holds ``read_cache``, the cache answers what it can."""
        query = self.catalog.get(name)
        values = dict(params or {})
        query.check_parameters(values)
        text = query.render(identifiers, values)
        if self.recorder is not None:
            self.recorder(Statement(name, values, dict(identifiers or {})))

        def execute() -> list[Row]:
            started = time.perf_counter()
            try:
                return self._execute(query, text, values)
            finally:
                self.stats.count(name, write=query.mode != "read",
                                 seconds=time.perf_counter() - started)

        return self.reads.run(query, text, values, identifiers, execute)

    def remember(self, name: str, params: Mapping[str, Any], rows: list[Row]) -> None:
        """Keep ``rows`` as the answer of the immutable read ``name`` for ``params`` while a
        run steps: a commit that just stored such a node (an artifact, say) knows what the
        read would return. With the audit on, a later hit is read again and compared."""
        self.reads.remember(self.catalog.get(name), params, rows)

    def read_cache(self) -> contextlib.AbstractContextManager[None]:
        """While held, reads are served by the read cache (``kernel.store.read_cache``).

        For a process driving a run: it holds the run's lease and every change to the run's
        state is its own write, which empties the cache (observations marked ``// cache:
        keep`` aside), so a step reads its goal, constraints and budget once."""
        return self.reads.hold()

    def run_batched(
        self,
        name: str,
        rows: Sequence[Mapping[str, Any]],
        *,
        identifiers: Mapping[str, str] | None = None,
        batch_size: int = 1000,
        dedupe: Callable[[Mapping[str, Any]], Any] | None = None,
    ) -> int:
        """Run an ``UNWIND $rows`` statement over ``rows`` in batches of one statement each.

        ``dedupe`` maps a row to its identity; within a batch only the last row of
        each identity is sent, because the embedded server mishandles a batched
        relationship MERGE that repeats a (source, type, target).
        """
        total = 0
        for start in range(0, len(rows), batch_size):
            batch = list(rows[start:start + batch_size])
            if dedupe is not None:
                batch = _last_per_key(batch, dedupe)
            result = self.run(name, {"rows": batch}, identifiers)
            total += int(result[0]["merged"]) if result and "merged" in result[0] else len(batch)
        return total

    def ping(self) -> float:
        """Round-trip seconds of the trivial statement."""
        start = time.perf_counter()
        self.run("admin/ping")
        return time.perf_counter() - start

    # -- backend specifics -------------------------------------------------
    @abstractmethod
    def _execute(self, query: NamedQuery, text: str, params: dict[str, Any]) -> list[Row]:
        """Run one statement atomically, read-only when the query's mode is ``read``."""

    @abstractmethod
    def execute_adhoc(self, text: str, params: Mapping[str, Any], *, write: bool) -> QueryResult:
        """Run user-supplied Cypher (``kernel query``); read-only unless ``write``."""

    @abstractmethod
    def ensure_unique_id(self, label: str) -> None:
        """Make ``id`` unique for ``label`` (idempotent)."""

    @abstractmethod
    def ensure_index(self, label: str, prop: str) -> None:
        """Create a lookup index on ``label.prop`` (idempotent)."""

    @abstractmethod
    def ensure_relationship_types(self, rel_types: Iterable[str]) -> None:
        """Make the store know each type before any edge of it exists (idempotent)."""

    @abstractmethod
    def ensure_vector_index(self, label: str, prop: str, dimensions: int, index_name: str) -> None:
        """Create a cosine vector index on ``label.prop`` (idempotent)."""

    def plan_ahead(self, statements: Iterable[Statement]) -> PlanAhead:
        """Have the server plan ``statements`` (each with parameters like a run's) and keep
        the plans, writing nothing: for a server that plans each statement text once and
        keeps it (Neo4j), so that a run's first steps do not pay for it. A store with
        nothing to plan ahead (the embedded server plans in microseconds) plans nothing."""
        return PlanAhead(0, (), 0.0)

    def rehearse(self, workloads: Sequence[Sequence[Statement]], rounds: int) -> Rehearsal:
        """Run each workload's statements in order, ``rounds`` times, each time in one
        transaction that is rolled back, writing nothing: for a server whose runtime
        compiles the code a workload runs only once it has run often (Neo4j's JVM). A
        store with nothing to warm (the embedded server) runs nothing."""
        return Rehearsal(0, 0, (), 0.0)

    def writes_paused(self) -> contextlib.AbstractContextManager[bool]:
        """While held, no process changes this graph, so reads see one committed state;
        yields whether the backend can promise that (an export says so if not)."""
        return contextlib.nullcontext(False)

    def schema_held(self) -> contextlib.AbstractContextManager[None]:
        """Held while the schema is checked and brought forward, so that processes
        opening one fresh graph at once do not each create the same index (no-op
        where the store's schema statements are idempotent under concurrency)."""
        return contextlib.nullcontext()

    def settle_schema(self) -> None:
        """Make the schema just created durable in a form that replays cleanly (no-op
        where the store needs nothing)."""
        return None

    @abstractmethod
    def drop_all(self) -> None:
        """Delete every node and relationship of this graph (tests, ``db reset``)."""

    def empty(self) -> None:
        """Delete every node and relationship, in batches, and keep the indexes and
        constraints: a graph emptied to be filled again (replay's scratch graph) does not
        build its schema anew, which on the embedded store also rewrites the server's log."""
        while self.run("admin/delete_all", {"batch": DELETE_BATCH})[0]["deleted"]:
            pass

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """Backend facts for ``kernel status``."""

    @abstractmethod
    def close(self) -> None:
        """Release connections (never stops a shared server)."""

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _last_per_key(rows: Iterable[Mapping[str, Any]],
                  key: Callable[[Mapping[str, Any]], Any]) -> list[Mapping[str, Any]]:
    latest: dict[Any, Mapping[str, Any]] = {}
    for row in rows:
        k = key(row)
        latest.pop(k, None)
        latest[k] = row
    return list(latest.values())
