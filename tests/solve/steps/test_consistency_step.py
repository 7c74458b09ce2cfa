"""Step 12 driven without a store: no coupling and no call, the review, and a conflict
that reopens the lowest common ancestor or is refused when it comes back."""

from __future__ import annotations

from kernel.core.confidence import PathNode
from kernel.core.state_machine import Status
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.refusal import RefusalReason
from kernel.solve import moves
from kernel.solve.effects import (
    AddRoles,
    Decision,
    ModelCall,
    RefuseGoal,
    Reopen,
    StoreConstraints,
)
from kernel.solve.steps.consistency import check
from tests.solve.steps.fakes import FakeView, constraint, drive, goal, proposal

S = Status
DATED = models.ProposedConstraint(type="logic", domain="schedule", title="one date",
                                  payload={"check": "arith", "expr": "dates <= 1"},
                                  explicit=False)


def _view() -> FakeView:
    root = goal("goal:root", parent_id=None, depth=0, status=S.PENDING, summary="launch")
    docs = goal("goal:docs", parent_id="goal:root", summary="docs", decomposition_key="1:docs",
                output_artifact_id="art:docs", status=S.RESOLVED)
    news = goal("goal:news", parent_id="goal:root", summary="news", decomposition_key="1:news",
                output_artifact_id="art:news", status=S.RESOLVED)
    out = {f"art:{n}": models.ResolutionOutput(artifact_type="doc", format="markdown",
                                               content=f"{n} on March {d}")
           for n, d in (("docs", 4), ("news", 5))}
    path = {g: [PathNode("goal:root", 0.9, 0), PathNode(g, 0.8, 1)]
            for g in ("goal:docs", "goal:news")}
    return FakeView(goals={g.id: g for g in (root, docs, news)},
                    role_ids={"goal:docs": {"selected": ["c:1"]},
                              "goal:news": {"selected": ["c:1", "c:2"]}},
                    known={"c:1": constraint("c:1", "dated"), "c:2": constraint("c:2", "short")},
                    coupled=[{"a": "goal:news", "b": "goal:docs", "kind": "dependency", "via": ""},
                             {"a": "goal:docs", "b": "goal:news", "kind": "constraint",
                              "via": "c:1"}],
                    resolutions=out, paths=path)


def _check(view: FakeView, review: models.ConsistencyReview) -> tuple[list[object], object]:
    return drive(check(view, moves.Consistency(view.goal("goal:root"))),  # type: ignore[return-value]
                 [proposal(review)])


def test_no_coupled_leaves_go_on_to_assembly_without_a_call() -> None:
    view = _view()
    view.coupled = []
    asked, done = drive(check(view, moves.Consistency(view.goal("goal:root"))), [])
    assert asked == []
    assert done.then == moves.Assemble(view.goal("goal:root"))
    assert done.changes.changes == (Decision("goal:root", "global_consistency", (), "SAT",
                                             "no coupled leaves: nothing to review"),)


def test_the_review_sees_each_pair_once_with_the_leaves_outputs_and_a_vague_conflict_is_ignored() -> None:
    view = _view()
    vague = models.Conflict(nodes_involved=["docs"], description="odd")
    asked, done = _check(view, models.ConsistencyReview(verdict="UNSAT", conflicts=[vague]))
    [call] = asked
    assert isinstance(call, ModelCall) and call.operation is ops.CHECK_GLOBAL_CONSISTENCY
    assert call.request.payload["couplings"] == [{"a": "goal:docs", "b": "goal:news",
                                                  "kinds": ["constraint", "dependency"],
                                                  "via": ["c:1"]}]
    assert [leaf["output"] for leaf in call.request.payload["leaves"]] == [
        "docs on March 4", "news on March 5"]
    assert [c.id for c in call.request.constraints] == ["c:1", "c:2"]
    ignored, said = done.changes.changes  # type: ignore[attr-defined]
    assert ignored == Decision(None, "conflict_ignored", ("docs",), None,
                               "names fewer than two coupled leaves or no coupling constraint")
    assert isinstance(said, Decision) and said.chosen == "UNSAT"
    assert done.then == moves.Assemble(view.goal("goal:root"))  # type: ignore[attr-defined]


def test_a_conflict_reopens_the_common_ancestor_with_coupling_constraints_for_its_parts() -> None:
    view = _view()
    conflict = models.Conflict(nodes_involved=["docs", "goal:news"], description="two dates",
                               coupling_constraints=[DATED])
    _, done = _check(view, models.ConsistencyReview(verdict="UNSAT", conflicts=[conflict]))
    stored, roles, reopen = done.changes.changes  # type: ignore[attr-defined]
    assert isinstance(stored, StoreConstraints) and not stored.ride
    [spec] = stored.specs
    cid = spec.with_id().id
    assert roles == AddRoles("goal:root", (("coupling", (cid,)), ("eligible", (cid,))))
    assert isinstance(reopen, Reopen) and reopen.to == S.SELECTING_CONSTRAINTS
    assert reopen.changes.reopened == 1 and reopen.changes.feedback is not None
    assert reopen.changes.feedback["coupling_goes_to"] == ["docs", "news"]
    assert reopen.changes.feedback["conflict"]["coupling_constraints"] == [
        {"id": cid, "title": "one date"}]
    assert done.then == ["goal:root"]  # type: ignore[attr-defined]
    # the same conflict right after the reopening for it is refused by name
    view.goals["goal:root"] = view.goal("goal:root").model_copy(update={
        "feedback": reopen.changes.feedback, "reopened": 1})
    _, done = _check(view, models.ConsistencyReview(verdict="UNSAT", conflicts=[conflict]))
    stored, refused = done.changes.changes  # type: ignore[attr-defined]
    assert isinstance(refused, RefuseGoal)
    assert refused.reason is RefusalReason.CONTRADICTION_REPEATED
    assert dict(refused.facts)["pair"] == "'docs' and 'news'"
    assert done.then == []  # type: ignore[attr-defined]
