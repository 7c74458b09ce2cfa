"""Warming a Neo4j server for the kernel: its statements planned before a run needs them.

Neo4j plans each statement text the first time it meets it (with the types of its
parameters) and keeps the plan; the kernel's commits are large, and planning them costs
a fresh server seconds each, which a first run pays step by step. The warm-up finds the
statements a run sends by solving the benchmarks' scripted workloads (a small goal tree,
and the flywheel's goals, which build, hire and retry) on a throwaway embedded graph,
where planning costs microseconds, and hands them to the server to plan
(``GraphStore.plan_ahead``: each run once and rolled back, so nothing is written).

Plans are not all a fresh server lacks: its Java runtime compiles the code a statement
runs only after it has run it many times, so a first run on a just-started server is
still slower than the ones after it. The warm-up then rehearses the
workloads (``GraphStore.rehearse``) for a few rounds: each workload run whole, with the
values it was recorded with, in one transaction that is rolled back.

The server forgets its plans when it stops: warm it again after a restart
(``kernel db warm``; ``kernel db init`` warms it too).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kernel.bench.flywheel import run_experiment
from kernel.bench.solve import bench_solve
from kernel.errors import KernelError
from kernel.schema import ensure_schema, init_schema
from kernel.settings import KernelSettings
from kernel.store import open_store
from kernel.store.base import GraphStore, Statement

TREE_GOALS = 13  # a root, three parts, nine pieces: every step of a tree that resolves
# Rehearsals of the workloads after planning: the setting's default (KERNEL_NEO4J_WARM_ROUNDS).
ROUNDS: int = KernelSettings.model_fields["neo4j_warm_rounds"].default


@dataclass(frozen=True)
class WarmUp:
    """What a warm-up did: statements a run sends (as collected), those planned (distinct
    by text and parameter types), those the server refused to run, and the time each half
    took. ``skipped`` names a workload that could not run here (and why). Then the
    rehearsal: its rounds, the statements it ran over them (and how many wrote, all
    rolled back), its seconds, and a workload round a refused statement cut short."""

    collected: int
    planned: int
    refused: tuple[str, ...]
    collect_seconds: float
    plan_seconds: float
    skipped: tuple[str, ...] = ()
    rounds: int = 0
    rehearsed: int = 0
    rehearse_seconds: float = 0.0
    cut_short: tuple[str, ...] = ()
    rehearsed_writes: int = 0


def warm_up(store: GraphStore, tree_goals: int = TREE_GOALS, flywheel: bool = True,
            rounds: int = ROUNDS) -> WarmUp:
    """Plan on ``store`` the statements of the scripted workloads (see the module): a tree
    of ``tree_goals`` goals and, with ``flywheel``, the flywheel's goals; then rehearse
    them ``rounds`` times (none: plan only)."""
    started = time.perf_counter()
    workloads, skipped = collect_workloads(tree_goals, flywheel)
    statements = [statement for workload in workloads for statement in workload]
    collected = time.perf_counter() - started
    with store.schema_held():  # Neo4j empties its plan cache when an index is made: first
        ensure_schema(store)   # the indexes (every run ensures them anyway), then the plans
    report = store.plan_ahead(statements)
    rehearsal = store.rehearse(workloads, rounds)
    return WarmUp(len(statements), report.planned, report.refused, collected,
                  report.seconds, skipped, rounds, rehearsal.executed, rehearsal.seconds,
                  rehearsal.refused, rehearsal.wrote)


def collect_statements(tree_goals: int = TREE_GOALS, flywheel: bool = True
                       ) -> tuple[list[Statement], tuple[str, ...]]:
    """The statements the workloads send, in order, from a throwaway embedded graph."""
    workloads, skipped = collect_workloads(tree_goals, flywheel)
    return [statement for workload in workloads for statement in workload], skipped


def collect_workloads(tree_goals: int = TREE_GOALS, flywheel: bool = True
                      ) -> tuple[list[list[Statement]], tuple[str, ...]]:
    """Each workload's statements, in order, from a throwaway embedded graph (each
    workload on a graph that holds the boot graph only, as a new one does)."""
    workloads: list[tuple[str, Callable[[GraphStore], object]]] = [
        ("a goal tree", lambda store: bench_solve(store, tree_goals))]
    if flywheel:
        workloads.append(("the flywheel's goals", run_experiment))
    collected: list[list[Statement]] = []
    skipped: list[str] = []
    with tempfile.TemporaryDirectory(prefix="kernel-warm-up-") as tmp:
        from kernel.store.embedded_server import EmbeddedServer

        store = open_store(KernelSettings(graph="embedded", data_dir=Path(tmp),
                                          graph_name="warm-up"))
        try:
            for name, workload in workloads:
                init_schema(store)
                statements: list[Statement] = []
                store.recorder = _collector(store, statements)
                try:
                    workload(store)
                except KernelError as exc:  # no sandbox here, say: warm what the rest sends
                    skipped.append(f"{name}: {exc}")
                finally:
                    store.recorder = None
                collected.append(statements)
                store.drop_all()
        finally:
            store.close()
            EmbeddedServer(Path(tmp)).stop()
    return collected, tuple(skipped)


def _collector(store: GraphStore, into: list[Statement]) -> Callable[[Statement], None]:
    """Keeps what a run sends but the schema's statements (which differ by dialect, and
    which ``kernel db init`` has run)."""
    def collect(statement: Statement) -> None:
        if store.catalog.get(statement.name).mode != "schema":
            into.append(statement)
    return collect
