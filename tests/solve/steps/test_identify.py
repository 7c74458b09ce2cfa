"""Step 2 driven without a store: what it asks for (a record, the history, the model),
and the constraints, capabilities and pattern it hands back to be stored."""

from __future__ import annotations

from kernel.core.envelopes import ConstraintSpec, Provenance
from kernel.core.goal_node import GoalChanges
from kernel.core.state_machine import Status
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.solve import moves
from kernel.solve.effects import (
    Decision,
    Flow,
    ModelCall,
    Observe,
    Progress,
    Recall,
    SetRole,
    StoreConstraints,
    Wake,
)
from kernel.solve.steps.identify import identify
from tests.solve.steps.fakes import FakeView, constraint, drive, goal, proposal

S = Status
FOUND = models.IdentifiedConstraints(required_capabilities=["generate_code", "math"],
                                     constraints=[
    models.ProposedConstraint(type="semantic", domain="code", title="reads well",
                              explicit=True),
    models.ProposedConstraint(type="logic", domain="code", title="is quick",
                              payload={"check": "vibes"}, explicit=False)])


def _view() -> FakeView:
    g = goal(status=S.IDENTIFYING_CONSTRAINTS, pattern_id=None)
    return FakeView(goals={g.id: g},
                    role_ids={g.id: {"core": ["c:core"], "inherited": ["c:up"]}},
                    known={"c:core": constraint("c:core", "adds", type="logic", domain="math"),
                           "c:up": constraint("c:up", "in python")},
                    from_above={g.id: {"constraints": ["in python"]}},
                    histories={(g.id, "identify"): {"constraints_applied": [
                        {"id": "c:old", "title": "has tests", "type": "logic", "domain": "code",
                         "goals": 3, "similarity": 0.9}]}})


def test_the_model_is_asked_with_the_history_and_its_constraints_are_stored_with_the_core() -> None:
    view = _view()
    asked, done = drive(identify(view, moves.Identify(view.goal("goal:a"))),
                        [None, view.histories[("goal:a", "identify")], proposal(FOUND)])
    recall, history, call = asked
    assert isinstance(recall, Recall) and recall.name == "reuse/identify"
    assert history == Observe("history/identify", "goal:a", lambda: None)
    assert isinstance(call, ModelCall) and call.operation is ops.IDENTIFY_CONSTRAINTS
    assert [c.id for c in call.request.constraints] == ["c:up"]
    assert "has tests" in call.request.context
    assert call.request.payload["inherited"] == {"constraints": ["in python"]}
    retyped, stored, wake, role, said = done.changes.changes
    assert isinstance(retyped, Flow) and "'is quick' was proposed as logic" in retyped.text
    assert isinstance(stored, StoreConstraints)
    assert [(s.title, s.type.value) for s in stored.specs] == [
        ("reads well", "semantic"), ("is quick", "semantic")]
    new = {s.with_id().id for s in stored.specs}
    assert wake == Wake(("goal:a",)) and done.then == ["goal:a"]
    assert isinstance(role, SetRole) and role.ids == frozenset(new | {"c:core"})
    assert (role.from_status, role.to) == (S.IDENTIFYING_CONSTRAINTS, S.SELECTING_CONSTRAINTS)
    assert role.capabilities == ("generate_code", "math")
    assert role.pattern == {"id": "pattern:add",
                            "signature": [("logic", "math"), ("semantic", "code")]}
    assert role.changes == GoalChanges(required_capabilities=["generate_code", "math"],
                                       pattern_id="pattern:add")
    assert said == Flow("goal:a", "identified 3 eligible constraints")


def test_a_record_of_the_same_question_answers_without_history_or_model_and_says_so() -> None:
    view = _view()
    spec = ConstraintSpec(type="semantic", domain="code", title="reads well",
                          provenance=Provenance(source="resolver"))
    view.identified["goal:a"] = {
        "goal_id": "goal:old", "run_id": "run:0", "required_capabilities": [],
        "constraints": [spec.model_dump(mode="json")]}
    asked, done = drive(identify(view, moves.Identify(view.goal("goal:a"))),
                        [view.identified["goal:a"]])
    assert [type(r) for r in asked] == [Recall]
    decision, told, stored, _, role, said = done.changes.changes
    assert isinstance(decision, Decision) and decision.chosen == "goal goal:old of run:0"
    assert told == Progress("reused", "identify_constraints from goal goal:old of run:0",
                            "goal:a", "add")
    assert stored == StoreConstraints((spec,))
    assert isinstance(role, SetRole)
    assert role.ids == frozenset({spec.with_id().id, "c:core"})
    assert role.capabilities == ("generate_code",)  # none named: the default
    assert said == Flow("goal:a", "identified 2 eligible constraints")
