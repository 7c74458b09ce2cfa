"""What changing a symbol impacts: its callers, closed transitively to a bounded depth,
the files that import what is impacted, and the tests that cover it.

``impacted(X) :- calls(X, Y), modified(Y)`` and its closure, walked one level per
statement (``repo/callers``) so the depth bound is a parameter and each level reads
only its frontier.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernel.codebase.ingest import repo_id
from kernel.codebase.python_facts import module_name
from kernel.codebase.snapshot import checked_root
from kernel.errors import ConfigError
from kernel.repositories import code_graph
from kernel.repositories.code_graph import RelatedRow, SymbolRow, TestRow
from kernel.store.base import GraphStore

DEFAULT_DEPTH = 10


@dataclass(frozen=True)
class Impact:
    changed: list[SymbolRow]
    dependents: list[dict[str, Any]] = field(default_factory=list)  # SymbolRow + depth
    importers: list[str] = field(default_factory=list)
    tests: list[TestRow] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"changed": self.changed, "dependents": self.dependents,
                "importers": self.importers, "tests": self.tests}


def ingested_repo(store: GraphStore, path: Path) -> str:
    """The id of the repository at ``path``, which must have been ingested."""
    repo = repo_id(checked_root(path))
    if not code_graph.known_files(store, repo):
        raise ConfigError(f"{path} has not been ingested; run 'kernel repo ingest {path}' "
                          "first")
    return repo


def impact(store: GraphStore, repo: str, symbol: str, depth: int = DEFAULT_DEPTH) -> Impact:
    """The symbols depending on ``symbol`` (a qualified name, a dotted suffix of one, or a
    bare name), the files importing them, and the tests covering them."""
    changed = code_graph.symbols_named(store, repo, symbol)
    if not changed:
        raise ConfigError(f"no symbol {symbol!r} in the ingested repository; give a "
                          "qualified name such as package.module.function")
    return _closed(store, changed, depth)


def _closed(store: GraphStore, changed: list[SymbolRow], depth: int) -> Impact:
    seen = {s["id"] for s in changed}
    frontier = sorted(seen)
    dependents: list[dict[str, Any]] = []
    for level in range(1, depth + 1):
        found = [row for row in code_graph.callers(store, frontier) if row["id"] not in seen]
        if not found:
            break
        seen.update(row["id"] for row in found)
        dependents.extend({**row, "depth": level} for row in found)
        frontier = [row["id"] for row in found]
    ids = sorted(seen)
    return Impact(changed=changed, dependents=dependents,
                  importers=[r["path"] for r in code_graph.importers(store, ids)],
                  tests=code_graph.covering_tests(store, ids))


def impacted_tests(store: GraphStore, repo: str, paths: list[str],
                   depth: int = DEFAULT_DEPTH) -> list[str]:
    """The pytest node ids (``tests/test_x.py::test_y``, ``...::Case::test_z``) of the
    tests covering what the files in ``paths`` define, or defined when last ingested."""
    changed = code_graph.symbols_in_files(store, repo, paths)
    if not changed:
        return []
    return sorted({node_id(t) for t in _closed(store, changed, depth).tests})


def node_id(test: TestRow) -> str:
    """A test symbol as pytest names it: its file, then its name within its module."""
    module = module_name(test["file"])
    inner = test["qname"].removeprefix(module + ".") if module else test["qname"]
    return f"{test['file']}::{inner.replace('.', '::')}"


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def related(store: GraphStore, repo: str, goal: str) -> list[RelatedRow]:
    """The symbols and files whose names the goal mentions (``parse_config``, ``Parser``,
    ``settings``); dotted names count by each part."""
    words = {w.lower() for w in _WORD.findall(goal)}
    return code_graph.related(store, repo, sorted(words))
