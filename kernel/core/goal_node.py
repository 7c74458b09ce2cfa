"""A goal as the graph stores it (``GoalNode``) and a change a step makes to one
(``GoalChanges``).

Every read of a goal validates the stored node against ``GoalNode``, which forbids
properties it does not declare: a statement that starts writing a new property fails
the first read until the model says what it is. JSON-valued properties (``verification``,
``feedback``, ``capability_gap``) are strings in the graph (neither backend stores maps)
and typed values here.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    field_validator,
    model_validator,
)

from kernel.core.envelopes import Verification
from kernel.core.state_machine import Status
from kernel.errors import KernelError


class MissingGoalProperty(KernelError):
    """A goal lacks a property its state promises: the graph was changed by hand."""


LeafKind = Literal["atomic", "off_the_shelf", "contracted", "constraint_exhausted"]
JSON_FIELDS = ("verification", "feedback", "capability_gap", "intake_state")


def _parsed(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


class _StepFields(BaseModel):
    """What a step may change on a goal, together with a transition (never the status,
    ids or budget caches, which have statements of their own)."""

    leaf_kind: LeafKind | None = None
    leaf_reason: str | None = None
    resolver_id: str | None = None
    plan_artifact_id: str | None = None
    input_artifact_ids: list[str] = Field(default_factory=list)
    output_artifact_id: str | None = None
    verification: Verification | None = None
    sigma_v: float | None = Field(default=None, ge=0.0, le=1.0)
    sigma_path: float | None = Field(default=None, ge=0.0, le=1.0)
    decompositions: int = Field(default=0, ge=0)
    rescope_requested: bool | None = None
    required_capabilities: list[str] = Field(default_factory=list)
    feedback: dict[str, Any] | None = None
    gated_reason: str | None = None
    reopened: int = Field(default=0, ge=0)
    awaiting: str | None = None  # a build subgoal's id or a capability request's
    capability_gap: dict[str, Any] | None = None
    max_attempts: int = Field(default=1, ge=1)
    final_artifact_id: str | None = None
    sigma_system: float | None = Field(default=None, ge=0.0, le=1.0)
    consistency_rounds: int = Field(default=0, ge=0)
    plan_document_id: str | None = None
    pattern_id: str | None = None
    # Step 1 (intake) on a root: "open" until the person confirmed the goal, then "done";
    # absent when the run took the goal as typed. ``intake_state``: the dialogue so far,
    # kept while the root is parked on a question.
    intake: Literal["open", "done"] | None = None
    intake_state: dict[str, Any] | None = None

    @field_validator(*JSON_FIELDS, mode="before")
    @classmethod
    def _from_json(cls, value: Any) -> Any:
        return _parsed(value)


class GoalNode(_StepFields):
    """A Goal node, exactly: every property any statement writes, typed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    run_id: str
    root_id: str
    parent_id: str | None = None
    seq: int
    depth: int = Field(ge=0)
    description: str
    summary: str
    caption: str = ""  # absent on goals written before captions existed
    modality: str
    status: Status
    purpose: Literal["solve", "build"] = "solve"
    builds_capability: str | None = None
    decomposition_key: str | None = None
    stale: bool = False  # invalidated by a reopening above it (history kept)
    invalidated_at_seq: int | None = None
    over_budget: bool = False
    tau_local: float = Field(ge=0.0, le=1.0)
    tau_global: float = Field(ge=0.0, le=1.0)
    attempt_count: int = Field(ge=0)
    max_attempts: int = Field(ge=1)
    try_allowance: int | None = Field(default=None, ge=0)  # None: max_attempts
    last_attempt_id: str | None = None
    cost_allocated: int = 0
    cost_spent: int = 0  # this goal's own calls
    subtree_cost_spent: int = 0  # this goal's and every goal's below it (what its tree cost)
    cost_granted: int = 0
    cost_refunded: int = 0
    time_allocated: int = 0
    time_spent: int = 0
    time_granted: int = 0
    time_refunded: int = 0

    @property
    def is_root(self) -> bool:
        return self.parent_id is None

    def require(self, name: Literal["output_artifact_id", "plan_artifact_id", "parent_id",
                                    "awaiting"]) -> str:
        """A property the goal's state guarantees (a goal being verified has an output),
        or an error naming the goal when the graph says otherwise."""
        value = getattr(self, name)
        if not isinstance(value, str):
            raise MissingGoalProperty(f"goal {self.id} ({self.status}) has no {name}")
        return value

    def gap(self) -> dict[str, Any]:
        """The capability gap a goal parked on BUILD or HIRE recorded."""
        if self.capability_gap is None:
            raise MissingGoalProperty(f"goal {self.id} is parked without a capability gap")
        return self.capability_gap


class GoalChanges(_StepFields):
    """The step fields a transition sets; only the ones named are written (``None``
    removes a property), in the order they were named.

    The order is kept on purpose: a map of property changes reaches the store in that
    order, and the embedded store has been seen to drop the wrong property when a map
    that removes some properties arrives in another order. Keeping the caller's order
    makes the write the same on every run, whatever the hash seed.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    _order: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _keep_order(cls, data: Any, handler: ModelWrapValidatorHandler[GoalChanges],
                    ) -> GoalChanges:
        changes = handler(data)
        named = tuple(data) if isinstance(data, dict) else ()
        changes._order = tuple(n for n in named if n in changes.model_fields_set)
        return changes

    def named(self) -> tuple[str, ...]:
        """The fields this change sets, in the order they were given."""
        return self._order + tuple(sorted(self.model_fields_set - set(self._order)))

    def __or__(self, other: GoalChanges) -> GoalChanges:
        """Both changes, ``other`` winning where they name the same field (like
        ``{**self, **other}``)."""
        merged = {name: getattr(self, name) for name in self.named()}
        merged.update({name: getattr(other, name) for name in other.named()})
        return GoalChanges.model_validate(merged)

    def to_properties(self) -> dict[str, Any]:
        """Graph property values: JSON fields as sorted-key JSON text, as they were
        always stored (the summary hash covers them)."""
        values = {name: getattr(self, name) for name in self.named()}
        for name in JSON_FIELDS:
            value = values.get(name)
            if isinstance(value, BaseModel):
                values[name] = json.dumps(value.model_dump(mode="json"), sort_keys=True)
            elif value is not None:
                values[name] = json.dumps(value, sort_keys=True)
        return values


STEP_FIELDS = frozenset(_StepFields.model_fields)

__all__ = ["STEP_FIELDS", "GoalChanges", "GoalNode", "LeafKind", "MissingGoalProperty"]
