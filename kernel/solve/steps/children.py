"""Step 8, once the decomposition is settled: the children made (inheriting resolved
constraints, each answering for those it was given), the dependencies that keep the DAG
acyclic, budgets by relative complexity. Their ids are taken as they are made, so this
continuation still performs its writes through the run's context."""

from __future__ import annotations

from kernel.core.dag import DagNode, find_cycle, topological_order
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.goals import Decomposed, GoalSpec
from kernel.protocol import coverage
from kernel.protocol import solve_models as models
from kernel.repositories import goals
from kernel.runtime.kernel import Kernel
from kernel.solve import moves
from kernel.solve.steps._shared import S


def make_children(k: Kernel, move: moves.MakeChildren) -> list[str]:
    """The kernel creates the children of the settled decomposition (inheriting
    resolved constraints, each answering for those it was given), accepts dependencies
    that keep the DAG acyclic, allocates budgets by relative complexity with a 20%
    reserve; the parts with nothing to wait for are queued."""
    goal = move.goal  # as the decomposition was asked for
    existing = goals.children_keys(k.store, goal.id)
    if not existing:
        return _fresh(k, goal, move.plan, move.round, move.covered)
    return _beside(k, goal, move.plan, move.round, existing, move.covered)


def _beside(k: Kernel, goal: GoalNode, plan: models.Decomposition, round_: int,
            existing: dict[str, str], covered: coverage.Coverage) -> list[str]:
    """A goal with live children already (made before a crash by a kernel that
    committed a decomposition in parts, or a build subgoal): what is there is kept, and
    each remaining part of the decomposition is its own commit."""
    goal_id = goal.id
    keys = list(dict.fromkeys(c.key for c in plan.children))
    ids = _children(k, goal, plan, round_, existing, covered)
    edges = _acyclic_edges(k, goal_id, plan, ids)
    k.deps.add(k.run, goal_id, edges)
    weights = {ids[key]: next(c.relative_complexity for c in plan.children if c.key == key)
               for key in keys}
    # a child made just now starts with nothing allocated; one kept from an earlier
    # round (a resumed step) may already hold its share
    kept = set(existing.values())
    if all(k.budget.remaining(cid).cost == 0 for cid in weights if cid in kept):
        k.budget.allocate_children(goal_id, weights)
    children = k.deps.children(goal_id)
    resolved = {c.id for c in children if c.status == S.RESOLVED.value}
    # a part with an unresolved dependency is woken when that dependency resolves
    waiting = {c.id for c in children if set(c.depends_on) - resolved}
    woken = [c for c in topological_order(children) if c not in waiting]
    k.run.will_wake(woken)
    k.tree.transition(goal_id, S.PENDING, GoalChanges(decompositions=round_))
    k.log.flow(goal_id, f"decomposed into {len(ids)} children, {len(edges)} dependencies")
    return woken


def _fresh(k: Kernel, goal: GoalNode, plan: models.Decomposition, round_: int,
           covered: coverage.Coverage) -> list[str]:
    """A goal without live children: the children, their dependencies and budgets, the
    goal's move and the spend that paid for the plan are one commit."""
    k.run.store_pending(keep_spend_of=goal.id)
    # a spend that cannot ride is stored here, before the children's ids are taken
    left = k.budget.remaining(goal.id)
    specs = _specs(goal, plan, round_, {}, covered)
    ids = dict(zip(specs, k.tree.child_ids(len(specs)), strict=True))
    edges = _acyclic_edges(k, goal.id, plan, ids)
    weights = {cid: next(c.relative_complexity for c in plan.children if c.key == key)
               for key, cid in ids.items()}
    grants = k.budget.grants_to_children(goal.id, left, weights)
    nodes = [DagNode(cid, number, tuple(sorted(d for g, d in edges if g == cid)))
             for number, cid in enumerate(ids.values())]
    waiting = {g for g, _ in edges}  # woken when its dependencies resolve
    woken = [c for c in topological_order(nodes) if c not in waiting]
    k.run.will_wake(woken)
    k.log.flow(goal.id, f"decomposed into {len(ids)} children, {len(edges)} dependencies")
    made = k.tree.create_children(
        goal, list(specs.values()), k.constraints.inherited_by_children_of(goal.id),
        Decomposed(edges, grants, S.PENDING, GoalChanges(decompositions=round_)),
        coupling=_coupling(k, goal, round_))
    if made != list(ids.values()):
        raise AssertionError(f"children of {goal.id} made as {made}, planned as {ids}")
    return woken


def _coupling(k: Kernel, goal: GoalNode, round_: int) -> dict[str, list[str]]:
    """By decomposition key, the coupling constraints a part gets as its own: a goal
    reopened for a conflict between its parts gives that conflict's coupling constraints
    to the parts under the same keys as those that produced the coupled values (its
    feedback names them, see ``consistency.reopen_reason``)."""
    reason = goal.feedback or {}
    ids = [c["id"] for c in (reason.get("conflict") or {}).get("coupling_constraints", [])]
    if not ids:
        return {}
    keys = reason.get("coupling_goes_to", [])
    k.log.flow(goal.id, f"coupling constraints for the parts {', '.join(keys)}")
    return {f"{round_}:{key}": ids for key in keys}


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


def _children(k: Kernel, goal: GoalNode, plan: models.Decomposition, round_: int,
              existing: dict[str, str], covered: coverage.Coverage) -> dict[str, str]:
    """The children's ids by the proposal's keys, in its order: those this step made
    before a crash (``existing``, by decomposition key), the others created in one
    commit with the constraints they inherit."""
    new = _specs(goal, plan, round_, existing, covered)
    ids = {c.key: existing[f"{round_}:{c.key}"] for c in plan.children
           if f"{round_}:{c.key}" in existing}
    made = k.tree.create_children(goal, list(new.values()),
                                  k.constraints.inherited_by_children_of(goal.id),
                                  coupling=_coupling(k, goal, round_))
    ids |= dict(zip(new, made, strict=True))
    return {c.key: ids[c.key] for c in plan.children}  # the proposal's order


def _acyclic_edges(k: Kernel, goal_id: str, plan: models.Decomposition,
                   ids: dict[str, str]) -> list[tuple[str, str]]:
    """The proposal's dependencies the kernel accepts: known keys, no self-edges, and no
    edge that would close a cycle (edges are taken in order; a closing one is dropped)."""
    accepted: list[tuple[str, str]] = []
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
            k.log.decision(goal_id, "dependency_rejected", candidates=[list(edge)], chosen=None,
                           rationale="it would close a cycle")
    return sorted(set(accepted))
