"""What planning mode asks the model for: constraints, a task DAG with estimates, and
approach surveys. Untrusted proposals: every number derived from them is computed and
checked by the kernel (kernel/plan/)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Range(_Out):
    """An estimate: low <= mid <= high."""

    low: float = Field(ge=0)
    mid: float = Field(ge=0)
    high: float = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> Range:
        if not self.low <= self.mid <= self.high:
            raise ValueError(f"an estimate needs low <= mid <= high, got "
                             f"{self.low}/{self.mid}/{self.high}")
        return self


class PlanConstraint(_Out):
    id: str = Field(pattern=r"^[A-Za-z0-9_\-]+$")
    title: str
    kind: Literal["explicit", "implicit"]
    type: Literal["logic", "semantic"]
    metric: str | None = Field(default=None, description="what is measured, e.g. cost_usd")
    aggregation: Literal["sum", "critical_path", "projection"] | None = Field(
        default=None, description="sum over tasks, longest dependency chain, or a projection")
    op: Literal["<=", "<", ">=", ">"] | None = None
    limit: float | None = None
    unit: str = ""
    projection: Range | None = Field(default=None,
                                     description="the plan's estimate of the metric")
    source_text: str = Field(default="", description="the words of the goal it comes from")
    removal_consequence: str = ""


class ExtractedConstraints(_Out):
    constraints: list[PlanConstraint] = Field(min_length=1)
    open_questions: list[str] = Field(default_factory=list)


class PlanTask(_Out):
    id: str = Field(pattern=r"^[A-Za-z0-9_\-]+$")
    title: str
    type: Literal["research", "build", "evaluate", "integrate", "deploy", "operate",
                  "procure", "hire", "test", "design"]
    estimates: dict[str, Range] = Field(description="metric -> estimate, e.g. cost_usd, hours")
    confidence: float = Field(ge=0, le=1)
    depends_on: list[str] = Field(default_factory=list)


class Claim(_Out):
    """A number the model states in its narrative (checked; the computed value wins)."""

    constraint_id: str
    estimate: Literal["low", "mid", "high"] = "mid"
    value: float


class TaskDag(_Out):
    tasks: list[PlanTask] = Field(min_length=1)
    narrative: str = ""
    claims: list[Claim] = Field(default_factory=list)


class Approach(_Out):
    id: str = Field(pattern=r"^[A-Za-z0-9_\-]+$")
    title: str
    estimates: dict[str, Range]
    confidence: float = Field(ge=0, le=1)
    known_method: list[str] = Field(default_factory=list, description="steps with a known method")
    judgment_required: list[str] = Field(default_factory=list,
                                         description="steps needing judgment")
    projections: dict[str, Range] = Field(
        default_factory=dict, description="constraint id -> the projection if chosen")


class TaskSurvey(_Out):
    task_id: str
    approaches: list[Approach]


class ApproachSurvey(_Out):
    surveys: list[TaskSurvey]
