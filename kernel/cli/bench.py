"""``kernel bench``: print the figures the speed targets are judged by."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, TypeVar

import typer

from kernel.bench.core import bench_core
from kernel.bench.flywheel import run_experiment
from kernel.bench.kg import Shape, bench_kg
from kernel.bench.solve import bench_solve
from kernel.bench.store import Figure, bench_store
from kernel.cli.common import out, print_table, settings_of
from kernel.errors import KernelError
from kernel.schema import init_schema
from kernel.store import GraphStore, open_store

T = TypeVar("T")

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


@app.command("kg")
def kg_bench(
    ctx: typer.Context,
    attempts: Annotated[int, typer.Option(help="synthetic attempts")] = 100_000,
    patterns: Annotated[int, typer.Option(help="synthetic goal patterns")] = 10_000,
    resolvers: Annotated[int, typer.Option(help="synthetic resolvers")] = 1_000,
    samples: Annotated[int, typer.Option(help="timed calls per query")] = 200,
) -> None:
    """p50/p95 latency of each boot query and of a top-10 vector search on a synthetic
    graph (100,000 attempts, 10,000 goal patterns, 1,000 resolvers by default), in a
    scratch graph on the embedded store."""
    if settings_of(ctx).target().backend != "embedded":
        raise KernelError("'kernel bench kg' writes a synthetic graph; run it on the embedded "
                          "store")
    shape = Shape(attempts=attempts, patterns=patterns, resolvers=resolvers, samples=samples)
    _run_bench(ctx, f"knowledge-graph benchmark: {attempts:,} attempts, {patterns:,} "
                    f"patterns, {resolvers:,} resolvers", lambda store: bench_kg(store, shape))


@app.command("flywheel")
def flywheel_bench(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="print the figures as JSON")] = False,
) -> None:
    """The flywheel experiment: twenty related goals solved twice in one scratch graph
    with the same scripted proposals; per pass, model calls, cost, retries, builds and
    questions put to a person (seeds/examples/flywheel)."""
    if settings_of(ctx).target().backend != "embedded":
        raise KernelError("'kernel bench flywheel' writes runs; run it on the embedded store")
    passes = _in_scratch(ctx, run_experiment)[0]
    rows = [p.as_dict() for p in passes]
    if as_json:
        typer.echo(json.dumps(rows, indent=1))
        return
    keys = ["goals", "resolved", "model_calls", "model_cost_usd", "retries", "builds",
            "hire_requests"]
    print_table("flywheel experiment: the same 20 goals, twice", ["figure", "pass 1", "pass 2"],
                [[k.replace("_", " "), str(rows[0][k]), str(rows[1][k])] for k in keys])


def _in_scratch(ctx: typer.Context, measure: Callable[[GraphStore], T]) -> tuple[T, str]:
    """Run ``measure`` in a scratch graph on the embedded store (deleted afterwards) or on
    the Neo4j graph in use; returns its result and a line naming the backend."""
    settings = settings_of(ctx)
    target = settings.target()
    if target.backend == "embedded":
        settings = settings.model_copy(update={"graph_name": f"{settings.graph_name}-bench"})
    store = open_store(settings)
    try:
        init_schema(store)
        result = measure(store)
        info = store.describe()
    finally:
        if target.backend == "embedded":
            store.drop_all()
        store.close()
    detail = f"fsync={settings.embedded_fsync}" if target.backend == "embedded" else ""
    return result, f"backend: {info['backend']} {detail}"


def _run_bench(ctx: typer.Context, title: str,
               measure: Callable[[GraphStore], list[Figure]]) -> None:
    """Run a benchmark in a scratch graph and print its figures."""
    figures, backend = _in_scratch(ctx, measure)
    out.print(backend)
    print_table(title, ["figure", "value", "unit"],
                [[f.name, f"{f.value:,.2f}", f.unit] for f in figures])
