"""The files of an assembled deliverable: every part's tests and files kept, none lost to
another of the same name.

Parts are written apart, so they often name their files alike (every part's tests in
``test_main.py``). A test file is kept under its own name when no other source gives a
different text for it; otherwise each source's copy is renamed with that source's tag
(``test_main.py`` of the part "parse the rows" becomes ``test_main__parse_the_rows.py``),
so every test runs on the whole. Other files are code or data the deliverable reads by
name: one the assembly gives is the composed version and wins; two parts giving
different texts for one the assembly does not give is a collision the assembly must
settle, refused with both names.

>>> tagged([("a", {"t.py": "x"}), ("b", {"t.py": "y"}), ("c", {"t.py": "x"}), ("d", {})])
({'t__a.py': 'x', 't__b.py': 'y', 't__c.py': 'x'}, None)
>>> tagged([("a", {"t.py": "x"}), ("b", {"t.py": "x"})])
({'t.py': 'x'}, None)
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

Source = tuple[str, dict[str, str]]  # (tag, path -> text)

TAG_CHARS = 40


def tag_of(summary: str, taken: set[str]) -> str:
    """A file-name-safe tag for a part, from its summary, unique among ``taken``."""
    base = re.sub(r"[^a-z0-9]+", "_", summary.lower()).strip("_")[:TAG_CHARS].strip("_")
    base = base or "part"
    tag, n = base, 1
    while tag in taken:
        n += 1
        tag = f"{base}_{n}"
    taken.add(tag)
    return tag


def renamed(path: str, tag: str) -> str:
    """``path`` with ``__tag`` before its suffix (a test file stays a test file)."""
    pure = PurePosixPath(path)
    return str(pure.with_name(f"{pure.stem}__{tag}{pure.suffix}"))


def tagged(sources: list[Source]) -> tuple[dict[str, str], str | None]:
    """Every source's files in one namespace: a path kept when all sources that give it
    agree, else each copy renamed with its source's tag; (files, a clash a rename would
    itself cause, or None)."""
    texts: dict[str, set[str]] = {}
    for _, files in sources:
        for path, text in files.items():
            texts.setdefault(path, set()).add(text)
    merged: dict[str, str] = {}
    for tag, files in sources:
        for path, text in sorted(files.items()):
            name = path if len(texts[path]) == 1 else renamed(path, tag)
            if name in merged and merged[name] != text:
                return merged, f"{path!r} renamed for {tag!r} is {name!r}, which another " \
                               "source already gives"
            merged[name] = text
    return merged, None


def settled(assembly: dict[str, str], parts: list[Source]) -> tuple[dict[str, str], str | None]:
    """The deliverable's other files: the assembly's, then every part's it does not give;
    (files, the first collision between two parts the assembly left open, or None)."""
    files = dict(assembly)
    given: dict[str, str] = {}
    for tag, part in parts:
        for path, text in sorted(part.items()):
            if path in assembly:
                continue
            if path in files and files[path] != text:
                return files, (f"parts {given[path]!r} and {tag!r} both give {path!r} with "
                               "different texts: the assembly must give the one to keep")
            files[path] = text
            given.setdefault(path, tag)
    return files, None
