"""What a step makes rides the step's one commit: artifacts, an opened attempt, the spend
that paid for the call (and plain calls before it), constraints, the entry from pending
and a verification, each stored on its own only when the next commit cannot carry it."""

from __future__ import annotations

import pytest

from kernel.core.artifacts import Artifacts, BlobStore
from kernel.core.attempts import Attempts
from kernel.core.budget import Amount, BudgetEnforcer
from kernel.core.constraints import ConstraintEngine
from kernel.core.dag import Dependencies
from kernel.core.envelopes import Check, Lineage, Verification
from kernel.core.goal_node import GoalChanges
from kernel.core.goals import CommitRejected, Decomposed, GoalSpec, GoalTree
from kernel.core.state_machine import Status
from tests.core.conftest import make_root, spec


def _resolving(tree: GoalTree) -> str:
    root = make_root(tree)
    BudgetEnforcer(tree.run).allocate_root(root, Amount(10_000_000, 600_000))
    kid = tree.create_child(root, GoalSpec("child"))
    for target in (Status.IDENTIFYING_CONSTRAINTS, Status.SELECTING_CONSTRAINTS,
                   Status.SELECTING_RESOLVER, Status.RESOLVING):
        tree.transition(kid, target)
    return kid


def _count(tree: GoalTree, query: str, **params: str) -> int:
    return tree.store.execute_adhoc(query, params, write=False).records()[0]["n"]


def test_an_attempt_its_output_and_its_spend_ride_the_goals_transition(
        tree: GoalTree, tmp_path) -> None:  # type: ignore[no-untyped-def]
    kid = _resolving(tree)
    stats, seq = tree.store.stats, tree.run.seq
    stats.reset()
    attempt = Attempts(tree.run).open(kid, "resolver:claude-code-0")
    output = Artifacts(tree.run, BlobStore(tmp_path)).register(
        kid, "print(1)\n", type="code", format="python",
        lineage=Lineage(node_id=kid, resolver_id="resolver:claude-code-0"))
    BudgetEnforcer(tree.run).record(kid, Amount(700, 80), "resolver:claude-code-0", "resolve",
                                    attempt_id=attempt.id, output_artifact_id=output.id)
    assert stats.write_count == 0 and _count(tree, "MATCH (a:Attempt) RETURN count(a) AS n") == 0
    tree.transition(kid, Status.VERIFYING)
    assert stats.write_count == 1 and tree.run.seq == seq + 1
    paid = tree.store.execute_adhoc(
        "MATCH (s:BudgetEvent)-[:PAYS_FOR]->(a:Attempt {id: $a})-[:FOR]->(g:Goal), "
        "(a)-[:PRODUCED]->(o:Artifact) RETURN s.cost AS cost, o.id AS out, "
        "g.output_artifact_id AS goal_out, g.attempt_count AS n, g.status AS status",
        {"a": attempt.id}, write=False).records()
    assert paid == [{"cost": 700, "out": output.id, "goal_out": output.id, "n": 1,
                     "status": "verifying"}]


def test_what_the_next_commit_cannot_carry_is_stored_just_before_it(
        tree: GoalTree, tmp_path) -> None:  # type: ignore[no-untyped-def]
    kid = _resolving(tree)
    other = tree.create_child(make_root(tree), GoalSpec("elsewhere"))
    attempt = Attempts(tree.run).open(kid, "resolver:claude-code-0")
    BudgetEnforcer(tree.run).record(kid, Amount(5, 1), "r", "resolve", attempt_id=attempt.id)
    stats = tree.store.stats
    stats.reset()
    tree.transition(other, Status.IDENTIFYING_CONSTRAINTS)  # another goal's commit
    assert (stats.writes["budget/spend"], stats.writes["goal/transition"]) == (1, 1)
    assert tree.run.step.pending_spend is None and tree.run.step.pending_attempt is None
    assert _count(tree, "MATCH (:BudgetEvent {kind: 'spend'})-[:PAYS_FOR]->(a:Attempt {id: $a}) "
                        "RETURN count(a) AS n", a=attempt.id) == 1


def test_an_entry_from_pending_rides_the_commit_that_moves_the_goal_on(tree: GoalTree) -> None:
    root = make_root(tree)
    engine = ConstraintEngine(tree.store)
    stats = tree.store.stats
    stats.reset()
    tree.enter(root, Status.IDENTIFYING_CONSTRAINTS)
    assert tree.status(root) == Status.IDENTIFYING_CONSTRAINTS  # as the step sees it
    ids = engine.upsert([spec("rides along")], ride=tree.run)
    assert stats.write_count == 0
    engine.set_role(tree.run, root, "eligible", ids, Status.IDENTIFYING_CONSTRAINTS,
                    Status.SELECTING_CONSTRAINTS)
    assert stats.write_count == 1 and tree.run.step.pending_move is None
    assert tree.status(root) == Status.SELECTING_CONSTRAINTS
    assert engine.roles(root)["eligible"] == ids


