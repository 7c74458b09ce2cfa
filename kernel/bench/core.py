"""Core benchmark: per-operation cost of the kernel's bookkeeping on the store in use,
and whole-tree ordering at 10,000 goals."""

from __future__ import annotations

import random
import time
from typing import Any

from kernel.bench.store import Figure, median_ms
from kernel.core.budget import Amount, BudgetEnforcer
from kernel.core.constraints import ConstraintEngine
from kernel.core.dag import Dependencies, critical_path, topological_order
from kernel.core.envelopes import ConstraintSpec, Provenance
from kernel.core.goals import GoalSpec, GoalTree
from kernel.core.run import Run
from kernel.core.state_machine import Status
from kernel.repositories import bench as bench_rows
from kernel.store.base import GraphStore


def _resolving_goal(run: Run) -> tuple[GoalTree, str, str]:
    tree = GoalTree(run)
    engine = ConstraintEngine(run.store)
    ids = engine.upsert([ConstraintSpec(type="logic", domain="software", title="bench",
                                        provenance=Provenance(source="human"))])
    root = tree.create_root(GoalSpec("benchmark root"), core_ids=ids)
    BudgetEnforcer(run).allocate_root(root, Amount(10**12, 10**9))
    child = tree.create_child(root, GoalSpec("benchmark child"))
    BudgetEnforcer(run).allocate_children(root, {child: 1})
    tree.transition(child, Status.IDENTIFYING_CONSTRAINTS)
    engine.set_role(run, child, "eligible", ids, Status.IDENTIFYING_CONSTRAINTS,
                    Status.SELECTING_CONSTRAINTS)
    engine.set_role(run, child, "selected", ids, Status.SELECTING_CONSTRAINTS,
                    Status.SELECTING_RESOLVER)
    tree.transition(child, Status.RESOLVING)
    return tree, root, child


def bench_core(store: GraphStore, repeats: int = 200, tree_size: int = 10_000) -> list[Figure]:
    run = Run.start(store, "benchmark")
    tree, _, child = _resolving_goal(run)
    budget = BudgetEnforcer(run)
    deps = Dependencies(store)

    def flip(i: int) -> None:  # resolving <-> verifying, both listed transitions
        tree.transition(child, Status.VERIFYING if i % 2 == 0 else Status.RESOLVING)

    figures = [
        Figure("state transition (read + guarded commit, median)", median_ms(flip, repeats), "ms"),
        Figure("budget record (spend with overrun check, median)",
               median_ms(lambda _: _spend(budget, child), repeats),
               "ms"),
        Figure("dependency check (unresolved dependencies, median)",
               median_ms(lambda _: deps.unresolved(child), repeats), "ms"),
        Figure("next_action view (median)",
               median_ms(lambda _: tree.view(child), repeats), "ms"),
    ]

    big = Run.start(store, "benchmark tree")
    rows = _synthetic_tree(tree_size)
    start = time.perf_counter()
    bench_rows.create_tree(store, big.run_id, rows, chunk=max(len(rows), 1), link_batch=2000)
    figures.append(Figure(f"build a {tree_size}-goal tree (bench setup)",
                          (time.perf_counter() - start) * 1000, "ms"))
    start = time.perf_counter()
    nodes = deps.run_graph(big.run_id)
    figures.append(Figure(f"read {len(nodes)} goals with dependencies",
                          (time.perf_counter() - start) * 1000, "ms"))
    start = time.perf_counter()
    order = topological_order(nodes)
    figures.append(Figure(f"topological order of {len(order)} goals",
                          (time.perf_counter() - start) * 1000, "ms"))
    start = time.perf_counter()
    path, length = critical_path(nodes)
    figures.append(Figure(f"critical path ({len(path)} goals, {length} ms long)",
                          (time.perf_counter() - start) * 1000, "ms"))
    return figures


def _synthetic_tree(size: int, fanout: int = 8) -> list[dict[str, Any]]:
    """A tree with ``fanout`` children per goal; each child depends on up to two earlier
    siblings."""
    rnd = random.Random(42)
    rows: list[dict[str, Any]] = [{"id": "node:bench-00000", "parent_id": None, "seq": 0,
                                   "depth": 0, "time": 1000, "depends_on": []}]
    depth = {"node:bench-00000": 0}
    for i in range(1, size):
        parent = rows[(i - 1) // fanout]["id"]
        gid = f"node:bench-{i:05d}"
        first_sibling = ((i - 1) // fanout) * fanout + 1
        earlier = [f"node:bench-{j:05d}" for j in range(first_sibling, i)]
        deps = sorted(rnd.sample(earlier, min(len(earlier), rnd.randint(0, 2))))
        depth[gid] = depth[parent] + 1
        rows.append({"id": gid, "parent_id": parent, "seq": i, "depth": depth[gid],
                     "time": rnd.randint(1000, 60_000), "depends_on": deps})
    return rows


def _spend(budget: BudgetEnforcer, goal_id: str) -> None:
    """One spend, stored as its own commit (in a run it rides the step's transition)."""
    budget.record(goal_id, Amount(1, 1), "r", "bench")
    budget.run.store_spend()
