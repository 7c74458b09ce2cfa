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
from typing import Annotated, Any, ClassVar, NoReturn

import typer
from typer._click import exceptions as click  # typer vendors click; it exports only a few

from kernel.cli.common import err_console
from kernel.cli.lazy import Lazy, LazyGroup
from kernel.errors import KernelError, Refused, RunInterrupted


class _Commands(LazyGroup):
    """Every subcommand, in the order ``kernel --help`` lists them."""

    lazy: ClassVar[dict[str, Lazy]] = {
        "query": Lazy("kernel.cli.query", "query",
                      "Run ad-hoc Cypher (read-only by default) and print a table or JSON."),
        "status": Lazy("kernel.cli.status", "status",
                       "Backend, schema version and what the graph holds; or, given RUN, "
                       "how that run stands."),
        "solve": Lazy("kernel.cli.solve", "solve_command",
                      "Solve GOAL: constraints, resolvers, verification, decomposition, "
                      "until done or refused."),
        "intake": Lazy("kernel.cli.solve", "intake_command",
                       "Step 1 only: turn GOAL into a confirmed root goal and core "
                       "constraints, asking in the terminal (or parking on the question "
                       "when there is none), then stop; 'kernel resume RUN' solves the "
                       "confirmed goal."),
        "resume": Lazy("kernel.cli.solve", "resume_command",
                       "Continue a run that stopped (a crash, a cap, a parked HIRE) from "
                       "its committed state; a planning run plans on, served what it had "
                       "already recorded."),
        "replay": Lazy("kernel.cli.solve", "replay_command",
                       "Re-run a recorded run with its recorded proposals; the summary hash "
                       "must match."),
        "tree": Lazy("kernel.cli.tree", "tree",
                     "The goal tree of a run: status, σ_v, σ_path, budget spent/allocated "
                     "per goal."),
        "log": Lazy("kernel.cli.log", "log_command",
                    "What a run did, step by step: its log, each attempt with its verdict, "
                    "the checks that failed and why, the feedback for the next attempt, "
                    "costs and refusals."),
        "show": Lazy("kernel.cli.log", "show_command",
                     "Any node by id or unique prefix: its label, properties (stored JSON "
                     "decoded) and neighbours."),
        "runs": Lazy("kernel.cli.tree", "runs", "Every run, newest first."),
        "plan": Lazy("kernel.cli.plan", "plan_command",
                     "Plan GOAL against its constraints before anything runs (offline: "
                     "--example NAME)."),
        "plan-report": Lazy("kernel.cli.plan", "plan_report_command",
                            "Write a self-contained HTML report of a plan (DAG, waterfall, "
                            "surveys, repair)."),
        "check-plan": Lazy("kernel.cli.plan", "check_plan_command",
                           "Run the assertion framework on a plan document; exit 1 if any "
                           "assertion fails."),
        "analytics": Lazy("kernel.cli.analytics", "analytics_command",
                          "Run a named analytics query (failure modes, retries, cost, HIRE, "
                          "build reuse, σ)."),
        "db": Lazy("kernel.cli.db", "app", "Schema and store management."),
        "graph": Lazy("kernel.cli.graph", "app",
                      "Graph export and import (seed a deployment, move between backends)."),
        "bench": Lazy("kernel.cli.bench", "app", "Benchmarks (figures, not pass/fail)."),
        "ledger": Lazy("kernel.cli.ledger", "app", "The hash-chained ledger of proposals."),
        "hire": Lazy("kernel.cli.hire", "app",
                     "Capability requests the kernel asked a human for."),
        "tools": Lazy("kernel.cli.tools", "app",
                      "The tools the kernel built or a person supplied: what each provides, "
                      "who made it, how it fared."),
        "repo": Lazy("kernel.cli.repo", "app",
                     "A codebase as a graph: take a repository in, ask what a change "
                     "impacts."),
        "artifact": Lazy("kernel.cli.artifact", "app",
                         "Artifacts out of the store: show one, or save its files."),
    }


