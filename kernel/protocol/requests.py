"""What the kernel hands a resolver and what comes back: every tool estimates before it
runs and reports what it cost."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kernel.core.envelopes import Constraint


class ResolveRequest(BaseModel):
    """What the kernel hands a resolver for one operation on one goal."""

    model_config = ConfigDict(frozen=True)

    operation: str
    goal_id: str
    goal_description: str = ""
    constraints: list[Constraint] = Field(default_factory=list)
    input_artifact_ids: list[str] = Field(default_factory=list)
    feedback: dict[str, Any] | None = None
    context: str = ""  # the knowledge-graph block for the prompt
    payload: dict[str, Any] = Field(default_factory=dict)  # operation-specific inputs


class Estimate(BaseModel):
    model_config = ConfigDict(frozen=True)

    cost_usd: float = Field(ge=0)
    seconds: float = Field(ge=0)


class Resolution(BaseModel):
    """A resolver's output: an untrusted proposal until the kernel commits it."""

    model_config = ConfigDict(frozen=True)

    output: Any
    cost_usd: float = Field(ge=0)
    seconds: float = Field(ge=0)
    metadata: dict[str, Any] = Field(default_factory=dict)
