"""``kernel bench``: print the figures the speed targets are judged by."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from kernel import api
from kernel.bench.examples import EXAMPLES
from kernel.cli.common import amount, out, print_table, settings_of
from kernel.errors import ConfigError, KernelError

if TYPE_CHECKING:
    from kernel.bench.store import Figure
    from kernel.settings import KernelSettings
    from kernel.store import GraphStore

# Each command imports its benchmark when it runs: `kernel --help` loads none of them.

T = TypeVar("T")

app = typer.Typer(help="Benchmarks (figures, not pass/fail).", no_args_is_help=True)


@app.command("store")
def store_bench(
    ctx: typer.Context,
    rows: Annotated[int, typer.Option(help="rows in the batched MERGE")] = 10_000,
    repeats: Annotated[int, typer.Option(help="samples per latency figure")] = 200,
    elements: Annotated[list[int] | None, typer.Option(
        "--elements", metavar="N", help="graph sizes for export and import (repeatable); "
                                        "default 10000 and 100000")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the figures as JSON")] = False,
) -> None:
    """Round trip, single and batched MERGE, export and import rates and peak memory at
    each size, on the backend in use.

    On the embedded store it runs in a scratch graph that is deleted afterwards; on
    Neo4j it writes only `bench:` nodes (runs, and the goals of a bench run) and
    removes them.
    """
    from kernel.bench.store import bench_store

    sizes = elements or [10_000, 100_000]
    if any(n < 2 for n in sizes):
        raise ConfigError("--elements must be at least 2")
    _run_bench(ctx, "store benchmark",
               lambda store: bench_store(store, rows=rows, repeats=repeats, sizes=sizes),
               as_json=as_json)


@app.command("core")
def core_bench(
    ctx: typer.Context,
    repeats: Annotated[int, typer.Option(help="samples per latency figure")] = 200,
    goals: Annotated[int, typer.Option(help="goals in the ordering benchmark's tree")] = 10_000,
    as_json: Annotated[bool, typer.Option("--json", help="print the figures as JSON")] = False,
) -> None:
    """Per-operation cost of a state transition, a budget record and a dependency check,
    and the cost of ordering a 10,000-goal tree (topological order, critical path).

    Embedded: a scratch graph, deleted afterwards. Neo4j: only an empty scratch
    database named in the URI (``neo4j://host:7687?database=scratch``), emptied afterwards."""
    from kernel.bench.core import bench_core

    _run_bench(ctx, "core benchmark", lambda store: bench_core(store, repeats, goals),
               writes="benchmark runs", as_json=as_json)


@app.command("solve")
def solve_bench(
    ctx: typer.Context,
    goals: Annotated[list[int] | None, typer.Option(
        "--goals", help="tree sizes (repeatable); default 1000 and 10000")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the figures as JSON")] = False,
) -> None:
    """Kernel overhead per dispatch step and wall time of scripted runs of 1,000 and
    10,000 goals (a scratch graph on the embedded store, or an empty scratch Neo4j
    database named in the URI)."""
    from kernel.bench.solve import bench_solve

    for size in goals or [1000, 10_000]:
        _run_bench(ctx, f"SOLVE benchmark, {size} goals",
                   partial(bench_solve, goals=size), writes="benchmark runs", as_json=as_json)


@app.command("concurrency")
def concurrency_bench(
    ctx: typer.Context,
    latency: Annotated[float, typer.Option(
        help="simulated seconds per call (a model's answer, a sandbox run)")] = 1.0,
    levels: Annotated[list[int] | None, typer.Option(
        "--concurrency", help="concurrency levels to run (repeatable); default 1, 2, 4, 8")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the figures as JSON")] = False,
) -> None:
    """Wall time of scripted goal trees (a fan-out, a chain, a diamond, the shipped
    decomposition examples) with a simulated latency per call, at each concurrency level,
    against the critical-path bound and against N = 1; fails if a level changes a run's
    summary hash."""
    from kernel.bench.concurrency import bench_concurrency
    from kernel.runtime.calls import check_concurrency

    amount(latency, "--latency")
    chosen = [check_concurrency(n) for n in levels or [1, 2, 4, 8]]
    if chosen[0] != 1:
        chosen.insert(0, 1)  # the reference every level is measured against
    _run_bench(ctx, f"concurrency benchmark, {latency:g} s per call",
               partial(bench_concurrency, latency=latency, levels=chosen),
               writes="benchmark runs", as_json=as_json)


@app.command("embeddings")
def embeddings_bench(
    single: Annotated[int, typer.Option(help="texts embedded one per call")] = 200,
    batched: Annotated[int, typer.Option(help="texts embedded in batches")] = 1000,
    as_json: Annotated[bool, typer.Option("--json", help="print the figures as JSON")] = False,
) -> None:
    """Model load time and texts per second, one at a time and batched, on the embedding
    backend in use (KERNEL_EMBEDDINGS=onnx|torch; no cache, no store)."""
    from embeddings.encoder import backend_name
    from kernel.bench.embeddings import bench_embeddings

    figures = bench_embeddings(single, batched)
    _print_figures("embedding benchmark", figures, f"embedding backend: {backend_name()}",
                   as_json)


@app.command("startup")
def startup_bench(
    ctx: typer.Context,
    samples: Annotated[int, typer.Option(help="timed runs of each command", min=1)] = 10,
    solves: Annotated[int, typer.Option(
        help="timed scripted solves of the ingest example, each in a fresh data dir",
        min=0)] = 3,
    as_json: Annotated[bool, typer.Option("--json", help="print the figures as JSON")] = False,
) -> None:
    """Wall time of `kernel --help`, `status` and `runs`, each a new process, beside the
    import of the libraries they cannot start without (median and fastest of SAMPLES
    runs, after one warm-up round), on the store in use (read only); then the ingest
    example's scripted solve in a fresh data dir of its own, SOLVES times."""
    from kernel.bench.startup import bench_startup

    settings = settings_of(ctx)
    _print_figures("start-up benchmark", bench_startup(settings, samples, solves),
                   f"graph: {settings.graph}", as_json)


@app.command("kg")
def kg_bench(
    ctx: typer.Context,
    attempts: Annotated[int, typer.Option(help="synthetic attempts")] = 100_000,
    patterns: Annotated[int, typer.Option(help="synthetic goal patterns")] = 10_000,
    resolvers: Annotated[int, typer.Option(help="synthetic resolvers")] = 1_000,
    samples: Annotated[int, typer.Option(help="timed calls per query")] = 200,
    as_json: Annotated[bool, typer.Option("--json", help="print the figures as JSON")] = False,
) -> None:
    """p50/p95 latency of each boot query and of a top-10 vector search on a synthetic
    graph (100,000 attempts, 10,000 goal patterns, 1,000 resolvers by default), in a
    scratch graph on the embedded store (or an empty scratch Neo4j database)."""
    from kernel.bench.kg import Shape, bench_kg

    shape = Shape(attempts=attempts, patterns=patterns, resolvers=resolvers, samples=samples)
    _run_bench(ctx, f"knowledge-graph benchmark: {attempts:,} attempts, {patterns:,} "
                    f"patterns, {resolvers:,} resolvers", lambda store: bench_kg(store, shape),
               writes="a synthetic graph")


@app.command("flywheel")
def flywheel_bench(
    ctx: typer.Context,
    keep: Annotated[bool, typer.Option(
        "--keep", help="solve in the graph in use and leave its forty runs there (goals, "
                       "tools built, failures, HIRE questions and answers) to explore, in "
                       "Neo4j Browser say (docs/neo4j-browser.md)")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the figures as JSON")] = False,
) -> None:
    """The flywheel experiment: twenty related goals solved twice in one scratch graph
    with the same scripted proposals; per pass, model calls, cost, retries, builds and
    questions put to a person (seeds/examples/flywheel)."""
    from kernel.bench.flywheel import run_experiment

    passes = _kept(ctx, run_experiment) if keep else \
        _in_scratch(ctx, run_experiment, writes="runs")[0]
    rows = [p.as_dict() for p in passes]
    if as_json:
        typer.echo(json.dumps(rows, indent=1))
        return
    keys = ["goals", "resolved", "model_calls", "model_cost_usd", "reused_calls", "retries",
            "builds", "hire_requests"]
    print_table("flywheel experiment: the same 20 goals, twice", ["figure", "pass 1", "pass 2"],
                [[k.replace("_", " "), str(rows[0][k]), str(rows[1][k])] for k in keys])


@app.command("repo")
def repo_bench(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="the repository's top directory")],
    symbol: Annotated[str | None, typer.Option(
        help="the symbol whose impact is timed (default: the function the benchmark adds)")]
        = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the figures as JSON")] = False,
) -> None:
    """Ingest a copy of the repository at PATH (its snapshot, in a scratch directory): time,
    nodes and edges; then change one Python file, ingest again (only it is parsed), and time
    an impact query. A scratch graph on the embedded store (or an empty scratch Neo4j
    database)."""
    from kernel.bench.repo import bench_repo
    from kernel.codebase.ingest import caps_of
    from kernel.codebase.symbol_search import code_encoder

    settings = settings_of(ctx)
    caps, encoder = caps_of(settings), code_encoder(settings.data_dir)
    _run_bench(ctx, f"repository benchmark: {path}",
               lambda store: bench_repo(store, path, caps, symbol, encoder), writes="a code graph",
               as_json=as_json)


@app.command("crash")
def crash_bench(
    ctx: typer.Context,
    trials: Annotated[int, typer.Option(help="kill -9 trials per example")] = 10,
    seed: Annotated[int, typer.Option(help="seed of the kill points")] = 1,
    example: Annotated[list[str] | None, typer.Option(
        help="example(s) to use (repeatable): " + ", ".join(e.name for e in EXAMPLES))] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the figures as JSON")] = False,
) -> None:
    """The kill -9 check: run each scripted example uninterrupted, then TRIALS times
    killed with SIGKILL just before or after a store statement picked at random (the
    resume sometimes killed too) and resumed; each trial must end with the uninterrupted
    run's summary hash, attempts and spends. Embedded store only; its graphs are scratch
    graphs, deleted afterwards. Exit 1 if any trial differs."""
    settings = settings_of(ctx)
    if settings.target().backend != "embedded":
        raise KernelError("the kill -9 check runs on the embedded store (drop --graph)")
    chosen = tuple(e for e in EXAMPLES if not example or e.name in example)
    unknown = set(example or []) - {e.name for e in EXAMPLES}
    if unknown:
        raise KernelError(f"no example {sorted(unknown)[0][:60]!r}; the examples are: "
                          + ", ".join(e.name for e in EXAMPLES))
    from kernel.bench.crash import crash_check

    data_dir = settings.target().data_dir
    assert data_dir is not None  # embedded: checked above
    reports = crash_check(data_dir, trials, seed, chosen,
                          on_trial=None if as_json else lambda t: out.print(
                              f"{t.example}: killed {', '.join(t.kill_at)}: "
                              + ("same result" if t.ok else f"[red]{t.detail}[/]")))
    rows = [{"example": r.example, "statements": r.statements, "trials": len(r.trials),
             "identical": r.identical,
             "kills": sum(len(t.kill_at) for t in r.trials),
             "failures": [{"kill_at": t.kill_at, "detail": t.detail}
                          for t in r.trials if not t.ok]} for r in reports]
    if as_json:
        typer.echo(json.dumps(rows, indent=1))
    else:
        print_table("kill -9 check", ["example", "statements", "trials", "kills", "identical"],
                    [[r["example"], str(r["statements"]), str(r["trials"]), str(r["kills"]),
                      str(r["identical"])] for r in rows])
    if any(r["failures"] for r in rows):
        raise typer.Exit(1)


def _kept(ctx: typer.Context, measure: Callable[[GraphStore, Path, Path], T]) -> T:
    """Run ``measure`` in the user's own graph and data dir, leaving what it writes."""
    from kernel.bench.flywheel import EXAMPLE
    from kernel.schema import init_schema
    from kernel.store import open_store

    settings = settings_of(ctx)
    store = open_store(settings)
    try:
        init_schema(store)
        return measure(store, EXAMPLE, settings.target().data_dir or settings.data_dir)
    finally:
        store.close()


def scratch_database(database: str | None, command_writes: str) -> str:
    """The Neo4j database a writing benchmark may use: one named explicitly in the URI (never
    ``system``), so that emptying it afterwards is what the user asked for."""
    if database is None or database.lower() == "system":
        raise KernelError(
            f"this benchmark writes {command_writes} and empties the database afterwards, so on "
            "Neo4j it needs a scratch database named in the URI, e.g. "
            "--graph 'neo4j://localhost:7687?database=scratch' (CREATE DATABASE scratch on "
            "Enterprise; Community has one database, so start an empty server for it: "
            "'python3 neo4j/ctl.py start --home .neo4j/bench --bolt-port 7689 --http-port 7476' "
            "and use 'neo4j://127.0.0.1:7689?database=neo4j'), or run it on the embedded store")
    return database


def require_empty(store: GraphStore, database: str) -> None:
    """Refuse a scratch database that already holds nodes: emptying it would lose them."""
    nodes = sum(api.store_status(store)["nodes"].values())
    if nodes:
        raise KernelError(f"database {database!r} holds {nodes:,} nodes; a writing benchmark "
                          "empties its database afterwards, so give it an empty one")


def _in_scratch(ctx: typer.Context, measure: Callable[[GraphStore], T],
                writes: str | None = None) -> tuple[T, str]:
    """Run ``measure`` in a scratch graph and return its result and a line naming the backend.

    Embedded: a ``-bench`` graph beside the user's, deleted afterwards. Neo4j: the graph in
    use when the benchmark writes nothing of its own (``writes`` is None); otherwise an empty
    scratch database named in the URI, emptied afterwards.
    """
    settings = settings_of(ctx)
    target = settings.target()
    embedded = target.backend == "embedded"
    neo4j_scratch = not embedded and writes is not None
    if embedded:  # the graph named in an embedded:///DIR?graph=NAME URI is the user's own
        assert target.data_dir is not None
        settings = settings.model_copy(update={
            "graph": "embedded", "data_dir": target.data_dir,
            "graph_name": f"{target.database}-bench"})
    if neo4j_scratch:
        scratch_database(target.database, str(writes))
    with _only_bench(settings) if embedded else nullcontext():
        return _measure_in(settings, measure, writes, embedded, neo4j_scratch, target.database)


@contextmanager
def _only_bench(settings: KernelSettings) -> Iterator[None]:
    """One benchmark at a time per scratch graph: a second would empty the first's graph
    under it."""
    from kernel.paths import private_dir

    lock = private_dir(settings.data_dir) / f"{settings.graph_name}.lock"
    with os.fdopen(os.open(lock, os.O_RDWR | os.O_CREAT, 0o600), "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise KernelError(f"another benchmark is using the scratch graph "
                              f"{settings.graph_name!r} in {settings.data_dir}; wait for it "
                              "to finish or give this one another --data-dir") from None
        yield


def _measure_in(settings: KernelSettings, measure: Callable[[GraphStore], T],
                writes: str | None, embedded: bool, neo4j_scratch: bool,
                database: str | None) -> tuple[T, str]:
    from kernel.schema import init_schema
    from kernel.store import open_store

    store = open_store(settings)
    try:
        if neo4j_scratch:
            require_empty(store, str(database))
        init_schema(store)
        try:
            result = measure(store)
            info = store.describe()
        finally:
            if embedded or neo4j_scratch:
                store.drop_all()
    finally:
        store.close()
    detail = f"fsync={settings.embedded_fsync}" if embedded else ""
    return result, f"backend: {info['backend']} {detail}"


def _run_bench(ctx: typer.Context, title: str, measure: Callable[[GraphStore], list[Figure]],
               writes: str | None = None, as_json: bool = False) -> None:
    """Run a benchmark in a scratch graph and print its figures (one JSON line with
    ``as_json``, so repeated benchmarks in one command stay machine-readable)."""
    figures, backend = _in_scratch(ctx, measure, writes)
    _print_figures(title, figures, backend, as_json)


def _print_figures(title: str, figures: list[Figure], backend: str, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps({"benchmark": title, "backend": backend, "figures": [
            {"name": f.name.strip(), "value": round(f.value, 4), "unit": f.unit}
            for f in figures]}))
        return
    out.print(backend)
    print_table(title, ["figure", "value", "unit"],
                [[f.name, f"{f.value:,.2f}", f.unit] for f in figures])
