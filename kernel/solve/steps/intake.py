"""Step 1, goal intake: the extraction dialogue that turns a person's raw intent into the
root goal and its confirmed core constraints, before anything else is paid for.

1. Extract (proposal ``extract_goal``): a formal description, an intent class, how well
   the intent pins the goal down (clarity), candidate core constraints and what is
   unstated.
2. Clarify: below the clarity threshold, with questions to ask, the person is asked
   first (at most ``QUESTION_ROUNDS`` times) and the extraction is made again with the
   answers.
3. Review: the person confirms, edits or rejects each candidate, may edit the
   description and add constraints. The kernel checks the result with Z3: a
   contradiction (its unsat core) is shown and reviewed again; a constraint implied by
   the others is pointed out once. The confirmed goal replaces the typed one in one
   commit, and the loop goes on to step 2.

Every proposal and every answer is a ledger entry, so a replay reproduces the intake. A
question nobody is there to answer parks the root on a request (``kernel hire list``);
what the dialogue had reached is stored on the root, and the answer given with
``kernel hire answer ID --intake FILE`` continues it on resume.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Literal

from pydantic import BaseModel, Field

from kernel.core.envelopes import ConstraintSpec, Provenance
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.errors import ConfigError
from kernel.proposals import Proposal
from kernel.protocol import operations as ops
from kernel.protocol.intake_models import INTENT_CLASSES, GoalExtraction, IntakeAnswer
from kernel.refusal import RefusalReason
from kernel.repositories.requests import INTAKE_TAG
from kernel.runtime.gate import CLAUDE_ID
from kernel.solve import moves
from kernel.solve.capability_requests import request_fingerprint
from kernel.solve.checkable import proposed_spec
from kernel.solve.constraint_text import parse_constraint
from kernel.solve.core_check import check_core
from kernel.solve.effects import (
    AskPerson,
    Change,
    ConfirmIntake,
    Decision,
    Done,
    Effects,
    Flow,
    ModelCall,
    RefuseGoal,
    Request,
    StepChanges,
    StoreConstraints,
)
from kernel.solve.steps._shared import S, wake_parent
from kernel.solve.view import StepView

QUESTION_ROUNDS = 2
MAX_REVIEWS = 4
MAX_QUESTIONS = 3

Next = list[str] | moves.Hire
# The log lines the step has said and not yet handed on, in order: they go with the next
# question to the person (logged before it is asked), or lead the step's changes.
Said = list[Flow | Decision]
Asking = Generator[Request, Any, "IntakeAnswer | Done[Next]"]


class IntakeState(BaseModel):
    """How far the dialogue got: stored on the root while it waits for the person."""

    phase: Literal["extract", "clarify", "review"] = "extract"
    clarifications: list[dict[str, str]] = Field(default_factory=list)
    extraction: dict[str, Any] | None = None
    asked: int = 0  # questions put to the person so far: names the next one's request
    rounds: int = 0  # clarification rounds
    reviews: int = 0
    notes: list[str] = Field(default_factory=list)  # the kernel's findings, shown at review
    pointed_out: list[str] = Field(default_factory=list)  # implied titles already shown


def intake(view: StepView, move: moves.Intake) -> Effects[list[str] | moves.Hire]:
    """`kernel/runtime/start.py` records the run's inputs, the root goal with the core
    typed with `-c` (refused at once when Z3 finds them contradictory) and the root budget.
    With `--intake` (on with `--interactive`) or `kernel intake`, the root then runs the
    extraction dialogue: proposal `extract_goal` (formal description, intent class,
    clarity, candidate core constraints, what is unstated, questions); below the clarity
    threshold the person is asked first; then the person confirms, edits or rejects each
    candidate; the kernel checks the confirmed core with Z3 (unsat core shown, an implied
    constraint pointed out) and commits the confirmed goal (see Step 1 below); each
    question parks the root on a HIRE request. `--suggest` records a person's candidates
    with the inputs; they are weighed at step 6 (Suggestions, below)."""
    goal = move.goal
    state = IntakeState.model_validate(goal.intake_state or {})
    said: Said = []
    while True:
        if state.phase == "extract":
            state = yield from _extract(view, goal, state, said)
            continue
        extraction = GoalExtraction.model_validate(state.extraction)
        if state.phase == "clarify":
            questions = extraction.questions[:MAX_QUESTIONS]
            answer = yield from _ask_person(goal, state, {
                "kind": "clarify", "questions": questions, "summary": extraction.summary}, said)
            if not isinstance(answer, IntakeAnswer):
                return answer
            if answer.verdict == "reject":
                return _rejected(goal, answer, said)
            state = state.model_copy(update={
                "phase": "extract", "rounds": state.rounds + 1,
                "clarifications": state.clarifications + [
                    {"question": q, "answer": a} for q, a in zip(questions, answer.answers,
                                                                   strict=False)]})
            continue
        outcome = yield from _review(view, goal, state, extraction, said)
        if isinstance(outcome, IntakeState):
            state = outcome
            continue
        return outcome


def _extract(view: StepView, goal: GoalNode, state: IntakeState,
             said: Said) -> Generator[Request, Any, IntakeState]:
    """The extraction (made again with the person's answers), and whether the person is
    asked about it first or reviews it."""
    given = view.constraints(view.roles(goal.id)["core"])
    proposal: Proposal[GoalExtraction] = yield ModelCall(ops.EXTRACT_GOAL, ops.EXTRACT_GOAL.request(
        goal_id=goal.id, goal_description=goal.description, constraints=given,
        payload={"intent_classes": INTENT_CLASSES, "clarifications": state.clarifications}))
    extraction = proposal.output
    threshold = view.config.clarity_threshold
    unclear = extraction.clarity < threshold and bool(extraction.questions)
    phase = "clarify" if unclear and state.rounds < QUESTION_ROUNDS else "review"
    said.append(Decision(goal.id, "intake_clarity", ("clarify", "review"), phase,
                         f"clarity {extraction.clarity:.2f} against {threshold:.2f}, "
                         f"round {state.rounds}", (("intent_class", extraction.intent_class),)))
    return state.model_copy(update={"phase": phase,
                                    "extraction": extraction.model_dump(mode="json")})


def _candidates(view: StepView, goal: GoalNode, extraction: GoalExtraction,
                said: Said) -> list[ConstraintSpec]:
    """The typed core and the extraction's, one per title (the person's wording wins)."""
    typed = [_spec_of(c) for c in view.constraints(view.roles(goal.id)["core"])]
    titles = {s.title for s in typed}
    proposed = []
    for c in extraction.core_constraints:
        spec, note = proposed_spec(c, Provenance(source="resolver", resolver_id=CLAUDE_ID))
        if note:
            said.append(Flow(goal.id, note))
        if spec.title not in titles:
            titles.add(spec.title)
            proposed.append(spec)
    return typed + proposed


def _spec_of(constraint: Any) -> ConstraintSpec:
    return ConstraintSpec(type=constraint.type, domain=constraint.domain,
                          title=constraint.title, payload=constraint.payload,
                          provenance=constraint.provenance)


def _review(view: StepView, goal: GoalNode, state: IntakeState, extraction: GoalExtraction,
            said: Said) -> Generator[Request, Any, IntakeState | Done[Next]]:
    """The person's review of the extraction: the dialogue as it goes on (the kernel's
    findings to show at the next review), or how the step ends."""
    candidates = _candidates(view, goal, extraction, said)
    answer = yield from _ask_person(goal, state, {
        "kind": "review", "description": extraction.description,
        "summary": extraction.summary, "intent_class": extraction.intent_class,
        "clarity": extraction.clarity, "unstated": extraction.unstated,
        "constraints": [c.model_dump(mode="json", include={"type", "domain", "title",
                                                           "payload"}) for c in candidates],
        "notes": state.notes}, said)
    if not isinstance(answer, IntakeAnswer):
        return answer
    if answer.verdict == "reject":
        return _rejected(goal, answer, said)
    reviews = state.reviews + 1
    try:
        core = _confirmed(candidates, answer)
    except ConfigError as exc:
        return state.model_copy(update={"reviews": reviews, "notes": [str(exc)]})
    description = answer.description or extraction.description
    report = check_core(core)
    if report.conflict:
        if reviews >= MAX_REVIEWS:
            return _done(wake_parent(goal), said, RefuseGoal(
                goal, RefusalReason.CORE_INCONSISTENT, report.problems()[0],
                (("count", str(reviews)),
                 ("constraints", " and ".join(repr(t) for t in report.conflict)))))
        said.append(Flow(goal.id, f"intake: {report.problems()[0]}"))
        return state.model_copy(update={"reviews": reviews, "notes": report.problems(),
                                        "extraction": _kept(extraction, description, core)})
    implied = sorted(report.implied)
    if implied and implied != state.pointed_out and reviews < MAX_REVIEWS:
        said.append(Flow(goal.id, "intake: " + "; ".join(report.problems())))
        return state.model_copy(update={"reviews": reviews, "notes": report.problems(),
                                        "pointed_out": implied,
                                        "extraction": _kept(extraction, description, core)})
    return _confirm(goal, description, extraction.summary, core, said)


def _kept(extraction: GoalExtraction, description: str,
          core: list[ConstraintSpec]) -> dict[str, Any]:
    """The extraction as the person left it, so the next review starts from their edits."""
    kept = [{"type": c.type.value, "domain": c.domain, "title": c.title, "payload": c.payload,
             "explicit": True} for c in core]
    return extraction.model_copy(update={"description": description}).model_dump(
        mode="json") | {"core_constraints": kept}


def _confirmed(candidates: list[ConstraintSpec], answer: IntakeAnswer) -> list[ConstraintSpec]:
    """The core the person confirmed: candidates not dropped, edits in their place,
    additions; all of it the person's now (provenance human)."""
    titles = {c.title for c in candidates}
    unknown = sorted((set(answer.drop) | set(answer.edit)) - titles)
    if unknown:
        raise ConfigError(f"no proposed constraint is titled {unknown[0]!r}; the titles are "
                          + ", ".join(repr(t) for t in sorted(titles)))
    core = []
    for spec in candidates:
        if spec.title in answer.drop:
            continue
        if spec.title in answer.edit:
            core.append(parse_constraint(answer.edit[spec.title]))
        else:
            core.append(spec.model_copy(update={"provenance": Provenance(source="human")}))
    core += [parse_constraint(text) for text in answer.add]
    return core


