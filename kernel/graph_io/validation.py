"""Pass 1 of an import: check a whole ``kernel-graph`` file before anything is written.

Syntax, ontology, section order (header, nodes, relationships, blobs, footer), node
and blob order, blob hashes, the footer's counts, the source's schema version and,
given the target store, that every relationship joins nodes in the file or already
in the graph. The first problem is raised with its line.
"""

from __future__ import annotations

import hashlib
import sqlite3
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from kernel.core.artifacts import is_sha256
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
from kernel.protocol.json_depth import too_deep
from kernel.repositories import graph_export
from kernel.store.base import GraphStore

# A line is an object holding properties whose values are scalars or lists of them: a
# few levels. Past this, a line is refused before it is parsed.
MAX_LINE_DEPTH = 32

WINDOW = 1000
BLOCK = 1000  # lines per block digest
_SECTIONS = ("header", "nodes", "relationships", "blobs")


@dataclass
class FileSummary:
    """What pass 1 learnt about a valid file."""

    digest: str
    header: HeaderLine
    footer: FooterLine
    artifacts: dict[str, str]  # artifact id -> sha256 of its contents
    # sha256 of each block of BLOCK lines as checked: pass 2 parses a block without
    # checking its lines again only when the block still has these bytes.
    blocks: list[bytes] = field(default_factory=list)


class _NodeIndex:
    """The file's nodes by (label, id), kept in a scratch SQLite file rather than a set,
    so checking a file's relationships takes the same memory at 10,000 elements as at
    10 million. Nodes precede relationships in a valid file, so each is looked up once
    every node before it is indexed; lookups go in batches, and endpoints not found are
    noted in line order, each with the first line that needs it."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path)
        self.db.execute("PRAGMA journal_mode = OFF")
        self.db.execute("PRAGMA synchronous = OFF")
        self.db.execute("CREATE TABLE node (label TEXT, id TEXT, PRIMARY KEY (label, id)) "
                        "WITHOUT ROWID")
        self.db.execute("CREATE TABLE wanted (seq INTEGER PRIMARY KEY, label TEXT, id TEXT)")
        self.nodes: list[tuple[str, str]] = []
        self.wanted: list[tuple[int, RelLine, str, str]] = []

    def __enter__(self) -> _NodeIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.db.close()

    def add(self, ident: tuple[str, str]) -> None:
        self.nodes.append(ident)
        if len(self.nodes) >= WINDOW:
            self._store_nodes()

    def want(self, number: int, line: RelLine,
             outside: dict[tuple[str, str], tuple[int, RelLine]]) -> None:
        """Both endpoints of ``line`` must be in the file or, later, in the graph."""
        self.wanted.extend((number, line, end.label, end.id) for end in (line.from_, line.to))
        if len(self.wanted) >= 2 * WINDOW:
            self.settle(outside)

    def settle(self, outside: dict[tuple[str, str], tuple[int, RelLine]]) -> None:
        """Note the endpoints asked for so far that no node line holds."""
        self._store_nodes()
        if not self.wanted:
            return
        self.db.execute("DELETE FROM wanted")
        self.db.executemany("INSERT INTO wanted VALUES (?, ?, ?)",
                            [(n, label, ident) for n, (_, _, label, ident)
                             in enumerate(self.wanted)])
        missing = [int(row[0]) for row in self.db.execute(
            "SELECT w.seq FROM wanted w LEFT JOIN node n ON n.label = w.label AND n.id = w.id "
            "WHERE n.id IS NULL ORDER BY w.seq")]
        for seq in missing:
            number, line, label, ident = self.wanted[seq]
            outside.setdefault((label, ident), (number, line))
        self.wanted = []

    def _store_nodes(self) -> None:
        if self.nodes:
            self.db.executemany("INSERT OR IGNORE INTO node VALUES (?, ?)", self.nodes)
            self.nodes = []


@dataclass
class _Checker:
    path: Path
    max_schema: int | None
    in_file: _NodeIndex
    section: str = "header"
    header: HeaderLine | None = None
    footer: FooterLine | None = None
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    last_node: tuple[str, str] = ("", "")
    last_blob: str = ""
    artifacts: dict[str, str] = field(default_factory=dict)
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
        if line.label == "Artifact":
            if not is_sha256(line.props.get("sha256")):
                raise self.fail(number, f"artifact {line.id}: sha256 must be 64 lowercase hex "
                                        "digits (it names the stored contents)")
            self.artifacts[line.id] = str(line.props["sha256"])

    def check_rel(self, number: int, line: RelLine) -> None:
        self.enter(number, "relationships", "relationship")
        self.counts["relationships"] += 1
        self.in_file.want(number, line, self.outside)

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
        self.in_file.settle(self.outside)
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
    digest = hashlib.sha256()
    blocks: list[bytes] = []
    block = hashlib.sha256()
    number = 0
    with tempfile.TemporaryDirectory(prefix="kernel-import-") as scratch, \
            _NodeIndex(Path(scratch) / "nodes.sqlite") as index:
        checker = _Checker(path, max_schema, in_file=index)
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                digest.update(raw)
                block.update(raw)
                if number % BLOCK == 0:
                    blocks.append(block.digest())
                    block = hashlib.sha256()
                checker.check(number, _parse(path, number, raw))
        if number % BLOCK:
            blocks.append(block.digest())
        summary = checker.finish(number, digest.hexdigest())
        summary.blocks = blocks
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
            found = graph_export.existing_ids(store, label, chunk)
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
    deep = too_deep(raw, MAX_LINE_DEPTH)
    if deep is not None:  # measured first: the parser would recurse once per level
        raise GraphFileError(str(path), number, f"the line cannot be read: {deep}")
    try:
        return parse_line(text)
    except ValueError as exc:
        raise GraphFileError(str(path), number, str(exc)) from None
