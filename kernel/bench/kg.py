"""Knowledge-graph benchmark: the boot queries on a graph the size of a long-lived one.

Seeds a synthetic graph (by default 100,000 attempts, 10,000 goal patterns in 100
kinds, 1,000 resolvers, 20,000 goals of which a fifth were decomposed), then times
every boot query and a top-10 vector search over random patterns. Embeddings are
seeded random unit vectors clustered by kind: the index does the same work as with
model embeddings, without spending minutes encoding 10,000 summaries.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from embeddings.encoder import DIMENSIONS
from kernel.bench.store import Figure
from kernel.kg.patterns import CANDIDATES
from kernel.repositories import bench as bench_rows
from kernel.repositories import knowledge, views
from kernel.store.base import GraphStore

KINDS = 100
CAPABILITIES = 100
FAILURE_MODES = 200


@dataclass(frozen=True)
class Shape:
    attempts: int = 100_000
    patterns: int = 10_000
    resolvers: int = 1_000
    goals_per_pattern: int = 2
    samples: int = 200


def _unit(vector: list[float]) -> list[float]:
    norm = sum(x * x for x in vector) ** 0.5
    return [round(x / norm, 6) for x in vector]


def seed(store: GraphStore, shape: Shape, rng: random.Random) -> dict[str, float]:
    """Write the synthetic graph; returns seconds per part (the parts are drawn from
    ``rng`` in this order, so a seed gives the same graph)."""
    timings: dict[str, float] = {}

    def timed(name: str, rows: list[dict[str, Any]], batch: int = 2000) -> None:
        started = time.perf_counter()
        bench_rows.seed_kg_part(store, name, rows, batch)
        timings[name] = time.perf_counter() - started

    timed("resolvers", _resolver_rows(shape, rng))
    timed("patterns", _pattern_rows(shape, rng), batch=500)
    timed("similar_to", _similar_rows(shape, rng), batch=5000)
    timed("constraints", _constraint_rows())
    goals = _goal_rows(shape, rng)
    timed("goals", goals)
    timed("attempts", _attempt_rows(shape, rng, [g for g in goals if g["depth"] == 0]),
          batch=5000)
    return timings


def _resolver_rows(shape: Shape, rng: random.Random) -> list[dict[str, Any]]:
    return [{"id": f"resolver:bench-{i}", "capabilities": sorted(
        {f"bench_cap_{rng.randrange(CAPABILITIES)}" for _ in range(rng.randint(1, 3))})}
        for i in range(shape.resolvers)]


def _pattern_rows(shape: Shape, rng: random.Random) -> list[dict[str, Any]]:
    """Patterns in KINDS clusters of nearby unit vectors."""
    centres = [[rng.gauss(0, 1) for _ in range(DIMENSIONS)] for _ in range(KINDS)]
    patterns = []
    for i in range(shape.patterns):
        kind = i % KINDS
        vector = _unit([c + rng.gauss(0, 0.35) for c in centres[kind]])
        patterns.append({"id": f"goal_pattern:bench-{i}", "summary": f"bench goal {i} of kind "
                         f"{kind}", "signature": f'[["logic", "kind{kind % 10}"]]',
                         "vector": vector})
    return patterns


def _similar_rows(shape: Shape, rng: random.Random) -> list[dict[str, Any]]:
    return [{"a": f"goal_pattern:bench-{i}", "b": f"goal_pattern:bench-{j}",
             "score": round(rng.uniform(0.8, 0.95), 4)}
            for i in range(shape.patterns)
            for j in sorted({(i + KINDS * s) % shape.patterns for s in range(1, 6)} - {i})]


def _constraint_rows() -> list[dict[str, Any]]:
    return [{"id": f"constraint:bench-{i}", "title": f"bench constraint {i}",
             "type": "logic" if i % 2 else "semantic", "domain": f"kind{i % 10}",
             "failure": f"failure:bench-{i}", "slug": f"bench_failure_{i}"}
            for i in range(FAILURE_MODES)]


def _goal_rows(shape: Shape, rng: random.Random) -> list[dict[str, Any]]:
    """Root goals per pattern, a fifth of them decomposed into three resolved parts."""
    goals: list[dict[str, Any]] = []
    seq = 0
    for i in range(shape.patterns):
        for n in range(shape.goals_per_pattern):
            seq += 1
            gid = f"goal:bench-{i}-{n}"
            decomposed = rng.random() < 0.2
            goals.append({"id": gid, "pattern": f"goal_pattern:bench-{i}", "parent_id": None,
                          "summary": f"bench goal {i}.{n}", "status": "resolved", "seq": seq,
                          "depth": 0, "decompositions": int(decomposed),
                          "constraints": [f"constraint:bench-{rng.randrange(FAILURE_MODES)}"
                                          for _ in range(2)]})
            for c in range(3 if decomposed else 0):
                seq += 1
                goals.append({"id": f"{gid}-c{c}", "pattern": f"goal_pattern:bench-{i}",
                              "parent_id": gid, "summary": f"part {c} of bench goal {i}.{n}",
                              "status": "resolved", "seq": seq, "depth": 1,
                              "decompositions": 0, "constraints": []})
    return goals


def _attempt_rows(shape: Shape, rng: random.Random,
                  roots: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Attempts on root goals, 70% of them successful."""
    attempts = []
    for i in range(shape.attempts):
        goal = roots[rng.randrange(len(roots))]
        ok = rng.random() < 0.7
        attempts.append({"id": f"attempt:bench-{i}", "goal": goal["id"],
                         "pattern": goal["pattern"],
                         "resolver": f"resolver:bench-{rng.randrange(shape.resolvers)}",
                         "ok": ok, "sigma": round(rng.uniform(0.7, 1.0) if ok else
                                                  rng.uniform(0.0, 0.6), 4),
                         "cost": rng.randrange(1000, 100_000),
                         "failure": None if ok else
                         f"failure:bench-{rng.randrange(FAILURE_MODES)}"})
    return attempts


