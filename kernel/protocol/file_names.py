"""What a file name in a proposal may be: the names come from a model (or a script) and
become paths in a sandbox workspace and in the directory a person saves into.

A name is a relative POSIX path, written the way ``PurePosixPath`` writes it (no empty,
``.`` or ``..`` part, no trailing slash), of printable characters without a backslash or
a colon, at most ``MAX_DEPTH`` parts of at most ``MAX_PART_BYTES`` bytes each and
``MAX_PATH_CHARS`` in all. Nothing in it may hide or reorder what a person reads: no
control or format character (bidi overrides, zero-width spaces and joiners) and no line
or paragraph separator. No file may also be the folder of another, and no two names may
be one name on a file system that normalizes Unicode or ignores case (``café.py``
composed and decomposed, ``Main.py`` beside ``main.py``).

>>> problems(["main.py", "pkg/mod.py"])
[]
>>> problems(["d", "d/b.py"])
["'d' is a file and also the folder of 'd/b.py'"]
>>> problems(["Main.py", "main.py"])
["'Main.py' and 'main.py' are one name where case is ignored or Unicode normalized"]
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from pathlib import PurePosixPath

MAX_PATH_CHARS = 240
MAX_PART_BYTES = 200  # below NAME_MAX (255) with room for a temporary name beside it
MAX_DEPTH = 12
FAILURE_MODE = "invalid_file_name"
# control, format (bidi controls, zero-width characters), line and paragraph separators,
# surrogates
_HIDDEN = ("Cc", "Cf", "Zl", "Zp", "Cs")


def problem_with(name: str) -> str | None:
    """Why ``name`` cannot be a file of an output, or None."""
    shown = repr(name[:60] + ("…" if len(name) > 60 else ""))
    if not name:
        return "a file name is empty"
    if len(name) > MAX_PATH_CHARS:
        return f"{shown} is {len(name)} characters long (at most {MAX_PATH_CHARS})"
    bad = sorted({c for c in name if c in "\\:" or unicodedata.category(c) in _HIDDEN})
    if bad:
        return (f"{shown} holds {', '.join(_named(c) for c in bad)}, which a file name "
                "may not")
    pure = PurePosixPath(name)
    if pure.is_absolute() or str(pure) != name or ".." in pure.parts or "." in pure.parts:
        return f"{shown} is not a plain relative path (no leading '/', '.', '..' or '//')"
    if len(pure.parts) > MAX_DEPTH:
        return f"{shown} is {len(pure.parts)} folders deep (at most {MAX_DEPTH})"
    long = [p for p in pure.parts if len(p.encode()) > MAX_PART_BYTES]
    if long:
        return f"{shown} has a part of {len(long[0].encode())} bytes (at most {MAX_PART_BYTES})"
    return None


def problems(names: Iterable[str]) -> list[str]:
    """Every problem with a set of names, each name's own first, then clashes."""
    chosen = sorted(names)
    found = [p for p in map(problem_with, chosen) if p is not None]
    if found:
        return found
    files: dict[str, str] = {}
    for name in chosen:
        files.setdefault(_folded(name), name)
    for name in chosen:
        other = files[_folded(name)]
        if other != name:
            found.append(f"{other!a} and {name!a} are one name where case is "
                         "ignored or Unicode normalized")
        for folder in PurePosixPath(name).parents:
            if _folded(str(folder)) in files:
                found.append(f"{files[_folded(str(folder))]!r} is a file and also the folder "
                             f"of {name!r}")
    return found


def _folded(name: str) -> str:
    """One key for the names a case-insensitive or normalizing file system confuses."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def _named(char: str) -> str:
    """A character as a person can read it in an error: ``'\\u202e'``."""
    return repr(char) if char.isprintable() or ord(char) < 0x80 else f"'\\u{ord(char):04x}'"
