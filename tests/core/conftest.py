"""Core fixtures: an initialised embedded graph and a fresh run on it."""

from __future__ import annotations

import pytest

from kernel.core.constraints import ConstraintEngine
from kernel.core.envelopes import ConstraintSpec, ConstraintType, Provenance
from kernel.core.goals import GoalSpec, GoalTree
from kernel.core.run import Run
from kernel.store import GraphStore


@pytest.fixture
def graph(initialised_graph: GraphStore) -> GraphStore:
    """The core's records on each backend."""
    return initialised_graph


@pytest.fixture
def run(graph: GraphStore) -> Run:
    return Run.start(graph, "test run")


@pytest.fixture
def tree(run: Run) -> GoalTree:
    return GoalTree(run)


def spec(title: str, domain: str = "software", kind: str = "logic") -> ConstraintSpec:
    return ConstraintSpec(type=ConstraintType(kind), domain=domain, title=title,
                          payload={"check": title}, provenance=Provenance(source="human"))


def make_root(tree: GoalTree, description: str = "Build a CSV CLI", core: list[str] = ()) -> str:
    return tree.create_root(GoalSpec(description), core_ids=core)


__all__ = ["ConstraintEngine", "make_root", "spec"]