app = typer.Typer(
    name="kernel",
    cls=_Commands,
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
    from kernel.settings import KernelSettings

    ctx.obj = KernelSettings.load(**overrides)




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
    # Ctrl-C and SIGTERM stop a run resumably, whatever the starting process left: a
    # signal blocked or ignored there stays so in a child (an ignored SIGINT also keeps
    # Python from installing its handler), and the run would go on unstoppable.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    garbled = next((i for i, arg in enumerate(sys.argv[1:], 1) if not _is_text(arg)), None)
    if garbled is not None:
        shown = os.fsencode(sys.argv[garbled]).decode("utf-8", "backslashreplace")[:80]
        err_console.print(f"[bold red]error:[/] argument {garbled} ({shown}) is not UTF-8 "
                          "text: give names, goals and values as UTF-8", highlight=False,
                          soft_wrap=True)
        sys.exit(EXIT_BAD_INPUT)
    try:
        from kernel.cli.conventions import hoist_global_options

        tree = command()
        code = tree.main(args=hoist_global_options(sys.argv[1:], tree), prog_name="kernel",
                         standalone_mode=False)
        sys.exit(code if isinstance(code, int) else 0)
    except click.UsageError as exc:
        if isinstance(exc, click.NoArgsIsHelpError) or exc.ctx is None:
            _usage(exc)
        err_console.print(f"[bold red]error:[/] {_plain(exc.format_message())} "
                          f"({_plain(exc.ctx.command_path)} --help lists what it takes)",
                          highlight=False, soft_wrap=True)
        sys.exit(EXIT_BAD_INPUT)
    except click.ClickException as exc:
        _usage(exc)
    except typer.Abort:
        err_console.print("aborted")
        sys.exit(1)
    except RunInterrupted as exc:
        err_console.print(f"[bold yellow]stopped:[/] {_plain(exc)}", highlight=False, soft_wrap=True)
        sys.exit(EXIT_RESUMABLE)
    except Refused as exc:
        err_console.print(f"[bold red]refused:[/] {_plain(exc)}", highlight=False, soft_wrap=True)
        sys.exit(EXIT_REFUSED)
    except KernelError as exc:
        err_console.print(f"[bold red]error:[/] {_plain(exc)}", highlight=False, soft_wrap=True)
        sys.exit(EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)
    except Exception as exc:
        if _state["debug"] or "--debug" in sys.argv:
            raise
        from kernel.disk_space import STORE_HEADROOM, full_message, out_of_space

        full = out_of_space(exc)
        if full is not None:  # outside a run (a run says so itself, as interrupted)
            said = full_message(full.path or _data_dir() or Path.cwd(), STORE_HEADROOM,
                                "the kernel")
            err_console.print(f"[bold red]stopped:[/] {_plain(said)}", highlight=False, soft_wrap=True)
            sys.exit(EXIT_RESUMABLE)
        where = _write_crash_log()
        err_console.print(f"[bold red]internal error:[/] {type(exc).__name__}: "
                          f"{_plain(str(exc)[:200])} (traceback in {_plain(where)}; --debug prints it)",
                          highlight=False, soft_wrap=True)
        sys.exit(EXIT_INTERNAL)


def _usage(exc: click.ClickException) -> NoReturn:
    """A click error shown as typer shows it (help asked for by giving no arguments)."""
    from typer import rich_utils

    rich_utils.rich_format_error(exc)
    sys.exit(exc.exit_code)


def _plain(value: object) -> str:
    """An error's text inside the console's markup: shown as it is (a path or a goal may
    hold ``[/]`` or ``[link=…]``), hidden characters made visible."""
    from kernel.cli.shown import shown

    return shown(value, multiline=True, markup=True)  # a message's own lines kept


def _data_dir() -> Path | None:
    """The data dir, where most of what the kernel writes goes; None when the settings
    name none usable."""
    try:
        from kernel.settings import KernelSettings

        return KernelSettings().data_dir
    except ValueError:
        return None


def _is_text(arg: str) -> bool:
    """Whether an argument is UTF-8 text (bytes that are not arrive as lone surrogates)."""
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _write_crash_log() -> Path | str:
    """The traceback of an internal error, kept where the user can attach it to a report
    (the data dir's logs, else the temp dir; where neither can be written, say so)."""
    text = f"kernel {' '.join(sys.argv[1:])}\n\n{traceback.format_exc()}"
    name = f"crash-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"
    data_dir = _data_dir()  # none usable: the traceback still goes somewhere
    places = [*([data_dir / "logs"] if data_dir else []), Path(tempfile.gettempdir())]
    for root in places:
        try:
            root.mkdir(parents=True, exist_ok=True, mode=0o700)
            path = root / name
            path.write_text(text, encoding="utf-8", errors="backslashreplace")
            return path
        except OSError:
            continue
    return "nowhere: no log could be written"
