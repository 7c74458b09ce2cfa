"""What CLI users expect of any command: words, not Python types, in help; global
options accepted after the subcommand too.

Typer shows an option's Python type (``<bool>``, ``<list[str]>``) and an argument
as ``{goal}``; people read ``TEXT``, ``N``, ``PATH`` and ``GOAL``. Rather than a
metavar on each of the many options, the built command tree is walked once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args, get_origin

from typer.core import TyperArgument, TyperGroup, TyperOption

_GLOBAL_WITH_VALUE = ("--graph", "--data-dir")
_GLOBAL_FLAGS = ("--debug", "--no-debug")
_WORDS = {int: "N", float: "NUMBER", str: "TEXT", Path: "PATH"}


def humanize(command: Any) -> Any:
    """Give every parameter of the tree a metavar in words (flags show none)."""
    for param in command.params:
        if param.metavar is not None:
            continue
        if isinstance(param, TyperArgument):
            _plain_argument(param)
        elif isinstance(param, TyperOption):
            param.metavar = "" if param.is_flag else _word(param.type_descriptor.annotation)
    _plain_help_option(command)
    if isinstance(command, TyperGroup):
        for sub in command.commands.values():
            humanize(sub)
    return command


def _plain_help_option(command: Any) -> None:
    """The help option is made per invocation; it too shows no type."""
    make = command.get_help_option

    def get_help_option(ctx: Any) -> Any:
        option = make(ctx)
        if option is not None:
            option.metavar = ""
        return option

    command.get_help_option = get_help_option


def _plain_argument(param: TyperArgument) -> None:
    """``GOAL`` in the usage line and the arguments panel (typer writes ``{goal}`` and
    the Python type); optional arguments keep their brackets."""
    name = (param.name or "value").upper()
    param.metavar = name
    shown = name if param.required else f"[{name}]"
    shown += "..." if param.nargs != 1 else ""
    param._usage_display_name = lambda: shown  # type: ignore[method-assign]
    param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]


def _word(annotation: Any) -> str:
    if get_origin(annotation) is list:
        return _word(get_args(annotation)[0]) + " (repeatable)"
    return _WORDS.get(annotation, "VALUE")


def hoist_global_options(argv: list[str], command: Any) -> list[str]:
    """Move ``--graph X``, ``--data-dir X`` and ``--debug`` typed after the subcommand to
    the front, where the group parses them (``kernel status --data-dir D`` works)."""
    if not argv or argv[0].startswith("-") or argv[0] not in command.list_commands(None):
        return argv
    front: list[str] = []
    rest: list[str] = []
    items = iter(argv)
    for item in items:
        if item == "--":
            rest += [item, *items]
            break
        name, eq, _ = item.partition("=")
        if name in _GLOBAL_WITH_VALUE:
            front.append(item)
            if not eq:
                front.append(next(items, ""))
        elif item in _GLOBAL_FLAGS:
            front.append(item)
        else:
            rest.append(item)
    return front + rest

