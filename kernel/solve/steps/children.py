"""Step 8, once the decomposition is settled: the children made (inheriting resolved
constraints, each answering for those it was given), the dependencies that keep the DAG
acyclic, budgets by relative complexity. Their ids are asked for (``ChildIds``: taken
once the pending spend is stored, as the children will be created) and the goals it
queues are those ids; the children, their dependencies and budgets and the goal's move
are one change (``Decomposition``)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from kernel.core.dag import DagNode, find_cycle, topological_order
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.goals import GoalSpec
from kernel.protocol import coverage
from kernel.protocol import solve_models as models
from kernel.solve import moves
from kernel.solve.effects import (
    AddDependencies,
    AllocateChildren,
    ChildIds,
    Decision,
    Decomposition,
    Done,
    Effects,
    Flow,
    NewChildren,
    Request,
    StepChanges,
    Transition,
    Wake,
)
from kernel.solve.steps._shared import S
from kernel.solve.view import StepView

Keyed = tuple[tuple[str, GoalSpec], ...]  # (decomposition key, spec), in the proposal's order


def make_children(view: StepView, move: moves.MakeChildren) -> Effects[list[str]]:
    """The kernel creates the children of the settled decomposition (inheriting
    resolved constraints, each answering for those it was given), accepts dependencies
    that keep the DAG acyclic, allocates budgets by relative complexity with a 20%
    reserve; the parts with nothing to wait for are queued."""
    goal = move.goal  # as the decomposition was asked for
    existing = view.children_keys(goal.id)
    if not existing:
        return (yield from _fresh(view, goal, move.plan, move.round, move.covered))
    return (yield from _beside(view, view.goal(goal.id), move.plan, move.round, existing,
                               move.covered))


def _fresh(view: StepView, goal: GoalNode, plan: models.Decomposition, round_: int,
           covered: coverage.Coverage) -> Generator[Request, Any, Done[list[str]]]:
    """A goal without live children: the children, their dependencies and budgets, the
    goal's move and the spend that paid for the plan are one commit."""
    specs = _specs(goal, plan, round_, {}, covered)
    inherited = tuple(view.inherited_by_children(goal.id))
    # a spend that cannot ride is stored before the children's ids are taken
    taken: list[str] = yield ChildIds(goal.id, len(specs))
    ids = dict(zip(specs, taken, strict=True))
    rejected, edges = _acyclic_edges(goal.id, plan, ids)
    weights = tuple((cid, _weight(plan, key)) for key, cid in ids.items())
    nodes = [DagNode(cid, number, tuple(sorted(d for g, d in edges if g == cid)))
             for number, cid in enumerate(ids.values())]
    waiting = {g for g, _ in edges}  # woken when its dependencies resolve
    woken = [c for c in topological_order(nodes) if c not in waiting]
    said, coupling = _coupling(goal, round_)
    changes = StepChanges((*rejected, Wake(tuple(woken)), Flow(
        goal.id, f"decomposed into {len(ids)} children, {len(edges)} dependencies"), *said,
        Decomposition(goal, tuple(specs.values()), tuple(taken), inherited, coupling,
                      tuple(edges), weights, S.PENDING, GoalChanges(decompositions=round_))))
    return Done(woken, changes)


