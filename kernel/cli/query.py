"""``kernel query``: ad-hoc Cypher against the graph, read-only unless --write."""

from __future__ import annotations

import json
import math
from typing import Annotated, Any

import typer

from kernel.cli.common import print_json, print_table, store_of
from kernel.errors import KernelError

MAX_PARAM_DEPTH = 32
INT64 = (-(1 << 63), (1 << 63) - 1)


def parse_params(pairs: list[str]) -> dict[str, Any]:
    """``k=v`` pairs; a value that parses as JSON is taken as JSON, otherwise as a string.

    What both stores can hold exactly, or a one-line refusal: integers within 64 bits,
    finite numbers, map keys that are non-empty and free of backticks, nesting at most
    ``MAX_PARAM_DEPTH`` deep.

    >>> parse_params(["k=10", "name=Ada", "ids=[1, 2]"])
    {'k': 10, 'name': 'Ada', 'ids': [1, 2]}
    """
    params: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name.isidentifier():
            raise KernelError(f"--param {pair[:80]!r} must look like name=value "
                              "(e.g. --param k=10)")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        except RecursionError:
            raise KernelError(f"--param {name}: the value is nested more than "
                              f"{MAX_PARAM_DEPTH} deep; flatten it") from None
        problem = _param_problem(value, 0)
        if problem:
            raise KernelError(f"--param {name}: {problem}")
        params[name] = value
    return params


def _param_problem(value: Any, depth: int) -> str | None:
    if depth > MAX_PARAM_DEPTH:
        return f"the value is nested more than {MAX_PARAM_DEPTH} deep; flatten it"
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return None
    if isinstance(value, int):
        if not INT64[0] <= value <= INT64[1]:
            return (f"{str(value)[:30]} does not fit in 64 bits (the stores' integers); "
                    "quote it to pass it as text")
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else \
            f"{value} is not a finite number; quote it to pass it as text"
    if isinstance(value, list):
        return next((p for v in value if (p := _param_problem(v, depth + 1))), None)
    if isinstance(value, dict):
        bad = [k for k in value if not k or "`" in k]
        if bad:
            return f"map key {bad[0]!r} must be non-empty and free of backticks"
        return next((p for v in value.values() if (p := _param_problem(v, depth + 1))), None)
    return f"a {type(value).__name__} cannot be a parameter"


def query(
    ctx: typer.Context,
    cypher: Annotated[str, typer.Argument(help="a Cypher statement; use $name for parameters")],
    param: Annotated[list[str] | None, typer.Option(
        "--param", "-p", help="parameter as name=value (JSON values allowed); repeatable")] = None,
    write: Annotated[bool, typer.Option("--write", help="allow the statement to write")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print rows as JSON")] = False,
) -> None:
    """Run ad-hoc Cypher (read-only by default) and print a table or JSON."""
    params = parse_params(param or [])
    with store_of(ctx) as store:
        result = store.execute_adhoc(cypher, params, write=write)
    if as_json:
        print_json(result.records())
    elif result.columns:
        print_table(None, result.columns, result.rows)
    if write and not as_json:
        changed = ", ".join(f"{count} {name.replace('_', ' ')}"
                            for name, count in result.counters.items())
        typer.echo(changed or "nothing changed")
