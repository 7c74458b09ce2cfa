"""``kernel bench``: print the figures the speed targets are judged by."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from kernel.bench.core import bench_core
from kernel.bench.solve import bench_solve
from kernel.bench.store import Figure, bench_store
from kernel.cli.common import out, print_table, settings_of
from kernel.errors import KernelError
from kernel.schema import init_schema
from kernel.store import GraphStore, open_store

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
    _run_bench(ctx, "store benchmark", lambda store: bench_store(store, rows=rows, repeats=repeats))


@app.command("core")
def core_bench(
    ctx: typer.Context,
    repeats: Annotated[int, typer.Option(help="samples per latency figure")] = 200,
    goals: Annotated[int, typer.Option(help="goals in the ordering benchmark's tree")] = 10_000,
) -> None:
    """Per-operation cost of a state transition, a budget record and a dependency check,
    and the cost of ordering a 10,000-goal tree (topological order, critical path).

    Embedded: a scratch graph, deleted afterwards. Neo4j: refused unless the graph is
    a scratch database (it writes runs it does not remove)."""
    if settings_of(ctx).target().backend != "embedded":
        raise KernelError("'kernel bench core' writes benchmark runs; run it on the embedded "
                          "store (or a scratch Neo4j database via --graph neo4j://...?database=)")
    _run_bench(ctx, "core benchmark", lambda store: bench_core(store, repeats, goals))


@app.command("solve")
def solve_bench(
    ctx: typer.Context,
    goals: Annotated[list[int] | None, typer.Option(
        "--goals", help="tree sizes (repeatable); default 1000 and 10000")] = None,
) -> None:
    """Kernel overhead per dispatch step and wall time of scripted runs of 1,000 and
    10,000 goals (a scratch graph on the embedded store)."""
    if settings_of(ctx).target().backend != "embedded":
        raise KernelError("'kernel bench solve' writes benchmark runs; run it on the embedded "
                          "store")
    for size in goals or [1000, 10_000]:
        _run_bench(ctx, f"SOLVE benchmark, {size} goals",
                   lambda store, size=size: bench_solve(store, size))


def _run_bench(ctx: typer.Context, title: str,
               measure: Callable[[GraphStore], list[Figure]]) -> None:
    """Run a benchmark in a scratch graph on the embedded store and print its figures."""
    settings = settings_of(ctx)
    target = settings.target()
    if target.backend == "embedded":
        settings = settings.model_copy(update={"graph_name": f"{settings.graph_name}-bench"})
    store = open_store(settings)
    try:
        init_schema(store)
        figures = measure(store)
        info = store.describe()
    finally:
        if target.backend == "embedded":
            store.drop_all()
        store.close()
    detail = f"fsync={settings.embedded_fsync}" if target.backend == "embedded" else ""
    out.print(f"backend: {info['backend']} {detail}")
    print_table(title, ["figure", "value", "unit"],
                [[f.name, f"{f.value:,.2f}", f.unit] for f in figures])
