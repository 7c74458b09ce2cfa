"""Taking a repository into the graph, incrementally by content hash.

The snapshot is read and checked whole before the first write, so a refused repository
leaves the graph as it was. Files whose hash is unchanged since the last ingest are
neither parsed nor written; a changed file's old symbols, chunks and imports are
replaced, and the calls and imports of unchanged files into it are linked again. The
symbols written are embedded (``symbol_search``) for the related-files query.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from embeddings.encoder import Encoder
from kernel.codebase.python_facts import ModuleFacts, module_name, python_facts
from kernel.codebase.snapshot import Caps, Snapshot, SnapshotFile, take_snapshot
from kernel.codebase.symbol_search import code_encoder, embed_symbols
from kernel.repositories import code_graph
from kernel.settings import KernelSettings
from kernel.store.base import GraphStore

CHUNK_LINES = 200  # a text file longer than this is kept as chunks of this many lines


@dataclass(frozen=True)
class IngestReport:
    repo: str
    root: str
    tree_hash: str
    seen: int
    changed: int
    parsed: int
    removed: int
    embedded: int = 0  # symbols the model ran on (the others' text was embedded before)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def repo_id(root: Path) -> str:
    return "repository:" + hashlib.sha256(str(root).encode()).hexdigest()[:16]


def caps_of(settings: KernelSettings) -> Caps:
    return Caps(settings.repo_max_files, settings.repo_max_bytes, settings.repo_max_file_bytes)


def _chunks(repo: str, file_id: str, f: SnapshotFile) -> list[dict[str, Any]]:
    assert f.text is not None
    lines = f.text.splitlines(keepends=True)
    rows = []
    for start in range(0, len(lines), CHUNK_LINES):
        end = min(start + CHUNK_LINES, len(lines))
        rows.append({"file_id": file_id, "id": f"chunk:{repo}:{f.path}:{start + 1}", "props": {
            "id": f"chunk:{repo}:{f.path}:{start + 1}", "repo": repo, "file": f.path,
            "start_line": start + 1, "end_line": end, "text": "".join(lines[start:end]),
            "caption": f"{f.path}:{start + 1}-{end}"}})
    return rows


def _file_row(repo: str, f: SnapshotFile, facts: ModuleFacts | None) -> dict[str, Any]:
    chunked = f.text is not None and f.text.count("\n") > CHUNK_LINES
    props = {"id": f"file:{repo}:{f.path}", "repo": repo, "path": f.path, "sha256": f.sha256,
             "size": f.size, "language": f.language, "is_test": f.is_test, "binary": f.binary,
             "oversized": f.oversized, "stem": Path(f.path).stem, "caption": f.path,
             "text": None if chunked else f.text,
             "module": facts.module if facts else None,
             "imports": list(facts.imports) if facts else [],
             "parse_error": facts.parse_error if facts else None}
    return {"repo": repo, "id": props["id"], "props": props}


def _symbol_rows(repo: str, f: SnapshotFile, facts: ModuleFacts) -> list[dict[str, Any]]:
    file_id = f"file:{repo}:{f.path}"
    return [{"file_id": file_id, "id": f"symbol:{repo}:{f.path}:{s.qname}", "props": {
        "id": f"symbol:{repo}:{f.path}:{s.qname}", "repo": repo, "file": f.path,
        "kind": s.kind, "name": s.name, "qname": s.qname, "signature": s.signature,
        "line": s.line, "end_line": s.end_line, "calls": s.calls, "in_test": f.is_test,
        "doc": s.doc, "caption": s.qname}} for s in facts.symbols]


@dataclass
class _Parsed:
    files: list[dict[str, Any]]
    symbols: list[dict[str, Any]]
    chunks: list[dict[str, Any]]
    qnames: list[str]
    parsed: int = 0


def _parse(repo: str, changed: list[SnapshotFile]) -> _Parsed:
    out = _Parsed([], [], [], [])
    for f in changed:
        facts = None
        if f.language == "python" and f.text is not None:
            facts = python_facts(f.path, f.text, f.is_test)
            out.parsed += 1
            out.symbols.extend(_symbol_rows(repo, f, facts))
            out.qnames.extend(s.qname for s in facts.symbols)
        out.files.append(_file_row(repo, f, facts))
        if f.text is not None and f.text.count("\n") > CHUNK_LINES:
            out.chunks.extend(_chunks(repo, out.files[-1]["id"], f))
    return out


def ingest_snapshot(store: GraphStore, snapshot: Snapshot, encoder: Encoder) -> IngestReport:
    """Write what changed since the repository was last ingested, and embed its symbols."""
    repo = repo_id(snapshot.root)
    before = code_graph.known_files(store, repo)
    current = {f.path for f in snapshot.files}
    changed = [f for f in snapshot.files if before.get(f.path) != f.sha256]
    removed = sorted(set(before) - current)
    paths = [f.path for f in changed]
    parsed = _parse(repo, changed)
    code_graph.store_repository(store, repo, str(snapshot.root), snapshot.tree_hash,
                                len(snapshot.files))
    code_graph.remove_files(store, repo, removed)
    code_graph.clear_parts(store, repo, [p for p in paths if p in before])
    code_graph.store_parts(store, parsed.files, parsed.symbols, parsed.chunks)
    embedded = embed_symbols(store, encoder, parsed.symbols)
    if paths or removed:
        code_graph.link(store, repo, paths, parsed.qnames, incremental=bool(before))
    return IngestReport(repo=repo, root=str(snapshot.root), tree_hash=snapshot.tree_hash,
                        seen=len(snapshot.files), changed=len(changed), parsed=parsed.parsed,
                        removed=len(removed), embedded=embedded)


def ingest(store: GraphStore, path: Path, settings: KernelSettings) -> IngestReport:
    """Snapshot ``path`` (refusing bad input before any write), then ingest it."""
    return ingest_snapshot(store, take_snapshot(path, caps_of(settings)),
                           code_encoder(settings.data_dir))


__all__ = ["IngestReport", "ingest", "ingest_snapshot", "module_name", "repo_id"]
