"""Step 12, global consistency: leaves that each satisfy their own constraints may
still contradict each other.

Coupling is found by a graph traversal (dependency paths, shared artifacts, shared
selected constraints); only coupled pairs go to one batched model review, and with
none there is no call. A conflict the review names adds its coupling constraints at
the lowest common ancestor of the leaves involved (computed by the kernel), reopens
that ancestor into constraint selection and invalidates its subtree, history kept. The
ancestor's feedback says why (its decompose prompt shows it): the conflict, the leaves'
outputs, and the keys of its parts that held them, whose successors in its next
decomposition get the coupling constraints as their own. The same conflict right after
a reopening for it refuses at once (CONTRADICTION_REPEATED); otherwise each ancestor may
be reopened so only ``max_reopens`` times (the contradiction budget).
"""

from __future__ import annotations

from typing import Any

from kernel.core.envelopes import ConstraintSpec, Provenance
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.state_machine import Status
from kernel.proposals import Proposal
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.refusal import RefusalReason
from kernel.repositories.knowledge import Coupling
from kernel.runtime.gate import CLAUDE_ID
from kernel.solve import moves
from kernel.solve.effects import (
    AddRoles,
    Decision,
    Done,
    Effects,
    ModelCall,
    RefuseGoal,
    Reopen,
    StepChanges,
    StoreConstraints,
)
from kernel.solve.steps._shared import wake_parent
from kernel.solve.view import StepView

S = Status
EXCERPT = 2000
MAX_REVIEWED_PAIRS = 100  # one prompt's worth; the rest are counted for the reviewer


def check(view: StepView, move: moves.Consistency) -> Effects[list[str] | moves.Assemble]:
    """Coupled leaf pairs by traversal (`cypher/consistency/couplings`); with none, no
    call; otherwise one `check_global_consistency` review; a conflict's coupling
    constraints go to the lowest common ancestor, which is reopened with the conflict as
    its reason (the same conflict right after its reopening is refused by name); a
    consistent tree goes on to assembly."""
    root = move.goal
    pairs = coupled_pairs(view.couplings(root.id))
    if not pairs:
        return Done(moves.Assemble(root), StepChanges((Decision(
            root.id, "global_consistency", (), "SAT", "no coupled leaves: nothing to review"),)))
    reviewed = pairs[:MAX_REVIEWED_PAIRS]
    leaves = sorted({p["a"] for p in reviewed} | {p["b"] for p in reviewed})
    resolved = {c.id: c for leaf in leaves
                for c in view.constraints(view.roles(leaf)["selected"])}
    proposal: Proposal[models.ConsistencyReview] = yield ModelCall(
        ops.CHECK_GLOBAL_CONSISTENCY, ops.CHECK_GLOBAL_CONSISTENCY.request(
            goal_id=root.id,
            goal_description=root.description,
            constraints=[resolved[c] for c in sorted(resolved)],
            payload={"goal_summary": root.summary, "couplings": reviewed,
                     "couplings_not_shown": len(pairs) - len(reviewed),
                     "leaves": [_leaf(view, goal_id) for goal_id in leaves]}))
    review = proposal.output
    ignored, found = _first_actionable(view, review, leaves) if review.verdict == "UNSAT" \
        else (StepChanges(), None)
    if found is None:
        return Done(moves.Assemble(root), ignored + Decision(
            root.id, "global_consistency", tuple(leaves), review.verdict,
            f"review verdict {review.verdict}; no actionable conflict"
            + ("" if review.verdict == "SAT" else ": going on to assembly")))
    then, changes = _reopen(view, root, *found)
    return Done(then, ignored + changes)


def _reopen(view: StepView, root: GoalNode, involved: list[str], specs: list[ConstraintSpec],
            conflict: models.Conflict) -> tuple[list[str], StepChanges]:
    """Reopen the lowest common ancestor of the conflicting leaves with the conflict as
    its feedback (the decompose prompt's reason, with the leaves' outputs as evidence,
    and the parts its coupling constraints go to); the same conflict right after a
    reopening for it refuses at once, naming the pair, instead of another round. The
    coupling constraints are stored either way."""
    lca = lowest_common_ancestor(view, involved)
    target = view.goal(lca)
    ids = [spec.with_id().id for spec in specs]
    stored = StepChanges((StoreConstraints(tuple(specs), ride=False),))
    reason = reopen_reason(view, lca, involved, conflict, specs)
    before = (target.feedback or {}).get("conflict")
    pair = " and ".join(f"'{s}'" for s in reason["conflict"]["between"])
    if before is not None and _same(before, reason["conflict"]):
        return wake_parent(root), stored + RefuseGoal(
            root, RefusalReason.CONTRADICTION_REPEATED,
            f"{pair} conflict again after {lca} was reopened for it: {conflict.description}",
            (("pair", pair), ("constraints", ", ".join(s.title for s in specs))))
    reopened, limit = target.reopened, view.config.max_reopens
    if reopened >= limit:  # the root: nothing above it to wake
        return wake_parent(root), stored + RefuseGoal(
            root, RefusalReason.CONTRADICTION_BUDGET_EXCEEDED,
            f"{lca} was reopened {reopened} times for conflicts",
            (("count", str(reopened)), ("limit", str(limit))))
    return [lca], stored + StepChanges((
        AddRoles(lca, (("coupling", tuple(ids)), ("eligible", tuple(ids)))),
        Reopen(lca, S.SELECTING_CONSTRAINTS, GoalChanges(reopened=reopened + 1, feedback=reason),
               Decision(root.id, "global_conflict", tuple(involved), lca,
                        f"coupling constraints added at the lowest common ancestor, "
                        f"for its parts {', '.join(reason['coupling_goes_to'])}",
                        (("constraints", ids),)))))


