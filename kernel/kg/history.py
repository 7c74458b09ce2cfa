"""The boot queries: what the knowledge graph remembers about a kind of goal, as typed rows.

Each method runs one named query from ``cypher/kg/`` (lookup-before-build lives with
step 10 in ``cypher/grow/``) and validates its rows, so the context block, learned
routing and ``kernel bench kg`` all read the same shapes. History spans every run in
the graph; a step reads it through ``Proposals.observe`` so the rows it used are in the
ledger.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kernel.kg.patterns import CANDIDATES, SIMILARITY_DIGITS, Patterns, normalize
from kernel.repositories import knowledge
from kernel.store.base import GraphStore

DEFAULT_ROWS = 5


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SimilarPattern(_Row):
    id: str
    summary: str
    score: float
    goals: int
    resolved: int
    best_sigma_v: float | None = None


class ResolverOutcome(_Row):
    resolver_id: str
    label: str | None = None
    successes: int
    failures: int
    successes_here: int  # on the goal's own pattern
    failures_here: int
    best_sigma_v: float | None = None
    mean_cost_micros: float | None = None
    failure_modes: list[str] = Field(default_factory=list)

    @property
    def success_rate(self) -> float:
        """Laplace-smoothed, so one lucky outcome does not outrank a long record."""
        return (self.successes + 1) / (self.successes + self.failures + 2)


class ModalityCandidate(_Row):
    resolver_id: str
    modality_successes: int
    outcomes: int


class FailureModeCount(_Row):
    id: str
    slug: str | None = None
    description: str | None = None
    occurrences: int


class PastChild(_Row):
    summary: str
    status: str
    after: list[str] = Field(default_factory=list)


class PastDecomposition(_Row):
    goal_id: str
    summary: str
    status: str
    children: list[PastChild]


class AppliedConstraint(_Row):
    id: str
    title: str
    type: str
    domain: str
    goals: int
    similarity: float


class BuildLookup(_Row):
    """Tools that provide a capability, earlier builds of it, requests made for it."""

    tools: list[dict[str, Any]]
    builds: list[dict[str, Any]]
    requests: list[dict[str, Any]]


def _rounded(rows: list[dict[str, Any]], *fields: str) -> list[dict[str, Any]]:
    """Scores rounded (``SIMILARITY_DIGITS``), so float noise from the vector index, which
    differs between the backends, never reaches a decision or the ledger."""
    return [{**r, **{f: round(float(r[f]), SIMILARITY_DIGITS) for f in fields
                     if r.get(f) is not None}} for r in rows]


class History:
    def __init__(self, store: GraphStore, patterns: Patterns, rows: int = DEFAULT_ROWS) -> None:
        self.store = store
        self.patterns = patterns
        self.rows = rows

    def similar_patterns(self, pattern_id: str) -> list[SimilarPattern]:
        rows = knowledge.similar_patterns(self.store, pattern_id, self.rows)
        return [SimilarPattern.model_validate(r)
                for r in _rounded(rows, "score", "best_sigma_v")]

    def resolver_outcomes(self, pattern_id: str) -> list[ResolverOutcome]:
        rows = knowledge.resolver_outcomes(self.store, pattern_id, max(self.rows, 20))
        return [ResolverOutcome.model_validate({**r, "failure_modes": sorted(r["failure_modes"])})
                for r in _rounded(rows, "best_sigma_v", "mean_cost_micros")]

    def modality_candidates(self, pattern_id: str, modality: str) -> list[ModalityCandidate]:
        rows = knowledge.modality_candidates(self.store, pattern_id, modality, self.rows)
        return [ModalityCandidate.model_validate(r) for r in rows]

    def failure_modes(self, pattern_id: str) -> list[FailureModeCount]:
        rows = knowledge.failure_modes(self.store, pattern_id, self.rows)
        return [FailureModeCount.model_validate(r) for r in rows]

    def decompositions(self, pattern_id: str, goal_id: str) -> list[PastDecomposition]:
        rows = knowledge.decompositions(self.store, pattern_id, goal_id, self.rows)
        return [PastDecomposition.model_validate(r) for r in rows]

    def constraints_applied(self, summary: str) -> list[AppliedConstraint]:
        rows = knowledge.constraints_applied(
            self.store, self.patterns.encoder.encode_one(normalize(summary)), CANDIDATES,
            self.patterns.threshold, self.rows)
        return [AppliedConstraint.model_validate(r) for r in _rounded(rows, "similarity")]

    def lookup_before_build(self, tag: str) -> BuildLookup:
        row = knowledge.build_history(self.store, tag)
        return BuildLookup(tools=sorted(row["tools"], key=lambda t: t["id"]),
                           builds=sorted(row["builds"], key=lambda b: b["id"]),
                           requests=sorted(row["requests"], key=lambda q: q["id"]))
