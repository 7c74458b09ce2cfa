"""Helpers shared by the CLI commands."""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from kernel.settings import KernelSettings
    from kernel.store import GraphStore

# Settings and the store load when a command needs them, not for `kernel --help`.

# No emoji codes: ``:x:`` in a goal or a constraint is text the user wrote, not an icon.
out = Console(emoji=False)
err_console = Console(stderr=True, emoji=False)


def settings_of(ctx: typer.Context) -> KernelSettings:
    from kernel.settings import KernelSettings

    return ctx.obj if isinstance(ctx.obj, KernelSettings) else KernelSettings.load()


@contextmanager
def store_of(ctx: typer.Context) -> Iterator[GraphStore]:
    from kernel.store import open_store

    store = open_store(settings_of(ctx))
    try:
        yield store
    finally:
        store.close()


def to_stdout(path: Path) -> bool:
    """'-' names standard output, as for most command-line tools."""
    return str(path) == "-"


def write_output(path: Path, text: str) -> None:
    """Write a command's output file (``-``: standard output): to a new name beside it
    (``O_EXCL``) renamed over it, so a link at ``path`` is replaced, never written
    through, and a failed write leaves no half file."""
    if to_stdout(path):
        typer.get_text_stream("stdout").write(text)
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            os.fchmod(handle.fileno(), 0o666 & ~_umask())  # as a plain open would
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def output_file(path: Path, option: str) -> Path:
    """A file the command will write: its folder must exist and it must not be a folder
    (``-`` is standard output). Checked before anything is stored or paid for."""
    from kernel.errors import ConfigError

    if to_stdout(path):
        return path
    if path.is_dir():
        raise ConfigError(f"{option} {path} is a directory: give a file path inside it")
    if not path.parent.is_dir():
        raise ConfigError(f"{option} {path}: the directory {path.parent} does not exist "
                          "(create it first)")
    return path


def amount(value: float, option: str, *, zero: bool = False) -> float:
    """A budget or a duration from the command line: a finite number above zero (or zero
    itself, where adding nothing is allowed) and at most ``MAX_AMOUNT``."""
    from kernel.core.units import MAX_AMOUNT
    from kernel.errors import ConfigError

    low_ok = value >= 0 if zero else value > 0
    if not math.isfinite(value) or not low_ok or value > MAX_AMOUNT:
        floor = "0 or more" if zero else "above 0"
        raise ConfigError(f"{option} must be a number {floor} and at most {MAX_AMOUNT:,.0f}, "
                          f"not {value:g}")
    return value


def input_file(path: Path, option: str) -> Path:
    """A file the command will read: it must exist and be a regular file."""
    from kernel.errors import ConfigError

    if path.is_dir():
        raise ConfigError(f"{option} {path} is a directory: give a file")
    if not path.is_file():
        raise ConfigError(f"{option} {path}: no such file")
    return path


def run_ref(ctx: typer.Context, text: str) -> str:
    """The run a person named: its id with or without ``run:``, a unique prefix, or
    ``latest``."""
    from kernel.lookup import resolve_run

    with store_of(ctx) as store:
        return resolve_run(store, text)


def node_ref(ctx: typer.Context, text: str, label: str) -> str:
    """The ``label`` node a person named by its id or a unique prefix of it."""
    from kernel.lookup import resolve_id

    with store_of(ctx) as store:
        return resolve_id(store, text, label)


def print_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, sort_keys=True, default=str))


def id_table(id_column: str, *columns: str, title: str | None = None) -> Table:
    """A table led by an id a command takes: that column is never cut (give it a short
    unique prefix, ``kernel.lookup.unique_prefixes``); the others wrap to fit 80 columns."""
    table = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                  collapse_padding=True)
    table.add_column(id_column, no_wrap=True)
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


WIDE = 120  # columns from which tables show whole ids


def as_shown(short: dict[str, str]) -> dict[str, str]:
    """Whole ids on a wide terminal; on a narrower one the unique prefixes ``short`` maps
    them to (every command that takes the id takes the prefix)."""
    return {ident: ident if out.width >= WIDE else cut for ident, cut in short.items()}


def split_words(split: dict[str, float]) -> str:
    """A run's spend by who was paid, as words: ``model $0.1420, sandbox $0.0200, tool
    $0.0000``."""
    return ", ".join(f"{part} ${split[part]:.4f}" for part in ("model", "sandbox", "tool"))


def print_table(title: str | None, columns: list[str], rows: list[list[Any]]) -> None:
    table = Table(title=title, show_lines=False)
    for column in columns:
        table.add_column(column, overflow="fold")  # names are shown whole, never cut
    for row in rows:
        table.add_row(*(_cell(v) for v in row))
    out.print(table)


def shown(value: object, *, markup: bool = False) -> str:
    """``kernel.cli.shown.shown``, imported on first use: ``kernel --help`` loads no more
    than it shows."""
    from kernel.cli.shown import shown as render

    return render(value, markup=markup)


def _cell(value: Any) -> str:
    if isinstance(value, dict | list):
        return shown(json.dumps(value, sort_keys=True), markup=True)
    return "" if value is None else shown(value, markup=True)


def print_refusals(refusals: list[dict[str, Any]]) -> None:
    for refusal in refusals:
        out.print(f"[red]refused[/] {shown(refusal['goal'], markup=True)}: "
                  f"{shown(', '.join(refusal['reasons']), markup=True)}: "
                  f"{shown(refusal['detail'], markup=True)}\n  to proceed: "
                  f"{shown(refusal['to_proceed'][0], markup=True)}")
