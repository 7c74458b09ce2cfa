"""The named analytics queries (``cypher/analytics/``) people run on failure modes,
routing and reuse: listed with what each answers, and run with the filters each takes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernel.errors import ConfigError
from kernel.store.base import GraphStore

ANALYTICS = "analytics/"


def analytics_queries(store: GraphStore) -> dict[str, str]:
    """The named analytics queries with what each answers (the statement's own comment)."""
    found = {}
    for name in store.catalog.names():
        if name.startswith(ANALYTICS):
            lines = [line.removeprefix("//").strip() for line in
                     store.catalog.get(name).text.splitlines() if line.startswith("//")
                     and not line.startswith("// mode:")]
            found[name.removeprefix(ANALYTICS)] = " ".join(lines)
    return dict(sorted(found.items()))


def analytics_rows(store: GraphStore, name: str,
                   filters: Mapping[str, str | None] | None = None) -> list[dict[str, Any]]:
    """One analytics query's rows; an unknown name is refused with the names there are,
    a filter the query does not take is refused naming the ones it does. Filters the
    query takes and were not given are null (no filter)."""
    available = analytics_queries(store)
    if name not in available:
        raise ConfigError(f"no analytics query {name!r}; there are: {', '.join(available)}")
    takes = store.catalog.get(ANALYTICS + name).parameters
    given = {k: v for k, v in (filters or {}).items() if v is not None}
    unknown = sorted(set(given) - set(takes))
    if unknown:
        options = ", ".join("--" + p.replace("_id", "") for p in sorted(takes)) or "none"
        raise ConfigError(f"analytics query {name!r} has no filter "
                          f"{', '.join('--' + u.replace('_id', '') for u in unknown)}; "
                          f"it takes: {options}")
    return store.run(ANALYTICS + name, {p: given.get(p) for p in takes})
