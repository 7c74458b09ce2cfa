"""``kernel analytics [NAME]``: the named queries in cypher/analytics/, run as-is.

They are plain read-only Cypher with no parameters, so the same files paste into Neo4j
Browser unchanged."""

from __future__ import annotations

from typing import Annotated

import typer

from kernel.cli.common import out, print_json, print_table, store_of
from kernel.errors import ConfigError
from kernel.store.base import GraphStore

PREFIX = "analytics/"


def analytics_command(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Argument(help="an analytics query (none: list them)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Run a named analytics query (failure modes, retries, cost, HIRE, build reuse, σ)."""
    with store_of(ctx) as store:
        available = queries(store)
        if name is None:
            if as_json:
                print_json(available)
            else:
                print_table("analytics", ["name", "what it answers"],
                            [[n, d] for n, d in available.items()])
            return
        if name not in available:
            raise ConfigError(f"no analytics query {name!r}; there are: {', '.join(available)}")
        rows = store.run(PREFIX + name)
    if as_json:
        print_json(rows)
    elif rows:
        print_table(name, list(rows[0]), [list(r.values()) for r in rows])
    else:
        out.print(f"{name}: no rows yet")


def queries(store: GraphStore) -> dict[str, str]:
    """Analytics query names with their description (the statement's comment)."""
    found = {}
    for name in store.catalog.names():
        if name.startswith(PREFIX):
            lines = [line.removeprefix("//").strip() for line in
                     store.catalog.get(name).text.splitlines() if line.startswith("//")
                     and not line.startswith("// mode:")]
            found[name.removeprefix(PREFIX)] = " ".join(lines)
    return dict(sorted(found.items()))
