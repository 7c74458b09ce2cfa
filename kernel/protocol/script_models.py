"""The script format (``kernel-script`` v1) as data: what the scripted proposer answers
from, and what the kernel reads of a script itself (its ``example:`` goal and checks,
its ``core:`` constraints). Reading and checking a file is the scripted resolver's
(``resolvers/scripted.py``); docs/scripted-proposals.md describes the format."""

from __future__ import annotations

import fnmatch
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kernel.protocol.intake_models import IntakeAnswer


class ScriptedEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    operation: str
    goal: str = "*"
    output: dict[str, Any]
    cost_usd: float = Field(default=0.0, ge=0)
    seconds: float = Field(default=0.0, ge=0)
    repeat: bool = False


class FallbackEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    output: dict[str, Any]
    cost_usd: float = Field(default=0.0, ge=0)
    seconds: float = Field(default=0.0, ge=0)


class Example(BaseModel):
    """A shipped example: its goal, and the checks its plan must pass (``check-plan``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    goal: str
    verifications: list[dict[str, Any]] = Field(default_factory=list)


class CoreEntry(BaseModel):
    """The person's core constraints for the goals a glob matches, as ``-c`` takes them:
    what a script's answers name by title comes with the script, so each of its goals can
    be solved with ``kernel solve`` alone."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    goal: str
    constraints: list[str] = Field(min_length=1)


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(ge=1, le=1)
    description: str = ""
    example: Example | None = None
    proposals: list[ScriptedEntry] = Field(default_factory=list)
    fallback: dict[str, FallbackEntry] = Field(default_factory=dict)
    intake: list[IntakeAnswer] = Field(default_factory=list)
    core: list[CoreEntry] = Field(default_factory=list)

    def core_for(self, goal: str) -> list[str]:
        """The core constraints (``TYPE[:DOMAIN]:TEXT``) of every ``core`` entry whose glob
        matches ``goal`` (case-insensitive), in file order, each once."""
        found = [text for entry in self.core if fnmatch.fnmatchcase(goal.lower(),
                                                                    entry.goal.lower())
                 for text in entry.constraints]
        return list(dict.fromkeys(found))
