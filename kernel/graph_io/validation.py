"""Pass 1 of an import: check a whole ``kernel-graph`` file before anything is written.

Syntax, ontology, section order (header, nodes, relationships, blobs, footer), node
and blob order, blob hashes, the footer's counts, the source's schema version and,
given the target store, that every relationship joins nodes in the file or already
in the graph. The first problem is raised with its line.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from kernel.errors import GraphFileError
from kernel.graph_io.format import (
    AnyLine,
    BlobLine,
    FooterLine,
    HeaderLine,
    NodeLine,
    RelLine,
    parse_line,
)
from kernel.store.base import GraphStore

WINDOW = 1000
_SECTIONS = ("header", "nodes", "relationships", "blobs")


@dataclass
class FileSummary:
    """What pass 1 learnt about a valid file."""

    digest: str
    header: HeaderLine
    footer: FooterLine
    artifacts: dict[str, str]  # artifact id -> sha256 of its contents


@dataclass
class _Checker:
    path: Path
    max_schema: int | None
    section: str = "header"
    header: HeaderLine | None = None
    footer: FooterLine | None = None
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    last_node: tuple[str, str] = ("", "")
    last_blob: str = ""
    artifacts: dict[str, str] = field(default_factory=dict)
    in_file: set[tuple[str, str]] = field(default_factory=set)
    outside: dict[tuple[str, str], tuple[int, RelLine]] = field(default_factory=dict)

    def fail(self, number: int | None, message: str) -> GraphFileError:
        return GraphFileError(str(self.path), number, message)

    def enter(self, number: int, section: str, what: str) -> None:
        """Sections only move forward."""
        if _SECTIONS.index(section) < _SECTIONS.index(self.section):
            later = {"relationships": "relationship", "blobs": "blob"}[self.section]
            raise self.fail(number, f"{what} lines must come before {later} lines")
        self.section = section

    def check(self, number: int, line: AnyLine) -> None:
        if self.footer is not None:
            raise self.fail(number, "content after the footer line")
        if isinstance(line, HeaderLine):
            self.check_header(number, line)
        elif self.header is None:
            raise self.fail(number, 'the first line must be the header {"kind":"header",'
                                    '"format":"kernel-graph","version":2,...}')
        elif isinstance(line, NodeLine):
            self.check_node(number, line)
        elif isinstance(line, RelLine):
            self.check_rel(number, line)
        elif isinstance(line, BlobLine):
            self.check_blob(number, line, self.header)
        else:
            self.footer = line

    def check_header(self, number: int, line: HeaderLine) -> None:
        if self.header is not None:
            raise self.fail(number, "a second header line")
        if self.max_schema is not None and line.source_schema > self.max_schema:
            raise self.fail(number, f"the file comes from a graph at schema "
                                    f"v{line.source_schema}; this kernel knows up to "
                                    f"v{self.max_schema}: upgrade the kernel to import it")
        self.header = line
        self.section = "nodes"

    def check_node(self, number: int, line: NodeLine) -> None:
        self.enter(number, "nodes", "node")
        ident = (line.label, line.id)
        if ident <= self.last_node:
            raise self.fail(number, f"node {line.label}:{line.id} is out of order or repeated "
                                    "(nodes are sorted by label, then id)")
        self.last_node = ident
        self.in_file.add(ident)
        self.counts["nodes"] += 1
        if line.label == "Artifact" and isinstance(line.props.get("sha256"), str):
            self.artifacts[line.id] = str(line.props["sha256"])

    def check_rel(self, number: int, line: RelLine) -> None:
        self.enter(number, "relationships", "relationship")
        self.counts["relationships"] += 1
        for end in (line.from_, line.to):
            if (end.label, end.id) not in self.in_file:
                self.outside.setdefault((end.label, end.id), (number, line))

    def check_blob(self, number: int, line: BlobLine, header: HeaderLine) -> None:
        if header.version < 2:
            raise self.fail(number, "blob lines need a version 2 header")
        self.enter(number, "blobs", "blob")
        if line.sha256 <= self.last_blob:
            raise self.fail(number, f"blob {line.sha256[:12]} is out of order or repeated "
                                    "(blobs are sorted by sha256, each once)")
        self.last_blob = line.sha256
        self.counts["blobs"] += 1

    def finish(self, number: int, digest: str) -> FileSummary:
        header, footer = self.header, self.footer
        if footer is None or header is None:
            raise self.fail(number or None, "the file ends without a footer line: it is "
                                            "truncated")
        nodes, rels, blobs = (self.counts[k] for k in ("nodes", "relationships", "blobs"))
        if (footer.nodes, footer.relationships) != (nodes, rels):
            raise self.fail(number, f"footer says {footer.nodes} nodes and "
                                    f"{footer.relationships} relationships, the file holds "
                                    f"{nodes} and {rels}")
        if header.version >= 2 and footer.blobs != blobs:
            raise self.fail(number, f"footer says {footer.blobs} blobs, the file holds {blobs}")
        if header.version < 2 and footer.blobs is not None:
            raise self.fail(number, "a version 1 footer has no 'blobs' count")
        return FileSummary(digest, header, footer, self.artifacts)


def validate_file(path: Path, store: GraphStore | None = None,
                  max_schema: int | None = None) -> FileSummary:
    """Check every line (and, given the target ``store``, that each relationship's
    endpoints exist in the file or the store); nothing is written."""
    if path.is_dir():
        raise GraphFileError(str(path), None, "is a directory, not a kernel-graph file")
    if not path.is_file():
        raise GraphFileError(str(path), None, "no such file")
    checker = _Checker(path, max_schema)
    digest = hashlib.sha256()
    number = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            digest.update(raw)
            checker.check(number, _parse(path, number, raw))
    summary = checker.finish(number, digest.hexdigest())
    if store is not None:
        _require_outside_endpoints(store, path, checker.outside)
    return summary


def _require_outside_endpoints(store: GraphStore, path: Path,
                               outside: dict[tuple[str, str], tuple[int, RelLine]]) -> None:
    """Endpoints the file does not hold must already be in the graph; the first
    missing one (by line) is named before anything is written."""
    by_label: dict[str, list[str]] = defaultdict(list)
    for label, ident in outside:
        by_label[label].append(ident)
    missing: list[tuple[int, RelLine, str, str]] = []
    for label, ids in by_label.items():
        for start in range(0, len(ids), WINDOW):
            chunk = sorted(ids[start:start + WINDOW])
            found = {row["id"] for row in store.run("graph_io/existing_ids", {"ids": chunk},
                                                    {"label": label})}
            missing += [(*outside[(label, i)], label, i) for i in chunk if i not in found]
    if missing:
        number, line, label, ident = min(missing, key=lambda m: m[0])
        raise GraphFileError(
            str(path), number,
            f"relationship {line.type} refers to {label} {ident!r}, which is neither in the "
            "file nor in the graph; nothing was imported",
        )


def _parse(path: Path, number: int, raw: bytes) -> AnyLine:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise GraphFileError(str(path), number, "not UTF-8 text") from None
    if not text.strip():
        raise GraphFileError(str(path), number, "empty line")
    try:
        return parse_line(text)
    except ValueError as exc:
        raise GraphFileError(str(path), number, str(exc)) from None
