"""Dependency DAG: orders respect every edge and never vary; the critical path is the
longest path (checked against brute force); cycles and bad edges are refused by name."""

from __future__ import annotations

import itertools
import random
from functools import cache

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernel.core.dag import (
    CycleError,
    DagNode,
    Dependencies,
    DependencyError,
    critical_path,
    find_cycle,
    topological_order,
    waves,
)
from kernel.core.goals import GoalSpec, GoalTree
from kernel.core.state_machine import Status
from tests.core.conftest import make_root


@st.composite
def dags(draw: st.DrawFn) -> list[DagNode]:
    n = draw(st.integers(1, 9))
    seqs = draw(st.permutations(range(n)))
    nodes = []
    for i in range(n):
        # edges only to lower indices: acyclic by construction
        deps = draw(st.sets(st.integers(0, i - 1), max_size=i)) if i else set()
        nodes.append(DagNode(f"g{i}", seqs[i], tuple(sorted(f"g{d}" for d in deps)),
                             draw(st.integers(0, 50))))
    return nodes


@given(dags(), st.randoms())
def test_topological_order_respects_edges_and_is_stable(nodes: list[DagNode], rnd) -> None:
    order = topological_order(nodes)
    assert sorted(order) == sorted(n.id for n in nodes)
    position = {node_id: i for i, node_id in enumerate(order)}
    for node in nodes:
        for dep in node.depends_on:
            assert position[dep] < position[node.id]
    shuffled = list(nodes)
    rnd.shuffle(shuffled)
    assert topological_order(shuffled) == order


@given(dags())
def test_waves_hold_only_goals_whose_dependencies_came_earlier(nodes: list[DagNode]) -> None:
    level = {node_id: k for k, wave in enumerate(waves(nodes)) for node_id in wave}
    assert len(level) == len(nodes)
    by_id = {n.id: n for n in nodes}
    for node in nodes:
        assert all(level[d] < level[node.id] for d in node.depends_on)
        if node.depends_on:
            assert level[node.id] == 1 + max(level[d] for d in by_id[node.id].depends_on)
        else:
            assert level[node.id] == 0


@given(dags())
def test_critical_path_is_the_longest_path(nodes: list[DagNode]) -> None:
    by_id = {n.id: n for n in nodes}

    @cache
    def longest_ending_at(node_id: str) -> int:  # independent: plain recursion
        node = by_id[node_id]
        return node.duration + max((longest_ending_at(d) for d in node.depends_on), default=0)

    path, length = critical_path(nodes)
    assert length == max(longest_ending_at(n.id) for n in nodes)
    assert sum(by_id[p].duration for p in path) == length
    for earlier, later in itertools.pairwise(path):
        assert earlier in by_id[later].depends_on
    assert critical_path(list(reversed(nodes))) == (path, length)


def test_a_cycle_is_named() -> None:
    nodes = [DagNode("a", 0, ("c",)), DagNode("b", 1, ("a",)), DagNode("c", 2, ("b",))]
    cycle = find_cycle(nodes)
    assert cycle is not None and cycle[0] == cycle[-1] and set(cycle) == {"a", "b", "c"}
    with pytest.raises(CycleError, match="dependency cycle: a -> c -> b -> a"):
        topological_order(nodes)


def test_ten_thousand_goals_order_quickly() -> None:
    rnd = random.Random(7)
    nodes = [DagNode(f"g{i:05d}", i, tuple(sorted({f"g{rnd.randrange(i):05d}"
                                                  for _ in range(min(i, 3))})), rnd.randrange(100))
             for i in range(10_000)]
    assert len(topological_order(nodes)) == 10_000
    assert critical_path(nodes)[1] > 0


def _siblings(tree: GoalTree, n: int = 4) -> tuple[str, list[str]]:
    root = make_root(tree)
    return root, [tree.create_child(root, GoalSpec(f"step {i}")) for i in range(n)]


def test_store_dependencies_are_checked_before_anything_is_written(tree: GoalTree) -> None:
    deps = Dependencies(tree.store)
    root, kids = _siblings(tree)
    deps.add(tree.run, root, [(kids[1], kids[0]), (kids[2], kids[1])])
    seq = tree.run.seq
    with pytest.raises(CycleError, match="->"):
        deps.add(tree.run, root, [(kids[0], kids[2])])
    with pytest.raises(CycleError):
        deps.add(tree.run, root, [(kids[3], kids[3])])
    _other_root, (stranger,) = _siblings(tree, 1)
    with pytest.raises(DependencyError, match="siblings only"):
        deps.add(tree.run, root, [(kids[3], stranger)])
    assert tree.run.seq == seq + 2  # only the second _siblings call wrote
    assert topological_order(deps.children(root)) == [kids[0], kids[1], kids[2], kids[3]]
    assert waves(deps.children(root)) == [[kids[0], kids[3]], [kids[1]], [kids[2]]]


def test_a_goal_is_blocked_until_its_dependencies_resolve(tree: GoalTree) -> None:
    deps = Dependencies(tree.store)
    root, kids = _siblings(tree, 2)
    deps.add(tree.run, root, [(kids[1], kids[0])])
    assert deps.unresolved(kids[1]) == [kids[0]]
    assert tree.view(kids[1]).has_unresolved_dependencies is True
    tree.run.store.execute_adhoc("MATCH (g:Goal {id: $id}) SET g.status = 'resolved'",
                                 {"id": kids[0]}, write=True)
    assert deps.unresolved(kids[1]) == []
    assert tree.view(kids[1]).has_unresolved_dependencies is False
    assert tree.status(kids[1]) == Status.PENDING
