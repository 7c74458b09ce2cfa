"""Turn driver-specific result values into plain Python values, the same for both backends.

Neither driver is imported here: a value of a driver's type can only exist once that
driver was loaded, so each is looked up in ``sys.modules`` (importing the Neo4j driver
costs a third of a second that a command on the embedded store should not pay).
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

_SCALARS = frozenset({type(None), bool, int, float, str})


def _scalars(values: list[Any]) -> bool:
    return all(type(v) in _SCALARS for v in values)


def plain(value: Any) -> Any:
    """Nodes become ``{"labels", "properties"}``, relationships ``{"type", "properties"}``,
    paths a list of their nodes; maps and lists are converted recursively."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    # A driver's map of scalars and lists of scalars (most rows' values) is already plain.
    if (kind is dict or kind is OrderedDict) and _flat_map(value):
        return value if kind is dict else dict(value)
    if kind is list and _scalars(value):
        return value
    if isinstance(value, bool | int | float | str):
        return value
    if kind is dict or kind is OrderedDict:
        return {str(k): plain(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [plain(v) for v in value]
    converted = _graph_value(value)  # before Mapping: Neo4j's nodes are Mappings too
    if converted is not value:
        return converted
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def _flat_map(value: Mapping[Any, Any]) -> bool:
    return all(type(v) in _SCALARS or (type(v) is list and _scalars(v))
               for v in value.values()) and all(type(k) is str for k in value)


def _graph_value(value: Any) -> Any:
    """A driver's node, relationship or path as plain values (anything else as it is)."""
    falkordb = sys.modules.get("falkordb")
    if falkordb is not None:
        if isinstance(value, falkordb.Node):
            return {"labels": sorted(value.labels), "properties": plain(value.properties)}
        if isinstance(value, falkordb.Edge):
            return {"type": value.relation, "properties": plain(value.properties)}
        if isinstance(value, falkordb.Path):
            return [plain(n) for n in value.nodes()]
    graph = sys.modules.get("neo4j.graph")
    if graph is not None:
        if isinstance(value, graph.Node):
            return {"labels": sorted(value.labels), "properties": plain(dict(value.items()))}
        if isinstance(value, graph.Relationship):
            return {"type": value.type, "properties": plain(dict(value.items()))}
        if isinstance(value, graph.Path):
            return [plain(n) for n in value.nodes]
    return value
