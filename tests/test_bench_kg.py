"""``kernel bench kg`` on a small synthetic graph: it seeds what it claims and times
every boot query (the figures themselves are not judged here)."""

from __future__ import annotations

from kernel.bench.kg import Shape, bench_kg
from kernel.store import GraphStore


def test_the_kg_benchmark_seeds_its_graph_and_times_every_boot_query(
        initialised_graph: GraphStore) -> None:
    figures = bench_kg(initialised_graph, Shape(attempts=600, patterns=200, resolvers=20,
                                                samples=20))
    names = [f.name for f in figures]
    for query in ("similar patterns", "resolver outcomes on similar patterns",
                  "modality-compatible candidates", "lookup-before-build",
                  "failure modes for a pattern", "decompositions of similar goals",
                  "constraints applied to similar goals", "top-10 vector search"):
        assert f"{query} p50" in names and f"{query} p95" in names
    assert all(f.value >= 0 for f in figures)
    counts = {r["label"]: r["nodes"] for r in initialised_graph.run("admin/count_by_label")}
    assert (counts["Attempt"], counts["GoalPattern"]) == (600, 200)
    outcomes = initialised_graph.run("kg/resolver_outcomes",
                                     {"pattern_id": "goal_pattern:bench-3", "k": 20})
    assert sum(r["successes"] + r["failures"] for r in outcomes) > 0
    near = initialised_graph.run("kg/similar_patterns",
                                 {"pattern_id": "goal_pattern:bench-3", "k": 5})
    assert near and all(r["id"] != "goal_pattern:bench-3" for r in near)
