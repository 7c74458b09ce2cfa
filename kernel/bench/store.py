"""Store benchmark: statement round trip, MERGE costs, and export/import rates."""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kernel.graph_io import export_graph, import_graph
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


def bench_store(store: GraphStore, rows: int = 10_000, repeats: int = 200) -> list[Figure]:
    """Measure on ``store``; writes only ``Run`` nodes with ``bench:`` ids and removes them."""
    figures = [
        Figure("RETURN 1 round trip (median)",
               median_ms(lambda _: store.run("admin/ping"), repeats), "ms"),
        Figure("single-node MERGE (median)",
               median_ms(lambda i: store.run("bench/merge_node",
                                              {"id": f"bench:single:{i}", "caption": "x"}),
                          repeats), "ms"),
    ]
    batch = [{"id": f"bench:batch:{i:06d}", "caption": f"row {i}"} for i in range(rows)]
    start = time.perf_counter()
    store.run_batched("bench/merge_nodes", batch, batch_size=1000)
    elapsed = time.perf_counter() - start
    figures.append(Figure(f"{rows}-row batched MERGE (1000 per statement)", elapsed * 1000, "ms"))
    figures.append(Figure("batched MERGE rate", rows / elapsed, "rows/s"))

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.graph.jsonl"
        start = time.perf_counter()
        with path.open("w", encoding="utf-8") as handle:
            exported = export_graph(store, handle)
        elapsed = time.perf_counter() - start
        elements = exported.nodes + exported.relationships
        figures.append(Figure(f"export ({elements} elements)", elements / elapsed, "elements/s"))
        start = time.perf_counter()
        import_graph(store, path)
        elapsed = time.perf_counter() - start
        figures.append(Figure(f"import, merging ({elements} elements)", elements / elapsed,
                              "elements/s"))
    store.run("bench/cleanup")
    return figures
