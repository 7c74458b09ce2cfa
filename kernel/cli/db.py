"""``kernel db``: initialise the schema, and manage the embedded server."""

from __future__ import annotations

from typing import Annotated

import typer

from kernel.cli.common import out, print_table, settings_of, store_of
from kernel.errors import KernelError
from kernel.schema import LATEST_VERSION, init_schema, schema_version

app = typer.Typer(help="Schema and store management.", no_args_is_help=True)


@app.command()
def init(ctx: typer.Context) -> None:
    """Create constraints and indexes, migrate the graph forward, load the boot graph."""
    with store_of(ctx) as store:
        report = init_schema(store)
    if report.applied:
        for name in report.applied:
            out.print(f"applied: {name}")
        out.print(f"schema v{report.from_version} -> v{report.to_version}")
    else:
        out.print(f"schema already at v{report.to_version}; constraints and indexes ensured")


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
