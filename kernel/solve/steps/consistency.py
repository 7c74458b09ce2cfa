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
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.refusal import RefusalReason
from kernel.repositories import knowledge
from kernel.runtime.gate import CLAUDE_ID, ask
from kernel.runtime.kernel import Kernel
from kernel.solve import moves
from kernel.solve.steps._shared import constraints_of

S = Status
EXCERPT = 2000
MAX_REVIEWED_PAIRS = 100  # one prompt's worth; the rest are counted for the reviewer


def check(k: Kernel, move: moves.Consistency) -> list[str] | moves.Assemble:
    """Coupled leaf pairs by traversal (`cypher/consistency/couplings`); with none, no
    call; otherwise one `check_global_consistency` review; a conflict's coupling
    constraints go to the lowest common ancestor, which is reopened with the conflict as
    its reason (the same conflict right after its reopening is refused by name); a
    consistent tree goes on to assembly."""
    root = move.goal
    pairs = coupled_pairs(k, root.id)
    if not pairs:
        k.log.decision(root.id, "global_consistency", candidates=[], chosen="SAT",
                       rationale="no coupled leaves: nothing to review")
        return moves.Assemble(root)
    reviewed = pairs[:MAX_REVIEWED_PAIRS]
    leaves = sorted({p["a"] for p in reviewed} | {p["b"] for p in reviewed})
    resolved = {c.id: c for leaf in leaves for c in constraints_of(k, leaf, "selected")}
    proposal = ask(k, root.id, ops.CHECK_GLOBAL_CONSISTENCY, ops.CHECK_GLOBAL_CONSISTENCY.request(
        goal_id=root.id,
        goal_description=root.description,
        constraints=[resolved[c] for c in sorted(resolved)],
        payload={"goal_summary": root.summary, "couplings": reviewed,
                 "couplings_not_shown": len(pairs) - len(reviewed),
                 "leaves": [_leaf(k, goal_id) for goal_id in leaves]}))
    review: models.ConsistencyReview = proposal.output
    found = _first_actionable(k, review, leaves) if review.verdict == "UNSAT" else None
    if found is None:
        k.log.decision(root.id, "global_consistency", candidates=leaves, chosen=review.verdict,
                       rationale=f"review verdict {review.verdict}; no actionable conflict"
                                 + ("" if review.verdict == "SAT" else ": going on to assembly"))
        return moves.Assemble(root)
    return _reopen(k, root, *found)


def _reopen(k: Kernel, root: GoalNode, involved: list[str], specs: list[ConstraintSpec],
            conflict: models.Conflict) -> list[str]:
    """Reopen the lowest common ancestor of the conflicting leaves with the conflict as
    its feedback (the decompose prompt's reason, with the leaves' outputs as evidence,
    and the parts its coupling constraints go to); the same conflict right after a
    reopening for it refuses at once, naming the pair, instead of another round."""
    lca = lowest_common_ancestor(k, involved)
    target = k.tree.get(lca)
    ids = k.constraints.upsert(specs)
    reason = reopen_reason(k, lca, involved, conflict, ids)
    before = (target.feedback or {}).get("conflict")
    pair = " and ".join(f"'{s}'" for s in reason["conflict"]["between"])
    if before is not None and _same(before, reason["conflict"]):
        return k.refuse_goal(root, RefusalReason.CONTRADICTION_REPEATED,
                             f"{pair} conflict again after {lca} was reopened for it: "
                             f"{conflict.description}", pair=pair,
                             constraints=", ".join(s.title for s in specs))
    reopened = target.reopened
    if reopened >= k.config.max_reopens:  # the root: nothing above it to wake
        return k.refuse_goal(root, RefusalReason.CONTRADICTION_BUDGET_EXCEEDED,
                             f"{lca} was reopened {reopened} times for conflicts",
                             count=str(reopened), limit=str(k.config.max_reopens))
    k.constraints.add_roles(k.run, lca, {"eligible": ids, "coupling": ids})
    invalidated = k.tree.reopen(lca, S.SELECTING_CONSTRAINTS,
                                GoalChanges(reopened=reopened + 1, feedback=reason))
    k.log.decision(root.id, "global_conflict", candidates=involved, chosen=lca,
                   rationale=f"coupling constraints added at the lowest common ancestor, "
                             f"for its parts {', '.join(reason['coupling_goes_to'])}; "
                             f"{invalidated.said()}", constraints=ids)
    return [lca]


def reopen_reason(k: Kernel, lca: str, involved: list[str], conflict: models.Conflict,
                  coupling_ids: list[str]) -> dict[str, Any]:
    """What the reopened goal is told (its feedback): the conflict between the leaves,
    each with the output it shipped (the evidence), the coupling constraints, and the
    keys of its own parts that hold those leaves (the parts of its next decomposition
    under the same keys get the coupling constraints as their own)."""
    leaves = [_leaf(k, goal_id) for goal_id in involved]
    parts: list[str] = []
    for goal_id in involved:
        path = [n.id for n in k.confidence.path(goal_id)]
        key = k.tree.get(path[path.index(lca) + 1]).decomposition_key or ""
        parts.append(key.split(":", 1)[-1])
    titles = {c.id: c.title for c in k.constraints.get_many(coupling_ids)}
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


def coupled_pairs(k: Kernel, root_id: str) -> list[dict[str, Any]]:
    """Coupled leaf pairs, each with how they are coupled; the most direct first
    (a shared logic constraint, then an artifact, then a dependency path)."""
    pairs: dict[tuple[str, str], dict[str, Any]] = {}
    for row in knowledge.couplings(k.store, root_id):
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


def _leaf(k: Kernel, goal_id: str) -> dict[str, Any]:
    goal = k.tree.get(goal_id)
    content = ""
    if goal.output_artifact_id:
        output = models.ResolutionOutput.model_validate_json(
            k.artifacts.read(goal.output_artifact_id))
        content = output.content[:EXCERPT]
    return {"id": goal_id, "summary": goal.summary, "output": content}


def _first_actionable(k: Kernel, review: models.ConsistencyReview, leaves: list[str],
                      ) -> tuple[list[str], list[ConstraintSpec], models.Conflict] | None:
    """The first conflict naming at least two coupled leaves (by id or exact summary)
    and at least one coupling constraint; the kernel ignores the rest."""
    by_summary = {k.tree.get(g).summary: g for g in leaves}
    for conflict in review.conflicts:
        involved = sorted({n if n in leaves else by_summary[n] for n in conflict.nodes_involved
                           if n in leaves or n in by_summary})
        if len(involved) >= 2 and conflict.coupling_constraints:
            specs = [ConstraintSpec(type=c.type, domain=c.domain, title=c.title,
                                    payload=c.payload,
                                    provenance=Provenance(source="resolver",
                                                          resolver_id=CLAUDE_ID))
                     for c in conflict.coupling_constraints]
            return involved, specs, conflict
        k.log.decision(None, "conflict_ignored", candidates=conflict.nodes_involved,
                       chosen=None, rationale="names fewer than two coupled leaves or no "
                                              "coupling constraint")
    return None


def lowest_common_ancestor(k: Kernel, goal_ids: list[str]) -> str:
    paths = [[n.id for n in k.confidence.path(g)] for g in goal_ids]
    common = paths[0]
    for path in paths[1:]:
        common = [a for a, b in zip(common, path, strict=False) if a == b]
    return common[-1]
