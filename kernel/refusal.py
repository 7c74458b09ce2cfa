"""Refusal is an output, not a crash: when the kernel cannot safely converge it says so.

A RefusalReport carries reason codes, the ledger entries that are its evidence (by index
and hash), and what input or policy change would let the run proceed, each from a fixed
template per reason, so the same situation always reads the same way. The report itself
is appended to the ledger.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kernel.core.ledger import Ledger


class RefusalReason(StrEnum):
    NO_PROPOSALS = "NO_PROPOSALS"
    BUDGET_EXHAUSTED = "BUDGET_EXHAUSTED"
    WALL_TIME_EXCEEDED = "WALL_TIME_EXCEEDED"
    CONTRADICTION_BUDGET_EXCEEDED = "CONTRADICTION_BUDGET_EXCEEDED"
    CONTRADICTION_REPEATED = "CONTRADICTION_REPEATED"
    UNVERIFIABLE_INVARIANTS = "UNVERIFIABLE_INVARIANTS"
    HIRE_DECLINED = "HIRE_DECLINED"
    ATTEMPTS_EXHAUSTED = "ATTEMPTS_EXHAUSTED"
    NO_CAPABLE_TOOL = "NO_CAPABLE_TOOL"
    INVALID_PROPOSAL = "INVALID_PROPOSAL"
    SUBGOAL_INFEASIBLE = "SUBGOAL_INFEASIBLE"
    NO_FEASIBLE_REPAIR = "NO_FEASIBLE_REPAIR"
    PARTS_VIOLATE_CONSTRAINT = "PARTS_VIOLATE_CONSTRAINT"
    INTAKE_REJECTED = "INTAKE_REJECTED"
    CORE_INCONSISTENT = "CORE_INCONSISTENT"
    ASSEMBLY_VIOLATES_CONSTRAINTS = "ASSEMBLY_VIOLATES_CONSTRAINTS"
    SPENT_PAST_LIMIT = "SPENT_PAST_LIMIT"
    DEPENDENCIES_NOT_INSTALLED = "DEPENDENCIES_NOT_INSTALLED"


REMEDIES: dict[RefusalReason, str] = {
    RefusalReason.NO_FEASIBLE_REPAIR:
        "{what} cannot be met by any surveyed choice of approaches{searched}: {reached}"
        "{also}; relax {which}, or {more}",
    RefusalReason.NO_PROPOSALS:
        "give a proposal for {operation} on goal '{goal}': add a script entry or a fallback "
        "for {operation}, or run with --proposer anthropic and ANTHROPIC_API_KEY set",
    RefusalReason.BUDGET_EXHAUSTED:
        "raise the budget: this goal needs ${needed_usd:.4f} and {needed_seconds:.0f}s more "
        "than it and the goals above it hold (run again with a larger --budget / --time, or "
        "answer its HIRE request with --add-budget)",
    RefusalReason.WALL_TIME_EXCEEDED:
        "the run hit its wall-time cap of {cap_seconds:.0f}s: continue with 'kernel resume "
        "{run_id}' (--max-wall SECONDS to allow it longer)",
    RefusalReason.CONTRADICTION_BUDGET_EXCEEDED:
        "{count} global conflicts exceeded the contradiction budget of {limit}: relax or "
        "reconcile the coupling constraints named in the evidence, or raise the limit",
    RefusalReason.CONTRADICTION_REPEATED:
        "{pair} came back in the same conflict over {constraints} right after a "
        "reopening for it: reconcile them by hand (change the goal so one of them gives "
        "way) or relax the coupling constraint, then solve again",
    RefusalReason.UNVERIFIABLE_INVARIANTS:
        "constraint '{constraint}' cannot be checked by any registered verifier: make it "
        "checkable (a test or an arithmetic expression) or answer a HIRE for a verifier",
    RefusalReason.HIRE_DECLINED:
        "the human declined capability '{capability}': register a tool that provides it "
        "('kernel hire answer') or change the goal so it is not needed",
    RefusalReason.ATTEMPTS_EXHAUSTED:
        "{attempts} attempts did not satisfy {constraints}: allow more with --max-attempts, "
        "or provide a tool that can (BUILD or 'kernel hire answer')",
    RefusalReason.NO_CAPABLE_TOOL:
        "no registered tool provides {capabilities}: register one ('kernel hire answer') "
        "or let the kernel build one",
    RefusalReason.INVALID_PROPOSAL:
        "the proposal for {operation} was unusable ({failure}): fix the script entry, or "
        "check the model's output in the ledger (kernel ledger export)",
    RefusalReason.PARTS_VIOLATE_CONSTRAINT:
        "every part is resolved but together they violate {constraints}, still after {count} "
        "reopenings: relax the constraint, or raise the budget of the parts that "
        "drive it (the violation trace names the facts)",
    RefusalReason.INTAKE_REJECTED:
        "the person rejected the goal of {run_id} as the intake understood it: start again "
        "with 'kernel solve --intake' and say the goal in other words",
    RefusalReason.CORE_INCONSISTENT:
        "the core constraints {constraints} still contradict each other after {count} "
        "reviews: start again with a core Z3 can satisfy (drop or change one of them)",
    RefusalReason.ASSEMBLY_VIOLATES_CONSTRAINTS:
        "{attempts} assemblies of the resolved parts violate {constraints}: read the "
        "violation trace ('kernel log {run_id}'), then fix the parts' outputs or the "
        "constraints and solve again",
    RefusalReason.SPENT_PAST_LIMIT:
        "'{constraint}' is already broken by what was spent ({figure}) and no attempt can "
        "take spending back: solve again with a limit the work can meet",
    RefusalReason.DEPENDENCIES_NOT_INSTALLED:
        "the repository's dependencies ({source}) could not be installed, which no edit of "
        "its code fixes: {advice}; then solve again",
    RefusalReason.SUBGOAL_INFEASIBLE:
        "subgoal(s) {children} could not be resolved: see their own refusals, fix what they "
        "name, then 'kernel resume {run_id}'",
}


class Evidence(BaseModel):
    model_config = ConfigDict(frozen=True)

    ledger_index: int
    ledger_hash: str
    what: str


class RefusalReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    run_id: str
    goal_id: str | None
    reasons: list[RefusalReason]
    detail: str
    evidence: list[Evidence] = Field(default_factory=list)
    to_proceed: list[str] = Field(default_factory=list)


def remedy(reason: RefusalReason, run_id: str, **facts: Any) -> str:
    """What would let the run proceed, in the fixed words of its reason."""
    return REMEDIES[reason].format(run_id=run_id, **facts)


def refuse(ledger: Ledger, goal_id: str | None, reason: RefusalReason, detail: str,
           *, evidence_last: int = 3, **facts: Any) -> RefusalReport:
    """Build the report (evidence: the latest ledger entries about this goal) and record it."""
    entries = [e for e in ledger.entries() if goal_id is None or e.goal_id == goal_id]
    evidence = [Evidence(ledger_index=e.index, ledger_hash=e.hash, what=f"{e.kind} {e.operation}")
                for e in entries[-evidence_last:]]
    report = RefusalReport(run_id=ledger.run.run_id, goal_id=goal_id, reasons=[reason],
                           detail=detail, evidence=evidence,
                           to_proceed=[remedy(reason, ledger.run.run_id, **facts)])
    last = entries[-1] if entries else None
    if not (last and last.kind == "refusal" and last.data() == report.model_dump(mode="json")):
        # a resumed run that refuses again the same way does not record it twice
        ledger.append("refusal", reason.value, "kernel", report.model_dump(mode="json"),
                      goal_id=goal_id)
    return report
