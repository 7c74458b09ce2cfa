"""Step 7 driven without a store: what it asks for, and the changes it hands back."""

from __future__ import annotations

from kernel.core.goal_node import GoalChanges
from kernel.core.state_machine import Status
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.solve import moves
from kernel.solve.effects import Flow, ModelCall, Recall, Transition, Wake
from kernel.solve.steps.leaf import classify
from tests.solve.steps.fakes import FakeView, constraint, drive, goal, proposal

LEAF = models.LeafClassification(is_leaf=True, leaf_kind="atomic", leaf_reason="one call")
NOT_LEAF = models.LeafClassification(is_leaf=False, leaf_kind=None, leaf_reason="two parts")


def _view(**fields: object) -> FakeView:
    g = goal(**fields)  # type: ignore[arg-type]
    return FakeView(goals={g.id: g}, role_ids={g.id: {"selected": ["c:1"]}},
                    known={"c:1": constraint("c:1", "adds")},
                    outputs={"art:1": {"text": "a + b"}}, woken={g.id: ["goal:next", "goal:root"]})


def test_a_leaf_asks_classify_leaf_with_its_selected_constraints_and_output_then_resolves() -> None:
    view = _view(output_artifact_id="art:1", sigma_v=0.9)
    asked, done = drive(classify(view, moves.Leaf(view.goal("goal:a"), 0.8)), [proposal(LEAF)])
    [call] = asked
    assert isinstance(call, ModelCall) and call.operation is ops.CLASSIFY_LEAF
    assert [c.id for c in call.request.constraints] == ["c:1"]
    assert call.request.payload["output"] == {"text": "a + b"}
    assert call.request.payload["inherited"] is None
    assert done.then == ["goal:next", "goal:root"]
    assert done.changes.changes == (
        Wake(("goal:next", "goal:root")),
        Transition("goal:a", Status.RESOLVED,
                   GoalChanges(leaf_kind="atomic", leaf_reason="one call")),
        Flow("goal:a", "resolved as an atomic leaf (sigma_v=0.9)"))


def test_a_goal_that_is_not_a_leaf_goes_to_the_gate_with_its_path_confidence_and_no_change() -> None:
    view = _view()
    asked, done = drive(classify(view, moves.Leaf(view.goal("goal:a"), 0.4)), [proposal(NOT_LEAF)])
    assert len(asked) == 1
    assert done.then == moves.Gate(view.goal("goal:a"), 0.4)
    assert not done.changes


def test_at_the_depth_cap_nothing_is_asked_and_a_leaf_root_is_its_own_final_artifact() -> None:
    view = _view(depth=6, parent_id=None, output_artifact_id="art:1")
    asked, done = drive(classify(view, moves.Leaf(view.goal("goal:a"), 0.75)), [])
    assert asked == []
    transition = done.changes.changes[1]
    assert transition == Transition("goal:a", Status.RESOLVED, GoalChanges(
        leaf_kind="constraint_exhausted", leaf_reason="maximum depth reached",
        final_artifact_id="art:1", sigma_system=0.75))


def test_a_record_of_the_kind_answers_instead_of_the_model_and_none_lets_the_model_answer() -> None:
    view = _view(pattern_id="pattern:add")
    view.records["goal:a"] = lambda: None
    asked, done = drive(classify(view, moves.Leaf(view.goal("goal:a"), 0.8)),
                        [{"atomic": 2, "example": "goal:old"}])
    assert [type(r) for r in asked] == [Recall]
    assert "2 verified goal(s)" in str(done.changes.changes[1])
    asked, _ = drive(classify(view, moves.Leaf(view.goal("goal:a"), 0.8)), [None, proposal(LEAF)])
    assert [type(r) for r in asked] == [Recall, ModelCall]
