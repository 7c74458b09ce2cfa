"""Step 1 driven without a store: the extraction, a clarification round, the person's
review (confirmed, rejected, a contradiction shown and reviewed again), each question
first a request the root parks on, and a root left parked when nobody answers."""

from __future__ import annotations

from typing import Any

from kernel.core.goal_node import GoalNode
from kernel.core.state_machine import Status
from kernel.protocol import operations as ops
from kernel.protocol.intake_models import GoalExtraction, IntakeAnswer
from kernel.refusal import RefusalReason
from kernel.solve import moves
from kernel.solve.effects import (
    AskPerson,
    ConfirmIntake,
    Decision,
    Done,
    Flow,
    ModelCall,
    RefuseGoal,
    StoreConstraints,
)
from kernel.solve.steps.intake import intake
from tests.solve.steps.fakes import FakeView, constraint, drive, goal, proposal

S = Status
COST = {"type": "logic", "domain": "cost", "title": "cost_usd <= 1", "explicit": True,
        "payload": {"check": "arith", "expr": "cost_usd <= 1"}}
EXPIRY = {"type": "semantic", "domain": "security", "title": "expired tokens get 401",
          "explicit": True}


def _extraction(clarity: float, constraints: list[dict[str, Any]],
                questions: list[str] | None = None) -> GoalExtraction:
    return GoalExtraction.model_validate({
        "description": "Make login tokens expire one hour after issue.",
        "summary": " login tokens expire ", "intent_class": "fix_defect",
        "clarity": clarity, "core_constraints": constraints, "unstated": ["which service"],
        "questions": questions or []})


def _view(*typed: str) -> tuple[FakeView, GoalNode]:
    """A root with its intake open, and the core typed with ``-c`` (semantic titles)."""
    root = goal("goal:root", parent_id=None, depth=0, status=S.PENDING, intake="open",
                description="fix the auth thing", summary="fix the auth thing")
    known = {f"c:{n}": constraint(f"c:{n}", title) for n, title in enumerate(typed)}
    return FakeView(goals={root.id: root}, role_ids={root.id: {"core": sorted(known)}},
                    known=known), root


def _parked(root: GoalNode, hire: object) -> GoalNode:
    """The root as the HIRE step leaves it: parked on the question, the dialogue kept."""
    assert isinstance(hire, moves.Hire) and hire.changes is not None
    return root.model_copy(update={"intake_state": hire.changes.intake_state,
                                   "capability_gap": hire.gap})


def _turn(view: FakeView, root: GoalNode, answers: list[Any]) -> tuple[list[Any], Done[Any]]:
    return drive(intake(view, moves.Intake(root)), answers)


def test_the_extraction_is_first_a_review_question_the_root_parks_on_then_confirmed() -> None:
    view, root = _view("tokens are signed")
    asked, done = _turn(view, root, [proposal(_extraction(0.9, [EXPIRY, COST]))])
    [call] = asked
    assert isinstance(call, ModelCall) and call.operation is ops.EXTRACT_GOAL
    assert call.request.goal_description == "fix the auth thing"
    assert [c.title for c in call.request.constraints] == ["tokens are signed"]
    assert call.request.payload["clarifications"] == []
    assert done.changes.changes == (Decision(
        "goal:root", "intake_clarity", ("clarify", "review"), "review",
        "clarity 0.90 against 0.60, round 0", (("intent_class", "fix_defect"),)),)
    hire = done.then
    assert isinstance(hire, moves.Hire) and (hire.reason, hire.to) == ("review", S.PENDING)
    assert hire.supersede and hire.gap["capability_tag"] == "goal_intake"
    assert hire.gap["rationale"] == "review the goal as understood:  login tokens expire "
    # the next turn asks the person the question the root parked on
    parked = _parked(root, hire)
    asked, done = _turn(view, parked, [proposal(IntakeAnswer())])
    [question] = asked
    assert isinstance(question, AskPerson) and question.told == ()
    assert question.request.operation == ops.INTAKE.name
    payload = question.request.payload
    assert (payload["kind"], payload["round"]) == ("review", 0)
    assert payload["fingerprint"] == hire.gap["fingerprint"]
    assert [c["title"] for c in payload["constraints"]] == [  # the typed core first
        "tokens are signed", "expired tokens get 401", "cost_usd <= 1"]
    assert done.then == ["goal:root"]
    stored, said, confirmed = done.changes.changes
    assert isinstance(stored, StoreConstraints) and not stored.ride
    assert [s.title for s in stored.specs] == ["tokens are signed", "expired tokens get 401",
                                               "cost_usd <= 1"]
    assert {s.provenance.source for s in stored.specs} == {"human"}  # the person's now
    assert said == Flow("goal:root", "intake confirmed: ' login tokens expire ' with 3 core "
                                     "constraints")
    assert confirmed == ConfirmIntake("goal:root", tuple(s.with_id().id for s in stored.specs), (
        ("description", "Make login tokens expire one hour after issue."),
        ("summary", "login tokens expire"), ("caption", "login tokens expire"),
        ("awaiting", None), ("capability_gap", None), ("intake", "done"),
        ("intake_state", None)))


