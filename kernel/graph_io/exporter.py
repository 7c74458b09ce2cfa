"""Stream the graph to a ``kernel-graph`` file in a deterministic order, in constant memory.

An export is one committed state of the graph even while runs write to it: the
store pauses writes while it reads (both stores do, through the data directory's
write gate; a store opened without one cannot, and the report says so). A run's lease is process state, not
knowledge, so it is left out: a run exported mid-way imports as interrupted, and
``kernel resume`` continues it there.

Given the deployment's blob store, the artifacts' contents follow the
relationships, once per sha256, so a deployment seeded from the file can show
every artifact and run every tool the source registered.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from kernel import __version__
from kernel.core.artifacts import ArtifactNotFoundError, BlobStore
from kernel.graph_io.format import (
    FORMAT,
    FORMAT_VERSION,
    BlobLine,
    FooterLine,
    HeaderLine,
    dump_line,
    node_text,
    rel_text,
)
from kernel.repositories import graph_export, schema_versions
from kernel.store.base import GraphStore
from kernel.store.ontology import EXPORTED_LABELS, LABEL_NAMES

PAGE_SIZE = 5000
# Which process holds a run, and until when: meaningless in another deployment.
_PROCESS_STATE = {"Run": frozenset({"lease_holder", "lease_expires"})}


@dataclass
class ExportReport:
    nodes: int = 0
    relationships: int = 0
    blobs: int = 0
    blob_bytes: int = 0
    skipped_labels: dict[str, int] = field(default_factory=dict)
    # Artifacts whose bytes this deployment does not hold (exported without contents).
    missing_contents: list[str] = field(default_factory=list)
    consistent: bool = True  # False: read while other processes may have written


def export_graph(store: GraphStore, out: TextIO, page_size: int = PAGE_SIZE, *,
                 blobs: BlobStore | None = None) -> ExportReport:
    """Write header, nodes, relationships, the artifacts' contents (given ``blobs``) and
    the footer to ``out``, with writes paused."""
    with store.writes_paused() as paused:
        report = _export(store, out, page_size, blobs, schema_versions.version(store))
    report.consistent = paused
    return report


def _export(store: GraphStore, out: TextIO, page_size: int, blobs: BlobStore | None,
            schema: int) -> ExportReport:
    report = ExportReport()
    header = HeaderLine.model_validate({"kind": "header", "format": FORMAT,
                                        "version": FORMAT_VERSION, "kernel": __version__,
                                        "schema": schema, "contents": blobs is not None})
    out.write(dump_line(header) + "\n")
    contents: dict[str, str] = {}  # sha256 -> the first artifact holding it
    # Relationships follow every node in the file, in the same (label, id) order: each
    # page's are read with the page and spooled to a scratch file, copied after the nodes.
    with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
        for label in EXPORTED_LABELS:
            for page in _node_pages(store, label, page_size):
                ids = []
                for row in page:
                    ids.append(row["id"])
                    props = _without_id(row["props"], _PROCESS_STATE.get(label, frozenset()))
                    out.write(node_text(label, row["id"], props) + "\n")
                    report.nodes += 1
                    if label == "Artifact" and isinstance(props.get("sha256"), str):
                        contents.setdefault(props["sha256"], row["id"])
                del page, row  # not held while the next page is read: one page in memory
                for text in _relationships(store, label, ids):
                    spool.write(text + "\n")
                    report.relationships += 1
        spool.seek(0)
        shutil.copyfileobj(spool, out)
    if blobs is not None:
        _write_blobs(blobs, contents, out, report)
    out.write(dump_line(FooterLine(kind="footer", nodes=report.nodes,
                                   relationships=report.relationships,
                                   blobs=report.blobs)) + "\n")
    report.skipped_labels = graph_export.unknown_labels(store, sorted(LABEL_NAMES))
    return report


def _write_blobs(blobs: BlobStore, contents: dict[str, str], out: TextIO,
                 report: ExportReport) -> None:
    """One line per distinct content, sorted by sha256, read (and re-hashed) one at a time."""
    for digest in sorted(contents):
        try:
            data = blobs.get(digest)
        except ArtifactNotFoundError:
            report.missing_contents.append(contents[digest])
            continue
        out.write(dump_line(BlobLine.of(data)) + "\n")
        report.blobs += 1
        report.blob_bytes += len(data)


def _node_pages(store: GraphStore, label: str,
                page_size: int) -> Iterator[list[dict[str, Any]]]:
    after = ""
    while True:
        page = graph_export.nodes_page(store, label, after, page_size)
        if not page:
            return
        page.sort(key=lambda row: row["id"])
        after = page[-1]["id"]
        yield page
        del page


def _relationships(store: GraphStore, label: str, ids: list[str]) -> Iterator[str]:
    """The page's relationship lines in the file's order (see ``RelLine.sort_key``)."""
    rows = graph_export.relationships(store, label, ids)
    keyed = [((label, row["from_id"], row["type"], row["to_label"], row["to_id"],
               row["key"] if row["key"] is not None else "\uffff"), row)
             for row in rows if row["to_label"] in EXPORTED_LABELS]
    keyed.sort(key=lambda pair: pair[0])
    del rows
    for (_, from_id, rel_type, to_label, to_id, _), row in keyed:
        yield rel_text(rel_type, (label, from_id), (to_label, to_id), row["key"],
                       _without_id(row["props"]))


def _without_id(props: dict[str, Any] | None,
                left_out: frozenset[str] = frozenset()) -> dict[str, Any]:
    return {k: v for k, v in (props or {}).items()
            if k != "id" and v is not None and k not in left_out}
