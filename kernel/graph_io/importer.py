"""Import a ``kernel-graph`` file: validate it whole, then merge it in resumable batches.

Pass 1 reads every line and checks it (syntax, ontology, section order, the
footer's counts, and that every relationship joins nodes in the file or already
in the graph) without writing anything, so a malformed file imports nothing and
the error names its line. Pass 2 merges windows of lines, one statement per
(label) or (type, source label, target label) group, each atomic; relationship
endpoints are checked before their window is written. After each window a
checkpoint keyed by the file's hash records the last line, so an interrupted
import resumes where it stopped; merging by id makes any overlap harmless.

Blob lines (the artifacts' contents, version 2) are checked against their sha256
in pass 1 and written to the blob store in pass 2; the report names the artifacts
whose bytes the deployment still lacks afterwards, and the source's schema version
(``kernel.schema.seed_graph`` brings the graph to the kernel's).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernel.core.artifacts import BlobStore
from kernel.errors import GraphFileError
from kernel.graph_io.format import BlobLine, NodeLine, RelLine, parse_line
from kernel.graph_io.validation import validate_file
from kernel.store.base import GraphStore
from kernel.store.ontology import vector_for

WINDOW = 1000


@dataclass
class ImportReport:
    nodes: int
    relationships: int
    resumed_from_line: int
    digest: str
    blobs: int = 0
    # Artifacts in the file whose bytes this deployment lacks (exported without contents).
    lacking_contents: list[str] = field(default_factory=list)
    source_schema: int = 0
    schema_to: int = 0


def import_graph(store: GraphStore, path: Path, window: int = WINDOW, *,
                 blobs: BlobStore | None = None, max_schema: int | None = None) -> ImportReport:
    """Merge the file at ``path``; with ``blobs``, store the contents it carries. A file
    from a graph at a schema above ``max_schema`` is refused before anything is written."""
    path = Path(path)
    summary = validate_file(path, store, max_schema)
    digest, footer = summary.digest, summary.footer
    checkpoint_id = f"import:{digest}"
    rows = store.run("graph_io/get_checkpoint", {"id": checkpoint_id})
    resume_after = int(rows[0]["line"]) if rows and not rows[0]["done"] else 0

    pending: list[tuple[int, NodeLine | RelLine]] = []
    last_line = resume_after
    for number, line in _elements(path):
        if number <= resume_after:
            continue
        if isinstance(line, BlobLine):
            if blobs is not None:
                blobs.put(line.content())
            continue
        pending.append((number, line))
        last_line = number
        if len(pending) >= window:
            _write_window(store, path, pending)
            _checkpoint(store, checkpoint_id, path, last_line, done=False)
            pending = []
    if pending:
        _write_window(store, path, pending)
    _checkpoint(store, checkpoint_id, path, last_line, done=True)
    report = ImportReport(footer.nodes, footer.relationships, resume_after, digest,
                          blobs=footer.blobs or 0, source_schema=summary.header.source_schema)
    if blobs is not None:
        report.lacking_contents = sorted(
            ident for ident, sha in summary.artifacts.items() if not blobs.path(sha).is_file())
    return report


def _elements(path: Path) -> Iterator[tuple[int, NodeLine | RelLine | BlobLine]]:
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            line = parse_line(raw.decode("utf-8"))
            if isinstance(line, NodeLine | RelLine | BlobLine):
                yield number, line


def _write_window(store: GraphStore, path: Path,
                  window: list[tuple[int, NodeLine | RelLine]]) -> None:
    node_groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    rel_groups: dict[tuple[str, str, str, bool], list[tuple[int, RelLine]]] = defaultdict(list)
    for number, line in window:
        if isinstance(line, NodeLine):
            node_groups[line.label].append(_node_row(line))
        else:
            rel_groups[(line.type, line.from_.label, line.to.label, line.key is not None)].append(
                (number, line))
    for label, rows in node_groups.items():
        vector = vector_for(label)
        if vector is None:
            store.run_batched("graph_io/merge_nodes", rows, identifiers={"label": label},
                              batch_size=len(rows))
        else:
            store.run_batched("graph_io/merge_nodes_vector", rows,
                              identifiers={"label": label, "prop": vector.prop},
                              batch_size=len(rows))
    for (rel_type, from_label, to_label, keyed), lines in rel_groups.items():
        _require_endpoints(store, path, lines)
        rows = [{"from_id": ln.from_.id, "to_id": ln.to.id, "key": ln.key, "props": ln.props}
                for _, ln in lines]
        name = "graph_io/merge_keyed_relationships" if keyed else "graph_io/merge_relationships"
        if not keyed:
            for row in rows:
                del row["key"]
        store.run_batched(
            name, rows, batch_size=len(rows),
            identifiers={"type": rel_type, "from_label": from_label, "to_label": to_label},
            dedupe=lambda r: (r["from_id"], r["to_id"], r.get("key")),
        )


def _node_row(line: NodeLine) -> dict[str, Any]:
    vector = vector_for(line.label)
    if vector is None:
        return {"id": line.id, "props": dict(line.props)}
    props = dict(line.props)
    return {"id": line.id, "props": props, "vector": props.pop(vector.prop, None)}


def _require_endpoints(store: GraphStore, path: Path, lines: list[tuple[int, RelLine]]) -> None:
    for side in ("from_", "to"):
        label = getattr(lines[0][1], side).label
        wanted = sorted({getattr(ln, side).id for _, ln in lines})
        found = {row["id"] for row in store.run("graph_io/existing_ids", {"ids": wanted},
                                                {"label": label})}
        for number, ln in lines:
            endpoint = getattr(ln, side)
            if endpoint.id not in found:
                raise GraphFileError(
                    str(path), number,
                    f"relationship {ln.type} refers to {endpoint.label} {endpoint.id!r}, "
                    "which is neither in the file nor in the graph; earlier lines are imported "
                    "and a re-run resumes after them",
                )


def _checkpoint(store: GraphStore, checkpoint_id: str, path: Path, line: int, *,
                done: bool) -> None:
    store.run("graph_io/set_checkpoint", {
        "id": checkpoint_id, "line": line, "done": done, "source": path.name,
        "caption": f"import of {path.name}",
    })