def test_an_unclear_goal_is_asked_about_and_extracted_again_with_the_answers() -> None:
    view, root = _view()
    _, done = _turn(view, root, [proposal(_extraction(0.3, [], ["Which tokens?", "Expire when?"]))])
    hire = done.then
    assert isinstance(hire, moves.Hire) and hire.reason == "clarify"
    assert hire.gap["rationale"] == "Which tokens?; Expire when?"
    assert done.changes.changes[0].chosen == "clarify"  # type: ignore[union-attr]
    asked, done = _turn(view, _parked(root, hire), [
        proposal(IntakeAnswer(answers=["login tokens", "after an hour"])),
        proposal(_extraction(0.9, [EXPIRY]))])
    question, call = asked
    assert isinstance(question, AskPerson)
    assert question.request.payload["questions"] == ["Which tokens?", "Expire when?"]
    assert isinstance(call, ModelCall) and call.operation is ops.EXTRACT_GOAL
    assert call.request.payload["clarifications"] == [
        {"question": "Which tokens?", "answer": "login tokens"},
        {"question": "Expire when?", "answer": "after an hour"}]
    # the review is a new question: parked on it, the dialogue so far kept on the root
    review = done.then
    assert isinstance(review, moves.Hire) and review.reason == "review"
    assert review.gap["fingerprint"] != hire.gap["fingerprint"]
    assert review.changes is not None and review.changes.intake_state is not None
    kept = review.changes.intake_state
    assert (kept["phase"], kept["asked"], kept["rounds"]) == ("review", 1, 1)
    assert [type(c) for c in done.changes.changes] == [Decision]
    assert done.changes.changes[0].rationale == "clarity 0.90 against 0.60, round 1"  # type: ignore[union-attr]


def test_a_rejected_goal_is_refused_and_nothing_is_stored() -> None:
    view, root = _view()
    _, done = _turn(view, root, [proposal(_extraction(0.9, [EXPIRY]))])
    asked, done = _turn(view, _parked(root, done.then), [
        proposal(IntakeAnswer(verdict="reject", note="not what I meant"))])
    assert [type(a) for a in asked] == [AskPerson]
    assert done.then == []  # the root has no parent to wake
    [refused] = done.changes.changes
    assert isinstance(refused, RefuseGoal) and refused.reason is RefusalReason.INTAKE_REJECTED
    assert refused.detail == "the person rejected the goal: not what I meant"


def test_a_contradiction_is_shown_with_its_unsat_core_and_reviewed_again() -> None:
    view, root = _view()
    _, done = _turn(view, root, [proposal(_extraction(0.9, [EXPIRY, COST]))])
    _, done = _turn(view, _parked(root, done.then), [
        proposal(IntakeAnswer(add=["logic:cost:cost_usd >= 2"]))])
    conflict = ("the core constraints 'cost_usd <= 1' and 'cost_usd >= 2' cannot all hold "
                "(Z3: unsat); drop or change one of them")
    assert done.changes.changes == (Flow("goal:root", f"intake: {conflict}"),)
    again = done.then
    assert isinstance(again, moves.Hire) and again.reason == "review"
    # reviewed again: the person's edits kept, the unsat core among the notes shown
    asked, done = _turn(view, _parked(root, again), [
        proposal(IntakeAnswer(drop=["cost_usd >= 2"]))])
    [question] = asked
    assert isinstance(question, AskPerson)
    assert question.request.payload["notes"] == [conflict]
    assert question.request.payload["round"] == 1
    assert [c["title"] for c in question.request.payload["constraints"]] == [
        "expired tokens get 401", "cost_usd <= 1", "cost_usd >= 2"]
    assert done.then == ["goal:root"]
    stored = done.changes.changes[0]
    assert isinstance(stored, StoreConstraints)
    assert [s.title for s in stored.specs] == ["expired tokens get 401", "cost_usd <= 1"]


def test_a_core_still_contradictory_after_the_last_review_is_refused() -> None:
    view, root = _view()
    _, done = _turn(view, root, [proposal(_extraction(0.9, [COST]))])
    parked = _parked(root, done.then)
    parked = parked.model_copy(update={"intake_state": {**(parked.intake_state or {}),
                                                        "reviews": 3}})
    _, done = _turn(view, parked, [proposal(IntakeAnswer(add=["logic:cost:cost_usd >= 2"]))])
    [refused] = done.changes.changes
    assert isinstance(refused, RefuseGoal)
    assert refused.reason is RefusalReason.CORE_INCONSISTENT
    assert refused.facts == (("count", "4"), ("constraints", "'cost_usd <= 1' and 'cost_usd >= 2'"))


def test_nobody_there_to_answer_leaves_the_root_parked_its_notes_told_first() -> None:
    """A logic candidate nothing could check is re-typed semantic; the note is logged
    before the question is asked, whether anyone answers or not."""
    unchecked = {"type": "logic", "domain": "security", "title": "tokens rotate",
                 "explicit": True, "payload": {}}
    view, root = _view()
    _, done = _turn(view, root, [proposal(_extraction(0.9, [unchecked]))])
    [decision, note] = done.changes.changes  # the park's turn says it too
    assert isinstance(decision, Decision) and isinstance(note, Flow)
    assert "tokens rotate" in note.text
    asked, done = _turn(view, _parked(root, done.then), [None])
    [question] = asked
    assert isinstance(question, AskPerson) and question.told == (note,)
    assert done.then == [] and not done.changes


def test_a_person_editing_a_title_no_candidate_has_is_shown_why_and_asked_again() -> None:
    view, root = _view()
    _, done = _turn(view, root, [proposal(_extraction(0.9, [EXPIRY]))])
    _, done = _turn(view, _parked(root, done.then), [
        proposal(IntakeAnswer(drop=["no such title"]))])
    assert not done.changes  # nothing logged, nothing stored
    again = done.then
    assert isinstance(again, moves.Hire) and again.changes is not None
    kept = again.changes.intake_state or {}
    assert kept["notes"] == ["no proposed constraint is titled 'no such title'; the titles "
                             "are 'expired tokens get 401'"]
    assert (kept["asked"], kept["reviews"]) == (1, 1)

