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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kernel.core.attempts import check_outcomes
from kernel.core.envelopes import Attempt, Constraint, Lineage, Verification
from kernel.core.goal_node import GoalNode
from kernel.protocol.solve_models import ResolutionOutput
from kernel.protocol.suggestion_models import Suggestion
from kernel.repositories import candidates as weighing
from kernel.runtime.inputs import RunInputs
from kernel.runtime.kernel import Kernel
from kernel.solve import verification


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


def verification_of(k: Kernel, goal: GoalNode, attempt: Attempt,
                    selected: list[Constraint], output: ResolutionOutput) -> Verification:
    """The attempt's verification: the weighing's winner's at a root's first attempt
    when the run was given suggestions, otherwise the attempt output's own."""
    if goal.is_root and attempt.attempt_index == 1:
        if attempt.weighed:  # a crash came between the weighing and the verification
            recorded = weighing.verification(k.store, goal.require("output_artifact_id"))
            if recorded:
                return Verification.model_validate_json(recorded)
        else:
            offered = offered_to(k)
            if offered:
                return weigh(k, goal, attempt, selected, output, offered)
    return verification.verify(k, goal, selected, output)


def offered_to(k: Kernel) -> list[Suggestion]:
    """The suggestions recorded with the run's inputs (a run without any may have been
    started by hand, without inputs: it has none)."""
    recorded = k.run.config()
    if "suggestions" not in recorded:
        return []
    return list(RunInputs.read(k.run.run_id, recorded).suggestions)


def weigh(k: Kernel, goal: GoalNode, attempt: Attempt, selected: list[Constraint],
          output: ResolutionOutput, offered: list[Suggestion]) -> Verification:
    """Verify the model's output and each suggestion, rank them, record the outcome in one
    commit and return the chosen candidate's verification."""
    own_id = goal.require("output_artifact_id")
    own = Candidate(own_id, k.artifacts.get(own_id).sha256, output)
    suggested = [_register(k, goal, n, s) for n, s in enumerate(offered, start=1)]
    candidates = [own, *suggested]
    tests = pooled_tests(candidates)
    history = _history(k, goal, candidates)
    verified: dict[str, Verification] = {}
    for candidate in sorted(candidates, key=lambda c: c.sha256):  # the order is content's
        if candidate.sha256 not in verified:
            shown = candidate.output.model_copy(
                update={"tests": {**tests, **candidate.output.tests}})
            verified[candidate.sha256] = verification.verify(k, goal, selected, shown)
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
    weighing.weigh(k.run, {
        "attempt_id": attempt.id, "chosen_id": chosen.candidate.artifact_id,
        "chosen_kind": chosen_kind, "candidates": rows,
    }, what=f"weigh the candidates of {attempt.id}")
    for row in rows:
        if row["author"] is not None:
            k.log.flow(goal.id, f"suggestion by {row['author']}: {row['status']} "
                                f"(rank {row['rank']} of {len(rows)}, {row['verdict']}, "
                                f"sigma_v={row['sigma_v']:.2f})")
    return chosen.verification


def pooled_tests(candidates: Sequence[Candidate]) -> dict[str, str]:
    """Every test file any candidate brought, the first in content order where paths meet."""
    pooled: dict[str, str] = {}
    for candidate in sorted(candidates, key=lambda c: c.sha256):
        for path, text in sorted(candidate.output.tests.items()):
            pooled.setdefault(path, text)
    return pooled


def _register(k: Kernel, goal: GoalNode, number: int, suggestion: Suggestion) -> Candidate:
    artifact = k.artifacts.register(
        goal.id, suggestion.output.model_dump_json(), type=suggestion.output.artifact_type,
        format="json", metadata={"content_format": suggestion.output.format,
                                 "suggestion": number},
        lineage=Lineage(node_id=goal.id, resolver_id=None),
        key=f"suggestion:{k.run.run_id}:{number}")
    return Candidate(artifact.id, artifact.sha256, suggestion.output)


def _history(k: Kernel, goal: GoalNode, candidates: Sequence[Candidate],
             ) -> dict[str, tuple[int, int]]:
    """(passed, seen) per content hash, recorded in the ledger before it is used."""
    hashes = sorted({c.sha256 for c in candidates})
    rows = k.proposals.observe(weighing.HISTORY_OBSERVATION, goal.id, lambda: [
        dict(r) for r in weighing.history(k.store, hashes, goal.id)])
    return {r["sha256"]: (int(r["passed"]), int(r["total"])) for r in rows}


def _row(w: Weighed, place: int, chosen: Weighed, tau_local: float, author: str | None,
         methods: dict[str, str]) -> dict[str, Any]:
    status = "chosen" if w is chosen else "outranked" if w.passes(tau_local) else "rejected"
    return {"artifact_id": w.candidate.artifact_id, "author": author, "rank": place,
            "status": status, "verdict": w.verification.verdict,
            "sigma_v": w.verification.sigma_v,
            "verification": w.verification.model_dump_json(),
            "outcomes": check_outcomes(w.verification, methods)}
