"""Step 1, goal intake: what the model proposes from a person's raw intent, and what the
person answers (questions answered, the extraction confirmed, edited or rejected).

The model's extraction is a proposal like any other; the person's answers reach the
kernel as proposals from ``actor:human``. Both are recorded in the ledger before use.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kernel.protocol.solve_models import ProposedConstraint

# The intent classes the extraction names, each with the core constraints a goal of that
# class usually needs stated; a goal that states none of them is not pinned down.
INTENT_CLASSES: dict[str, str] = {
    "build_software": "inputs and outputs, the interface, how it is tested, what it must "
                      "not break",
    "fix_defect": "where it happens, how to reproduce it, what correct behaviour is, the "
                  "test that shows it fixed",
    "analyze_data": "which data, the question asked of it, the form of the answer",
    "write_document": "the audience, the content it must cover, length or format",
    "plan_project": "the deliverables, the deadline, the budget, who does what",
    "research_question": "the question, the sources that count, the depth wanted",
    "other": "what done looks like",
}
IntentClass = Literal["build_software", "fix_defect", "analyze_data", "write_document",
                      "plan_project", "research_question", "other"]


class GoalExtraction(BaseModel):
    """The model's reading of a raw intent (operation ``extract_goal``)."""

    model_config = ConfigDict(extra="forbid")

    description: str = Field(min_length=1, description="the goal, stated formally and completely")
    summary: str = Field(min_length=1, max_length=120, description="a short name for the goal")
    intent_class: IntentClass = Field(description="the class of goal, from those shown")
    clarity: float = Field(ge=0.0, le=1.0, description="how well the intent pins the goal "
                           "down: 1 nothing vital is unstated, 0 it could mean anything")
    core_constraints: list[ProposedConstraint] = Field(
        default_factory=list, description="the irreducible constraints the person stated or "
                                          "clearly means; logic ones in a checkable form")
    unstated: list[str] = Field(default_factory=list,
                                description="what matters but the intent does not say")
    questions: list[str] = Field(default_factory=list,
                                 description="what to ask the person, most important first")


class IntakeAnswer(BaseModel):
    """A person's answer during intake: to the questions (``answers``, in order), or to the
    review of the extraction. A proposed constraint not dropped or edited is confirmed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    answers: list[str] = Field(default_factory=list)
    verdict: Literal["confirm", "reject"] = "confirm"
    description: str | None = Field(default=None, min_length=1,
                                    description="the goal in the person's words, if edited")
    drop: list[str] = Field(default_factory=list, description="titles of constraints rejected")
    edit: dict[str, str] = Field(default_factory=dict, description=(
        "title -> the constraint as the person writes it: TYPE[:DOMAIN]:TEXT"))
    add: list[str] = Field(default_factory=list,
                           description="more core constraints: TYPE[:DOMAIN]:TEXT")
    note: str = ""


def is_intake_question(payload: dict[str, Any]) -> bool:
    """Whether what a person is asked is one of step 1's questions (not a HIRE request):
    only those carry the request fingerprint they are answered under."""
    return payload.get("kind") in ("clarify", "review") and "fingerprint" in payload