def _beside(view: StepView, goal: GoalNode, plan: models.Decomposition, round_: int,
            existing: dict[str, str], covered: coverage.Coverage,
            ) -> Generator[Request, Any, Done[list[str]]]:
    """A goal with live children already (made before a crash by a kernel that
    committed a decomposition in parts, or a build subgoal): what is there is kept, and
    each remaining part of the decomposition is its own commit."""
    goal_id = goal.id
    keys = list(dict.fromkeys(c.key for c in plan.children))
    new = _specs(goal, plan, round_, existing, covered)
    said, coupling = _coupling(goal, round_)
    made: list[str] = yield NewChildren(goal, tuple(new.values()),
                                        tuple(view.inherited_by_children(goal_id)), coupling,
                                        said[0] if said else None)
    found = {c.key: existing[f"{round_}:{c.key}"] for c in plan.children
             if f"{round_}:{c.key}" in existing} | dict(zip(new, made, strict=True))
    ids = {c.key: found[c.key] for c in plan.children}  # the proposal's order
    rejected, edges = _acyclic_edges(goal_id, plan, ids)
    weights = {ids[key]: _weight(plan, key) for key in keys}
    # a child made just now starts with nothing allocated; one kept from an earlier
    # round (a resumed step) may already hold its share
    kept = set(existing.values())
    allocate = all(view.cost_left(cid) == 0 for cid in weights if cid in kept)
    # the children as they stand once the dependencies are added
    extra: dict[str, set[str]] = {}
    for g, d in edges:
        extra.setdefault(g, set()).add(d)
    children = [DagNode(n.id, n.seq, tuple(sorted(set(n.depends_on) | extra.get(n.id, set()))),
                        n.duration, n.status) for n in view.children(goal_id)]
    resolved = {c.id for c in children if c.status == S.RESOLVED.value}
    # a part with an unresolved dependency is woken when that dependency resolves
    waiting = {c.id for c in children if set(c.depends_on) - resolved}
    woken = [c for c in topological_order(children) if c not in waiting]
    changes = StepChanges((*rejected, AddDependencies(goal_id, tuple(edges))))
    if allocate:
        changes += AllocateChildren(goal_id, tuple(weights.items()))
    changes += StepChanges((
        Wake(tuple(woken)), Transition(goal_id, S.PENDING, GoalChanges(decompositions=round_)),
        Flow(goal_id, f"decomposed into {len(ids)} children, {len(edges)} dependencies")))
    return Done(woken, changes)


def _weight(plan: models.Decomposition, key: str) -> float:
    return next(c.relative_complexity for c in plan.children if c.key == key)


def _coupling(goal: GoalNode, round_: int,
              ) -> tuple[tuple[Flow, ...], tuple[tuple[str, tuple[str, ...]], ...]]:
    """By decomposition key, the coupling constraints a part gets as its own (with the
    line that says so): a goal reopened for a conflict between its parts gives that
    conflict's coupling constraints to the parts under the same keys as those that
    produced the coupled values (its feedback names them, see
    ``consistency.reopen_reason``)."""
    reason = goal.feedback or {}
    ids = [c["id"] for c in (reason.get("conflict") or {}).get("coupling_constraints", [])]
    if not ids:
        return (), ()
    keys = reason.get("coupling_goes_to", [])
    said = Flow(goal.id, f"coupling constraints for the parts {', '.join(keys)}")
    return (said,), tuple((f"{round_}:{key}", tuple(ids)) for key in keys)


def _specs(goal: GoalNode, plan: models.Decomposition, round_: int,
           existing: dict[str, str], covered: coverage.Coverage,
           ) -> dict[str, tuple[str, GoalSpec]]:
    """The children to create by the proposal's keys, in its order (the first of a
    repeated key), as (decomposition key, spec, with the constraints it answers for);
    not those in ``existing``."""
    new: dict[str, tuple[str, GoalSpec]] = {}
    for child in plan.children:
        key = f"{round_}:{child.key}"
        if child.key not in new and key not in existing:
            new[child.key] = (key, GoalSpec(
                child.goal_description, child.goal_summary, child.modality,
                input_artifact_ids=(goal.require("output_artifact_id"),),
                owed=tuple(covered.owed_by(child.key))))
    return new


def _acyclic_edges(goal_id: str, plan: models.Decomposition, ids: dict[str, str],
                   ) -> tuple[tuple[Decision, ...], list[tuple[str, str]]]:
    """The proposal's dependencies the kernel accepts: known keys, no self-edges, and no
    edge that would close a cycle (edges are taken in order; a closing one is dropped,
    and the decision to drop it logged)."""
    accepted: list[tuple[str, str]] = []
    rejected: list[Decision] = []
    seqs = {cid: i for i, cid in enumerate(ids.values())}
    for dep in plan.dependencies:
        if dep.child not in ids or dep.depends_on not in ids or dep.child == dep.depends_on:
            continue
        edge = (ids[dep.child], ids[dep.depends_on])
        trial = [*accepted, edge]
        nodes = [DagNode(cid, seqs[cid], tuple(sorted({d for g, d in trial if g == cid})))
                 for cid in ids.values()]
        if find_cycle(nodes) is None:
            accepted.append(edge)
        else:
            rejected.append(Decision(goal_id, "dependency_rejected", (list(edge),), None,
                                     "it would close a cycle"))
    return tuple(rejected), sorted(set(accepted))
