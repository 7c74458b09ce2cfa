"""``kernel query``: ad-hoc Cypher against the graph, read-only unless --write."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from kernel.cli.common import print_json, print_table, store_of
from kernel.errors import KernelError


def parse_params(pairs: list[str]) -> dict[str, Any]:
    """``k=v`` pairs; a value that parses as JSON is taken as JSON, otherwise as a string."""
    params: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name.isidentifier():
            raise KernelError(f"--param {pair!r} must look like name=value (e.g. --param k=10)")
        try:
            params[name] = json.loads(raw)
        except json.JSONDecodeError:
            params[name] = raw
    return params


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
