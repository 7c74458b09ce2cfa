"""Context injection: the RESOLUTION HISTORY block a step hands its resolver.

Each step reads the boot queries it needs (step 2 the constraints applied to similar
goals, step 4 similar goals and resolver outcomes, step 5 and step 9 known failure
modes, step 8 past decompositions, step 10 outcomes and failure modes). The rows are
recorded in the ledger before use (an ``observation``), rendered in a fixed order and
cut at a size bound, so the same rows always give the same block.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kernel.core.goal_node import GoalNode
from kernel.kg.history import (
    AppliedConstraint,
    FailureModeCount,
    ModalityCandidate,
    PastDecomposition,
    ResolverOutcome,
    SimilarPattern,
)
from kernel.kg.run_view import KnowledgeRun

STEP_QUERIES: dict[str, tuple[str, ...]] = {
    "identify": ("constraints_applied",),
    "route": ("similar_patterns", "resolver_outcomes", "modality_candidates"),
    "resolve": ("failure_modes",),
    "feedback": ("failure_modes",),
    "decompose": ("similar_patterns", "decompositions"),
    "gap": ("resolver_outcomes", "failure_modes"),
}


class StepHistory(BaseModel):
    """The rows one step read; absent queries are empty."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    similar_patterns: list[SimilarPattern] = Field(default_factory=list)
    resolver_outcomes: list[ResolverOutcome] = Field(default_factory=list)
    failure_modes: list[FailureModeCount] = Field(default_factory=list)
    decompositions: list[PastDecomposition] = Field(default_factory=list)
    constraints_applied: list[AppliedConstraint] = Field(default_factory=list)
    modality_candidates: list[ModalityCandidate] = Field(default_factory=list)

    def block(self, summary: str, max_chars: int) -> str:
        """The prompt block ('' when the graph knows nothing relevant)."""
        lines = [*self._similar(), *self._outcomes(), *self._failures(),
                 *self._decompositions(), *self._constraints()]
        if not lines:
            return ""
        kept: list[str] = []
        size = 0
        for number, line in enumerate(lines):
            if size + len(line) + 1 > max_chars:
                kept.append(f"  ... {len(lines) - number} more lines not shown")
                break
            kept.append(line)
            size += len(line) + 1
        body = "\n".join(kept)
        return f'[RESOLUTION HISTORY for goal: "{summary}"]\n{body}\n[END RESOLUTION HISTORY]'

    def _similar(self) -> list[str]:
        if not self.similar_patterns:
            return []
        out = [f"Similar goals: {len(self.similar_patterns)}"]
        for p in self.similar_patterns:
            best = "" if p.best_sigma_v is None else f", best sigma_v {p.best_sigma_v:g}"
            out.append(f'  - "{p.summary}" (similarity {p.score:.2f}; {p.goals} goals, '
                       f"{p.resolved} resolved{best})")
        return out

    def _outcomes(self) -> list[str]:
        if not self.resolver_outcomes:
            return []
        out = ["Resolvers on goals of this kind:"]
        for r in self.resolver_outcomes:
            best = "" if r.best_sigma_v is None else f", best sigma_v {r.best_sigma_v:g}"
            modes = f"; failed with: {', '.join(r.failure_modes)}" if r.failure_modes else ""
            out.append(f"  - {r.resolver_id}: {r.successes} succeeded, {r.failures} failed "
                       f"({r.successes_here} and {r.failures_here} on this goal's pattern)"
                       f"{best}{modes}")
        return out

    def _failures(self) -> list[str]:
        if not self.failure_modes:
            return []
        return ["Known failure modes for this kind of goal:",
                *(f"  - {f.slug or f.id} ({f.occurrences} occurrences)"
                  + (f": {f.description}" if f.description else "")
                  for f in self.failure_modes)]

    def _decompositions(self) -> list[str]:
        if not self.decompositions:
            return []
        out = ["How similar goals were decomposed:"]
        for d in self.decompositions:
            parts = [c.summary + (f" (after {', '.join(c.after)})" if c.after else "")
                     for c in d.children]
            out.append(f'  - "{d.summary}" ({d.status}): {"; ".join(parts)}')
        return out

    def _constraints(self) -> list[str]:
        if not self.constraints_applied:
            return []
        return ["Constraints applied to similar goals:",
                *(f"  - [{c.type}/{c.domain}] {c.title} (on {c.goals} goals)"
                  for c in self.constraints_applied)]


def gather(k: KnowledgeRun, goal: GoalNode, step: str) -> Callable[[], dict[str, Any]]:
    """How the rows ``step`` uses for ``goal`` are read from the graph (each query's rows
    as JSON, by query), for ``Proposals.observe`` to record or serve."""
    def rows() -> dict[str, Any]:
        pattern = goal.pattern_id
        found: dict[str, Any] = {}
        for query in STEP_QUERIES[step]:
            if query == "constraints_applied":
                got: list[Any] = k.history.constraints_applied(goal.summary)
            elif pattern is None:
                got = []
            elif query == "decompositions":
                got = k.history.decompositions(pattern, goal.id)
            elif query == "modality_candidates":
                got = [r for r in k.history.modality_candidates(pattern, goal.modality)
                       if r.modality_successes > 0]
                if not got:  # recorded only when it says something, as ledgers before it
                    continue
            else:
                got = getattr(k.history, query)(pattern)
            found[query] = [r.model_dump(mode="json") for r in got]
        return found

    return rows


def observed_as(step: str) -> str:
    """The name ``step``'s history is recorded under in the ledger."""
    return f"history/{step}"


def read(k: KnowledgeRun, goal: GoalNode, step: str) -> StepHistory:
    """The history ``step`` uses for ``goal``: from the ledger when the run already
    recorded it, otherwise from the graph (and then recorded)."""
    return StepHistory.model_validate(
        k.proposals.observe(observed_as(step), goal.id, gather(k, goal, step)))


def block(k: KnowledgeRun, goal: GoalNode, step: str) -> tuple[StepHistory, str]:
    """The step's rows and the prompt block rendered from them."""
    rows = read(k, goal, step)
    return rows, rows.block(goal.summary, k.config.context_chars)
