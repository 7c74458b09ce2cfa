"""Composite resolution driven without a store: a decomposed goal's arithmetic
constraints decided over what its parts add up to."""

from __future__ import annotations

from kernel.core.goal_node import GoalChanges
from kernel.core.state_machine import Status
from kernel.refusal import RefusalReason
from kernel.solve import moves
from kernel.solve.effects import Decision, Flow, RefuseGoal, Reopen, Transition, Wake
from kernel.solve.steps.compose import compose
from tests.solve.steps.fakes import FakeView, constraint, drive, goal

S = Status
BUDGET = constraint("c:cost", "cheap", type="logic",
                    payload={"check": "arith", "expr": "sum_cost <= 5"})


def _view(*, parts: float, total: float, **fields: object) -> FakeView:
    g = goal(status=S.PENDING, decompositions=1, **fields)  # type: ignore[arg-type]
    view = FakeView(goals={g.id: g}, role_ids={g.id: {"selected": ["c:cost", "c:doc"]}},
                    known={"c:cost": BUDGET, "c:doc": constraint("c:doc", "documented")},
                    woken={g.id: ["goal:root"]})
    view.facts[g.id] = ({"parts": parts, "sum_cost": total}, {})
    return view


def test_parts_that_add_up_resolve_the_goal_and_wake_its_parent_after_the_check_is_told() -> None:
    view = _view(parts=2, total=4)
    asked, done = drive(compose(view, moves.Compose(view.goal("goal:a"))), [])
    assert asked == []
    assert done.then == ["goal:root"]
    told, *rest = done.changes.changes
    assert isinstance(told, Decision) and (told.chosen, told.candidates) == ("SAT", ("c:cost",))
    assert told.rationale == "1/1 arithmetic constraints hold over 2 parts"
    assert rest == [Wake(("goal:root",)),
                    Transition("goal:a", S.RESOLVED, GoalChanges(leaf_kind=None)),
                    Flow("goal:a", "resolved: every child is resolved")]


def test_parts_that_break_a_total_reopen_the_goal_with_the_violation_as_feedback() -> None:
    view = _view(parts=2, total=9, reopened=1)
    _, done = drive(compose(view, moves.Compose(view.goal("goal:a"))), [])
    assert done.then == ["goal:a"]
    told, reopen = done.changes.changes
    assert isinstance(told, Decision) and told.chosen == "UNSAT"
    assert isinstance(reopen, Reopen) and reopen.to == S.SELECTING_RESOLVER
    assert reopen.changes.reopened == 2
    assert reopen.told == Flow("goal:a", "reopened: the parts together violate cheap")


def test_past_the_reopening_budget_the_goal_is_refused_and_its_parent_woken() -> None:
    view = _view(parts=2, total=9, reopened=3)
    _, done = drive(compose(view, moves.Compose(view.goal("goal:a"))), [])
    assert done.then == ["goal:root"]
    refusal = done.changes.changes[-1]
    assert isinstance(refusal, RefuseGoal)
    assert refusal.reason == RefusalReason.PARTS_VIOLATE_CONSTRAINT
    assert dict(refusal.facts) == {"constraints": "cheap", "count": "3"}


def test_a_root_goes_on_to_the_consistency_check_or_to_assembly_when_already_consistent() -> None:
    view = _view(parts=2, total=4, parent_id=None)
    _, done = drive(compose(view, moves.Compose(view.goal("goal:a"))), [])
    assert done.then == moves.Consistency(view.goal("goal:a"))
    assert len(done.changes.changes) == 1 and done.changes.only_told()
    view = _view(parts=2, total=4, parent_id=None, feedback={"assembly": "art:1"})
    _, done = drive(compose(view, moves.Compose(view.goal("goal:a"))), [])
    assert done.then == moves.Assemble(view.goal("goal:a"))
