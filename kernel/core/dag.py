"""Dependency DAG among sibling goals (axiom B3).

The algorithms are pure functions over :class:`DagNode` lists so they can be checked
against independent computations; :class:`Dependencies` reads and writes the
``DEPENDS_ON`` edges through named statements. Ties are broken by creation order
(``seq``), then id, so every order is identical across runs.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from kernel.core.run import Run
from kernel.errors import KernelError
from kernel.store.base import GraphStore


class CycleError(KernelError):
    """A dependency would close a cycle (or point at its own goal)."""

    def __init__(self, cycle: Sequence[str]) -> None:
        super().__init__("dependency cycle: " + " -> ".join(cycle))
        self.cycle = list(cycle)


class DependencyError(KernelError):
    """A dependency that the DAG rules do not allow (not siblings, unknown goal)."""


@dataclass(frozen=True)
class DagNode:
    id: str
    seq: int
    depends_on: tuple[str, ...] = ()
    duration: int = 0  # milliseconds
    status: str = "pending"


def _index(nodes: Iterable[DagNode]) -> dict[str, DagNode]:
    by_id = {n.id: n for n in nodes}
    for node in by_id.values():
        for dep in node.depends_on:
            if dep not in by_id:
                raise DependencyError(f"{node.id} depends on {dep}, which is not in this graph")
    return by_id


def find_cycle(nodes: Iterable[DagNode]) -> list[str] | None:
    """A cycle as [a, b, ..., a] following depends_on edges, or None."""
    by_id = _index(nodes)
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    for start in sorted(by_id, key=lambda i: (by_id[i].seq, i)):
        if state.get(start):
            continue
        stack: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(by_id[start].depends_on)))]
        path = [start]
        state[start] = 1
        while stack:
            node, deps = stack[-1]
            dep = next(deps, None)
            if dep is None:
                stack.pop()
                path.pop()
                state[node] = 2
            elif state.get(dep) == 1:
                return [*path[path.index(dep):], dep]
            elif not state.get(dep):
                state[dep] = 1
                path.append(dep)
                stack.append((dep, iter(sorted(by_id[dep].depends_on))))
    return None


def topological_order(nodes: Iterable[DagNode]) -> list[str]:
    """Dependencies first; among ready goals, earliest created first, then by id."""
    by_id = _index(nodes)
    cycle = find_cycle(by_id.values())
    if cycle:
        raise CycleError(cycle)
    waiting = {i: len(set(n.depends_on)) for i, n in by_id.items()}
    dependents: dict[str, list[str]] = {i: [] for i in by_id}
    for node in by_id.values():
        for dep in set(node.depends_on):
            dependents[dep].append(node.id)
    ready = [(n.seq, n.id) for n in by_id.values() if waiting[n.id] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, node_id = heapq.heappop(ready)
        order.append(node_id)
        for child in dependents[node_id]:
            waiting[child] -= 1
            if waiting[child] == 0:
                heapq.heappush(ready, (by_id[child].seq, child))
    return order


def waves(nodes: Iterable[DagNode]) -> list[list[str]]:
    """Groups that can run in parallel: wave k holds goals whose dependencies are all
    in earlier waves."""
    by_id = _index(nodes)
    level: dict[str, int] = {}
    grouped: dict[int, list[str]] = {}
    for node_id in topological_order(by_id.values()):
        level[node_id] = 1 + max((level[d] for d in by_id[node_id].depends_on), default=-1)
        grouped.setdefault(level[node_id], []).append(node_id)
    return [grouped[k] for k in sorted(grouped)]


def critical_path(nodes: Iterable[DagNode],
                  duration: Callable[[DagNode], int] = lambda n: n.duration,
                  ) -> tuple[list[str], int]:
    """The longest chain of dependencies by total duration, and its length.

    Ties prefer the chain whose goals were created first (deterministic)."""
    by_id = _index(nodes)
    best: dict[str, tuple[int, list[str]]] = {}
    for node_id in topological_order(by_id.values()):
        node = by_id[node_id]
        prior = [(best[d][0], [-by_id[x].seq for x in best[d][1]], d)
                 for d in sorted(set(node.depends_on))]
        if prior:
            length, _, dep = max(prior, key=lambda p: (p[0], p[1]))
            best[node_id] = (length + duration(node), [*best[dep][1], node_id])
        else:
            best[node_id] = (duration(node), [node_id])
    if not best:
        return [], 0
    end = max(best, key=lambda i: (best[i][0], [-by_id[x].seq for x in best[i][1]]))
    return best[end][1], best[end][0]


class Dependencies:
    """Reads and writes sibling dependencies; rejects self-edges, non-siblings and cycles."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store

    def children(self, parent_id: str) -> list[DagNode]:
        return [_node(r) for r in self.store.run("dag/children", {"goal_id": parent_id})]

    def run_graph(self, run_id: str) -> list[DagNode]:
        return [_node(r) for r in self.store.run("dag/run_graph", {"run_id": run_id})]

    def unresolved(self, goal_id: str) -> list[str]:
        """The dependencies that still block this goal."""
        return [r["id"] for r in self.store.run("dag/unresolved_dependencies",
                                                {"goal_id": goal_id})]

    def add(self, run: Run, parent_id: str, edges: Sequence[tuple[str, str]]) -> None:
        """Add (goal, depends_on) edges among ``parent_id``'s children in one commit."""
        siblings = {n.id: n for n in self.children(parent_id)}
        for goal_id, dep in edges:
            if goal_id == dep:
                raise CycleError([goal_id, goal_id])
            for end in (goal_id, dep):
                if end not in siblings:
                    raise DependencyError(
                        f"{end} is not a child of {parent_id}: dependencies join siblings only")
        extra: dict[str, set[str]] = {}
        for goal_id, dep in edges:
            extra.setdefault(goal_id, set()).add(dep)
        proposed = [DagNode(n.id, n.seq, tuple(sorted(set(n.depends_on) | extra.get(n.id, set()))),
                            n.duration, n.status) for n in siblings.values()]
        cycle = find_cycle(proposed)
        if cycle:
            raise CycleError(cycle)
        present = {(n.id, d) for n in siblings.values() for d in n.depends_on}
        if set(edges) - present:
            run.commit("dag/add_dependencies", {
                "rows": [{"goal_id": g, "depends_on_id": d} for g, d in sorted(set(edges))],
            }, what=f"add dependencies among the children of {parent_id}", consumes=False)


def _node(row: dict[str, Any]) -> DagNode:
    return DagNode(id=row["id"], seq=int(row["seq"]), depends_on=tuple(sorted(row["depends_on"])),
                   duration=int(row["time_allocated"] or 0), status=row["status"])
