"""One graph-store interface over two backends (embedded FalkorDB, Neo4j).

The kernel only ever calls :meth:`GraphStore.run` with a statement name; each
call is one statement, and each statement is atomic on both backends (the
embedded store has no multi-statement transactions, so no kernel state change
may need two). Results come back as lists of plain dicts with plain values.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kernel.errors import KernelError
from kernel.store.queries import NamedQuery, QueryCatalog
from kernel.store.stats import StatementStats

Row = dict[str, Any]


@dataclass(frozen=True)
class QueryResult:
    """Columns and rows of an ad-hoc statement (``kernel query``)."""

    columns: list[str]
    rows: list[list[Any]]
    # What a write changed (nodes_created, properties_set, ...): only non-zero counts.
    counters: dict[str, int] = field(default_factory=dict)

    def records(self) -> list[Row]:
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


class GraphStore(ABC):
    """A Cypher graph reached through named statements."""

    dialect: str = ""

    def __init__(self, catalog: QueryCatalog) -> None:
        self.catalog = catalog
        self.stats = StatementStats()
        # statement name -> (parameters key -> rows); None: no run is stepping
        self._cache: dict[str, dict[str, list[Row]]] | None = None
        self._immutable: dict[str, dict[str, list[Row]]] = {}
        self._audit = os.environ.get("KERNEL_AUDIT_READ_CACHE") == "1"
        self._writes: deque[str] = deque(maxlen=8)  # the last writes, for an audit's finding

    # -- named statements -------------------------------------------------
    def run(
        self,
        name: str,
        params: Mapping[str, Any] | None = None,
        identifiers: Mapping[str, str] | None = None,
    ) -> list[Row]:
        """Run the named statement with its parameters; identifiers fill template slots."""
        query = self.catalog.get(name)
        values = dict(params or {})
        query.check_parameters(values)
        text = query.render(identifiers, values)
        key, cache = None, None
        if self._cache is not None:  # a run is stepping
            if query.cache in ("read", "immutable"):
                cache = (self._immutable if query.cache == "immutable" else self._cache
                         ).setdefault(name, {})
                key = _cache_key(values, identifiers)
                if key in cache:
                    self.stats.hit(name)
                    if self._audit:
                        self._check_hit(query, text, values, cache[key])
                    rows: list[dict[str, Any]] = _copied(cache[key])
                    return rows
            elif query.mode != "read" and query.cache != "keep":
                self._forget(query)
        started = time.perf_counter()
        try:
            rows = self._execute(query, text, values)
        except BaseException:
            self._forget_keyed(query, [])
            raise
        finally:
            self.stats.count(name, write=query.mode != "read",
                             seconds=time.perf_counter() - started)
        self._forget_keyed(query, rows)
        if key is not None and cache is not None and (rows or query.cache == "read"):
            # an empty answer is kept only where every write that could fill it says so
            cache[key] = _copied(rows)
        if self._cache is not None and query.refreshes and len(rows) == 1:
            for read in query.refreshes:
                self._refresh(query, self.catalog.get(read), values, rows[0])
        return rows

    def remember(self, name: str, params: Mapping[str, Any], rows: list[Row]) -> None:
        """Keep ``rows`` as the answer of the immutable read ``name`` for ``params`` while a
        run steps: a commit that just stored such a node (an artifact, say) knows what the
        read would return. With the audit on, a later hit is read again and compared."""
        query = self.catalog.get(name)
        if query.cache != "immutable":
            raise ValueError(f"{name} is not an immutable read")
        if self._cache is not None:
            self._immutable.setdefault(name, {})[_cache_key(dict(params), None)] = \
                _copied(rows)

    def _refresh(self, write: NamedQuery, read: NamedQuery, values: dict[str, Any],
                 row: Row) -> None:
        """Keep a write's one-row answer as ``read``'s answer for the same parameters."""
        assert self._cache is not None and read.single_column is not None
        params = {name: values[name] for name in read.parameters}
        answer = [{read.single_column: row[read.single_column]}]
        if self._audit:
            actual = self._execute(read, read.render(None), params)
            if actual != answer:
                raise StaleReadError(
                    f"{write.name} refreshes {read.name}, but its answer is not what "
                    f"{read.name} reads back: both must end with the same fragment")
        self._cache.setdefault(read.name, {})[_cache_key(params, None)] = _copied(answer)

    def _forget(self, write: NamedQuery) -> None:
        """Drop the cached answers ``write`` can change (all of them, unless it says which)."""
        assert self._cache is not None
        if self._audit:
            self._writes.append(write.name)
        keyed = {read for read, _column in write.keyed_changes}
        if write.changes is None:
            self._cache.clear()
        else:
            for name in write.changes - keyed:
                self._cache.pop(name, None)

    def _forget_keyed(self, write: NamedQuery, rows: list[Row]) -> None:
        """Drop the answers of a ``read(column)`` change for the ids the write returned
        in ``column`` (all of the read's answers when it returned no row or a null)."""
        if self._cache is None or not write.keyed_changes:
            return
        for read, column in write.keyed_changes:
            answers = self._cache.get(read)
            if not answers:
                continue
            touched: list[list[Any]] = [row[column] for row in rows if row[column] is not None]
            if not rows or len(touched) < len(rows):
                self._cache.pop(read, None)
                continue
            (parameter,) = self.catalog.get(read).parameters
            for ids in touched:
                for value in ids:
                    answers.pop(_cache_key({parameter: value}, None), None)

    def _check_hit(self, query: NamedQuery, text: str, values: dict[str, Any],
                   cached: list[Row]) -> None:
        actual = self._execute(query, text, values)
        # With no write of ours at all, another process changed the graph (a run
        # whose lease was taken over): no '// changes:' list is at fault, and the run's
        # guarded commit tells this process it lost the run.
        if actual != cached and self._writes:
            raise StaleReadError(
                f"the read cache served a stale answer for {query.name}: one of the writes "
                f"since it was read ({', '.join(self._writes) or 'none'}) changed it, "
                f"so that write's '// changes:' must name {query.name}")

    @contextlib.contextmanager
    def read_cache(self) -> Iterator[None]:
        """While held, a read marked ``// cache: read`` is served from memory when the same
        statement with the same parameters ran since this process last changed the graph.

        For a process driving a run: it holds the run's lease and every change to the run's
        state is its own write, which empties the cache (observations marked ``// cache:
        keep`` aside), so a step reads its goal, constraints and budget once."""
        previous, self._cache = self._cache, {}
        try:
            yield
        finally:
            self._cache = previous
            if previous is None:
                self._immutable.clear()

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


def _cache_key(params: Mapping[str, Any], identifiers: Mapping[str, str] | None) -> str:
    return json.dumps([params, identifiers], sort_keys=True, default=str)


class StaleReadError(KernelError):
    """A write's ``// changes:`` list missed a cached read it changes (audit mode only)."""


def _last_per_key(rows: Iterable[Mapping[str, Any]],
                  key: Callable[[Mapping[str, Any]], Any]) -> list[Mapping[str, Any]]:
    latest: dict[Any, Mapping[str, Any]] = {}
    for row in rows:
        k = key(row)
        latest.pop(k, None)
        latest[k] = row
    return list(latest.values())


_SCALARS = (str, int, float, bool, type(None), bytes)


def _copied(value: Any) -> Any:
    """A deep copy of plain row values (what ``copy.deepcopy`` gives, several times
    faster: every cache hit is copied, so a caller cannot change the cached answer)."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    if isinstance(value, _SCALARS):
        return value
    return copy.deepcopy(value)
