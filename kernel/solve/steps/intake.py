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

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field

from kernel.core.envelopes import ConstraintSpec, Provenance
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.errors import ConfigError
from kernel.protocol import operations as ops
from kernel.protocol.errors import Parked
from kernel.protocol.intake_models import INTENT_CLASSES, GoalExtraction, IntakeAnswer
from kernel.protocol.resolver_ids import HUMAN_ID
from kernel.refusal import RefusalReason
from kernel.repositories import goals
from kernel.repositories.requests import INTAKE_TAG
from kernel.runtime.gate import CLAUDE_ID, ask
from kernel.runtime.installed import resolvers
from kernel.runtime.kernel import Kernel
from kernel.solve import moves
from kernel.solve.capability_requests import request_fingerprint
from kernel.solve.checkable import proposed_spec
from kernel.solve.constraint_text import parse_constraint
from kernel.solve.core_check import check_core
from kernel.solve.steps._shared import S

QUESTION_ROUNDS = 2
MAX_REVIEWS = 4
MAX_QUESTIONS = 3


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


def intake(k: Kernel, move: moves.Intake) -> list[str] | moves.Hire:
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
    while True:
        if state.phase == "extract":
            state = _extract(k, goal, state)
            continue
        extraction = GoalExtraction.model_validate(state.extraction)
        if state.phase == "clarify":
            questions = extraction.questions[:MAX_QUESTIONS]
            answer = _ask_person(k, goal, state, {"kind": "clarify", "questions": questions,
                                                  "summary": extraction.summary})
            if not isinstance(answer, IntakeAnswer):
                return answer
            if answer.verdict == "reject":
                return _rejected(k, goal, answer)
            state = state.model_copy(update={
                "phase": "extract", "rounds": state.rounds + 1,
                "clarifications": state.clarifications + [
                    {"question": q, "answer": a} for q, a in zip(questions, answer.answers,
                                                                   strict=False)]})
            continue
        outcome = _review(k, goal, state, extraction)
        if isinstance(outcome, IntakeState):
            state = outcome
            continue
        return outcome


def _extract(k: Kernel, goal: GoalNode, state: IntakeState) -> IntakeState:
    given = k.constraints.get_many(k.constraints.roles(goal.id)["core"])
    proposal = ask(k, goal.id, ops.EXTRACT_GOAL, ops.EXTRACT_GOAL.request(
        goal_id=goal.id, goal_description=goal.description, constraints=given,
        payload={"intent_classes": INTENT_CLASSES, "clarifications": state.clarifications}))
    extraction: GoalExtraction = proposal.output
    unclear = extraction.clarity < k.config.clarity_threshold and bool(extraction.questions)
    phase = "clarify" if unclear and state.rounds < QUESTION_ROUNDS else "review"
    k.log.decision(goal.id, "intake_clarity", candidates=["clarify", "review"], chosen=phase,
                   rationale=f"clarity {extraction.clarity:.2f} against "
                             f"{k.config.clarity_threshold:.2f}, round {state.rounds}",
                   intent_class=extraction.intent_class)
    return state.model_copy(update={"phase": phase,
                                    "extraction": extraction.model_dump(mode="json")})


def _candidates(k: Kernel, goal: GoalNode, extraction: GoalExtraction) -> list[ConstraintSpec]:
    """The typed core and the extraction's, one per title (the person's wording wins)."""
    typed = [_spec_of(c) for c in k.constraints.get_many(k.constraints.roles(goal.id)["core"])]
    titles = {s.title for s in typed}
    proposed = []
    for c in extraction.core_constraints:
        spec, note = proposed_spec(c, Provenance(source="resolver", resolver_id=CLAUDE_ID))
        if note:
            k.log.flow(goal.id, note)
        if spec.title not in titles:
            titles.add(spec.title)
            proposed.append(spec)
    return typed + proposed


def _spec_of(constraint: Any) -> ConstraintSpec:
    return ConstraintSpec(type=constraint.type, domain=constraint.domain,
                          title=constraint.title, payload=constraint.payload,
                          provenance=constraint.provenance)


