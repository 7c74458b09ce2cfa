"""``kernel status``: the store in use, its schema version and what the graph holds."""

from __future__ import annotations

from typing import Annotated

import typer

from kernel.cli.common import print_json, print_table, store_of
from kernel.schema import LATEST_VERSION, schema_version


def status(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Backend, schema version, and node/relationship counts."""
    with store_of(ctx) as store:
        info = store.describe()
        version = schema_version(store)
        labels = store.run("admin/count_by_label")
        types = store.run("admin/count_by_type")
    info["schema"] = version
    info["schema_latest"] = LATEST_VERSION
    if as_json:
        print_json({"store": info, "nodes": {r["label"]: r["nodes"] for r in labels},
                    "relationships": {r["type"]: r["relationships"] for r in types}})
        return
    print_table("store", ["", ""], [[k, v] for k, v in info.items()])
    if version == 0:
        typer.echo("graph not initialised: run 'kernel db init'")
    print_table("nodes", ["label", "count"], [[r["label"], r["nodes"]] for r in labels])
    print_table("relationships", ["type", "count"],
                [[r["type"], r["relationships"]] for r in types])
