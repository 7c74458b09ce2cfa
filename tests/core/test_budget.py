"""Budget ledger and enforcer: integer-exact, conserved, and never negative without a grant."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernel.core.attempts import Attempts
from kernel.core.budget import Amount, BudgetEnforcer, BudgetError, Decision, split, total
from kernel.core.goals import GoalSpec, GoalTree
from kernel.core.run import Run
from kernel.errors import StatementError
from tests.core.conftest import make_root

amounts = st.builds(Amount, st.integers(0, 10**12), st.integers(0, 10**9))
weight_maps = st.dictionaries(st.text("abcdef", min_size=1, max_size=4),
                              st.floats(0, 1000, allow_nan=False), min_size=1, max_size=8)


@given(amounts, weight_maps)
def test_split_is_exact_and_keeps_a_fifth_in_reserve(remaining: Amount, weights: dict) -> None:
    plan = split(remaining, weights)
    assert set(plan.allocations) == set(weights)
    for dim in ("cost", "time"):
        given_out = sum(getattr(a, dim) for a in plan.allocations.values())
        reserve = getattr(plan.reserve, dim)
        assert given_out + reserve == getattr(remaining, dim)
        assert reserve >= getattr(remaining, dim) // 5
    assert split(remaining, dict(reversed(list(weights.items())))) == plan


def test_split_is_proportional() -> None:
    plan = split(Amount(1_000_000, 10_000), {"a": 1, "b": 3})
    assert plan.allocations == {"a": Amount(200_000, 2_000), "b": Amount(600_000, 6_000)}
    assert plan.reserve == Amount(200_000, 2_000)


def _family(tree: GoalTree, budget: BudgetEnforcer, n: int = 3) -> tuple[str, list[str]]:
    root = make_root(tree)
    budget.allocate_root(root, Amount(10_000_000, 600_000))
    kids = [tree.create_child(root, GoalSpec(f"child {i}")) for i in range(n)]
    return root, kids


def test_children_get_the_parent_remaining_minus_the_reserve(tree: GoalTree) -> None:
    budget = BudgetEnforcer(tree.run)
    root, kids = _family(tree, budget)
    budget.record(root, Amount(1_000_000, 0), "resolver:claude-code-0", "decompose")
    before = budget.remaining(root)
    plan = budget.allocate_children(root, {kids[0]: 1, kids[1]: 1, kids[2]: 2})
    after = budget.remaining(root)
    granted = [budget.remaining(k) for k in kids]
    assert sum(a.cost for a in granted) + after.cost == before.cost
    assert sum(a.time for a in granted) + after.time == before.time
    assert after == plan.reserve
    assert granted[2].cost == 2 * granted[0].cost


def test_pre_check_draws_a_shortfall_from_the_parent_as_a_recorded_grant(tree: GoalTree) -> None:
    budget = BudgetEnforcer(tree.run)
    root, kids = _family(tree, budget)
    budget.allocate_children(root, {k: 1 for k in kids})
    child_left = budget.remaining(kids[0])
    need = Amount(child_left.cost + 500, child_left.time)
    check = budget.pre_check(kids[0], need)
    assert check.decision == Decision.ALLOWED and check.granted == Amount(500, 0)
    rows = tree.store.execute_adhoc(
        "MATCH (e:BudgetEvent)-[:DRAWN_FROM]->(p:Goal {id: $p}) MATCH (e)-[:CHARGED_TO]->(c) "
        "RETURN c.id AS child, e.cost AS cost ORDER BY cost", {"p": root}, write=False).records()
    assert {"child": kids[0], "cost": 500} in rows
    assert budget.pre_check(kids[0], Amount(10**15, 0)).decision == Decision.DENIED
    assert budget.pre_check(root, Amount(10**15, 0)).decision == Decision.DENIED


def test_an_overrun_is_covered_by_the_parent_or_flagged(tree: GoalTree) -> None:
    budget = BudgetEnforcer(tree.run)
    root, kids = _family(tree, budget, n=1)
    budget.allocate_children(root, {kids[0]: 1})
    left = budget.remaining(kids[0])
    budget.record(kids[0], Amount(left.cost + 10, 0), "r", "resolve")
    assert budget.remaining(kids[0]) == Amount(0, left.time)  # stored before it is read
    assert tree.get(kids[0]).over_budget is False  # the parent covered it
    budget.record(root, Amount(10**12, 0), "r", "resolve")  # root: no parent
    tree.run.flush()
    assert tree.get(root).over_budget is True
    assert budget.remaining(root).cost < 0


def test_the_ledger_and_the_caches_agree(tree: GoalTree) -> None:
    budget = BudgetEnforcer(tree.run)
    root, kids = _family(tree, budget)
    budget.allocate_children(root, {k: i + 1 for i, k in enumerate(kids)})
    budget.record(kids[1], Amount(123, 45), "r", "identify_constraints")
    budget.refund(kids[1], Amount(23, 5), "call not performed")
    budget.pre_check(kids[2], Amount(10**9, 1))
    for goal in (root, *kids):
        totals = budget.ledger_totals(goal)
        for key in ("cost_allocated", "cost_spent", "cost_refunded", "cost_granted",
                    "time_allocated", "time_spent", "time_refunded", "time_granted"):
            assert totals[key] == totals[f"cache_{key}"], (goal, key)


def test_a_spend_is_written_with_its_attempt_or_not_at_all(tree: GoalTree) -> None:
    budget = BudgetEnforcer(tree.run)
    root, _ = _family(tree, budget, n=1)
    attempt = Attempts(tree.run).open(root, "resolver:claude-code-0")
    Attempts(tree.run).record_output(attempt, None, Amount(700, 80))
    tree.run.flush()
    rows = tree.store.execute_adhoc(
        "MATCH (s:BudgetEvent {kind: 'spend'})-[:PAYS_FOR]->(a:Attempt {id: $a}) "
        "RETURN s.cost AS cost, a.cost AS attempt_cost", {"a": attempt.id}, write=False).records()
    assert rows == [{"cost": 700, "attempt_cost": 700}]
    seq = tree.run.seq
    with pytest.raises(Exception, match="not applied"):
        budget.record(root, Amount(1, 1), "r", "resolve", attempt_id="attempt:missing")
        tree.run.flush()
    assert tree.run.seq == seq
    spends = tree.store.execute_adhoc("MATCH (s:BudgetEvent {kind: 'spend'}) RETURN count(s) AS n",
                                      {}, write=False).records()
    assert spends == [{"n": 1}]


def test_budget_amounts_must_be_sensible(tree: GoalTree) -> None:
    budget = BudgetEnforcer(tree.run)
    root = make_root(tree)
    with pytest.raises(BudgetError):
        budget.allocate_root(root, Amount(0, 0))
    with pytest.raises(BudgetError):
        budget.record(root, Amount(-1, 0), "r", "x")


calls = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3_000_000), st.integers(0, 60_000),
                           st.floats(0, 1)), min_size=1, max_size=25)


@pytest.mark.slow
@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=calls)
def test_budgets_never_go_negative_without_a_recorded_grant(graph, sequence) -> None:
    """pre_check, then a call that costs at most its estimate: every goal stays >= 0,
    and every increase of a child's allocation is an event drawn from its parent."""
    run = Run.start(graph, "property")
    tree = GoalTree(run)
    budget = BudgetEnforcer(run)
    root, kids = _family(tree, budget)
    budget.allocate_children(root, {k: 1 for k in kids})
    for which, cost, time, fraction in sequence:
        goal = kids[which]
        estimate = Amount(cost, time)
        if budget.pre_check(goal, estimate).decision == Decision.ALLOWED:
            budget.record(goal, Amount(int(cost * fraction), int(time * fraction)), "r", "call")
        for g in (root, *kids):
            left = budget.remaining(g)
            assert left.cost >= 0 and left.time >= 0
    for kid in kids:
        rows = graph.execute_adhoc(
            "MATCH (e:BudgetEvent {kind: 'allocate'})-[:CHARGED_TO]->(c:Goal {id: $c}) "
            "OPTIONAL MATCH (e)-[:DRAWN_FROM]->(p:Goal) RETURN e.id AS id, p.id AS parent",
            {"c": kid}, write=False).records()
        assert rows and all(r["parent"] == root for r in rows)


