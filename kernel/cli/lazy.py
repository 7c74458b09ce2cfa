"""Subcommands imported when they run, not when the ``kernel`` command starts.

Importing every command module up front costs more than `kernel status` itself: the
library API, its pydantic models and the planner's CLI come in with them. The group
below knows each subcommand by its module, its attribute and the one line `kernel
--help` lists for it, so the top-level help needs no import at all and a command loads
only its own module. ``tests/test_cli_startup.py`` checks that each listed line is the
one the loaded command would show.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any, ClassVar

import typer
from typer import _click
from typer.core import TyperCommand, TyperGroup
from typer.models import CommandInfo, TyperInfo

from kernel.cli.conventions import humanize


@dataclass(frozen=True)
class Lazy:
    """Where a subcommand lives: a command function, or a ``typer.Typer`` of commands."""

    module: str
    attr: str
    summary: str


class LazyGroup(TyperGroup):
    """A typer group whose subcommands, named in ``lazy``, are built on first use."""

    lazy: ClassVar[dict[str, Lazy]] = {}
    _listing = False

    def list_commands(self, ctx: _click.Context) -> list[str]:
        return [*self.commands, *(name for name in self.lazy if name not in self.commands)]

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        entry = self.lazy.get(cmd_name)
        if entry is None:
            return None
        if self._listing:  # the help lists a line per command: nothing to import for it
            return TyperCommand(cmd_name, help=entry.summary)
        command = self.load(cmd_name)
        self.commands[cmd_name] = command
        return command

    def load(self, name: str) -> _click.Command:
        """Import the subcommand's module and build it as ``add_typer``/``command`` would."""
        entry = self.lazy[name]
        target: Any = getattr(importlib.import_module(entry.module), entry.attr)
        mode = self.rich_markup_mode
        command: _click.Command
        if isinstance(target, typer.Typer):
            command = typer.main.get_group_from_info(
                TyperInfo(target, name=name), pretty_exceptions_short=True,
                suggest_commands=True, rich_markup_mode=mode)
        else:
            command = typer.main.get_command_from_info(
                CommandInfo(name=name, callback=target), pretty_exceptions_short=True,
                rich_markup_mode=mode)
        humanized: _click.Command = humanize(command)
        return humanized

    def format_help(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def resolve_command(
        self, ctx: _click.Context, args: list[str]
    ) -> tuple[str | None, _click.Command | None, list[str]]:
        """As typer's, with "did you mean" drawn from every subcommand, loaded or not."""
        try:
            return self._click_resolve_command(ctx, args)
        except _click.exceptions.UsageError as exc:
            matches = get_close_matches(args[0], self.list_commands(ctx)) if args else []
            if matches:
                exc.message = (exc.message.rstrip(".") + ". Did you mean "
                               + ", ".join(repr(m) for m in matches) + "?")
            raise
