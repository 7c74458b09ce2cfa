"""``kernel graph``: export and import the graph as a ``kernel-graph`` file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from kernel.cli.common import err_console, out, store_of
from kernel.graph_io import export_graph, import_graph

app = typer.Typer(help="Graph export and import (seed a deployment, move between backends).",
                  no_args_is_help=True)


@app.command("export")
def export(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="file to write ('-' for stdout)")],
) -> None:
    """Write the whole graph, deterministically ordered, to FILE."""
    with store_of(ctx) as store:
        if str(file) == "-":
            report = export_graph(store, typer.get_text_stream("stdout"))
        else:
            # Write beside the target and rename, so a failed export never leaves half a file.
            file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=f".{file.name}.")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    report = export_graph(store, handle)
                os.replace(tmp, file)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
    if not report.consistent:
        err_console.print("warning: this backend cannot pause writes, so a run writing during "
                          "the export may leave it between two states; export while no run "
                          "is active (kernel runs) for a consistent file")
    for label, count in report.skipped_labels.items():
        err_console.print(f"warning: skipped {count} node(s) labelled {label!r} "
                          "(not part of the kernel ontology)")
    if str(file) != "-":
        out.print(f"exported {report.nodes} nodes and {report.relationships} relationships "
                  f"to {file}")


@app.command("import")
def import_(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="a kernel-graph file")],
) -> None:
    """Merge FILE into the graph by id (validated first; resumes if interrupted)."""
    with store_of(ctx) as store:
        report = import_graph(store, file)
    resumed = f" (resumed after line {report.resumed_from_line})" if report.resumed_from_line else ""
    out.print(f"imported {report.nodes} nodes and {report.relationships} relationships "
              f"from {file}{resumed}")
