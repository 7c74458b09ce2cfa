"""Constraint roles and inheritance (B6), signatures, and the attempt history."""

from __future__ import annotations

import pytest

from kernel.core.attempts import Attempts, AttemptsExhaustedError
from kernel.core.budget import Amount, BudgetEnforcer
from kernel.core.constraints import ConstraintEngine, constraint_signature
from kernel.core.envelopes import Check, Verification
from kernel.core.goals import GoalSpec, GoalTree
from kernel.core.state_machine import Status
from tests.core.conftest import make_root, spec


def _to_verifying(tree: GoalTree, engine: ConstraintEngine, goal: str, ids: list[str]) -> None:
    tree.transition(goal, Status.IDENTIFYING_CONSTRAINTS)
    engine.set_role(tree.run, goal, "eligible", ids, Status.IDENTIFYING_CONSTRAINTS,
                    Status.SELECTING_CONSTRAINTS)
    engine.set_role(tree.run, goal, "selected", ids, Status.SELECTING_CONSTRAINTS,
                    Status.SELECTING_RESOLVER)
    tree.transition(goal, Status.RESOLVING)


def test_identical_constraints_are_one(graph) -> None:
    engine = ConstraintEngine(graph)
    first = engine.upsert([spec("exit 1 on a missing column"), spec("exit 1 on a missing column")])
    assert first[0] == first[1]
    assert engine.upsert([spec("exit 1 on a missing column")]) == first[:1]
    assert len(engine.get_many(first)) == 1


def test_signature_ignores_budget_domains() -> None:
    constraints = [spec("a", "latency").with_id(), spec("b", "cost").with_id(),
                   spec("c", "schedule").with_id(), spec("d", "code_quality", "semantic").with_id(),
                   spec("e", "latency").with_id()]
    assert constraint_signature(constraints) == (("logic", "latency"),
                                                 ("semantic", "code_quality"))


def test_children_inherit_resolved_constraints_and_never_see_them_as_eligible(
        tree: GoalTree) -> None:
    engine = ConstraintEngine(tree.store)
    ids = engine.upsert([spec("python 3.10+"), spec("streams the file")])
    root = make_root(tree, core=ids[:1])
    _to_verifying(tree, engine, root, ids)
    attempts = Attempts(tree.run)
    attempt = attempts.open(root, "resolver:claude-code-0")
    tree.transition(root, Status.VERIFYING)
    attempts.record_verification(attempt, Verification.from_checks(
        [Check(constraint_id=c, passed=True, sigma_i=1.0) for c in ids]))
    assert sorted(engine.roles(root)["resolved"]) == sorted(ids)

    inherited = engine.inherited_by_children_of(root)
    child = tree.create_child(root, GoalSpec("read the file"), inherited_ids=inherited)
    assert sorted(engine.roles(child)["inherited"]) == sorted(ids)
    extra = engine.upsert([spec("reads in chunks")])
    tree.transition(child, Status.IDENTIFYING_CONSTRAINTS)
    engine.set_role(tree.run, child, "eligible", [*ids, *extra], Status.IDENTIFYING_CONSTRAINTS,
                    Status.SELECTING_CONSTRAINTS)
    assert engine.roles(child)["eligible"] == extra
    # The goal's view sees every role even when several join the same two nodes.
    view = tree.view(root)
    assert view.has_eligible and view.has_selected


def test_attempts_count_up_to_the_limit_and_stay_consistent(tree: GoalTree) -> None:
    engine = ConstraintEngine(tree.store)
    ids = engine.upsert([spec("handles 1GB")])
    root = tree.create_root(GoalSpec("Build it", max_attempts=2))
    BudgetEnforcer(tree.run).allocate_root(root, Amount(1_000_000, 60_000))
    _to_verifying(tree, engine, root, ids)
    attempts = Attempts(tree.run)
    for index in (1, 2):
        attempt = attempts.open(root, "resolver:claude-code-0", feedback={"round": index})
        assert attempt.attempt_index == index
        attempts.record_output(attempt, None, Amount(10, 10))
        tree.transition(root, Status.VERIFYING)
        attempts.record_verification(attempt, Verification.from_checks(
            [Check(constraint_id=ids[0], passed=False, sigma_i=0.0,
                   detail={"got": "MemoryError"})]), {ids[0]: "tests"},
            diagnosed=("memory_error", "the file is read whole"))
        goal = tree.get(root)
        assert (goal.attempt_count, goal.last_attempt_id) == (index, attempt.id)
        if index == 1:
            tree.transition(root, Status.RESOLVING)
    with pytest.raises(AttemptsExhaustedError):
        attempts.open(root, "resolver:claude-code-0")
    history = attempts.of_goal(root)
    assert [a.attempt_index for a in history] == [1, 2]
    assert [a.verdict for a in history] == ["UNSAT", "UNSAT"]
    assert history[1].feedback == {"round": 2}
    assert engine.roles(root)["resolved"] == []
    node = tree.get(root)
    assert node.verification is not None and node.verification.failed()[0].detail == {
        "got": "MemoryError"}
    assert (node.sigma_v, node.cost_spent, node.time_spent) == (0.0, 20, 20)
    failures = tree.store.execute_adhoc(
        "MATCH (a:Attempt)-[:FAILED_BECAUSE]->(f:FailureMode) RETURN f.id AS f, count(a) AS n",
        {}, write=False).records()
    assert failures == [{"f": "failure:memory_error", "n": 2}]
    violated = tree.store.execute_adhoc(
        "MATCH (a:Attempt)-[v:VIOLATED]->(c:Constraint) "
        "RETURN c.id AS c, v.check AS check, v.sigma AS sigma, count(a) AS n",
        {}, write=False).records()
    assert violated == [{"c": ids[0], "check": "tests", "sigma": 0.0, "n": 2}]


def test_verification_must_follow_its_checks() -> None:
    with pytest.raises(ValueError, match="follow the checks"):
        Verification(verdict="SAT", sigma_v=1.0,
                      checks=[Check(constraint_id="c", passed=False, sigma_i=0.2)])
    v = Verification.from_checks([Check(constraint_id="a", passed=True, sigma_i=0.9),
                                  Check(constraint_id="b", passed=True, sigma_i=0.7)])
    assert (v.verdict, v.sigma_v, v.failed()) == ("SAT", 0.7, [])