def reopen_reason(view: StepView, lca: str, involved: list[str], conflict: models.Conflict,
                  coupling: list[ConstraintSpec]) -> dict[str, Any]:
    """What the reopened goal is told (its feedback): the conflict between the leaves,
    each with the output it shipped (the evidence), the coupling constraints, and the
    keys of its own parts that hold those leaves (the parts of its next decomposition
    under the same keys get the coupling constraints as their own)."""
    leaves = [_leaf(view, goal_id) for goal_id in involved]
    parts: list[str] = []
    for goal_id in involved:
        path = [n.id for n in view.path(goal_id)]
        key = view.goal(path[path.index(lca) + 1]).decomposition_key or ""
        parts.append(key.split(":", 1)[-1])
    titles = {c.id: c.title for c in (spec.with_id() for spec in coupling)}
    between = sorted(leaf["summary"] for leaf in leaves)
    return {
        "summary": f"the global review found {' and '.join(repr(b) for b in between)} in "
                   f"conflict: {conflict.description}",
        "conflict": {"between": between, "description": conflict.description,
                     "coupling_constraints": [{"id": i, "title": titles[i]}
                                              for i in sorted(titles)],
                     "evidence": [{"part": leaf["summary"], "output": leaf["output"]}
                                  for leaf in sorted(leaves, key=lambda x: x["summary"])]},
        "coupling_goes_to": sorted(set(parts)),
    }


def _same(before: dict[str, Any], now: dict[str, Any]) -> bool:
    """The same pair of parts (by summary) in conflict over the same coupling constraints."""
    return bool(before.get("between") == now["between"] and
                [c["id"] for c in before.get("coupling_constraints", [])] ==
                [c["id"] for c in now["coupling_constraints"]])


def coupled_pairs(couplings: list[Coupling]) -> list[dict[str, Any]]:
    """Coupled leaf pairs from the traversal's rows, each with how they are coupled; the
    most direct first (a shared logic constraint, then an artifact, then a dependency
    path)."""
    pairs: dict[tuple[str, str], dict[str, Any]] = {}
    for row in couplings:
        a, b = sorted((row["a"], row["b"]))
        pair = pairs.setdefault((a, b), {"a": a, "b": b, "kinds": set(), "via": set()})
        pair["kinds"].add(row["kind"])
        if row["via"]:
            pair["via"].add(row["via"])
    rank = {"constraint": 0, "artifact": 1, "dependency": 2}
    ordered = sorted(pairs.values(),
                     key=lambda p: (min(rank[x] for x in p["kinds"]), p["a"], p["b"]))
    return [{"a": p["a"], "b": p["b"], "kinds": sorted(p["kinds"]), "via": sorted(p["via"])}
            for p in ordered]


def _leaf(view: StepView, goal_id: str) -> dict[str, Any]:
    goal = view.goal(goal_id)
    content = ""
    if goal.output_artifact_id:
        content = view.resolution(goal.output_artifact_id).content[:EXCERPT]
    return {"id": goal_id, "summary": goal.summary, "output": content}


def _first_actionable(view: StepView, review: models.ConsistencyReview, leaves: list[str],
                      ) -> tuple[StepChanges, tuple[list[str], list[ConstraintSpec],
                                                    models.Conflict] | None]:
    """The first conflict naming at least two coupled leaves (by id or exact summary)
    and at least one coupling constraint; the kernel ignores the rest, and says so."""
    by_summary = {view.goal(g).summary: g for g in leaves}
    ignored = StepChanges()
    for conflict in review.conflicts:
        involved = sorted({n if n in leaves else by_summary[n] for n in conflict.nodes_involved
                           if n in leaves or n in by_summary})
        if len(involved) >= 2 and conflict.coupling_constraints:
            specs = [ConstraintSpec(type=c.type, domain=c.domain, title=c.title,
                                    payload=c.payload,
                                    provenance=Provenance(source="resolver",
                                                          resolver_id=CLAUDE_ID))
                     for c in conflict.coupling_constraints]
            return ignored, (involved, specs, conflict)
        ignored += Decision(None, "conflict_ignored", tuple(conflict.nodes_involved), None,
                            "names fewer than two coupled leaves or no coupling constraint")
    return ignored, None


def lowest_common_ancestor(view: StepView, goal_ids: list[str]) -> str:
    paths = [[n.id for n in view.path(g)] for g in goal_ids]
    common = paths[0]
    for path in paths[1:]:
        common = [a for a, b in zip(common, path, strict=False) if a == b]
    return common[-1]