def _review(k: Kernel, goal: GoalNode, state: IntakeState,
            extraction: GoalExtraction) -> IntakeState | list[str] | moves.Hire:
    candidates = _candidates(k, goal, extraction)
    answer = _ask_person(k, goal, state, {
        "kind": "review", "description": extraction.description,
        "summary": extraction.summary, "intent_class": extraction.intent_class,
        "clarity": extraction.clarity, "unstated": extraction.unstated,
        "constraints": [c.model_dump(mode="json", include={"type", "domain", "title",
                                                           "payload"}) for c in candidates],
        "notes": state.notes})
    if not isinstance(answer, IntakeAnswer):
        return answer
    if answer.verdict == "reject":
        return _rejected(k, goal, answer)
    reviews = state.reviews + 1
    try:
        core = _confirmed(candidates, answer)
    except ConfigError as exc:
        return state.model_copy(update={"reviews": reviews, "notes": [str(exc)]})
    description = answer.description or extraction.description
    report = check_core(core)
    if report.conflict:
        if reviews >= MAX_REVIEWS:
            return k.refuse_goal(goal, RefusalReason.CORE_INCONSISTENT, report.problems()[0],
                                 count=reviews,
                                 constraints=" and ".join(repr(t) for t in report.conflict))
        k.log.flow(goal.id, f"intake: {report.problems()[0]}")
        return state.model_copy(update={"reviews": reviews, "notes": report.problems(),
                                        "extraction": _kept(extraction, description, core)})
    implied = sorted(report.implied)
    if implied and implied != state.pointed_out and reviews < MAX_REVIEWS:
        k.log.flow(goal.id, "intake: " + "; ".join(report.problems()))
        return state.model_copy(update={"reviews": reviews, "notes": report.problems(),
                                        "pointed_out": implied,
                                        "extraction": _kept(extraction, description, core)})
    return _confirm(k, goal, description, extraction.summary, core)


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


def _confirm(k: Kernel, goal: GoalNode, description: str, summary: str,
             core: list[ConstraintSpec]) -> list[str]:
    core_ids = k.constraints.upsert(core)
    changes = GoalChanges(awaiting=None, capability_gap=None, intake="done",
                          intake_state=None).to_properties()
    k.log.flow(goal.id, f"intake confirmed: {summary!r} with {len(core)} core constraints")
    goals.confirm_intake(k.run, {
        "goal_id": goal.id, "core_ids": core_ids, "intake_tag": INTAKE_TAG,
        "changes": {"description": description, "summary": summary.strip(),
                    "caption": summary.strip()[:80], **changes}},
        what=f"confirm the goal of {goal.id}")
    return [goal.id]


def _rejected(k: Kernel, goal: GoalNode, answer: IntakeAnswer) -> list[str]:
    return k.refuse_goal(goal, RefusalReason.INTAKE_REJECTED,
                         f"the person rejected the goal: {answer.note or 'no reason given'}")


def _person(k: Kernel) -> Callable[[dict[str, Any]], Any] | None:
    """Who answers now: the terminal when there is one, else a script's person."""
    proposer = k.proposals.proposer
    return k.human_prompt or (proposer.person if proposer is not None else None)


def _ask_person(k: Kernel, goal: GoalNode, state: IntakeState,
                question: dict[str, Any]) -> IntakeAnswer | list[str] | moves.Hire:
    """The person's answer (recorded in the ledger), the goals to step next, or the
    HIRE request to park on.

    A question is first a request the root parks on, with the dialogue so far (one
    commit), whoever will answer it; the next step asks. So a run answered in the
    terminal, one answered later with ``kernel hire answer`` and their replays commit
    the same states. Nobody there to answer: the root stays parked."""
    fingerprint = request_fingerprint(INTAKE_TAG, [], "intake",
                                      scope=f"{goal.id}:intake:{state.asked}")
    if (goal.capability_gap or {}).get("fingerprint") != fingerprint:
        return _park(goal, state, question, fingerprint)
    payload = {**question, "round": state.asked, "fingerprint": fingerprint}
    try:
        proposal = ask(k, goal.id, ops.INTAKE, ops.INTAKE.request(
            goal_id=goal.id, goal_description=goal.description, payload=payload),
            resolver_id=HUMAN_ID, proposer=resolvers().intake_human(k.run, _person(k)))
    except Parked:
        return []
    state.asked += 1  # the state object is this step's own
    answer: IntakeAnswer = proposal.output
    return answer


def _park(goal: GoalNode, state: IntakeState, question: dict[str, Any],
          fingerprint: str) -> moves.Hire:
    """The question as a request the root parks on (the one it answered before is done)."""
    asked = "; ".join(question.get("questions", [])) or \
        f"review the goal as understood: {question.get('summary', '')}"
    gap = {"capability_tag": INTAKE_TAG, "build_constraints": [], "buildable": False,
           "rationale": asked, "budget_class": "intake", "fingerprint": fingerprint}
    return moves.Hire(goal, gap, question["kind"], S.PENDING,
                      GoalChanges(intake_state=state.model_dump(mode="json")), supersede=True)
