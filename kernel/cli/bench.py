"""``kernel bench``: print the figures the speed targets are judged by."""

from __future__ import annotations

from typing import Annotated

import typer

from kernel.bench.store import bench_store
from kernel.cli.common import out, print_table, settings_of
from kernel.schema import init_schema
from kernel.store import open_store

app = typer.Typer(help="Benchmarks (figures, not pass/fail).", no_args_is_help=True)


@app.command("store")
def store_bench(
    ctx: typer.Context,
    rows: Annotated[int, typer.Option(help="rows in the batched MERGE")] = 10_000,
    repeats: Annotated[int, typer.Option(help="samples per latency figure")] = 200,
) -> None:
    """Round trip, single and batched MERGE, export and import rates on the backend in use.

    On the embedded store it runs in a scratch graph that is deleted afterwards; on
    Neo4j it writes only `bench:` Run nodes and removes them.
    """
    settings = settings_of(ctx)
    target = settings.target()
    if target.backend == "embedded":
        settings = settings.model_copy(update={"graph_name": f"{settings.graph_name}-bench"})
    store = open_store(settings)
    try:
        init_schema(store)
        figures = bench_store(store, rows=rows, repeats=repeats)
        info = store.describe()
    finally:
        if target.backend == "embedded":
            store.drop_all()
        store.close()
    detail = f"fsync={settings.embedded_fsync}" if target.backend == "embedded" else ""
    out.print(f"backend: {info['backend']} {detail}")
    print_table("store benchmark", ["figure", "value", "unit"],
                [[f.name, f"{f.value:,.2f}", f.unit] for f in figures])
