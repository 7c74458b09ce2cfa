"""Import a ``kernel-graph`` file: validate it whole, then merge it in resumable batches.

Pass 1 reads every line and checks it (syntax, ontology, section order, the
footer's counts, and that every relationship joins nodes in the file or already
in the graph) without writing anything, so a malformed file imports nothing and
the error names its line. Pass 1 also keeps a digest of each block of lines, so
pass 2 only decodes a block whose bytes are still the ones checked. Pass 2 merges
windows of lines, one statement per (label) or (type, source label, target label)
group, each atomic; a relationship group that finds fewer endpoints than it sent
(a node deleted since pass 1) names the first such line. After each window a
checkpoint keyed by the file's hash records the last line, so an interrupted
import resumes where it stopped; merging by id makes any overlap harmless.

Blob lines (the artifacts' contents, version 2) are checked against their sha256
in pass 1 and written to the blob store in pass 2; the report names the artifacts
whose bytes the deployment still lacks afterwards, and the source's schema version
(``kernel.schema.seed_graph`` brings the graph to the kernel's).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from kernel.core.artifacts import BlobStore
from kernel.errors import GraphFileError
from kernel.graph_io.format import BlobLine
from kernel.graph_io.validation import BLOCK, validate_file
from kernel.repositories import graph_export, schema_versions
from kernel.store.base import GraphStore
from kernel.store.ontology import vector_for

WINDOW = 1000
# A checked line is one JSON object: decoded as it stands (no whitespace scan around it).
_DECODE = json.JSONDecoder().raw_decode


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
    saved = graph_export.checkpoint(store, checkpoint_id)
    resume_after = saved[0] if saved and not saved[1] else 0

    pending: list[tuple[int, dict[str, Any]]] = []
    last_line = resume_after
    for number, element in _elements(path, summary.blocks, resume_after):
        if element["kind"] == "blob":
            if blobs is not None:
                blobs.put(BlobLine.model_validate(element).content())
            continue
        pending.append((number, element))
        last_line = number
        if len(pending) >= window:
            _write_window(store, path, pending)
            _checkpoint(store, checkpoint_id, path, last_line, done=False)
            pending = []
    if pending:
        _write_window(store, path, pending)
    schema_versions.label_statuses(store)  # export keeps the ontology label only
    schema_versions.constraint_role_lists(store)  # a file from an older kernel
    _checkpoint(store, checkpoint_id, path, last_line, done=True)
    report = ImportReport(footer.nodes, footer.relationships, resume_after, digest,
                          blobs=footer.blobs or 0, source_schema=summary.header.source_schema)
    if blobs is not None:
        report.lacking_contents = sorted(
            ident for ident, sha in summary.artifacts.items() if not blobs.path(sha).is_file())
    return report


def _elements(path: Path, blocks: list[bytes],
              after: int) -> Iterator[tuple[int, dict[str, Any]]]:
    """The node, relationship and blob lines after line ``after``, as plain JSON.

    Pass 1 checked every line; a block whose bytes still hash as they did then is not
    checked again, only decoded. A block that changed stops the import there."""
    with path.open("rb") as handle:
        for index, expected in enumerate(blocks):
            first = index * BLOCK + 1
            lines = list(islice(handle, BLOCK))
            if hashlib.sha256(b"".join(lines)).digest() != expected:
                raise _changed(path, first)
            if first + len(lines) - 1 <= after:
                continue
            for number, raw in enumerate(lines, start=first):
                if number > after:
                    element = _DECODE(raw.decode("utf-8"))[0]
                    if element["kind"] in ("node", "rel", "blob"):
                        yield number, element
        if handle.read(1):
            raise _changed(path, len(blocks) * BLOCK + 1)


def _changed(path: Path, line: int) -> GraphFileError:
    return GraphFileError(str(path), line, "the file changed after it was checked; what was "
                                           "imported before stays, and a re-run checks the "
                                           "file again")


def _write_window(store: GraphStore, path: Path,
                  window: list[tuple[int, dict[str, Any]]]) -> None:
    node_groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    rel_groups: dict[tuple[str, str, str, bool], list[tuple[int, dict[str, Any]]]] = \
        defaultdict(list)
    for number, element in window:
        if element["kind"] == "node":
            node_groups[element["label"]].append(element)
        else:
            rel_groups[(element["type"], element["from"]["label"], element["to"]["label"],
                        element.get("key") is not None)].append((number, element))
    for label, nodes in node_groups.items():
        vector = vector_for(label)
        if vector is None:
            graph_export.merge_nodes(store, label, [{"id": e["id"], "props": e.get("props", {})}
                                                    for e in nodes])
        else:
            graph_export.merge_nodes(store, label, [_vector_row(e, vector.prop) for e in nodes],
                                     vector.prop)
    for (rel_type, from_label, to_label, keyed), lines in rel_groups.items():
        rows = [{"from_id": e["from"]["id"], "to_id": e["to"]["id"],
                 "props": e.get("props", {})} for _, e in lines]
        if keyed:
            for row, (_, element) in zip(rows, lines, strict=True):
                row["key"] = element["key"]
        sent = len({_rel_identity(r) for r in rows})
        merged = graph_export.merge_relationships(store, rel_type, from_label, to_label, rows,
                                                  keyed=keyed, dedupe=_rel_identity)
        if merged < sent:  # an endpoint went missing since pass 1 checked it: say which
            _require_endpoints(store, path, lines)


def _rel_identity(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """One relationship of a group: rows sharing it are merged once."""
    return (row["from_id"], row["to_id"], row.get("key"))


def _vector_row(element: dict[str, Any], prop: str) -> dict[str, Any]:
    props = dict(element.get("props", {}))
    return {"id": element["id"], "props": props, "vector": props.pop(prop, None)}


def _require_endpoints(store: GraphStore, path: Path,
                       lines: list[tuple[int, dict[str, Any]]]) -> None:
    for side in ("from", "to"):
        label = lines[0][1][side]["label"]
        wanted = sorted({element[side]["id"] for _, element in lines})
        found = graph_export.existing_ids(store, label, wanted)
        for number, element in lines:
            endpoint = element[side]
            if endpoint["id"] not in found:
                raise GraphFileError(
                    str(path), number,
                    f"relationship {element['type']} refers to {endpoint['label']} "
                    f"{endpoint['id']!r}, which is neither in the file nor in the graph; "
                    "earlier lines are imported and a re-run resumes after them",
                )


def _checkpoint(store: GraphStore, checkpoint_id: str, path: Path, line: int, *,
                done: bool) -> None:
    graph_export.set_checkpoint(store, checkpoint_id, line, done, path.name)
