"""Step 8's continuation driven without a store: the children's ids asked for before
anything is made (the pending spend stored first, by the loop), the goals it queues
being those ids, the dependencies that would close a cycle dropped, and children kept
from an earlier round beside the ones made now."""

from __future__ import annotations

from kernel.core.dag import DagNode
from kernel.core.goal_node import GoalChanges
from kernel.core.goals import GoalSpec
from kernel.core.state_machine import Status
from kernel.protocol import coverage
from kernel.protocol import solve_models as models
from kernel.solve import moves
from kernel.solve.effects import (
    AddDependencies,
    AllocateChildren,
    ChildIds,
    Decision,
    Decomposition,
    Flow,
    NewChildren,
    Transition,
    Wake,
)
from kernel.solve.steps.children import make_children
from tests.solve.steps.fakes import FakeView, constraint, drive, goal

PLAN = models.Decomposition(rationale="three parts", children=[
    models.ProposedChild(key="parse", goal_description="parse the input", goal_summary="parse",
                         relative_complexity=1.0, answers_for=["fast"]),
    models.ProposedChild(key="sum", goal_description="add the numbers", goal_summary="sum",
                         relative_complexity=2.0),
    models.ProposedChild(key="show", goal_description="print the sum", goal_summary="show",
                         relative_complexity=1.0)],
    dependencies=[models.Dependency(child="sum", depends_on="parse"),
                  models.Dependency(child="parse", depends_on="sum"),  # closes a cycle
                  models.Dependency(child="show", depends_on="sum"),
                  models.Dependency(child="show", depends_on="nowhere")])
FAST = constraint("c:1", "fast", type="logic", payload={"check": "arith", "expr": "seconds <= 1"})
COVERED = coverage.coverage([FAST], PLAN)


def _view(**fields: object) -> FakeView:
    g = goal(status=Status.DECOMPOSING, output_artifact_id="art:1", **fields)  # type: ignore[arg-type]
    return FakeView(goals={g.id: g}, resolved_above={g.id: ["c:0"]})


def _spec(description: str, summary: str, owed: tuple[str, ...] = ()) -> GoalSpec:
    return GoalSpec(description, summary, "text", input_artifact_ids=("art:1",), owed=owed)


def test_the_ids_are_asked_for_first_and_the_goals_queued_are_those_ids() -> None:
    view = _view()
    g = view.goal("goal:a")
    asked, done = drive(make_children(view, moves.MakeChildren(g, PLAN, 2, COVERED)),
                        [["goal:p", "goal:s", "goal:w"]])
    assert asked == [ChildIds("goal:a", 3)]
    # parse waits for nothing; sum waits for parse, show for sum
    assert done.then == ["goal:p"]
    rejected, wake, said, made = done.changes.changes
    assert rejected == Decision("goal:a", "dependency_rejected", (["goal:p", "goal:s"],), None,
                                "it would close a cycle")
    assert wake == Wake(("goal:p",))
    assert said == Flow("goal:a", "decomposed into 3 children, 2 dependencies")
    assert made == Decomposition(
        g, (("2:parse", _spec("parse the input", "parse", ("c:1",))),
            ("2:sum", _spec("add the numbers", "sum")), ("2:show", _spec("print the sum", "show"))),
        ("goal:p", "goal:s", "goal:w"), ("c:0",), (),
        (("goal:s", "goal:p"), ("goal:w", "goal:s")),
        (("goal:p", 1.0), ("goal:s", 2.0), ("goal:w", 1.0)),
        Status.PENDING, GoalChanges(decompositions=2))


def test_a_goal_reopened_for_a_conflict_gives_its_coupling_constraints_to_the_parts_named() -> None:
    view = _view(feedback={"conflict": {"coupling_constraints": [{"id": "c:k"}]},
                           "coupling_goes_to": ["sum", "show"]})
    g = view.goal("goal:a")
    _, done = drive(make_children(view, moves.MakeChildren(g, PLAN, 3, COVERED)),
                    [["goal:p", "goal:s", "goal:w"]])
    *_, said, made = done.changes.changes
    assert said == Flow("goal:a", "coupling constraints for the parts sum, show")
    assert isinstance(made, Decomposition)
    assert made.coupling == (("3:sum", ("c:k",)), ("3:show", ("c:k",)))


def test_children_kept_from_before_a_crash_stay_and_only_the_rest_are_made_now() -> None:
    view = _view()
    g = view.goal("goal:a")
    view.kept["goal:a"] = {"2:parse": "goal:p"}
    view.dag["goal:a"] = [DagNode("goal:p", 5, (), 0, "resolved"),  # as read once made
                          DagNode("goal:s", 6), DagNode("goal:w", 7)]
    asked, done = drive(make_children(view, moves.MakeChildren(g, PLAN, 2, COVERED)),
                        [["goal:s", "goal:w"]])
    assert asked == [NewChildren(g, (("2:sum", _spec("add the numbers", "sum")),
                                     ("2:show", _spec("print the sum", "show"))), ("c:0",))]
    # parse is resolved already, so sum is ready (both are queued); show waits for sum
    assert done.then == ["goal:p", "goal:s"]
    assert done.changes.changes[1:] == (
        AddDependencies("goal:a", (("goal:s", "goal:p"), ("goal:w", "goal:s"))),
        AllocateChildren("goal:a", (("goal:p", 1.0), ("goal:s", 2.0), ("goal:w", 1.0))),
        Wake(("goal:p", "goal:s")), Transition("goal:a", Status.PENDING, GoalChanges(decompositions=2)),
        Flow("goal:a", "decomposed into 3 children, 2 dependencies"))


def test_a_kept_child_that_holds_its_share_already_is_not_given_budgets_again() -> None:
    view = _view()
    g = view.goal("goal:a")
    view.kept["goal:a"] = {"2:parse": "goal:p"}
    view.left["goal:p"] = 500
    view.dag["goal:a"] = [DagNode("goal:p", 5), DagNode("goal:s", 6), DagNode("goal:w", 7)]
    _, done = drive(make_children(view, moves.MakeChildren(g, PLAN, 2, COVERED)),
                    [["goal:s", "goal:w"]])
    assert not any(isinstance(c, AllocateChildren) for c in done.changes.changes)
    assert done.then == ["goal:p"]  # parse is not resolved: the others wait