def _percentiles(action: Callable[[int], object], samples: int) -> tuple[float, float]:
    times = []
    for i in range(samples):
        started = time.perf_counter()
        action(i)
        times.append((time.perf_counter() - started) * 1000)
    cuts = statistics.quantiles(times, n=20)
    return statistics.median(times), cuts[18]


def bench_kg(store: GraphStore, shape: Shape | None = None, rng_seed: int = 7) -> list[Figure]:
    shape = shape or Shape()
    rng = random.Random(rng_seed)
    timings = seed(store, shape, rng)
    counts = views.counts_by_label(store)
    wanted = {"Attempt": shape.attempts, "GoalPattern": shape.patterns}
    if any(counts.get(label) != n for label, n in wanted.items()):
        raise RuntimeError(f"the synthetic graph is not the size asked for: {counts}")
    figures = [Figure(f"seed {name}", seconds, "s") for name, seconds in timings.items()]
    picks = [rng.randrange(shape.patterns) for _ in range(shape.samples)]
    vectors = [_unit([rng.gauss(0, 1) for _ in range(DIMENSIONS)]) for _ in range(20)]

    def pattern(i: int) -> str:
        return f"goal_pattern:bench-{picks[i]}"

    queries: dict[str, Callable[[int], object]] = {
        "similar patterns": lambda i: knowledge.similar_patterns(store, pattern(i), 5),
        "resolver outcomes on similar patterns": lambda i: knowledge.resolver_outcomes(
            store, pattern(i), 20),
        "modality-compatible candidates": lambda i: knowledge.modality_candidates(
            store, pattern(i), "text", 5),
        "lookup-before-build": lambda i: knowledge.build_history(
            store, f"bench_cap_{picks[i] % CAPABILITIES}"),
        "failure modes for a pattern": lambda i: knowledge.failure_modes(store, pattern(i), 5),
        "decompositions of similar goals": lambda i: knowledge.decompositions(
            store, pattern(i), "-", 5),
        "constraints applied to similar goals": lambda i: knowledge.constraints_applied(
            store, vectors[i % 20], CANDIDATES, 0.0, 5),
        "top-10 vector search": lambda i: knowledge.nearest_goal_patterns(
            store, vectors[i % 20], 10),
    }
    for name, action in queries.items():
        action(0)  # warm
        p50, p95 = _percentiles(action, shape.samples)
        figures += [Figure(f"{name} p50", p50, "ms"), Figure(f"{name} p95", p95, "ms")]
    return figures
