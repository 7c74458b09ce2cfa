"""The budget wrapper every resolver call goes through (axioms B1, B2):
estimate, pre-check (drawing from the parent if needed), obtain the proposal, record.

A call the budget cannot pay raises :class:`BudgetDenied`; the SOLVE loop turns it into
a HIRE for more budget in one place (dispatch), planning into a refusal.
"""

from __future__ import annotations

from typing import Any, Protocol

from kernel.core.budget import Amount, BudgetEnforcer, Decision
from kernel.core.logs import TieredLog
from kernel.core.units import seconds_to_ms, usd_to_micros
from kernel.errors import KernelError
from kernel.proposals import FailedProposal, Out, Proposal, Proposals
from kernel.protocol import Operation, Proposer, ResolveRequest
from kernel.runtime import progress

CLAUDE_ID = "resolver:claude-code-0"


class BudgetDenied(KernelError):
    """The pre-check refused the call: the goal and its parent cannot pay the estimate."""

    def __init__(self, goal_id: str, operation: str, estimate: Amount, remaining: Amount) -> None:
        super().__init__(f"{operation} for {goal_id}: needs {estimate}, has {remaining}")
        self.goal_id = goal_id
        self.operation = operation
        self.estimate = estimate
        self.remaining = remaining


class Gated(Protocol):
    """What a budget-gated call goes through (the run's context has it all): the run's
    proposals (the estimate, the answer, recorded or served), the budget (the pre-check
    and the spend) and the log (the denial, the failure, the call's I/O line)."""

    @property
    def proposals(self) -> Proposals: ...

    @property
    def budget(self) -> BudgetEnforcer: ...

    @property
    def log(self) -> TieredLog: ...


def amount(cost_usd: float, seconds: float) -> Amount:
    return Amount(usd_to_micros(cost_usd), seconds_to_ms(seconds))


def ask(gate: Gated, goal_id: str, operation: Operation[Out], request: ResolveRequest, *,
        resolver_id: str = CLAUDE_ID, proposer: Proposer | None = None,
        pay: bool = True) -> Proposal[Out]:
    """One budget-gated call. ``pay=False`` leaves the spend to the caller, who writes it
    with the attempt and output it pays for. Raises BudgetDenied when the budget cannot
    pay; a call that produced nothing usable is paid here and raises PermanentError (the
    step's goal is refused with the reason) or ProposerUnavailable (the run stops,
    resumable)."""
    estimate = gate.proposals.estimate(request, proposer)
    needed = amount(estimate.cost_usd, estimate.seconds)
    check = gate.budget.pre_check(goal_id, needed)
    if check.decision == Decision.DENIED:
        gate.proposals.record_denial(request, estimate)
        gate.log.flow(goal_id, f"{request.operation}: budget pre-check DENIED "
                               f"(needs {needed}, has {check.remaining})")
        raise BudgetDenied(goal_id, request.operation, needed, check.remaining)
    proposal = gate.proposals.get(operation, request, proposer, estimate)
    spent = amount(proposal.cost_usd, proposal.seconds)
    if isinstance(proposal, FailedProposal):  # billed all the same (B1), then the step ends
        if spent.cost or spent.time:
            gate.budget.record(goal_id, spent, resolver_id, request.operation,
                               proposal=proposal.ledger_hash, replayed=proposal.replayed)
        gate.log.flow(goal_id, f"{request.operation}: {proposal.failure.get('message')}")
        raise proposal.error()
    reused = proposal.metadata.get("reused")
    if reused:
        _tell_reused(gate.log, goal_id, request, reused)
    elif pay:
        gate.budget.record(goal_id, spent, resolver_id, request.operation,
                           proposal=proposal.ledger_hash, replayed=proposal.replayed)
    gate.log.io(goal_id, resolver_id, request.operation, {
        "cost_usd": proposal.cost_usd, "seconds": proposal.seconds,
        "ledger_index": proposal.ledger_index, "replayed": proposal.replayed})
    return proposal


def _tell_reused(log: TieredLog, goal_id: str, request: ResolveRequest,
                 reused: dict[str, Any]) -> None:
    """Say, in the log and the progress, which earlier answer served this request."""
    where = f"{reused['entry']} ({reused['source']}, {reused['run_id']})"
    log.decision(goal_id, "answer_reused", candidates=[reused["entry"]],
                 chosen=f"{request.operation} from {where}", operation=request.operation,
                 rationale=f"{request.operation}: the same request was answered before "
                           f"in this graph by {where}; served from that answer, not asked "
                           "or paid again ('kernel solve --fresh' asks again)")
    progress.report("reused", f"{request.operation} from {where}", goal_id,
                    str(request.payload.get("goal_summary") or "") or None)
