"""Suggestions weighed without privilege (design, step 1: a person's ideas are candidate
artifacts, scored against the constraints and history; who offered them never decides).

At the root's first attempt the model's own output and every ``--suggest`` are verified
by the same checks against the same constraints, and every candidate meets the test
files any candidate brought (its own win where two share a path), so a suggestion
without tests faces the model's, and the other way round. They are then ranked on
merit alone: passing (SAT at tau_local) first, then SAT, then sigma_v, then the smoothed
pass rate of identical content in the graph's history, then the content's sha256, a
deterministic tie-break that knows nothing of the author. The best passing candidate
becomes the attempt's output; a failing suggestion is rejected with its violation
trace. Authors are recorded as provenance only: :func:`rank` is never given them.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

from kernel.core.attempts import check_outcomes
from kernel.core.envelopes import Artifact, Attempt, Constraint, Lineage, Verification
from kernel.core.goal_node import GoalNode
from kernel.protocol.solve_models import ResolutionOutput
from kernel.protocol.suggestion_models import Suggestion
from kernel.solve import verification
from kernel.solve.effects import Flow, NewArtifact, Register, Request, StepChanges, Weigh
from kernel.solve.view import StepView


@dataclass(frozen=True)
class Candidate:
    """One output competing for an attempt: its artifact, content hash and content."""

    artifact_id: str
    sha256: str
    output: ResolutionOutput


@dataclass(frozen=True)
class Weighed:
    """A candidate with what verification and history say of its content."""

    candidate: Candidate
    verification: Verification
    passed_before: int = 0
    seen_before: int = 0

    def passes(self, tau_local: float) -> bool:
        return self.verification.verdict == "SAT" and self.verification.sigma_v >= tau_local

    def history_rate(self) -> float:
        """Identical content's past pass rate, smoothed from the 0.5 prior."""
        return (self.passed_before + 1) / (self.seen_before + 2)


def rank(weighed: Sequence[Weighed], tau_local: float) -> list[Weighed]:
    """Best first, on merit: passing, SAT, sigma_v, history, then sha256 (module doc).
    Nothing here can see who offered a candidate."""
    return sorted(weighed, key=lambda w: (not w.passes(tau_local),
                                          w.verification.verdict != "SAT",
                                          -w.verification.sigma_v, -w.history_rate(),
                                          w.candidate.sha256))


@dataclass(frozen=True)
class Outcome:
    """The attempt's verification, and the changes that record how its candidates were
    weighed (none when nothing was weighed)."""

    verification: Verification
    changes: StepChanges = field(default_factory=StepChanges)


def verification_of(view: StepView, goal: GoalNode, attempt: Attempt,
                    selected: list[Constraint], output: ResolutionOutput,
                    ) -> Generator[Request, Any, Outcome]:
    """The attempt's verification: the weighing's winner's at a root's first attempt
    when the run was given suggestions, otherwise the attempt output's own."""
    if goal.is_root and attempt.attempt_index == 1:
        if attempt.weighed:  # a crash came between the weighing and the verification
            recorded = view.weighed_verification(goal.require("output_artifact_id"))
            if recorded:
                return Outcome(Verification.model_validate_json(recorded))
        else:
            offered = view.suggestions()
            if offered:
                return (yield from weigh(view, goal, attempt, selected, output, offered))
    return Outcome((yield from verification.verify(view, goal, selected, output)))


def weigh(view: StepView, goal: GoalNode, attempt: Attempt, selected: list[Constraint],
          output: ResolutionOutput, offered: list[Suggestion],
          ) -> Generator[Request, Any, Outcome]:
    """Verify the model's output and each suggestion, rank them; the chosen candidate's
    verification, and the weighing's one commit with what the goal's log says of it."""
    own_id = goal.require("output_artifact_id")
    own = Candidate(own_id, view.artifact_sha256(own_id), output)
    suggested = []
    for number, suggestion in enumerate(offered, start=1):
        suggested.append((yield from _register(view, goal, number, suggestion)))
    candidates = [own, *suggested]
    tests = pooled_tests(candidates)
    hashes = sorted({c.sha256 for c in candidates})
    history = {r["sha256"]: (int(r["passed"]), int(r["total"]))
               for r in (yield view.weighing_history(goal, hashes))}
    verified: dict[str, Verification] = {}
    for candidate in sorted(candidates, key=lambda c: c.sha256):  # the order is content's
        if candidate.sha256 not in verified:
            shown = candidate.output.model_copy(
                update={"tests": {**tests, **candidate.output.tests}})
            verified[candidate.sha256] = yield from verification.verify(view, goal, selected, shown)
    weighed = [Weighed(c, verified[c.sha256], *history.get(c.sha256, (0, 0)))
               for c in candidates]
    ranked = rank(weighed, goal.tau_local)
    chosen = ranked[0] if ranked[0].passes(goal.tau_local) else \
        next(w for w in weighed if w.candidate is own)
    authors = {s.artifact_id: o.author for s, o in zip(suggested, offered, strict=True)}
    methods = {c.id: verification.method_of(c) for c in selected}
    rows = [_row(w, place, chosen, goal.tau_local, authors.get(w.candidate.artifact_id),
                 methods) for place, w in enumerate(ranked, start=1)]
    chosen_kind = "suggestion" if chosen.candidate.artifact_id in authors else "own"
    changes = StepChanges((Weigh(attempt.id, chosen.candidate.artifact_id, chosen_kind,
                                 tuple(rows)),))
    for row in rows:
        if row["author"] is not None:
            changes += Flow(goal.id, f"suggestion by {row['author']}: {row['status']} "
                                     f"(rank {row['rank']} of {len(rows)}, {row['verdict']}, "
                                     f"sigma_v={row['sigma_v']:.2f})")
    return Outcome(chosen.verification, changes)


def pooled_tests(candidates: Sequence[Candidate]) -> dict[str, str]:
    """Every test file any candidate brought, the first in content order where paths meet."""
    pooled: dict[str, str] = {}
    for candidate in sorted(candidates, key=lambda c: c.sha256):
        for path, text in sorted(candidate.output.tests.items()):
            pooled.setdefault(path, text)
    return pooled


def _register(view: StepView, goal: GoalNode, number: int, suggestion: Suggestion,
              ) -> Generator[Request, Any, Candidate]:
    artifact: Artifact = yield Register(NewArtifact(
        goal.id, suggestion.output.model_dump_json(), type=suggestion.output.artifact_type,
        format="json", lineage=Lineage(node_id=goal.id, resolver_id=None),
        key=f"suggestion:{view.run_id}:{number}",
        metadata=(("content_format", suggestion.output.format), ("suggestion", number))))
    return Candidate(artifact.id, artifact.sha256, suggestion.output)


def _row(w: Weighed, place: int, chosen: Weighed, tau_local: float, author: str | None,
         methods: dict[str, str]) -> dict[str, Any]:
    status = "chosen" if w is chosen else "outranked" if w.passes(tau_local) else "rejected"
    return {"artifact_id": w.candidate.artifact_id, "author": author, "rank": place,
            "status": status, "verdict": w.verification.verdict,
            "sigma_v": w.verification.sigma_v,
            "verification": w.verification.model_dump_json(),
            "outcomes": check_outcomes(w.verification, methods)}
