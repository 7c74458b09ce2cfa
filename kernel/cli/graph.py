"""``kernel graph``: export and import the graph as a ``kernel-graph`` file."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from kernel.cli.common import err_console, out, output_file, settings_of, store_of, to_stdout

app = typer.Typer(help="Graph export and import (seed a deployment, move between backends).",
                  no_args_is_help=True)


@app.command("export")
def export(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="file to write ('-' for standard output)")],
    contents: Annotated[bool, typer.Option(
        "--contents/--no-contents",
        help="carry the artifacts' contents (the default); without them the importing "
             "deployment cannot show artifacts or run built tools")] = True,
) -> None:
    """Write the whole graph and the artifacts' contents, deterministically ordered, to FILE."""
    from kernel.core.artifacts import BlobStore
    from kernel.graph_io import export_graph

    output_file(file, "export file")
    blobs = BlobStore.of_data_dir(settings_of(ctx).data_dir) if contents else None
    with store_of(ctx) as store:
        if to_stdout(file):
            report = export_graph(store, typer.get_text_stream("stdout"), blobs=blobs)
        else:
            # Write beside the target and rename, so a failed export never leaves half a file.
            fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=f".{file.name}.")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    report = export_graph(store, handle, blobs=blobs)
                os.replace(tmp, file)
            except OSError as exc:
                Path(tmp).unlink(missing_ok=True)
                if exc.filename is None:  # a write to the file: name it
                    raise OSError(exc.errno, exc.strerror, str(file)) from exc
                raise
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
    if report.missing_contents:
        err_console.print(f"warning: {len(report.missing_contents)} artifact(s) have no stored "
                          f"contents here, so the file cannot carry them: "
                          f"{_some(report.missing_contents)}")
    if not to_stdout(file):
        carried = f" and {report.blobs} artifact contents ({report.blob_bytes} bytes)" \
            if contents else " (without artifact contents)"
        out.print(f"exported {report.nodes} nodes and {report.relationships} relationships"
                  f"{carried} to {file}")


@app.command("import")
def import_(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="a kernel-graph file ('-' for standard input)")],
) -> None:
    """Merge FILE into the graph by id: validated whole first, resumable if interrupted;
    stores the contents it carries and leaves the graph at the current schema."""
    from kernel.core.artifacts import BlobStore
    from kernel.schema import seed_graph

    data_dir = settings_of(ctx).data_dir
    blobs = BlobStore.of_data_dir(data_dir)
    from kernel.errors import GraphFileError

    with _readable(file, data_dir) as path, store_of(ctx) as store:
        try:
            report = seed_graph(store, path, blobs)
        except GraphFileError as exc:
            if path == file:
                raise
            raise GraphFileError("<stdin>", exc.line, exc.reason) from None
    resumed = f" (resumed after line {report.resumed_from_line})" if report.resumed_from_line else ""
    name = "standard input" if str(file) == "-" else str(file)
    out.print(f"imported {report.nodes} nodes, {report.relationships} relationships and "
              f"{report.blobs} artifact contents from {name}{resumed}; "
              f"schema v{report.schema_to}")
    if report.lacking_contents:
        err_console.print(f"warning: {len(report.lacking_contents)} artifact(s) have no "
                          "contents here (the file was exported without them): "
                          f"{_some(report.lacking_contents)}; 'kernel artifact show' and tools "
                          "built from them will not work until a file with contents is imported")


class _readable:
    """The file to import; standard input is spooled to a private file first, since the
    import reads the file twice (validate, then merge)."""

    def __init__(self, file: Path, data_dir: Path) -> None:
        self.file, self.data_dir = file, data_dir
        self.spooled: Path | None = None

    def __enter__(self) -> Path:
        if str(self.file) != "-":
            return self.file
        from kernel.paths import private_dir

        folder = private_dir(self.data_dir / "incoming")
        fd, name = tempfile.mkstemp(dir=folder, prefix="stdin-", suffix=".jsonl")
        with os.fdopen(fd, "wb") as handle:
            shutil.copyfileobj(sys.stdin.buffer, handle)
        spooled = self.spooled = Path(name)
        return spooled

    def __exit__(self, *exc: object) -> None:
        if self.spooled is not None:
            self.spooled.unlink(missing_ok=True)


def _some(ids: list[str], shown: int = 5) -> str:
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return ", ".join(ids[:shown]) + more
