"""Store benchmark: statement round trip, MERGE costs, and export/import rates."""

from __future__ import annotations

import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from kernel.graph_io import export_graph, import_graph
from kernel.repositories import bench as bench_rows
from kernel.store.base import GraphStore


@dataclass(frozen=True)
class Figure:
    name: str
    value: float
    unit: str


def median_ms(action: Callable[[int], object], repeats: int) -> float:
    samples = []
    for i in range(repeats):
        start = time.perf_counter()
        action(i)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def bench_store(store: GraphStore, rows: int = 10_000, repeats: int = 200,
                sizes: Sequence[int] = (10_000, 100_000)) -> list[Figure]:
    """Measure on ``store``; writes only ``bench:`` Run nodes and the goals of a ``bench:``
    run, and removes them. Export and import are measured at each of ``sizes``
    (elements), with the peak Python heap of each, so growth with size shows."""
    figures = [
        Figure("RETURN 1 round trip (median)",
               median_ms(lambda _: bench_rows.ping(store), repeats), "ms"),
        Figure("single-node MERGE (median)",
               median_ms(lambda i: bench_rows.merge_node(store, f"bench:single:{i}", "x"),
                          repeats), "ms"),
    ]
    batch = [{"id": f"bench:batch:{i:06d}", "caption": f"row {i}"} for i in range(rows)]
    start = time.perf_counter()
    bench_rows.merge_nodes(store, batch, batch_size=1000)
    elapsed = time.perf_counter() - start
    figures.append(Figure(f"{rows}-row batched MERGE (1000 per statement)", elapsed * 1000, "ms"))
    figures.append(Figure("batched MERGE rate", rows / elapsed, "rows/s"))

    bench_rows.cleanup(store)
    figures.extend(bench_graph_io(store, sizes))
    bench_rows.cleanup(store)
    return figures


BENCH_RUN = "bench:graph-io"
T = TypeVar("T")


def bench_graph_io(store: GraphStore, sizes: Sequence[int], *,
                   timed: bool = True) -> list[Figure]:
    """Export and import (merging into the same nodes) of a graph of about each of
    ``sizes`` elements, smallest first: half goals, half their ``CHILD_OF`` edges. The
    graph grows from one size to the next rather than being built again. Each is timed
    once, then run again under tracemalloc for its peak heap, since tracing slows it down;
    ``timed=False`` gives the peaks alone (half the work, for a check that only compares
    memory)."""
    figures: list[Figure] = []
    built = 0
    try:
        for elements in sorted(sizes):
            goals = max(2, (elements + 1) // 2)
            _grow_tree(store, built, goals)
            built = max(built, goals)
            figures.extend(_export_and_import(store, timed))
    finally:
        bench_rows.remove_tree(store, BENCH_RUN)
    return figures


def _grow_tree(store: GraphStore, have: int, goals: int) -> None:
    """Goals ``have`` to ``goals`` of the benchmark's tree (eight children a goal), each
    linked to its parent, which is already there."""
    rows: list[dict[str, Any]] = [
        {"id": f"{BENCH_RUN}:{i:07d}", "parent_id": f"{BENCH_RUN}:{(i - 1) // 8:07d}" if i else None,
         "seq": i, "depth": 0, "time": 0, "depends_on": []} for i in range(have, goals)]
    if rows:
        bench_rows.create_tree(store, BENCH_RUN, rows, chunk=5000, link_batch=5000)


def _export_and_import(store: GraphStore, timed: bool) -> list[Figure]:
    figures = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.graph.jsonl"

        def export() -> int:
            with path.open("w", encoding="utf-8") as handle:
                exported = export_graph(store, handle)
            return exported.nodes + exported.relationships

        if timed:
            total, seconds = _timed(export)
            figures.append(Figure(f"export ({total} elements)", total / seconds,
                                  "elements/s"))
        peak, total = _peak_mib(export)
        figures.append(Figure(f"export peak heap ({total} elements)", peak, "MiB"))
        if timed:
            _, seconds = _timed(lambda: import_graph(store, path))
            figures.append(Figure(f"import, merging ({total} elements)", total / seconds,
                                  "elements/s"))
        peak, _ = _peak_mib(lambda: import_graph(store, path))
        figures.append(Figure(f"import peak heap ({total} elements)", peak, "MiB"))
    return figures


def _timed(action: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    result = action()
    return result, time.perf_counter() - start


def _peak_mib(action: Callable[[], T]) -> tuple[float, T]:
    """The action's peak traced heap in MiB, and what it returned."""
    tracemalloc.start()
    try:
        result = action()
        return tracemalloc.get_traced_memory()[1] / 2**20, result
    finally:
        tracemalloc.stop()
