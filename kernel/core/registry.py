"""The resolver registry: tools as graph nodes with ``PROVIDES`` edges to capabilities.

Ranking is deterministic code: capability match, then empirical success (Laplace
smoothed, so an unused tool starts at 0.5), then mean quality, then cost, then id.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kernel.errors import KernelError
from kernel.store.base import GraphStore

QUALITY_AXES = ("completeness", "executability", "optimality", "representation",
                "generalization", "efficiency")


class UnknownResolverError(KernelError):
    """No resolver with that id is registered."""


class ResolverSpec(BaseModel):
    """What registering a tool records about it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^resolver:[A-Za-z0-9_.\-]+$")
    label: str
    description: str = ""
    type: Literal["digital", "physical", "hybrid"] = "digital"
    capabilities: list[str] = Field(default_factory=list)
    cost_per_invocation: float = Field(default=0.0, ge=0)
    cost_per_token: float = Field(default=0.0, ge=0)
    latency_estimate: float = Field(default=0.0, ge=0)
    quality: dict[str, float] = Field(default_factory=dict)
    input_types: list[str] = Field(default_factory=lambda: ["text"])
    output_types: list[str] = Field(default_factory=lambda: ["text"])
    built_by: Literal["boot", "system", "human"] = "system"
    built_for_node_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.id.removeprefix("resolver:")


@dataclass(frozen=True)
class Candidate:
    id: str
    label: str
    matched: int
    success_rate: float
    quality: float
    cost: float

    def rank_key(self) -> tuple[float, float, float, float, str]:
        return (-self.matched, -self.success_rate, -self.quality, self.cost, self.id)


class Registry:
    def __init__(self, store: GraphStore) -> None:
        self.store = store

    def register(self, spec: ResolverSpec) -> None:
        quality = {f"q_{axis}": float(spec.quality.get(axis, 0.5)) for axis in QUALITY_AXES}
        unknown = set(spec.quality) - set(QUALITY_AXES)
        if unknown:
            raise ValueError(f"unknown quality axes {sorted(unknown)}")
        props = {
            "name": spec.name, "caption": spec.name, "label": spec.label,
            "description": spec.description, "type": spec.type,
            "capabilities": sorted(set(spec.capabilities)),
            "cost_per_invocation": spec.cost_per_invocation, "cost_per_token": spec.cost_per_token,
            "latency_estimate": spec.latency_estimate, "input_types": spec.input_types,
            "output_types": spec.output_types, "built_by": spec.built_by,
            "metadata": json.dumps(spec.metadata, sort_keys=True), **quality,
        }
        if spec.built_for_node_id:
            props["built_for_node_id"] = spec.built_for_node_id
        self.store.run("registry/register", {"id": spec.id, "props": props,
                                             "capabilities": sorted(set(spec.capabilities))})

    def find(self, resolver_id: str) -> dict[str, Any] | None:
        """The resolver's stored properties, or None when nothing has that id."""
        rows = self.store.run("registry/get", {"id": resolver_id})
        return dict(rows[0]["resolver"]) if rows else None

    def kind(self, resolver_id: str) -> str | None:
        """What a registered tool is made of (``script``, ``composite``; None for the
        model-backed and unknown ones), from its metadata."""
        resolver = self.find(resolver_id)
        if resolver is None:
            return None
        kind = json.loads(resolver.get("metadata") or "{}").get("kind")
        return str(kind) if kind is not None else None

    def get(self, resolver_id: str) -> dict[str, Any]:
        rows = self.store.run("registry/get", {"id": resolver_id})
        if not rows:
            raise UnknownResolverError(f"no resolver {resolver_id!r} is registered")
        return {**rows[0]["resolver"], "provides": rows[0]["capabilities"]}

    def candidates(self, capabilities: Iterable[str], modality: str | None = None,
                   ) -> list[Candidate]:
        """Resolvers that can serve, best first."""
        rows = self.store.run("registry/candidates", {
            "capabilities": sorted(set(capabilities)), "modality": modality})
        ranked = [Candidate(
            id=r["id"], label=r["label"], matched=int(r["matched"]),
            success_rate=(int(r["success_count"]) + 1) / (int(r["usage_count"]) + 2),
            quality=sum(r["quality"]) / len(r["quality"]),
            cost=float(r["cost_per_invocation"]) + 1000 * float(r["cost_per_token"]),
        ) for r in rows]
        return sorted(ranked, key=Candidate.rank_key)

    def summary(self) -> list[dict[str, Any]]:
        return self.store.run("registry/summary")
