"""``kernel db``: initialise the schema, and manage the embedded server."""

from __future__ import annotations

from typing import Annotated

import typer

from kernel.cli.common import out, print_table, settings_of, store_of
from kernel.errors import KernelError
from kernel.schema import LATEST_VERSION, init_schema, schema_version
from kernel.store.base import GraphStore

app = typer.Typer(help="Schema and store management.", no_args_is_help=True)


@app.command()
def init(
    ctx: typer.Context,
    warm: Annotated[bool, typer.Option(
        help="on Neo4j, also warm the server's plan cache (as 'kernel db warm'); "
             "KERNEL_NEO4J_WARM_UP=0 turns it off by default")] = True,
) -> None:
    """Create constraints and indexes, migrate the graph forward, load the boot graph."""
    with store_of(ctx) as store:
        report = init_schema(store)
        if report.applied:
            for name in report.applied:
                out.print(f"applied: {name}")
            out.print(f"schema v{report.from_version} -> v{report.to_version}")
        else:
            out.print(f"schema already at v{report.to_version}; constraints and indexes ensured")
        settings = settings_of(ctx)
        if store.dialect == "neo4j" and warm and settings.neo4j_warm_up:
            _warm(store, settings.neo4j_warm_rounds)


@app.command("warm")
def warm_command(
    ctx: typer.Context,
    rounds: Annotated[int | None, typer.Option(
        min=0, max=100, help="times the scripted workloads are rehearsed after planning "
        "(each rolled back; 0: plan only); default KERNEL_NEO4J_WARM_ROUNDS, 2")] = None,
) -> None:
    """Have Neo4j plan the statements a run sends, so a first run does not (nothing written).

    Neo4j keeps a plan per statement text until it stops or its schema changes: run this
    after the server starts (``kernel db init`` does it too). It ensures the indexes first
    (as every run does), since making one empties the plan cache. The embedded store has
    nothing to warm.

    Then it rehearses those workloads ``--rounds`` times, each in one transaction that is
    rolled back, so that the server's Java runtime compiles the code a run executes
    before a run needs it (a just-started server's first run is slower than its later
    ones while the runtime compiles; docs/benchmarks.md has the figures).
    """
    settings = settings_of(ctx)
    if settings.target().backend != "neo4j":  # not even a server started for it
        out.print("nothing to warm: the embedded store plans each statement in microseconds")
        return
    with store_of(ctx) as store:
        _warm(store, settings.neo4j_warm_rounds if rounds is None else rounds)


def _warm(store: GraphStore, rounds: int) -> None:
    from kernel.bench.warm_up import warm_up

    rehearsing = (f", then running its scripted workloads {rounds} time(s), rolled back"
                  if rounds else " (plans only)")
    out.print(f"warming Neo4j: planning the statements a run sends{rehearsing}; on a fresh "
              f"server a minute or two, and about a minute a round, on a small machine")
    done = warm_up(store, rounds=rounds)
    for skipped in done.skipped:
        out.print(f"skipped {skipped}")
    for refused in done.refused:
        out.print(f"ran on the graph as it is, refused (its plan is kept all the same): "
                  f"{refused}")
    out.print(f"planned {done.planned} statements ({done.collected} sent by the scripted "
              f"workloads) in {done.collect_seconds + done.plan_seconds:.1f} s")
    for cut in done.cut_short:
        out.print(f"a rehearsal stopped early, refused: {cut}")
    if rounds:
        out.print(f"rehearsed the workloads {rounds} time(s): ran {done.rehearsed} "
                  f"statements ({done.rehearsed_writes} of them writes), rolled back, in "
                  f"{done.rehearse_seconds:.1f} s")


@app.command()
def status(ctx: typer.Context) -> None:
    """Where the store is, whether its server runs, and the schema version."""
    settings = settings_of(ctx)
    target = settings.target()
    rows: list[list[object]] = [["backend", target.backend]]
    if target.backend == "embedded":
        assert target.data_dir is not None
        from kernel.store.embedded_server import EmbeddedServer

        server = EmbeddedServer(target.data_dir).status()
        rows += [["data dir", str(server.data_dir)], ["socket", str(server.socket)],
                 ["server", f"running (pid {server.pid})" if server.running else "stopped"],
                 ["AOF bytes", server.aof_bytes]]
        if not server.running:
            print_table(None, ["", ""], rows)
            return
    with store_of(ctx) as store:
        if target.backend != "embedded":
            rows += [[k, v] for k, v in store.describe().items() if k != "backend"]
        rows.append(["schema", f"v{schema_version(store)} (this kernel: v{LATEST_VERSION})"])
    print_table(None, ["", ""], rows)


@app.command()
def stop(ctx: typer.Context) -> None:
    """Stop the embedded server of this data directory (SIGTERM; it flushes first)."""
    target = settings_of(ctx).target()
    if target.backend != "embedded":
        raise KernelError("'kernel db stop' manages the embedded server only; "
                          "stop Neo4j with 'docker compose down'")
    assert target.data_dir is not None
    from kernel.store.embedded_server import EmbeddedServer

    stopped = EmbeddedServer(target.data_dir).stop()
    out.print("stopped" if stopped else "not running")


@app.command()
def reset(
    ctx: typer.Context,
    yes: Annotated[bool, typer.Option("--yes", help="confirm deleting every node")] = False,
) -> None:
    """Delete every node and relationship of the graph (asks for --yes)."""
    if not yes:
        raise KernelError("'kernel db reset' deletes the whole graph: repeat with --yes to confirm")
    with store_of(ctx) as store:
        store.drop_all()
    out.print("graph emptied; run 'kernel db init' to load the boot graph again")
