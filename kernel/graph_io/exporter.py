"""Stream the graph to a ``kernel-graph`` file in a deterministic order, in constant memory.

An export is one committed state of the graph even while runs write to it: the
store pauses writes while it reads (the embedded store always can; where a
backend cannot, the report says so). A run's lease is process state, not
knowledge, so it is left out: a run exported mid-way imports as interrupted, and
``kernel resume`` continues it there.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from kernel import __version__
from kernel.graph_io.format import (
    FORMAT,
    FORMAT_VERSION,
    Endpoint,
    FooterLine,
    HeaderLine,
    NodeLine,
    RelLine,
    dump_line,
)
from kernel.store.base import GraphStore
from kernel.store.ontology import EXPORTED_LABELS, LABEL_NAMES

PAGE_SIZE = 5000
# Which process holds a run, and until when: meaningless in another deployment.
_PROCESS_STATE = {"Run": frozenset({"lease_holder", "lease_expires"})}


@dataclass
class ExportReport:
    nodes: int = 0
    relationships: int = 0
    skipped_labels: dict[str, int] = field(default_factory=dict)
    consistent: bool = True  # False: read while other processes may have written


def export_graph(store: GraphStore, out: TextIO, page_size: int = PAGE_SIZE) -> ExportReport:
    """Write header, nodes, relationships and footer to ``out``, with writes paused."""
    with store.writes_paused() as paused:
        report = _export(store, out, page_size)
    report.consistent = paused
    return report


def _export(store: GraphStore, out: TextIO, page_size: int) -> ExportReport:
    report = ExportReport()
    out.write(dump_line(HeaderLine(kind="header", format=FORMAT, version=FORMAT_VERSION,
                                   kernel=__version__)) + "\n")
    for label in EXPORTED_LABELS:
        for page in _node_pages(store, label, page_size):
            for row in page:
                props = _without_id(row["props"], _PROCESS_STATE.get(label, frozenset()))
                out.write(dump_line(NodeLine(kind="node", label=label, id=row["id"],
                                             props=props)) + "\n")
                report.nodes += 1
    for label in EXPORTED_LABELS:
        for page in _node_pages(store, label, page_size, "graph_io/export_ids_page"):
            ids = [row["id"] for row in page]
            for line in _relationships(store, label, ids):
                out.write(dump_line(line) + "\n")
                report.relationships += 1
    out.write(dump_line(FooterLine(kind="footer", nodes=report.nodes,
                                   relationships=report.relationships)) + "\n")
    rows = store.run("admin/count_unknown_labels", {"known": sorted(LABEL_NAMES)})
    report.skipped_labels = {str(r["label"]): int(r["nodes"]) for r in rows}
    return report


def _node_pages(store: GraphStore, label: str, page_size: int,
                statement: str = "graph_io/export_nodes_page") -> Iterator[list[dict[str, Any]]]:
    after = ""
    while True:
        page = store.run(statement, {"after": after, "limit": page_size}, {"label": label})
        if not page:
            return
        page.sort(key=lambda row: row["id"])
        yield page
        after = page[-1]["id"]


def _relationships(store: GraphStore, label: str, ids: list[str]) -> list[RelLine]:
    rows = store.run("graph_io/export_relationships", {"ids": ids}, {"label": label})
    lines = [
        RelLine(kind="rel", type=row["type"], from_=Endpoint(label=label, id=row["from_id"]),
                to=Endpoint(label=row["to_label"], id=row["to_id"]), key=row["key"],
                props=_without_id(row["props"]))
        for row in rows
        if row["to_label"] in EXPORTED_LABELS
    ]
    lines.sort(key=RelLine.sort_key)
    return lines


def _without_id(props: dict[str, Any] | None,
                left_out: frozenset[str] = frozenset()) -> dict[str, Any]:
    return {k: v for k, v in (props or {}).items()
            if k != "id" and v is not None and k not in left_out}