def test_an_entry_not_carried_is_stored_as_its_own_transition(tree: GoalTree) -> None:
    root = make_root(tree)
    tree.enter(root, Status.IDENTIFYING_CONSTRAINTS)
    tree.run.flush()  # a step that stops after entering
    assert tree.run.step.pending_move is None
    stored = tree.store.execute_adhoc("MATCH (g:Goal {id: $g}) RETURN g.status AS s",
                                      {"g": root}, write=False).records()
    assert stored == [{"s": "identifying_constraints"}]


def _funded(tree: GoalTree) -> tuple[str, BudgetEnforcer, Amount]:
    """A resolving goal given a share of its parent's budget, counts reset."""
    kid = _resolving(tree)
    budget = BudgetEnforcer(tree.run)
    budget.allocate_children(str(tree.get(kid).parent_id), {kid: 1.0})
    left = budget.remaining(kid)
    tree.store.stats.reset()
    return kid, budget, left


def test_plain_calls_on_one_goal_ride_its_next_commit_while_its_budget_covers_them(
        tree: GoalTree) -> None:
    kid, budget, left = _funded(tree)
    stats = tree.store.stats
    budget.record(kid, Amount(300, 10), "resolver:claude", "judge")
    assert budget.remaining(kid) == Amount(left.cost - 300, left.time - 10)  # counted, not stored
    budget.record(kid, Amount(200, 5), "resolver:claude", "classify_leaf")
    assert stats.write_count == 0
    tree.transition(kid, Status.VERIFYING)
    assert stats.write_count == 1
    events = tree.store.execute_adhoc(
        "MATCH (s:BudgetEvent {kind: 'spend'})-[:CHARGED_TO]->(g:Goal {id: $g}) "
        "RETURN s.operation AS op, s.cost AS cost, g.cost_spent AS spent ORDER BY s.cost",
        {"g": kid}, write=False).records()
    assert events == [{"op": "classify_leaf", "cost": 200, "spent": 500},
                      {"op": "judge", "cost": 300, "spent": 500}]
    assert budget.ledger_totals(kid)["cost_spent"] == 500


def test_a_call_that_may_overrun_is_stored_before_the_next_one(tree: GoalTree) -> None:
    kid, budget, left = _funded(tree)
    stats = tree.store.stats
    budget.record(kid, Amount(left.cost + 1, 1), "resolver:claude", "judge")  # overruns
    budget.record(kid, Amount(2, 1), "resolver:claude", "classify_leaf")
    assert stats.write_count == 1  # the first is its own commit: the store decides a grant
    tree.transition(kid, Status.VERIFYING)
    assert stats.write_count == 2
    assert budget.ledger_totals(kid)["cost_spent"] == left.cost + 3


def test_a_verification_rides_the_goals_next_move_and_reads_as_stored_meanwhile(
        tree: GoalTree, tmp_path) -> None:  # type: ignore[no-untyped-def]
    kid = _resolving(tree)
    attempts = Attempts(tree.run)
    attempt = attempts.open(kid, "resolver:claude-code-0")
    output = Artifacts(tree.run, BlobStore(tmp_path)).register(
        kid, "done", type="doc", format="text",
        lineage=Lineage(node_id=kid, resolver_id="resolver:claude-code-0"))
    BudgetEnforcer(tree.run).record(kid, Amount(1, 1), "resolver:claude-code-0", "resolve",
                                    attempt_id=attempt.id, output_artifact_id=output.id)
    tree.transition(kid, Status.VERIFYING)
    checked = Verification.from_checks([Check(constraint_id="c", passed=True, sigma_i=0.9)])
    stats = tree.store.stats
    stats.reset()
    attempts.record_verification(attempt, checked, sigma_paths=[{"id": kid, "sigma_path": 0.9}],
                                 ride=True)
    assert stats.write_count == 0
    seen = tree.get(kid)  # the step reads its goal as the move will store it
    assert (seen.sigma_v, seen.sigma_path, seen.verification) == (0.9, 0.9, checked)
    tree.transition(kid, Status.RESOLVED)
    assert stats.write_count == 1 and tree.run.step.pending_verification is None
    stored = attempts.of_goal(kid)[-1]
    assert (stored.verdict, stored.sigma_v) == ("SAT", 0.9)
    assert tree.get(kid) == seen.model_copy(update={"status": Status.RESOLVED})


