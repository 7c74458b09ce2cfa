"""What a person answers a capability request with (HIRE): a tool, more budget, or no.

A tool declared here (by a person, a tool file or a finished build) becomes a
registered resolver, so an answer is reusable.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

TAG = r"^[a-z0-9_]+$"


def is_tag(text: str) -> bool:
    """A capability tag: snake_case."""
    return re.fullmatch(TAG, text) is not None


class ToolDefinition(BaseModel):
    """What a human's answer, a tool file or a finished build declares about a tool."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str | None = Field(default=None, pattern=r"^resolver:[A-Za-z0-9_.\-]+$")
    label: str = Field(min_length=1)
    description: str = ""
    capabilities: list[str] = Field(min_length=1)
    type: Literal["digital", "physical", "hybrid"] = "digital"
    code: str | None = None
    steps: list[str] = Field(default_factory=list, description="resolver ids, in order")
    cost_per_invocation: float = Field(default=0.0, ge=0)
    latency_estimate: float = Field(default=5.0, ge=0)

    @model_validator(mode="after")
    def _one_body(self) -> ToolDefinition:
        if (self.code is None) == (not self.steps):
            raise ValueError("a tool has either 'code' (a script tool) or 'steps' "
                             "(a composite of registered tools), not both and not neither")
        bad = [c for c in self.capabilities if not is_tag(c)]
        if bad:
            raise ValueError(f"capability tags are snake_case: {bad}")
        return self

    @property
    def kind(self) -> str:
        return "script" if self.code is not None else "composite"



class HireAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["resolver", "add_budget", "decline"]
    tool: ToolDefinition | None = None
    add_usd: float = Field(default=0.0, ge=0)
    add_seconds: float = Field(default=0.0, ge=0)
    note: str = ""

    @model_validator(mode="after")
    def _complete(self) -> HireAnswer:
        if self.kind == "resolver" and self.tool is None:
            raise ValueError("a 'resolver' answer carries the tool")
        if self.kind == "add_budget" and self.add_usd == 0 and self.add_seconds == 0:
            raise ValueError("an 'add_budget' answer adds dollars, seconds or both")
        return self
