"""Turn driver-specific result values into plain Python values, the same for both backends."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import falkordb
import neo4j.graph


def plain(value: Any) -> Any:
    """Nodes become ``{"labels", "properties"}``, relationships ``{"type", "properties"}``,
    paths a list of their nodes; maps and lists are converted recursively."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, falkordb.Node):
        return {"labels": sorted(value.labels), "properties": plain(value.properties)}
    if isinstance(value, neo4j.graph.Node):
        return {"labels": sorted(value.labels), "properties": plain(dict(value.items()))}
    if isinstance(value, falkordb.Edge):
        return {"type": value.relation, "properties": plain(value.properties)}
    if isinstance(value, neo4j.graph.Relationship):
        return {"type": value.type, "properties": plain(dict(value.items()))}
    if isinstance(value, falkordb.Path):
        return [plain(n) for n in value.nodes()]
    if isinstance(value, neo4j.graph.Path):
        return [plain(n) for n in value.nodes]
    return value