def test_a_failing_statement_leaves_no_budget_event(tree: GoalTree) -> None:
    budget = BudgetEnforcer(tree.run)
    root = make_root(tree)
    with pytest.raises(StatementError):
        tree.run.commit("budget/refund", {"goal_id": root, "cost": 1, "time": 0,
                                          "event_id": "budget:dup", "description": "x"},
                        what="first")
        tree.run.commit("budget/refund", {"goal_id": root, "cost": 1, "time": 0,
                                          "event_id": "budget:dup", "description": "x"},
                        what="duplicate id")
    assert budget.ledger_totals(root)["cost_refunded"] == 1
    assert tree.get(root).cost_refunded == 1


def test_a_spend_rides_its_goals_transition_and_anything_else_stores_it_first(
        tree: GoalTree) -> None:
    from kernel.core.state_machine import Status

    budget = BudgetEnforcer(tree.run)
    root, kids = _family(tree, budget, n=1)
    budget.allocate_children(root, {kids[0]: 1})
    left = budget.remaining(kids[0])
    stats = tree.store.stats
    stats.reset()
    budget.record(kids[0], Amount(300, 7), "r", "identify_constraints")
    assert stats.write_count == 0  # pending until the next commit
    seq = tree.run.seq
    tree.transition(kids[0], Status.IDENTIFYING_CONSTRAINTS)
    assert (stats.writes["budget/spend"], stats.writes["goal/transition"]) == (0, 1)
    assert tree.run.seq == seq + 1  # one commit: the spend and the move
    assert tree.status(kids[0]) == Status.IDENTIFYING_CONSTRAINTS
    assert budget.remaining(kids[0]) == Amount(left.cost - 300, left.time - 7)
    budget.record(kids[0], Amount(5, 0), "r", "resolve")
    tree.transition(root, Status.IDENTIFYING_CONSTRAINTS)  # another goal: stored first
    assert (stats.writes["budget/spend"], stats.writes["goal/transition"]) == (1, 2)
    assert budget.remaining(kids[0]).cost == left.cost - 305
    assert tree.run.step.pending_spend is None


