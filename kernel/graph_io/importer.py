"""Import a ``kernel-graph`` file: validate it whole, then merge it in resumable batches.

Pass 1 reads every line and checks it (syntax, ontology, section order, the
footer's counts, and that every relationship joins nodes in the file or already
in the graph) without writing anything, so a malformed file imports nothing and
the error names its line. Pass 2 merges windows of lines, one statement per
(label) or (type, source label, target label) group, each atomic; relationship
endpoints are checked before their window is written. After each window a
checkpoint keyed by the file's hash records the last line, so an interrupted
import resumes where it stopped; merging by id makes any overlap harmless.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernel.errors import GraphFileError
from kernel.graph_io.format import FooterLine, HeaderLine, NodeLine, RelLine, parse_line
from kernel.store.base import GraphStore
from kernel.store.ontology import vector_for

WINDOW = 1000


@dataclass
class ImportReport:
    nodes: int
    relationships: int
    resumed_from_line: int
    digest: str


def import_graph(store: GraphStore, path: Path, window: int = WINDOW) -> ImportReport:
    path = Path(path)
    digest, footer = validate_file(path, store)
    checkpoint_id = f"import:{digest}"
    rows = store.run("graph_io/get_checkpoint", {"id": checkpoint_id})
    resume_after = int(rows[0]["line"]) if rows and not rows[0]["done"] else 0

    pending: list[tuple[int, NodeLine | RelLine]] = []
    last_line = resume_after
    for number, line in _elements(path):
        if number <= resume_after:
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
    return ImportReport(footer.nodes, footer.relationships, resume_after, digest)


def validate_file(path: Path, store: GraphStore | None = None) -> tuple[str, FooterLine]:
    """Check every line (and, given the target ``store``, that each relationship's
    endpoints exist in the file or the store); return the file's sha256 and footer."""
    if not path.is_file():
        raise GraphFileError(str(path), None, "no such file")
    digest = hashlib.sha256()
    nodes = relationships = 0
    footer: FooterLine | None = None
    section = "header"
    last_node: tuple[str, str] | None = None
    in_file: set[tuple[str, str]] = set()
    outside: dict[tuple[str, str], tuple[int, RelLine]] = {}
    number = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            digest.update(raw)
            line = _parse(path, number, raw)
            if footer is not None:
                raise GraphFileError(str(path), number, "content after the footer line")
            if isinstance(line, HeaderLine):
                if section != "header":
                    raise GraphFileError(str(path), number, "a second header line")
                section = "nodes"
                continue
            if section == "header":
                raise GraphFileError(
                    str(path), number,
                    'the first line must be the header {"kind":"header","format":"kernel-graph",'
                    '"version":1}',
                )
            if isinstance(line, NodeLine):
                if section != "nodes":
                    raise GraphFileError(str(path), number,
                                         "node lines must come before relationship lines")
                ident = (line.label, line.id)
                if last_node is not None and ident <= last_node:
                    raise GraphFileError(
                        str(path), number,
                        f"node {line.label}:{line.id} is out of order or repeated "
                        "(nodes are sorted by label, then id)",
                    )
                last_node = ident
                in_file.add(ident)
                nodes += 1
            elif isinstance(line, RelLine):
                section = "relationships"
                relationships += 1
                for end in (line.from_, line.to):
                    if (end.label, end.id) not in in_file:
                        outside.setdefault((end.label, end.id), (number, line))
            else:
                footer = line
    if footer is None:
        raise GraphFileError(str(path), number or None,
                             "the file ends without a footer line: it is truncated")
    if (footer.nodes, footer.relationships) != (nodes, relationships):
        raise GraphFileError(
            str(path), number,
            f"footer says {footer.nodes} nodes and {footer.relationships} relationships, "
            f"the file holds {nodes} and {relationships}",
        )
    if store is not None:
        _require_outside_endpoints(store, path, outside)
    return digest.hexdigest(), footer


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


def _parse(path: Path, number: int, raw: bytes) -> HeaderLine | NodeLine | RelLine | FooterLine:
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


def _elements(path: Path) -> Iterator[tuple[int, NodeLine | RelLine]]:
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            line = parse_line(raw.decode("utf-8"))
            if isinstance(line, NodeLine | RelLine):
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