def _confirm(goal: GoalNode, description: str, summary: str, core: list[ConstraintSpec],
             said: Said) -> Done[Next]:
    """The confirmed goal in place of the typed one: its core stored first, then one
    commit; the root goes on to step 2."""
    closed = GoalChanges(awaiting=None, capability_gap=None, intake="done",
                         intake_state=None).to_properties()
    properties = {"description": description, "summary": summary.strip(),
                  "caption": summary.strip()[:80], **closed}
    return _done([goal.id], said,
                 StoreConstraints(tuple(core), ride=False),
                 Flow(goal.id, f"intake confirmed: {summary!r} with {len(core)} core constraints"),
                 ConfirmIntake(goal.id, tuple(spec.with_id().id for spec in core),
                               tuple(properties.items())))


def _rejected(goal: GoalNode, answer: IntakeAnswer, said: Said) -> Done[Next]:
    return _done(wake_parent(goal), said, RefuseGoal(
        goal, RefusalReason.INTAKE_REJECTED,
        f"the person rejected the goal: {answer.note or 'no reason given'}"))


def _done(then: Next, said: Said, *changes: Change) -> Done[Next]:
    """The step's end: the log lines said so far, then ``changes``."""
    return Done(then, StepChanges((*said, *changes)))


def _ask_person(goal: GoalNode, state: IntakeState, question: dict[str, Any],
                said: Said) -> Asking:
    """The person's answer (recorded in the ledger), or how the step ends: parked on the
    HIRE request, or still parked.

    A question is first a request the root parks on, with the dialogue so far (one
    commit), whoever will answer it; the next step asks. So a run answered in the
    terminal, one answered later with ``kernel hire answer`` and their replays commit
    the same states. Nobody there to answer: the root stays parked."""
    fingerprint = request_fingerprint(INTAKE_TAG, [], "intake",
                                      scope=f"{goal.id}:intake:{state.asked}")
    if (goal.capability_gap or {}).get("fingerprint") != fingerprint:
        return _done(_park(goal, state, question, fingerprint), said)
    payload = {**question, "round": state.asked, "fingerprint": fingerprint}
    told = tuple(said)
    said.clear()  # logged before the question is asked
    proposal: Proposal[IntakeAnswer] | None = yield AskPerson(ops.INTAKE.request(
        goal_id=goal.id, goal_description=goal.description, payload=payload), told)
    if proposal is None:
        return Done([])
    state.asked += 1  # the state object is this step's own
    return proposal.output


def _park(goal: GoalNode, state: IntakeState, question: dict[str, Any],
          fingerprint: str) -> moves.Hire:
    """The question as a request the root parks on (the one it answered before is done)."""
    asked = "; ".join(question.get("questions", [])) or \
        f"review the goal as understood: {question.get('summary', '')}"
    gap = {"capability_tag": INTAKE_TAG, "build_constraints": [], "buildable": False,
           "rationale": asked, "budget_class": "intake", "fingerprint": fingerprint}
    return moves.Hire(goal, gap, question["kind"], S.PENDING,
                      GoalChanges(intake_state=state.model_dump(mode="json")), supersede=True)