def test_a_verification_not_carried_is_stored_before_any_other_commit(
        tree: GoalTree, tmp_path) -> None:  # type: ignore[no-untyped-def]
    kid = _resolving(tree)
    attempts = Attempts(tree.run)
    attempt = attempts.open(kid, "resolver:claude-code-0")
    tree.transition(kid, Status.VERIFYING)
    failed = Verification.from_checks([Check(constraint_id="c", passed=False, sigma_i=0.1)])
    attempts.record_verification(attempt, failed, ride=True)
    other = tree.create_child(make_root(tree), GoalSpec("elsewhere"))  # any other commit
    assert tree.run.step.pending_verification is None and other
    assert attempts.of_goal(kid)[-1].verdict == "UNSAT"


def test_a_decompositions_call_rides_the_commit_that_creates_its_children(
        tree: GoalTree) -> None:
    root = make_root(tree)
    budget = BudgetEnforcer(tree.run)
    budget.allocate_root(root, Amount(10_000, 600))
    seq = tree.run.seq
    tree.store.stats.reset()
    budget.record(root, Amount(70, 3), "resolver:claude", "decompose")
    made = tree.create_children(tree.get(root), [("1:a", GoalSpec("part a")),
                                                 ("1:b", GoalSpec("part b"))])
    assert tree.store.stats.write_count == 1 and tree.run.seq == seq + 2
    assert [tree.get(c).seq for c in made] == [seq, seq + 1]
    assert budget.ledger_totals(root)["cost_spent"] == 70


def _decomposing(tree: GoalTree) -> tuple[str, BudgetEnforcer]:
    root = make_root(tree)
    budget = BudgetEnforcer(tree.run)
    budget.allocate_root(root, Amount(10_000, 600))
    for target in (Status.IDENTIFYING_CONSTRAINTS, Status.SELECTING_CONSTRAINTS,
                   Status.SELECTING_RESOLVER, Status.RESOLVING, Status.VERIFYING,
                   Status.DECOMPOSING):
        tree.transition(root, target)
    return root, budget


def test_a_fresh_decomposition_is_one_commit(tree: GoalTree) -> None:
    """Children, their dependencies and budgets, the parent's move and the spend that
    paid for the plan: one write, and the same graph the separate commits made."""
    root, budget = _decomposing(tree)
    seq = tree.run.seq
    tree.store.stats.reset()
    budget.record(root, Amount(70, 3), "resolver:claude", "decompose")
    a, b = tree.child_ids(2)
    grants = budget.grants_to_children(root, budget.remaining(root), {a: 1.0, b: 3.0})
    made = tree.create_children(
        tree.get(root), [("1:a", GoalSpec("part a")), ("1:b", GoalSpec("part b"))],
        decomposed=Decomposed([(b, a)], grants, Status.PENDING, GoalChanges(decompositions=1)))
    assert made == [a, b]
    assert tree.store.stats.write_count == 1 and tree.run.seq == seq + 2
    parent = tree.get(root)
    assert (parent.status, parent.decompositions) == (Status.PENDING, 1)
    left = 10_000 - 70
    shares = {a: left * 4 // 5 * 1 // 4, b: left * 4 // 5 * 3 // 4}
    assert {c: budget.remaining(c).cost for c in made} == shares
    totals = budget.ledger_totals(root)
    assert (totals["cost_spent"], totals["cost_granted"]) == (70, sum(shares.values()))
    assert budget.remaining(root).cost == left - sum(shares.values())
    assert {n.id: n.depends_on for n in Dependencies(tree.store).children(root)} == \
        {a: (), b: (a,)}
    assert _count(tree, "MATCH (e:BudgetEvent {kind: 'allocate'})-[:DRAWN_FROM]->"
                        "(:Goal {id: $g}) RETURN count(e) AS n", g=root) == 2


def test_a_decomposition_granting_more_than_the_parent_holds_writes_nothing(
        tree: GoalTree) -> None:
    root, budget = _decomposing(tree)
    a, b = tree.child_ids(2)
    grants = budget.grants_to_children(root, budget.remaining(root), {a: 1.0, b: 1.0})
    grants.total["need_cost"] = 10_001
    seq = tree.run.seq
    with pytest.raises(CommitRejected):
        tree.create_children(
            tree.get(root), [("1:a", GoalSpec("part a")), ("1:b", GoalSpec("part b"))],
            decomposed=Decomposed([], grants, Status.PENDING, GoalChanges(decompositions=1)))
    assert tree.run.seq == seq and tree.get(root).status == Status.DECOMPOSING
    assert _count(tree, "MATCH (c:Goal)-[:CHILD_OF]->(:Goal {id: $g}) RETURN count(c) AS n",
                  g=root) == 0
