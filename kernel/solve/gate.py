"""The budget wrapper every resolver call goes through (axioms B1, B2):
estimate, pre-check (drawing from the parent if needed), obtain the proposal, record."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from kernel.core.budget import Amount, Decision
from kernel.core.units import seconds_to_ms, usd_to_micros
from kernel.proposals import Proposal, Proposer
from kernel.solve.kernel import Kernel
from resolvers.base import Estimate, Resolution, ResolveRequest
from resolvers.codex_tools import RESOLVER_ID as CODEX_ID
from resolvers.codex_tools import CodexTools

CLAUDE_ID = "resolver:claude-code-0"


@dataclass(frozen=True)
class Denied:
    """The pre-check refused the call: the goal and its parent cannot pay the estimate."""

    operation: str
    estimate: Amount
    remaining: Amount


def amount(cost_usd: float, seconds: float) -> Amount:
    return Amount(usd_to_micros(cost_usd), seconds_to_ms(seconds))


def ask(k: Kernel, goal_id: str, request: ResolveRequest, *, resolver_id: str = CLAUDE_ID,
        output_model: type[BaseModel] | None = None, proposer: Proposer | None = None,
        pay: bool = True) -> Proposal | Denied:
    """One budget-gated call. ``pay=False`` leaves the spend to the caller, who writes it
    with the attempt and output it pays for. A call that produced nothing usable is paid
    here and raises: PermanentError (the step's goal is refused with the reason) or
    ProposerUnavailable (the run stops, resumable)."""
    estimate = k.proposals.estimate(request, proposer)
    needed = amount(estimate.cost_usd, estimate.seconds)
    check = k.budget.pre_check(goal_id, needed)
    if check.decision == Decision.DENIED:
        k.proposals.record_denial(request, estimate)
        k.log.flow(goal_id, f"{request.operation}: budget pre-check DENIED "
                            f"(needs {needed}, has {check.remaining})")
        return Denied(request.operation, needed, check.remaining)
    proposal = k.proposals.get(request, output_model, proposer)
    spent = amount(proposal.cost_usd, proposal.seconds)
    if proposal.failure is not None:  # billed all the same (B1), then the step ends
        if spent.cost or spent.time:
            k.budget.record(goal_id, spent, resolver_id, request.operation,
                            proposal=proposal.ledger_hash)
        k.log.flow(goal_id, f"{request.operation}: {proposal.failure.get('message')}")
        raise proposal.error()
    if pay:
        k.budget.record(goal_id, spent, resolver_id, request.operation,
                        proposal=proposal.ledger_hash)
    k.log.io(goal_id, resolver_id, request.operation, {
        "cost_usd": proposal.cost_usd, "seconds": proposal.seconds,
        "ledger_index": proposal.ledger_index, "replayed": proposal.replayed})
    return proposal


class SandboxRun(BaseModel):
    """What codex-tools-0 reports: an environment-dependent proposal, recorded like any other."""

    passed: bool
    results: list[dict]


class SandboxProposer:
    """Runs commands for verification in a fresh sandbox workspace per request."""

    source = CODEX_ID

    def __init__(self, k: Kernel) -> None:
        self.k = k

    def _tools(self, request: ResolveRequest) -> CodexTools:
        name = f"{self.k.run.run_id.removeprefix('run:')}-{request.goal_id[-10:]}-" \
               f"{self.k.run.proposals:05d}"
        return CodexTools(self.k.workspace_root / name, self.k.policy)

    def estimate(self, request: ResolveRequest, occurrence: int) -> Estimate:
        commands = max(len(request.payload.get("commands", [])), 1)
        return Estimate(cost_usd=0.01 * commands, seconds=5.0 * commands)

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
        return self._tools(request).resolve(request)

