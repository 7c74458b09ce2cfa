"""The ``kernel`` command: typer sub-apps per area, and one place that turns what went
wrong into an exit code.

Exit codes: 0 resolved (or the command did what it was asked), 1 refused (the report
says why), 2 bad input or a state the command cannot work from (one line: what is wrong
and how to fix it), 3 resumable (parked, capped, interrupted), 4 internal error (one
line naming the log file that holds the traceback; ``--debug`` prints it instead).
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Annotated, Any

import typer

from kernel.cli.common import err_console
from kernel.errors import KernelError, Refused, RunInterrupted

app = typer.Typer(
    name="kernel",
    help="A graph-database-backed planning kernel.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode="markdown",
)


def _version(value: bool) -> None:
    if value:
        from kernel import __version__

        typer.echo(f"kernel {__version__}")
        raise typer.Exit()


@app.callback()
def _configure(
    ctx: typer.Context,
    graph: Annotated[str | None, typer.Option(
        "--graph", envvar="KERNEL_GRAPH",
        help="embedded (default), embedded:///DIR, or neo4j://HOST:7687")] = None,
    data_dir: Annotated[Path | None, typer.Option(
        "--data-dir", envvar="KERNEL_DATA_DIR",
        help="where the embedded store and artifacts live")] = None,
    debug: Annotated[bool, typer.Option(
        "--debug", envvar="KERNEL_DEBUG", help="print tracebacks of internal errors")] = False,
    version: Annotated[bool, typer.Option(
        "--version", "-V", callback=_version, is_eager=True,
        help="print the kernel's version and exit")] = False,
) -> None:
    _state["debug"] = debug
    overrides: dict[str, Any] = {}  # only what was given: the rest comes from KERNEL_*
    if graph is not None:
        overrides["graph"] = graph
    if data_dir is not None:
        overrides["data_dir"] = data_dir
    try:
        from kernel.settings import KernelSettings

        ctx.obj = KernelSettings(**overrides)
    except ValueError as exc:
        raise KernelError(f"invalid setting: {exc}") from exc


def _register() -> None:
    from kernel.cli import (
        analytics,
        artifact,
        bench,
        db,
        graph,
        hire,
        ledger,
        log,
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
    app.add_typer(artifact.app, name="artifact")
    app.command("query")(query.query)
    app.command("status")(status.status)
    app.command("solve")(solve.solve_command)
    app.command("intake")(solve.intake_command)
    app.command("resume")(solve.resume_command)
    app.command("replay")(solve.replay_command)
    app.command("tree")(tree.tree)
    app.command("log")(log.log_command)
    app.command("show")(log.show_command)
    app.command("runs")(tree.runs)
    app.command("plan")(plan.plan_command)
    app.command("plan-report")(plan.plan_report_command)
    app.command("check-plan")(plan.check_plan_command)
    app.command("analytics")(analytics.analytics_command)


_register()


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM ends the kernel the way Ctrl-C does, so cleanup (the sandbox) runs."""
    raise KeyboardInterrupt


EXIT_REFUSED, EXIT_BAD_INPUT, EXIT_RESUMABLE, EXIT_INTERNAL = 1, 2, 3, 4
_state: dict[str, object] = {"debug": False}


def command() -> Any:
    """The ``kernel`` command tree, with help in words (``TEXT``, ``PATH``, ``GOAL``)."""
    from kernel.cli.conventions import humanize

    return humanize(typer.main.get_command(app))


def main() -> None:
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        from kernel.cli.conventions import hoist_global_options

        tree = command()
        tree(args=hoist_global_options(sys.argv[1:], tree), prog_name="kernel")
    except RunInterrupted as exc:
        err_console.print(f"[bold yellow]stopped:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(EXIT_RESUMABLE)
    except Refused as exc:
        err_console.print(f"[bold red]refused:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(EXIT_REFUSED)
    except KernelError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)
    except Exception as exc:
        if _state["debug"] or "--debug" in sys.argv:
            raise
        where = _write_crash_log()
        err_console.print(f"[bold red]internal error:[/] {type(exc).__name__}: "
                          f"{str(exc)[:200]} (traceback in {where}; --debug prints it)",
                          highlight=False, soft_wrap=True)
        sys.exit(EXIT_INTERNAL)


def _write_crash_log() -> Path:
    """The traceback of an internal error, kept where the user can attach it to a report."""
    try:
        from kernel.settings import KernelSettings

        root = KernelSettings().data_dir / "logs"
    except ValueError:
        root = Path(tempfile.gettempdir())
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = root / f"crash-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"
    path.write_text(f"kernel {' '.join(sys.argv[1:])}\n\n{traceback.format_exc()}")
    return path
