"""Step 3 driven without a store: the kernel, not the proposal, decides what is selected."""

from __future__ import annotations

from kernel.core.state_machine import Status
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.solve import moves
from kernel.solve.effects import Decision, ModelCall, SetRole, Wake
from kernel.solve.steps.select_constraints import select_constraints
from tests.solve.steps.fakes import FakeView, constraint, drive, goal, proposal

S = Status


def _view(**roles: list[str]) -> FakeView:
    g = goal(status=S.SELECTING_CONSTRAINTS)
    known = {f"c:{n}": constraint(f"c:{n}", title) for n, title in
             enumerate(["fast", "small", "exact", "owed"], start=1)}
    return FakeView(goals={g.id: g}, role_ids={g.id: roles}, known=known)


def _select(view: FakeView, answers: list[object]) -> tuple[list[object], object]:
    return drive(select_constraints(view, moves.SelectConstraints(view.goal("goal:a"))),
                 answers)  # type: ignore[return-value]


def test_one_eligible_constraint_is_selected_without_a_call_with_what_the_part_owes() -> None:
    asked, done = _select(_view(eligible=["c:1"], owed=["c:4"]), [])
    assert asked == []
    assert done.then == ["goal:a"]  # type: ignore[attr-defined]
    assert done.changes.changes[:2] == (  # type: ignore[attr-defined]
        Wake(("goal:a",)),
        SetRole("goal:a", "selected", frozenset({"c:1", "c:4"}), S.SELECTING_CONSTRAINTS,
                S.SELECTING_RESOLVER))


def test_the_proposal_names_by_id_or_title_and_the_core_always_stays() -> None:
    view = _view(eligible=["c:1", "c:2", "c:3"], core=["c:3"])
    picked = models.SelectedConstraints(constraint_ids=["small", "c:9"], rationale="r")
    asked, done = _select(view, [proposal(picked)])
    [call] = asked
    assert isinstance(call, ModelCall) and call.operation is ops.SELECT_CONSTRAINTS
    assert [c.id for c in call.request.constraints] == ["c:1", "c:2", "c:3"]
    role, decision = done.changes.changes[1:]  # type: ignore[attr-defined]
    assert role.ids == frozenset({"c:2", "c:3"})
    assert decision == Decision("goal:a", "constraint_selection", ("c:1", "c:2", "c:3"),
                                ["c:2", "c:3"], "parsimonious selection, core kept")


def test_a_proposal_that_names_nothing_eligible_keeps_every_eligible_constraint() -> None:
    view = _view(eligible=["c:1", "c:2"], owed=["c:4"])
    _, done = _select(view, [proposal(models.SelectedConstraints(constraint_ids=["nope"], rationale="r"))])
    role, decision = done.changes.changes[1:]  # type: ignore[attr-defined]
    assert role.ids == frozenset({"c:1", "c:2", "c:4"})
    assert decision.rationale.endswith("the inherited ones this part answers for added")
