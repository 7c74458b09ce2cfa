"""Reads of the goal tree the steps and views make beside ``kernel.core.goals.GoalTree``
(which owns the goal's own reads and moves)."""

from __future__ import annotations

from typing import Any, TypedDict, cast

from kernel.core.run import Run
from kernel.store.base import GraphStore


class Wakes(TypedDict):
    """Who a resolved goal may wake: ``ready`` holds ``[seq, id]`` of dependents with
    nothing else to wait for; the parent with how many of its parts still keep it."""

    ready: list[list[Any] | None]
    parent_id: str | None
    parent_waits_on: int


class Leaf(TypedDict):
    id: str
    sigma_path: float | None


class Part(TypedDict):
    """A goal of a subtree, with what it spent and produced."""

    id: str
    parent_id: str | None
    purpose: str
    stale: bool
    cost_spent: int | None
    time_spent: int | None
    output_artifact_id: str | None


class Child(TypedDict):
    id: str
    seq: int
    status: str
    time_allocated: int | None
    depends_on: list[str]


class DependencyOutput(TypedDict):
    """A dependency and one output it ships: its own (a leaf), or a live leaf's below it
    (a decomposed dependency ships one row per such part)."""

    id: str
    summary: str
    part_id: str
    part_summary: str
    artifact_id: str | None


class TreeRow(TypedDict):
    """A goal of a run as the tree view shows it (money in micro-dollars, time in ms)."""

    id: str
    parent_id: str | None
    depth: int
    seq: int
    summary: str
    status: str
    sigma_v: float | None
    sigma_path: float | None
    cost_allocated: int | None
    cost_spent: int | None  # its own calls
    subtree_cost_spent: int  # its own and every goal's below it
    cost_granted: int | None
    cost_refunded: int | None
    time_allocated: int | None
    time_spent: int | None
    stale: bool
    attempt_count: int
    builds_capability: str | None
    verdict: str | None


def unfinished(store: GraphStore, run_id: str) -> list[str]:
    """The run's live, unfinished goals in creation order (a queue for a run without one)."""
    return [r["id"] for r in store.run("goal/unfinished", {"run_id": run_id})]


def children_keys(store: GraphStore, goal_id: str) -> dict[str, str]:
    """The goal's children by their decomposition key (how a repeated step finds them)."""
    return {r["decomposition_key"]: r["id"]
            for r in store.run("goal/children_keys", {"goal_id": goal_id})}


def wakes(store: GraphStore, goal_id: str) -> Wakes:
    return cast(Wakes, store.run("goal/wakes", {"goal_id": goal_id})[0])


def leaves(store: GraphStore, run_id: str) -> list[Leaf]:
    """The run's live leaves, by id."""
    return cast(list[Leaf], store.run("goal/leaves", {"run_id": run_id}))


def subtree_parts(store: GraphStore, goal_id: str) -> list[Part]:
    return cast(list[Part], store.run("goal/subtree_parts", {"goal_id": goal_id}))


def children(store: GraphStore, goal_id: str) -> list[Child]:
    """The goal's live children in creation order, with what each depends on."""
    return cast(list[Child], store.run("dag/children", {"goal_id": goal_id}))


def dependency_outputs(store: GraphStore, goal_id: str) -> list[DependencyOutput]:
    """What the goals ``goal_id`` depends on ship, in their order: a decomposed one's
    live leaves' outputs, a leaf's own."""
    return cast(list[DependencyOutput],
                store.run("dag/dependency_outputs", {"goal_id": goal_id}))


def tree(store: GraphStore, run_id: str) -> list[TreeRow]:
    return cast(list[TreeRow], store.run("goal/tree", {"run_id": run_id}))


def view(store: GraphStore, goal_id: str) -> dict[str, Any] | None:
    """The goal's stored view (``GoalNode``'s input), or None."""
    rows = store.run("goal/get", {"goal_id": goal_id})
    return dict(rows[0]["view"]) if rows else None


def confirm_intake(run: Run, params: dict[str, Any], *, what: str) -> None:
    """Step 1's end: the confirmed description, summary and core, in one commit."""
    run.commit("intake/confirm", params, what=what)
