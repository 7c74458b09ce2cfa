"""``kernel analytics [NAME]``: the named queries in cypher/analytics/, run as-is.

They are plain read-only Cypher with no parameters, so the same files paste into Neo4j
Browser unchanged."""

from __future__ import annotations

from typing import Annotated

import typer

from kernel import api
from kernel.cli.common import out, print_json, print_table, store_of


def analytics_command(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Argument(help="an analytics query (none: list them)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Run a named analytics query (failure modes, retries, cost, HIRE, build reuse, σ)."""
    with store_of(ctx) as store:
        if name is None:
            available = api.analytics_queries(store)
            if as_json:
                print_json(available)
            else:
                print_table("analytics", ["name", "what it answers"],
                            [[n, d] for n, d in available.items()])
            return
        rows = api.analytics_rows(store, name)
    if as_json:
        print_json(rows)
    elif rows:
        print_table(name, list(rows[0]), [list(r.values()) for r in rows])
    else:
        out.print(f"{name}: no rows yet")
