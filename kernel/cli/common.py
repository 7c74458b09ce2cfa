"""Helpers shared by the CLI commands."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from kernel.settings import KernelSettings
    from kernel.store import GraphStore

# Settings and the store load when a command needs them, not for `kernel --help`.

out = Console()
err_console = Console(stderr=True)


def settings_of(ctx: typer.Context) -> KernelSettings:
    from kernel.settings import KernelSettings

    return ctx.obj if isinstance(ctx.obj, KernelSettings) else KernelSettings()


@contextmanager
def store_of(ctx: typer.Context) -> Iterator[GraphStore]:
    from kernel.store import open_store

    store = open_store(settings_of(ctx))
    try:
        yield store
    finally:
        store.close()


def run_id_arg(value: str) -> str:
    """A run id as typed: with or without its ``run:`` prefix."""
    return value if value.startswith("run:") else f"run:{value}"


def print_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, sort_keys=True, default=str))


def print_table(title: str | None, columns: list[str], rows: list[list[Any]]) -> None:
    table = Table(title=title, show_lines=False)
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*(_cell(v) for v in row))
    out.print(table)


def _cell(value: Any) -> str:
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return "" if value is None else str(value)


def print_refusals(refusals: list[dict[str, Any]]) -> None:
    for refusal in refusals:
        out.print(f"[red]refused[/] {refusal['goal']}: {', '.join(refusal['reasons'])}: "
                  f"{refusal['detail']}\n  to proceed: {refusal['to_proceed'][0]}")
