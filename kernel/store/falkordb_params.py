"""The ``CYPHER name=value ...`` header that carries a statement's parameters to FalkorDB.

The client builds the same text, value by value, with general-purpose checks; an
import sends hundreds of thousands of values, and building the header was a fifth of
its time. This writes the identical text (``tests/test_falkordb_params.py`` compares
the two) with one type lookup per value, and hands anything unusual to the client's
own function.
"""

from __future__ import annotations

from typing import Any

from falkordb.helpers import stringify_param_value


def params_header(params: dict[str, Any]) -> str:
    """What the client's ``Graph._build_params_header`` makes of ``params``."""
    parts = ["CYPHER "]
    for key, value in params.items():
        if type(key) is not str or not key or "`" in key:
            raise ValueError(f"Cypher parameter name {key!r} must be a non-empty string "
                             "without backticks")
        parts.append(f"`{key}`={literal(value)} ")
    return "".join(parts)


_KEYS_SEEN: set[str] = set()  # map keys already found plain (a graph uses a few dozen)


def _plain_keys(value: dict[Any, Any]) -> bool:
    """Whether every key can go between backticks as it is."""
    if not all(type(k) is str and k and "`" not in k for k in value):
        return False
    if len(_KEYS_SEEN) < 10_000:
        _KEYS_SEEN.update(value)
    return True


def literal(value: Any) -> str:
    kind = type(value)
    if kind is str:
        if "\\" in value or '"' in value:
            value = value.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{value}"'
    if kind is int or kind is float or kind is bool:
        return str(value)
    if value is None:
        return "null"
    if kind is dict:
        if not _KEYS_SEEN.issuperset(value) and not _plain_keys(value):
            return str(stringify_param_value(value))  # raises as the client does
        return "{" + ",".join([f"`{k}`:{literal(v)}" for k, v in value.items()]) + "}"
    if kind is list or kind is tuple:
        return "[" + ",".join([literal(v) for v in value]) + "]"
    return str(stringify_param_value(value))
