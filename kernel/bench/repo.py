"""Repository benchmark: ingest a codebase, count its graph, change one file, ingest again.

The repository's snapshot (tracked and untracked-but-not-ignored files) is copied to a
scratch directory first, so the change the benchmark makes never touches the user's
work tree; the copy is ingested twice, the second time after one Python function body
changed, and the impact of that function is asked for. Symbols are embedded with the
encoder given (its cache decides how many the model runs on: a cold cache embeds all).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from embeddings.encoder import Encoder
from kernel.bench.store import Figure
from kernel.codebase.impact import impact
from kernel.codebase.ingest import ingest_snapshot, repo_id
from kernel.codebase.snapshot import Caps, Snapshot, SnapshotFile, take_snapshot
from kernel.errors import ConfigError
from kernel.repositories import code_graph
from kernel.store.base import GraphStore

MARK = "\n\ndef _bench_changed_function():\n    return 1\n"


def _copy(snapshot: Snapshot, into: Path) -> None:
    for f in snapshot.files:
        target = into / f.path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(snapshot.root / f.path, target)


def _python_file(snapshot: Snapshot) -> SnapshotFile:
    """The largest parsable Python file outside the tests: the change to re-ingest."""
    candidates = [f for f in snapshot.files
                  if f.language == "python" and f.text is not None and not f.is_test]
    if not candidates:
        raise ConfigError(f"{snapshot.root} holds no Python file to change; give a "
                          "repository with Python code")
    return max(candidates, key=lambda f: (f.size, f.path))


def _timed_ingest(store: GraphStore, root: Path, caps: Caps,
                  encoder: Encoder) -> tuple[float, int, int, int]:
    started = time.perf_counter()
    report = ingest_snapshot(store, take_snapshot(root, caps), encoder)
    return time.perf_counter() - started, report.changed, report.parsed, report.embedded


def bench_repo(store: GraphStore, path: Path, caps: Caps, symbol: str | None,
               encoder: Encoder) -> list[Figure]:
    """Ingest time, nodes and edges, re-ingest after one changed file, and the time of
    one impact query (``symbol``, or the changed file's first function)."""
    snapshot = take_snapshot(path, caps)
    changed = _python_file(snapshot)
    with tempfile.TemporaryDirectory(prefix="kernel-bench-repo-") as scratch:
        root = Path(scratch).resolve()
        _copy(snapshot, root)
        first, _, parsed, embedded = _timed_ingest(store, root, caps, encoder)
        repo = repo_id(root)
        counts = code_graph.size(store, repo)
        (root / changed.path).write_text((changed.text or "") + MARK, encoding="utf-8")
        second, files_changed, reparsed, re_embedded = _timed_ingest(store, root, caps,
                                                                     encoder)
        started = time.perf_counter()
        found = impact(store, repo, symbol or "_bench_changed_function")
        impact_s = time.perf_counter() - started
    nodes = sum(counts.get(k, 0) for k in ("File", "Symbol", "Chunk")) + 1  # + Repository
    edges = sum(v for k, v in counts.items() if k.isupper()) + counts.get("File", 0)
    return [
        Figure("files", len(snapshot.files), "files"),
        Figure("Python files parsed", parsed, "files"),
        Figure("ingest", first, "s"),
        Figure("symbols embedded", embedded, "symbols"),
        Figure("nodes", nodes, "nodes"),
        Figure("edges", edges, "edges"),
        *(Figure(f"  {k}", v, "nodes" if not k.isupper() else "edges")
          for k, v in sorted(counts.items())),
        Figure("re-ingest after one changed file", second, "s"),
        Figure("files changed on re-ingest", files_changed, "files"),
        Figure("files parsed on re-ingest", reparsed, "files"),
        Figure("symbols embedded on re-ingest", re_embedded, "symbols"),
        Figure("impact query", impact_s, "s"),
        Figure("impacted symbols", len(found.dependents), "symbols"),
        Figure("covering tests", len(found.tests), "tests"),
    ]
