"""Reading a file a person named (a script, a tool and its code, an answer, a suggestion).

Whatever the path turns out to be (missing, a directory, a device such as /dev/zero,
far too large, not UTF-8 text, unreadable), the person gets one line naming it, raised
as the caller's own error type; nothing is read past the size limit.
"""

from __future__ import annotations

import functools
import os
import stat
from pathlib import Path
from typing import Any

from kernel.errors import ConfigError, KernelError

MAX_TEXT_BYTES = 4 * 1024 * 1024  # far past any script, tool or answer written by hand


def read_user_text(path: Path, where: str, *, max_bytes: int = MAX_TEXT_BYTES,
                   error: type[KernelError] = ConfigError) -> str:
    """The UTF-8 text of ``path``; ``where`` names it in the message (``--script F``)."""
    try:
        # non-blocking, so that a named pipe is refused rather than waited on
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        kind = os.fstat(fd).st_mode
        if not stat.S_ISREG(kind):
            os.close(fd)
            what = "a directory" if stat.S_ISDIR(kind) else "not a regular file"
            raise error(f"{where} is {what}: give a file")
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise error(f"{where}: no such file") from None
    except IsADirectoryError:
        raise error(f"{where} is a directory: give a file") from None
    except OSError as exc:
        raise error(f"{where} cannot be read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise error(f"{where} is larger than {max_bytes:,} bytes, the most read from it")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{where} is not UTF-8 text (byte {exc.start})") from None


MAX_YAML_NODES = 100_000  # values once every alias is expanded: far past any hand-written file


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` for a file a person named, refusing what would take minutes or
    the stack: aliases that expand past ``MAX_YAML_NODES`` values (a 1 KB "billion laughs"
    document), an alias inside the node it names, and nesting deeper than the parser can
    recurse. Each refusal is a ``yaml.YAMLError`` with one line saying why."""
    import yaml

    try:
        return yaml.load(text, Loader=_counting_loader())  # a SafeLoader underneath
    except RecursionError:
        raise yaml.YAMLError("the document is nested too deep to read") from None


def _counted(node: Any) -> None:
    """Refuse ``node`` if its expansion is too large or refers to itself; walked without
    recursion, each node (shared through aliases) counted once with its expanded size."""
    import yaml

    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[Any, bool]] = [(node, False)]
    while stack:
        here, finished = stack.pop()
        key = id(here)
        if finished:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in _children(here))
            if sizes[key] > MAX_YAML_NODES:
                raise yaml.YAMLError(f"its aliases expand to more than {MAX_YAML_NODES:,} "
                                     "values; write the values out, or use fewer aliases")
        elif key not in sizes:
            if key in open_nodes:
                raise yaml.YAMLError("an alias refers to a value that holds it")
            open_nodes.add(key)
            stack.append((here, True))
            stack.extend((c, False) for c in _children(here) if id(c) not in sizes)


def _children(node: Any) -> list[Any]:
    import yaml

    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


@functools.cache
def _counting_loader() -> Any:
    import yaml

    class CountingLoader(yaml.SafeLoader):
        """The safe loader, counting the expanded document before building it."""

        def get_single_node(self) -> Any:
            node = super().get_single_node()
            if node is not None:
                _counted(node)
            return node

    return CountingLoader
