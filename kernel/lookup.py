"""Ids as people type them: whole, without their namespace, as a unique prefix, or
``latest`` for the newest run.

Every error names what was typed and what to do, so a user copying the first
characters of an id from ``kernel runs`` or a log line gets where they meant.
"""

from __future__ import annotations

from kernel.errors import ConfigError
from kernel.store.base import GraphStore
from kernel.store.ontology import LABELS

NAMESPACES = {spec.name: spec.id_prefix for spec in LABELS}
_SHOWN = 5


def resolve_id(store: GraphStore, text: str, label: str, *, listed_by: str = "") -> str:
    """The one ``label`` id that ``text`` names; ``ConfigError`` when none or several do."""
    typed = text.strip()
    if not typed:
        raise ConfigError(f"an empty {label.lower()} id: give an id or a unique prefix of one")
    namespace = NAMESPACES.get(label, "")
    if label == "Run" and typed.lower() == "latest":
        rows = store.run("lookup/latest_run")
        if not rows:
            raise ConfigError("'latest' names no run: this graph holds none yet")
        return str(rows[0]["id"])
    prefix = typed if typed.startswith(namespace) else namespace + typed
    candidates = [prefix]
    head, _, tail = prefix.partition(":")
    if tail and tail != tail.upper() and label != "Constraint":
        candidates.append(f"{head}:{tail.upper()}")  # ULIDs are upper case
    for candidate in candidates:
        ids = [str(r["id"]) for r in store.run("lookup/ids_by_prefix",
                                               {"prefix": candidate, "limit": _SHOWN + 1},
                                               {"label": label})]
        if candidate in ids:
            return candidate
        if len(ids) == 1:
            return ids[0]
        if ids:
            shown = ", ".join(ids[:_SHOWN]) + (", ..." if len(ids) > _SHOWN else "")
            raise ConfigError(f"{typed!r} matches several {label.lower()}s ({shown}): "
                              "type more of the id")
    where = f" (see {listed_by})" if listed_by else ""
    raise ConfigError(f"no {label.lower()} {typed!r} in this graph{where}")


def resolve_run(store: GraphStore, text: str) -> str:
    """A run id, a unique prefix of one, or ``latest``."""
    return resolve_id(store, text, "Run", listed_by="kernel runs")
