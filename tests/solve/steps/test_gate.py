"""The gate driven without a store: decomposition goes on, or the weakest goal on the
path is reopened, or past the reopening budget the goal is refused."""

from __future__ import annotations

from kernel.core.confidence import PathNode
from kernel.core.goal_node import GoalChanges
from kernel.core.state_machine import Status
from kernel.refusal import RefusalReason
from kernel.solve import moves
from kernel.solve.effects import (
    Decision,
    Flow,
    Refusal,
    Reopen,
    StoreVerification,
    Transition,
    Wake,
)
from kernel.solve.steps.gate import gate
from tests.solve.steps.fakes import FakeView, drive, goal

S = Status
GATED = Transition("goal:a", S.GATED, GoalChanges(gated_reason="sigma_path 0.3 < tau_global 0.5"))


def _view(path: list[PathNode], **reopened: int) -> FakeView:
    g = goal(status=S.VERIFYING, reopened=reopened.get("a", 0))
    root = goal("goal:root", parent_id=None, depth=0, reopened=reopened.get("root", 0))
    return FakeView(goals={g.id: g, root.id: root}, paths={g.id: path})


def test_a_path_confidence_at_the_threshold_goes_on_to_decomposition() -> None:
    view = _view([])
    asked, done = drive(gate(view, moves.Gate(view.goal("goal:a"), 0.5)), [])
    assert asked == []
    assert done.then == ["goal:a"]
    assert done.changes.changes == (Wake(("goal:a",)), Transition("goal:a", S.DECOMPOSING))


def test_below_it_the_weakest_goal_above_is_reopened_and_the_backtrack_told() -> None:
    path = [PathNode("goal:root", 0.6, 0), PathNode("goal:a", 0.2, 1)]
    view = _view(path, root=1)
    _, done = drive(gate(view, moves.Gate(view.goal("goal:a"), 0.3)), [])
    assert done.then == ["goal:root"]
    assert done.changes.changes == (StoreVerification(), GATED, Reopen(
        "goal:root", S.SELECTING_RESOLVER, GoalChanges(reopened=2),
        Decision("goal:a", "backtrack", ("goal:root", "goal:a"), "goal:root",
                 "weakest sigma_v on the path")))


def test_with_nothing_judged_above_the_gated_goal_itself_is_run_again() -> None:
    view = _view([PathNode("goal:root", None, 0), PathNode("goal:a", 0.2, 1)])
    _, done = drive(gate(view, moves.Gate(view.goal("goal:a"), 0.3)), [])
    assert done.then == ["goal:a"]
    assert done.changes.changes[2:] == (
        Transition("goal:a", S.PENDING),
        Reopen("goal:a", S.SELECTING_RESOLVER, GoalChanges(reopened=1)))


def test_past_the_reopening_budget_the_goal_is_refused_and_its_parent_woken() -> None:
    view = _view([PathNode("goal:root", 0.6, 0), PathNode("goal:a", 0.2, 1)], root=3)
    _, done = drive(gate(view, moves.Gate(view.goal("goal:a"), 0.3)), [])
    assert done.then == ["goal:root"]
    refusal, pending, infeasible, told = done.changes.changes[2:]
    assert refusal == Refusal("goal:root", RefusalReason.CONTRADICTION_BUDGET_EXCEEDED,
                              "confidence stayed below tau_global after 3 reopenings",
                              (("count", "3"), ("limit", "3")))
    assert (pending, infeasible) == (Transition("goal:a", S.PENDING),
                                     Transition("goal:a", S.INFEASIBLE))
    assert isinstance(told, Flow) and told.text.startswith(
        "infeasible: 3 global conflicts exceeded the contradiction budget of 3")
