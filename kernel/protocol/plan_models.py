"""What planning mode asks the model for: constraints, a task DAG with estimates, and
approach surveys. Untrusted proposals: every number derived from them is computed and
checked by the kernel (kernel/plan/)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


def _offsets_schema(schema: dict[str, Any]) -> None:
    """What a model is asked for: the low end and two non-negative steps up, so every
    schema-valid answer is ordered (a schema cannot compare low, mid and high)."""
    schema["properties"] = {
        "low": {"type": "number", "minimum": 0, "description": "the optimistic value"},
        "to_mid": {"type": "number", "minimum": 0,
                   "description": "the likely value minus the optimistic one"},
        "to_high": {"type": "number", "minimum": 0,
                    "description": "the pessimistic value minus the likely one"}}
    schema["required"] = ["low", "to_mid", "to_high"]


class Range(_Out):
    """An estimate: low <= mid <= high. A model gives it as ``low``, ``to_mid`` and
    ``to_high`` (steps up, never negative); scripts and stored plans as the three values."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False,
                              json_schema_extra=_offsets_schema)

    low: float = Field(ge=0)
    mid: float = Field(ge=0)
    high: float = Field(ge=0)

    @model_validator(mode="before")
    @classmethod
    def _from_offsets(cls, data: Any) -> Any:
        if isinstance(data, dict) and "to_mid" in data and "to_high" in data:
            rest = {k: v for k, v in data.items() if k not in ("to_mid", "to_high")}
            try:
                mid = float(data["low"]) + float(data["to_mid"])
                return {**rest, "mid": mid, "high": mid + float(data["to_high"])}
            except (KeyError, TypeError, ValueError):
                return data
        return data

    @model_validator(mode="after")
    def _ordered(self) -> Range:
        if not self.low <= self.mid <= self.high:
            raise ValueError(f"an estimate needs low <= mid <= high, got "
                             f"{self.low}/{self.mid}/{self.high}")
        return self


class PlanConstraint(_Out):
    id: str = Field(pattern=r"^[A-Za-z0-9_\-]+$", description="a short unique name")
    title: str = Field(description="the constraint in words")
    kind: Literal["explicit", "implicit"] = Field(
        description="stated in the goal, or what a careful engineer adds")
    type: Literal["logic", "semantic"] = Field(
        description="logic: a number decides it; semantic: judgment does")
    metric: str | None = Field(default=None, description="what is measured, e.g. cost_usd")
    aggregation: Literal["sum", "critical_path", "projection"] | None = Field(
        default=None, description="sum over tasks, longest dependency chain, or a projection")
    op: Literal["<=", "<", ">=", ">"] | None = Field(default=None,
                                                     description="how the metric meets the limit")
    limit: float | None = Field(default=None, description="the bound, in the unit")
    unit: str = Field(default="", description="USD, days, ms, ...")
    projection: Range | None = Field(default=None,
                                     description="the plan's estimate of the metric")
    source_text: str = Field(default="", description="the words of the goal it comes from "
                                                     "(required for an explicit constraint)")
    removal_consequence: str = Field(default="", description="what goes wrong without it")

    @model_validator(mode="after")
    def _quoted(self) -> PlanConstraint:
        if self.kind == "explicit" and not self.source_text.strip():
            raise ValueError(f"constraint {self.id!r} is explicit, so source_text must give "
                             "the words of the goal it comes from (or make it implicit, "
                             "with a removal_consequence)")
        return self

    @model_validator(mode="after")
    def _measured_whole(self) -> PlanConstraint:
        """A constraint is measured in full (metric, aggregation, op, limit, and a
        projection when projected) or not at all: a part of a measure is a number lost,
        and the plan would silently leave the constraint unchecked."""
        measure = {"metric": self.metric, "aggregation": self.aggregation, "op": self.op,
                   "limit": self.limit}
        lacking = [k for k, v in measure.items() if v is None]
        if self.aggregation == "projection" and self.projection is None:
            lacking.append("projection")
        if lacking and len(lacking) < 4 + (self.aggregation == "projection"):
            given = [k for k in measure if k not in lacking]
            raise ValueError(f"constraint {self.id!r} gives its {', '.join(given)} but no "
                             f"{' or '.join(lacking)}: give its {' and '.join(lacking)} "
                             f"too, or drop its {', '.join(given)} to leave it to judgment")
        return self


class ExtractedConstraints(_Out):
    constraints: list[PlanConstraint] = Field(min_length=1, description="explicit, then implicit")
    open_questions: list[str] = Field(default_factory=list,
                                      description="what a person should answer")


class PlanTask(_Out):
    id: str = Field(pattern=r"^[A-Za-z0-9_\-]+$", description="a short unique name")
    title: str = Field(description="the task in words")
    type: Literal["research", "build", "evaluate", "integrate", "deploy", "operate",
                  "procure", "hire", "test", "design"]
    estimates: dict[str, Range] = Field(description="metric -> estimate, e.g. cost_usd, hours")
    confidence: float = Field(ge=0, le=1, description="in the estimates, 0 to 1")
    depends_on: list[str] = Field(default_factory=list, description="ids of tasks it needs first")


class Claim(_Out):
    """A number the model states in its narrative (checked; the computed value wins)."""

    constraint_id: str = Field(description="the constraint the number is about")
    estimate: Literal["low", "mid", "high"] = Field(default="mid",
                                                    description="which end it states")
    value: float = Field(description="the number as the narrative states it")


class TaskDag(_Out):
    tasks: list[PlanTask] = Field(min_length=1, description="one entry task, one final task")
    narrative: str = Field(default="", description="the plan in prose")
    claims: list[Claim] = Field(default_factory=list,
                                description="every total the narrative states")


class Approach(_Out):
    id: str = Field(pattern=r"^[A-Za-z0-9_\-]+$", description="a short unique name")
    title: str = Field(description="the approach in words")
    estimates: dict[str, Range] = Field(description="metric -> estimate, as for the task")
    confidence: float = Field(ge=0, le=1, description="in the estimates, 0 to 1")
    known_method: list[str] = Field(default_factory=list, description="steps with a known method")
    judgment_required: list[str] = Field(default_factory=list,
                                         description="steps needing judgment")
    projections: dict[str, Range] = Field(
        default_factory=dict, description="constraint id -> the projection if chosen")


class TaskSurvey(_Out):
    task_id: str = Field(description="the surveyed task")
    approaches: list[Approach] = Field(description="at least two distinct ones")


class ApproachSurvey(_Out):
    surveys: list[TaskSurvey] = Field(description="one per task shown")
