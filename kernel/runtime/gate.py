"""The budget wrapper every resolver call goes through (axioms B1, B2):
estimate, pre-check (drawing from the parent if needed), obtain the proposal, record.

A call the budget cannot pay raises :class:`BudgetDenied`; the SOLVE loop turns it into
a HIRE for more budget in one place (dispatch), planning into a refusal.
"""

from __future__ import annotations

from typing import Any

from kernel.core.budget import Amount, Decision
from kernel.core.units import seconds_to_ms, usd_to_micros
from kernel.errors import KernelError
from kernel.proposals import FailedProposal, Out, Proposal
from kernel.protocol import Operation, Proposer, ResolveRequest
from kernel.runtime import progress
from kernel.runtime.kernel import Kernel

CLAUDE_ID = "resolver:claude-code-0"


class BudgetDenied(KernelError):
    """The pre-check refused the call: the goal and its parent cannot pay the estimate."""

    def __init__(self, goal_id: str, operation: str, estimate: Amount, remaining: Amount) -> None:
        super().__init__(f"{operation} for {goal_id}: needs {estimate}, has {remaining}")
        self.goal_id = goal_id
        self.operation = operation
        self.estimate = estimate
        self.remaining = remaining


def amount(cost_usd: float, seconds: float) -> Amount:
    return Amount(usd_to_micros(cost_usd), seconds_to_ms(seconds))


def ask(k: Kernel, goal_id: str, operation: Operation[Out], request: ResolveRequest, *,
        resolver_id: str = CLAUDE_ID, proposer: Proposer | None = None,
        pay: bool = True) -> Proposal[Out]:
    """One budget-gated call. ``pay=False`` leaves the spend to the caller, who writes it
    with the attempt and output it pays for. Raises BudgetDenied when the budget cannot
    pay; a call that produced nothing usable is paid here and raises PermanentError (the
    step's goal is refused with the reason) or ProposerUnavailable (the run stops,
    resumable)."""
    estimate = k.proposals.estimate(request, proposer)
    needed = amount(estimate.cost_usd, estimate.seconds)
    check = k.budget.pre_check(goal_id, needed)
    if check.decision == Decision.DENIED:
        k.proposals.record_denial(request, estimate)
        k.log.flow(goal_id, f"{request.operation}: budget pre-check DENIED "
                            f"(needs {needed}, has {check.remaining})")
        raise BudgetDenied(goal_id, request.operation, needed, check.remaining)
    proposal = k.proposals.get(operation, request, proposer, estimate)
    spent = amount(proposal.cost_usd, proposal.seconds)
    if isinstance(proposal, FailedProposal):  # billed all the same (B1), then the step ends
        if spent.cost or spent.time:
            k.budget.record(goal_id, spent, resolver_id, request.operation,
                            proposal=proposal.ledger_hash, replayed=proposal.replayed)
        k.log.flow(goal_id, f"{request.operation}: {proposal.failure.get('message')}")
        raise proposal.error()
    reused = proposal.metadata.get("reused")
    if reused:
        _tell_reused(k, goal_id, request, reused)
    elif pay:
        k.budget.record(goal_id, spent, resolver_id, request.operation,
                        proposal=proposal.ledger_hash, replayed=proposal.replayed)
    k.log.io(goal_id, resolver_id, request.operation, {
        "cost_usd": proposal.cost_usd, "seconds": proposal.seconds,
        "ledger_index": proposal.ledger_index, "replayed": proposal.replayed})
    return proposal


def _tell_reused(k: Kernel, goal_id: str, request: ResolveRequest,
                 reused: dict[str, Any]) -> None:
    """Say, in the log and the progress, which earlier answer served this request."""
    where = f"{reused['entry']} ({reused['source']}, {reused['run_id']})"
    k.log.decision(goal_id, "answer_reused", candidates=[reused["entry"]],
                   chosen=f"{request.operation} from {where}", operation=request.operation,
                   rationale=f"{request.operation}: the same request was answered before "
                             f"in this graph by {where}; served from that answer, not asked "
                             "or paid again ('kernel solve --fresh' asks again)")
    progress.report("reused", f"{request.operation} from {where}", goal_id,
                    str(request.payload.get("goal_summary") or "") or None)
