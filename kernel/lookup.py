"""Ids as people type them: whole, without their namespace, as a unique prefix, or
``latest`` for the newest run.

Every error names what was typed and what to do, so a user copying the first
characters of an id from ``kernel runs`` or a log line gets where they meant.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from kernel.errors import ConfigError
from kernel.repositories import views
from kernel.store.base import GraphStore
from kernel.store.ontology import LABELS

NAMESPACES = {spec.name: spec.id_prefix for spec in LABELS}
# Labels whose ids are a run's ULID, a dash and a number (``ledger:01M8…-000001``).
_RUN_NUMBERED = frozenset({"LedgerEntry"})
_SHOWN = 5


def resolve_id(store: GraphStore, text: str, label: str, *, listed_by: str = "") -> str:
    """The one ``label`` id that ``text`` names; ``ConfigError`` when none or several do."""
    typed = text.strip()
    if not typed:
        raise ConfigError(f"an empty {_words(label)} id: give an id or a unique prefix of one")
    namespace = NAMESPACES.get(label, "")
    if label == "Run" and typed.lower() == "latest":
        latest = views.latest_run(store)
        if latest is None:
            raise ConfigError("'latest' names no run: this graph holds none yet")
        return latest
    prefix = typed if typed.startswith(namespace) else namespace + typed
    candidates = [prefix]
    head, _, tail = prefix.partition(":")
    if tail and tail != tail.upper() and label != "Constraint":
        candidates.append(f"{head}:{tail.upper()}")  # ULIDs are upper case
    for candidate in candidates:
        ids = views.ids_by_prefix(store, label, candidate, _SHOWN + 1)
        if candidate in ids:
            return candidate
        if len(ids) == 1:
            return ids[0]
        if ids:
            shown = ", ".join(ids[:_SHOWN]) + (", ..." if len(ids) > _SHOWN else "")
            raise ConfigError(f"{typed!r} matches several {_plural(label)} ({shown}): "
                              "type more of the id")
    where = f" (see {listed_by})" if listed_by else ""
    raise ConfigError(f"no {_words(label)} {typed!r} in this graph{where}")


def unique_prefixes(store: GraphStore, label: str, ids: list[str],
                    shortest: int = 12) -> dict[str, str]:
    """Each id as a table may show it when the whole does not fit: without its namespace,
    cut to the shortest prefix (``shortest`` characters at least) that no other ``label``
    id in the graph shares, so ``resolve_id`` takes it back to the same node."""
    namespace = NAMESPACES.get(label, "")
    every = sorted(set(views.ids_by_prefix(store, label, namespace, 10_000_000)) | set(ids))
    position = {ident: i for i, ident in enumerate(every)}
    short = {}
    for ident in ids:
        i = position[ident]
        shared = max(_common(ident, every[i - 1]) if i > 0 else 0,
                     _common(ident, every[i + 1]) if i + 1 < len(every) else 0)
        keep = min(len(ident), max(shared + 1, len(namespace) + shortest))
        short[ident] = ident[len(namespace):keep]
    return short


def _common(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` share."""
    return len(os.path.commonprefix([a, b]))  # noqa: RUF071 (characters)


def resolve_run(store: GraphStore, text: str) -> str:
    """A run id, a unique prefix of one, or ``latest``."""
    return resolve_id(store, text, "Run", listed_by="kernel runs")


def latest_with_final_artifact(store: GraphStore) -> str:
    """The newest run whose goal has a final artifact (a plan, say, has none)."""
    latest = views.latest_run_with_final_artifact(store)
    if latest is None:
        newest = views.latest_run(store)
        raise ConfigError("'latest' names no run with a final artifact: "
                          + ("this graph holds no run yet" if newest is None else
                             f"no run has resolved yet (the newest is {newest}: "
                             f"see kernel status {newest})"))
    return latest


def find_node(store: GraphStore, text: str) -> dict[str, Any]:
    """Any node by id or unique prefix: with its namespace (``attempt:01M8``) the label
    is known; without one every label is searched, except those whose ids extend a run's
    (a run's prefix names the run, not its ledger entries)."""
    typed = text.strip()
    labels = [label for label, ns in NAMESPACES.items() if ns and typed.startswith(ns)] or \
        [label for label in NAMESPACES if label not in _RUN_NUMBERED or "-" in typed]
    matches: list[tuple[str, str]] = []
    for label in labels:
        try:
            matches.append((label, resolve_id(store, typed, label)))
        except ConfigError as exc:
            if "several" in str(exc):
                raise
    if not matches:
        raise ConfigError(f"no node {typed!r} in this graph: give an id such as "
                          "attempt:01M… or node:01M… (kernel log RUN lists them)")
    if len(matches) > 1:
        shown = ", ".join(ident for _, ident in matches[:_SHOWN])
        raise ConfigError(f"{typed!r} matches nodes of several kinds ({shown}): type more")
    label, ident = matches[0]
    row = views.node(store, ident, label)
    props = {k: _decoded(v) for k, v in row["props"].items() if k != "embedding"}
    return {"label": label, "id": ident, "properties": props,
            "neighbours": [n for n in row["neighbours"] if n is not None]}


def _decoded(value: Any) -> Any:
    """Structured payloads are stored as JSON strings; people read them decoded."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _plural(label: str) -> str:
    """``LedgerEntry`` is "ledger entries", ``Run`` is "runs"."""
    words = _words(label)
    return words[:-1] + "ies" if words.endswith("y") else words + "s"


def _words(label: str) -> str:
    """A label as words in a sentence: ``CapabilityRequest`` is "capability request"."""
    return re.sub(r"(?<!^)(?=[A-Z])", " ", label).lower()
