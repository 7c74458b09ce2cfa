"""Step 8 driven without a store: what the decomposition is asked with, who answers for
each constraint, and the settled plan handed on to make the children."""

from __future__ import annotations

from kernel.core.state_machine import Status
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.solve import moves
from kernel.solve.effects import Decision, ModelCall, Observe
from kernel.solve.steps.decompose import decompose
from tests.solve.steps.fakes import FakeView, constraint, drive, goal, proposal

PLAN = models.Decomposition(rationale="two halves", children=[
    models.ProposedChild(key="parse", goal_description="parse the input", goal_summary="parse",
                         relative_complexity=1.0, answers_for=["fast"]),
    models.ProposedChild(key="sum", goal_description="add the numbers", goal_summary="sum",
                         relative_complexity=2.0)], assembly_answers_for=["c:2"])


def _view(**fields: object) -> FakeView:
    g = goal(status=Status.DECOMPOSING, output_artifact_id="art:1", decompositions=1,
             **fields)  # type: ignore[arg-type]
    return FakeView(goals={g.id: g}, role_ids={g.id: {"selected": ["c:1", "c:2"]}},
                    known={"c:1": constraint("c:1", "fast", type="logic",
                                             payload={"check": "arith", "expr": "seconds <= 1"}),
                           "c:2": constraint("c:2", "exact", type="logic",
                                             payload={"check": "arith", "expr": "chars <= 9"})},
                    outputs={"art:1": {"text": "1 + 2"}},
                    from_above={g.id: {"constraints": ["in python"]}},
                    histories={(g.id, "decompose"): {"decompositions": [{
                        "goal_id": "goal:old", "summary": "add", "status": "resolved",
                        "children": [{"summary": "read", "status": "resolved",
                                      "after": []}]}]}})


def test_the_plan_is_asked_with_history_output_and_inheritance_and_handed_on_with_its_round() -> None:
    view = _view(feedback={"conflict": "c:9"})
    asked, done = drive(decompose(view, moves.Decompose(view.goal("goal:a"))),
                        [view.histories[("goal:a", "decompose")], proposal(PLAN)])
    history, call = asked
    assert history == Observe("history/decompose", "goal:a", lambda: None)
    assert isinstance(call, ModelCall) and call.operation is ops.DECOMPOSE
    assert "How similar goals were decomposed" in call.request.context
    assert call.request.feedback == {"conflict": "c:9"}
    assert call.request.payload["output"] == {"text": "1 + 2"}
    assert call.request.payload["inherited"] == {"constraints": ["in python"]}
    assert [c.id for c in call.request.constraints] == ["c:1", "c:2"]
    assert isinstance(done.then, moves.MakeChildren)
    assert (done.then.plan, done.then.round) == (PLAN, 2)
    assert done.then.covered.answered_by == {"c:1": "parse", "c:2": "assembly"}
    [said] = done.changes.changes
    assert isinstance(said, Decision) and said.decision == "constraint_coverage"
    assert said.candidates == ("c:1", "c:2")
    assert said.chosen == ["c:1: parse", "c:2: assembly"]


def test_a_plan_that_names_no_constraint_hands_on_without_a_coverage_decision() -> None:
    view = _view()
    plain = PLAN.model_copy(update={"children": [c.model_copy(update={"answers_for": []})
                                                 for c in PLAN.children],
                                    "assembly_answers_for": []})
    _, done = drive(decompose(view, moves.Decompose(view.goal("goal:a"))), [{}, proposal(plain)])
    assert not done.changes
    assert isinstance(done.then, moves.MakeChildren) and done.then.covered.answered_by == {}
