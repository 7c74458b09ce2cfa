"""The read cache a process driving a run puts around its store (``GraphStore.read_cache``).

While held, a read marked ``// cache: read`` is served from memory when the same
statement with the same parameters ran since this process last changed the graph, and
one marked ``// cache: immutable`` whenever it ran before. A write drops the answers its
``// changes:`` mark names (all of them without a mark; none for ``// cache: keep``); a
``// refreshes:`` write keeps its one-row answer as the read's. Outside it, every
statement goes to the server. With the audit on (``KERNEL_AUDIT_READ_CACHE=1``, the
tests), every served answer is read again and compared.

It wraps the statement's execution: the store asks it for each statement's rows and
passes how to fetch them, so the backends know nothing of it.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kernel.errors import KernelError
from kernel.store.queries import NamedQuery
from kernel.store.stats import StatementStats

Row = dict[str, Any]
Fetch = Callable[[NamedQuery, str, dict[str, Any]], list[Row]]


class StaleReadError(KernelError):
    """A write's ``// changes:`` list missed a cached read it changes (audit mode only)."""


class ReadCache:
    """Answers kept per statement name and parameters, while a run steps."""

    def __init__(self, query_of: Callable[[str], NamedQuery], stats: StatementStats,
                 fetch: Fetch, audit: bool) -> None:
        self.query_of = query_of  # the store's catalogue, by name
        self.stats = stats
        self.fetch = fetch  # the store's own round trip, for the audit's second read
        self.audit = audit
        # statement name -> (parameters key -> rows); None: no run is stepping
        self._answers: dict[str, dict[str, list[Row]]] | None = None
        self._immutable: dict[str, dict[str, list[Row]]] = {}
        self._writes: deque[str] = deque(maxlen=8)  # the last writes, for an audit's finding

    @property
    def held(self) -> bool:
        return self._answers is not None

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        previous, self._answers = self._answers, {}
        try:
            yield
        finally:
            self._answers = previous
            if previous is None:
                self._immutable.clear()

    @contextlib.contextmanager
    def bypassed(self) -> Iterator[None]:
        """Statements go to the server, and leave the held answers alone, while inside."""
        previous, self._answers = self._answers, None
        try:
            yield
        finally:
            self._answers = previous

    def run(self, query: NamedQuery, text: str, values: dict[str, Any],
            identifiers: Mapping[str, str] | None, execute: Callable[[], list[Row]],
            ) -> list[Row]:
        """The statement's rows: from memory when held and kept, else ``execute()``'s."""
        key, cache = None, None
        if self._answers is not None:
            if query.cache in ("read", "immutable"):
                cache = (self._immutable if query.cache == "immutable" else self._answers
                         ).setdefault(query.name, {})
                key = _cache_key(values, identifiers)
                if key in cache:
                    self.stats.hit(query.name)
                    if self.audit:
                        self._check_hit(query, text, values, cache[key])
                    rows: list[Row] = _copied(cache[key])
                    return rows
            elif query.mode != "read" and query.cache != "keep":
                self._forget(query)
        try:
            rows = execute()
        except BaseException:
            self._forget_keyed(query, [])
            raise
        self._forget_keyed(query, rows)
        if key is not None and cache is not None and (rows or query.cache == "read"):
            # an empty answer is kept only where every write that could fill it says so
            cache[key] = _copied(rows)
        if self._answers is not None and query.refreshes and len(rows) == 1:
            for read in query.refreshes:
                self._refresh(query, self.query_of(read), values, rows[0])
        return rows

    def remember(self, query: NamedQuery, params: Mapping[str, Any], rows: list[Row]) -> None:
        """Keep ``rows`` as the answer of the immutable read ``query`` for ``params``."""
        if query.cache != "immutable":
            raise ValueError(f"{query.name} is not an immutable read")
        if self._answers is not None:
            self._immutable.setdefault(query.name, {})[_cache_key(dict(params), None)] = \
                _copied(rows)

    def _refresh(self, write: NamedQuery, read: NamedQuery, values: dict[str, Any],
                 row: Row) -> None:
        """Keep a write's one-row answer as ``read``'s answer for the same parameters."""
        assert self._answers is not None and read.single_column is not None
        params = {name: values[name] for name in read.parameters}
        answer = [{read.single_column: row[read.single_column]}]
        if self.audit:
            actual = self.fetch(read, read.render(None), params)
            if actual != answer:
                raise StaleReadError(
                    f"{write.name} refreshes {read.name}, but its answer is not what "
                    f"{read.name} reads back: both must end with the same fragment")
        self._answers.setdefault(read.name, {})[_cache_key(params, None)] = _copied(answer)

    def _forget(self, write: NamedQuery) -> None:
        """Drop the cached answers ``write`` can change (all of them, unless it says which)."""
        assert self._answers is not None
        if self.audit:
            self._writes.append(write.name)
        keyed = {read for read, _column in write.keyed_changes}
        if write.changes is None:
            self._answers.clear()
        else:
            for name in write.changes - keyed:
                self._answers.pop(name, None)

    def _forget_keyed(self, write: NamedQuery, rows: list[Row]) -> None:
        """Drop the answers of a ``read(column)`` change for the ids the write returned
        in ``column`` (all of the read's answers when it returned no row or a null)."""
        if self._answers is None or not write.keyed_changes:
            return
        for read, column in write.keyed_changes:
            answers = self._answers.get(read)
            if not answers:
                continue
            touched: list[list[Any]] = [row[column] for row in rows if row[column] is not None]
            if not rows or len(touched) < len(rows):
                self._answers.pop(read, None)
                continue
            (parameter,) = self.query_of(read).parameters
            for ids in touched:
                for value in ids:
                    answers.pop(_cache_key({parameter: value}, None), None)

    def _check_hit(self, query: NamedQuery, text: str, values: dict[str, Any],
                   cached: list[Row]) -> None:
        actual = self.fetch(query, text, values)
        # With no write of ours at all, another process changed the graph (a run
        # whose lease was taken over): no '// changes:' list is at fault, and the run's
        # guarded commit tells this process it lost the run.
        if actual != cached and self._writes:
            raise StaleReadError(
                f"the read cache served a stale answer for {query.name}: one of the writes "
                f"since it was read ({', '.join(self._writes) or 'none'}) changed it, "
                f"so that write's '// changes:' must name {query.name}")


def _cache_key(params: Mapping[str, Any], identifiers: Mapping[str, str] | None) -> str:
    return json.dumps([params, identifiers], sort_keys=True, default=str)


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
