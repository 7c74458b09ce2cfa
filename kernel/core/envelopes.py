"""Envelopes: the validated shapes everything persisted or passed between steps takes.

Structured payloads are stored in the graph as canonical JSON strings (neither
backend stores maps as property values); :func:`canonical_json` makes equal
content byte-identical, which ids and hashes rely on.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kernel.core.ids import content_id


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class _Envelope(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ConstraintType(StrEnum):
    LOGIC = "logic"
    SEMANTIC = "semantic"


class Provenance(_Envelope):
    source: Literal["human", "resolver", "derived"]
    resolver_id: str | None = None
    derived_from_constraint_ids: list[str] = Field(default_factory=list)


class ConstraintSpec(_Envelope):
    """A constraint as proposed, before it has an id."""

    type: ConstraintType
    domain: str = Field(min_length=1)
    title: str = Field(min_length=1)
    payload: dict[str, Any] = Field(default_factory=dict)
    provenance: Provenance

    def identity(self) -> str:
        """Same type, domain, title and payload: the same constraint, whoever proposed it."""
        return canonical_json({"type": self.type.value, "domain": self.domain,
                               "title": self.title, "payload": self.payload})

    def with_id(self) -> Constraint:
        return Constraint(id=content_id("constraint", self.identity()), **self.model_dump())


class Constraint(ConstraintSpec):
    id: str


class Lineage(_Envelope):
    node_id: str
    resolver_id: str | None = None
    constraint_ids: list[str] = Field(default_factory=list)
    input_artifact_ids: list[str] = Field(default_factory=list)


# What artifact/get returns: the fields registration writes, none of which ever changes
# (weighing a suggestion adds others to the node).
ARTIFACT_REGISTERED = ("id", "goal_id", "type", "format", "uri", "sha256", "size_bytes",
                       "metadata", "lineage", "sigma")


class Artifact(_Envelope):
    id: str
    node_id: str
    type: str = Field(min_length=1)
    format: str = Field(min_length=1)
    uri: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size_bytes: int = Field(ge=0)
    metadata: dict[str, Any] = Field(default_factory=dict)
    lineage: Lineage
    sigma: float | None = Field(default=None, ge=0.0, le=1.0)


class Check(_Envelope):
    constraint_id: str
    passed: bool
    sigma_i: float = Field(ge=0.0, le=1.0)
    detail: dict[str, Any] = Field(default_factory=dict)
    repair_suggestion: dict[str, Any] | None = None


class Verification(_Envelope):
    """Per-constraint checks; the verdict and sigma_v follow from them (sigma_v = min sigma_i)."""

    verdict: Literal["SAT", "UNSAT"]
    sigma_v: float = Field(ge=0.0, le=1.0)
    checks: list[Check] = Field(default_factory=list)
    trace_summary: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> Verification:
        expected_verdict = "SAT" if all(c.passed for c in self.checks) else "UNSAT"
        expected_sigma = min((c.sigma_i for c in self.checks), default=1.0)
        if self.verdict != expected_verdict or abs(self.sigma_v - expected_sigma) > 1e-12:
            raise ValueError(f"verdict/sigma_v must follow the checks: expected "
                             f"{expected_verdict} and sigma_v={expected_sigma}")
        return self

    @classmethod
    def from_checks(cls, checks: list[Check], trace_summary: str = "") -> Verification:
        verdict: Literal["SAT", "UNSAT"] = "SAT" if all(c.passed for c in checks) else "UNSAT"
        return cls(verdict=verdict, sigma_v=min((c.sigma_i for c in checks), default=1.0),
                   checks=checks, trace_summary=trace_summary)

    def failed(self) -> list[Check]:
        """The violation trace: failed checks; their count is the distance from convergence."""
        return [c for c in self.checks if not c.passed]


class ToolStep(_Envelope):
    resolver_id: str
    capability: str
    inputs: dict[str, list[str]] = Field(default_factory=lambda: {"input_artifact_ids": list[str]()})
    params: dict[str, Any] = Field(default_factory=dict)


class ToolPlan(_Envelope):
    steps: list[ToolStep] = Field(min_length=1)
    policy: dict[str, Any] = Field(default_factory=lambda: {"parallel": False})

    @property
    def final_resolver_id(self) -> str:
        return self.steps[-1].resolver_id


class Attempt(_Envelope):
    id: str
    node_id: str
    attempt_index: int = Field(ge=1)
    resolver_id: str
    plan_artifact_id: str | None = None
    input_artifact_ids: list[str] = Field(default_factory=list)
    output_artifact_id: str | None = None
    feedback: dict[str, Any] | None = None
    verification: Verification | None = None
    verdict: Literal["SAT", "UNSAT"] | None = None
    sigma_v: float | None = None
    failure_mode: str | None = None
    cost_micros: int = Field(default=0, ge=0)
    time_ms: int = Field(default=0, ge=0)
    weighed: bool = False  # its candidates (the output and any suggestions) were ranked