def test_a_shortfall_the_parent_cannot_cover_is_drawn_down_from_further_up(
        tree: GoalTree) -> None:
    """root -> child -> grandchild: the grandchild needs more than it and the child hold;
    the root has it, so it comes down the chain as recorded grants (each drawn from the
    goal's own parent, the nearest paying first) and nobody is asked for more."""
    budget = BudgetEnforcer(tree.run)
    root, (child,) = _family(tree, budget, n=1)
    budget.allocate_children(root, {child: 1})
    grandchild = tree.create_child(child, GoalSpec("grandchild"))
    budget.allocate_children(child, {grandchild: 1})
    own, middle, top = (budget.remaining(g) for g in (grandchild, child, root))
    need = Amount(own.cost + middle.cost + 1000, own.time + middle.time + 10)
    check = budget.pre_check(grandchild, need)
    assert check.decision == Decision.ALLOWED
    assert check.granted == Amount(need.cost - own.cost, need.time - own.time)
    assert budget.remaining(grandchild) == need
    assert budget.remaining(child) == Amount(0, 0)
    assert budget.remaining(root) == Amount(top.cost - 1000, top.time - 10)
    for goal in (root, child, grandchild):
        totals = budget.ledger_totals(goal)
        for key in ("cost_allocated", "cost_granted", "time_allocated", "time_granted"):
            assert totals[key] == totals[f"cache_{key}"], (goal, key)
    everything = Amount(need.cost + top.cost, 0)
    denied = budget.pre_check(grandchild, everything)
    assert denied.decision == Decision.DENIED
    assert denied.remaining == Amount(need.cost + top.cost - 1000,
                                      need.time + top.time - 10)  # what it could draw on


def test_a_budget_question_says_what_the_tree_holds(tree: GoalTree) -> None:
    from kernel.solve.capability_requests import budget_gap

    budget = BudgetEnforcer(tree.run)
    root, kids = _family(tree, budget, n=2)
    budget.allocate_children(root, {k: 1 for k in kids})
    holdings = budget.tree_holdings(kids[0])
    assert holdings["reachable"] == total([budget.remaining(kids[0]), budget.remaining(root)])
    assert holdings["elsewhere"] == budget.remaining(kids[1])
    left = holdings["reachable"]
    gap = budget_gap(tree.get(kids[0]), "resolve", Amount(left.cost + 250_000, 0), left,
                     holdings)
    assert gap["needed_usd"] == 0.25
    assert "the tree holds $10.0 and 600.0s" in gap["rationale"], gap["rationale"]
    assert gap["tree_holds"]["elsewhere_usd"] == budget.remaining(kids[1]).cost / 1e6
