"""The ``kernel`` command: typer sub-apps per area, one error path for every KernelError."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Annotated

import typer

from kernel.cli.common import err_console
from kernel.errors import KernelError
from kernel.settings import KernelSettings

app = typer.Typer(
    name="kernel",
    help="A graph-database-backed planning kernel.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def _configure(
    ctx: typer.Context,
    graph: Annotated[str | None, typer.Option(
        "--graph", envvar="KERNEL_GRAPH",
        help="embedded (default), embedded:///DIR, or neo4j://HOST:7687")] = None,
    data_dir: Annotated[Path | None, typer.Option(
        "--data-dir", envvar="KERNEL_DATA_DIR",
        help="where the embedded store and artifacts live")] = None,
) -> None:
    overrides: dict[str, object] = {}
    if graph is not None:
        overrides["graph"] = graph
    if data_dir is not None:
        overrides["data_dir"] = data_dir
    try:
        ctx.obj = KernelSettings(**overrides)
    except ValueError as exc:
        raise KernelError(f"invalid setting: {exc}") from exc


def _register() -> None:
    from kernel.cli import (
        analytics,
        bench,
        db,
        graph,
        hire,
        ledger,
        plan,
        query,
        solve,
        status,
        tree,
    )

    app.add_typer(db.app, name="db")
    app.add_typer(graph.app, name="graph")
    app.add_typer(bench.app, name="bench")
    app.add_typer(ledger.app, name="ledger")
    app.add_typer(hire.app, name="hire")
    app.command("query")(query.query)
    app.command("status")(status.status)
    app.command("solve")(solve.solve_command)
    app.command("resume")(solve.resume_command)
    app.command("replay")(solve.replay_command)
    app.command("tree")(tree.tree)
    app.command("runs")(tree.runs)
    app.command("plan")(plan.plan_command)
    app.command("plan-report")(plan.plan_report_command)
    app.command("check-plan")(plan.check_plan_command)
    app.command("analytics")(analytics.analytics_command)


_register()


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM ends the kernel the way Ctrl-C does, so cleanup (the sandbox) runs."""
    raise KeyboardInterrupt


def main() -> None:
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        app()
    except KernelError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(2)
