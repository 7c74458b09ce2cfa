"""The plan document as a model: what ``kernel plan`` writes, section by section.

The planner builds it (``kernel.plan.compose``) and stores its JSON; the report renders
it. ``kernel check-plan`` reads a document as untrusted JSON and recomputes it with
plain Python over dicts, so the checker stays independent of this model; what it can
use from here is the shape (``shape_problems``): keys the planner never writes, a
section of the wrong kind, a confidence outside [0, 1].

Numbers keep the type they were computed with (``int | float``), so a document dumps to
the same bytes it was built from.

>>> PlanDocument.model_fields["rollup"].annotation
list[kernel.plan.document.RollupRow]
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kernel.protocol.plan_models import PlanConstraint, PlanTask, TaskSurvey

Number = int | float
Estimates = dict[Literal["low", "mid", "high"], Number]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


Op = Literal["<=", "<", ">=", ">"]


class CheckedClaim(_Section):
    """A number the narrative states, with what the kernel computed."""

    constraint_id: str
    estimate: Literal["low", "mid", "high"]
    value: Number
    computed: Number
    agrees: bool


class RollupRow(_Section):
    """A checkable constraint rolled up over the tasks, and its status."""

    constraint_id: str
    metric: str
    aggregation: Literal["sum", "critical_path", "projection"]
    op: Op
    limit: Number
    totals: Estimates
    status: Literal["SAT", "TIGHT", "UNSAT"]
    critical_path: list[str]


class CriticalPath(_Section):
    constraint_id: str
    metric: str
    tasks: list[str]
    totals: Estimates


class WaterfallRow(_Section):
    task_id: str
    cumulative: Number
    remaining: Number


class Waterfall(_Section):
    constraint_id: str
    metric: str
    limit: Number
    rows: list[WaterfallRow]


class Contribution(_Section):
    task_id: str
    contribution: Number


class Wall(_Section):
    """The tasks pushing an UNSAT constraint there, and the set whose removal frees it
    (``note`` instead of an excess for a projected constraint)."""

    constraint_id: str
    tasks: list[Contribution]
    cluster: list[str]
    excess: Number | None = None
    note: str | None = None


class SurveySection(_Section):
    triggers: dict[str, list[str]]
    surveys: list[TaskSurvey]


class SideEffect(_Section):
    """A constraint the repair moves from SAT to TIGHT."""

    constraint_id: str
    before: str
    after: str
    totals: Estimates
    op: Op
    limit: Number


class RepairSection(_Section):
    feasible: bool
    chosen: dict[str, str]
    tasks: list[PlanTask]
    rollup: list[RollupRow]
    critical_path: CriticalPath | None
    waterfall: Waterfall | None
    cost: dict[str, Number]
    side_effects: list[SideEffect]
    searched: int
    combinations: int


class Blocking(_Section):
    """A member of the minimal conflict, and the best mid value it reaches while the
    others are met."""

    constraint_id: str
    op: Op
    limit: Number
    best_mid: Number
    before_mid: Number


class Closest(_Section):
    chosen: dict[str, str]
    unmet: list[str]
    rollup: list[RollupRow]


class PlanRefusal(_Section):
    reason: str
    conflict: list[str]
    constraints: list[Blocking]
    closest: dict[str, Any]  # a Closest, or {} when no combination was searched
    searched: int
    combinations: int
    to_proceed: list[str]


class PlanDocument(_Section):
    """A plan: the constraints and tasks it was computed from, what was computed, the
    repair or the refusal, the flags, and the digest of its inputs."""

    schema_: str = Field(alias="schema")
    run_id: str
    goal: str
    constraints: list[PlanConstraint]
    open_questions: list[str]
    tasks: list[PlanTask]
    narrative: str
    claims: list[CheckedClaim]
    rollup: list[RollupRow]
    critical_path: CriticalPath | None
    waterfall: Waterfall | None
    walls: list[Wall]
    survey: SurveySection
    repair: RepairSection | None
    refusal: PlanRefusal | None
    flags: list[str]
    verifications: list[dict[str, Any]]
    inputs_digest: str

    def as_json(self) -> dict[str, Any]:
        """The document as stored and printed (every key, ``schema`` by its name)."""
        dumped: dict[str, Any] = self.model_dump(mode="json", by_alias=True,
                                                 exclude_none=False)
        for wall, given in zip(dumped["walls"], self.walls, strict=True):
            for unset in {"excess", "note"} - given.model_fields_set:
                wall.pop(unset)
        return dumped


def shape_problems(document: Any) -> list[str]:
    """What makes ``document`` not a plan the planner could have written: each problem
    as ``where: what``."""
    try:
        PlanDocument.model_validate(document)
    except ValidationError as exc:
        return [f"{'.'.join(str(p) for p in e['loc']) or 'document'}: {e['msg']}"
                for e in exc.errors()]
    return []
