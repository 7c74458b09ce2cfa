"""Proposals versus commits: the authority boundary.

Every probabilistic output (a model's answer, a scripted stand-in for one) reaches the
kernel through :class:`Proposals`. It is validated against the operation's model and
appended to the run's hash-chained ledger *before* the kernel acts on it. Only the
kernel turns proposals into committed state.

Because commits record how many proposals they consumed, a resumed run first serves the
proposals its ledger already holds, and a replay serves every proposal from a recorded
ledger. Either way each served proposal must answer the same request the kernel makes
now; the first that does not stops the run with the differing decision named.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from kernel.core.envelopes import canonical_json
from kernel.core.ledger import Ledger, LedgerEntry
from kernel.errors import KernelError
from resolvers.base import Estimate, PermanentError, Resolution, ResolveRequest, with_retries
from resolvers.claude.adapter import OPERATIONS


class DivergenceError(KernelError):
    """A recorded proposal does not answer the request the kernel makes now."""


class NoProposalError(KernelError):
    """The proposer has nothing for this request (a scripted run ran out, say)."""

    def __init__(self, message: str, operation: str = "", goal: str = "") -> None:
        super().__init__(message)
        self.operation = operation
        self.goal = goal


class Proposer(Protocol):
    """A source of untrusted proposals."""

    source: str

    def estimate(self, request: ResolveRequest, occurrence: int) -> Estimate: ...

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution: ...


@dataclass(frozen=True)
class Proposal:
    output: BaseModel
    cost_usd: float
    seconds: float
    metadata: dict[str, Any]
    ledger_index: int
    ledger_hash: str
    replayed: bool


class ClaudeProposer:
    """Live proposals from claude-code-0, with retryable errors retried with backoff."""

    def __init__(self, claude: Any) -> None:
        self.claude = claude
        self.source = claude.id

    def estimate(self, request: ResolveRequest, occurrence: int) -> Estimate:
        return self.claude.estimate_cost_time(request)

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
        return with_retries(lambda: self.claude.resolve(request))


def fingerprint(request: ResolveRequest) -> str:
    return hashlib.sha256(canonical_json(request.model_dump(mode="json")).encode()).hexdigest()


def _wanted(request: ResolveRequest) -> dict[str, Any]:
    return {"operation": request.operation, "goal_id": request.goal_id,
            "fingerprint": fingerprint(request)}


SERVED = ("proposal", "observation")  # the ledger entries a resumed or replayed run re-serves


def _key(wanted: dict[str, Any]) -> str:
    return canonical_json(wanted)


class Proposals:
    """The kernel's single way to obtain a proposal."""

    def __init__(self, ledger: Ledger, proposer: Proposer | None,
                 recorded: list[LedgerEntry] | None = None) -> None:
        """``recorded``: a ledger to replay (every proposal must come from it); otherwise
        the run's own ledger serves what it already holds and the proposer the rest."""
        self.ledger = ledger
        self.run = ledger.run
        self.proposer = proposer
        self.replaying = recorded is not None
        # The run is this process's alone (commits are guarded), so the ledger is read once.
        self._own = [e for e in ledger.entries() if e.kind in SERVED]
        source = recorded if recorded is not None else self._own
        self._served = [e for e in source if e.kind in SERVED]
        self._calls: Counter[tuple[str, str | None]] = Counter(
            (e.operation, e.goal_id) for e in self._own if e.kind == "proposal")
        # A replay meets the same budget denials as the original: the estimates that led
        # to them are in the ledger (estimates of served proposals are their costs).
        self._denials: dict[str, list[dict[str, Any]]] = {}
        for entry in recorded or []:
            if entry.kind == "denial":
                data = entry.data()
                self._denials.setdefault(_key(data["request"]), []).append(data["estimate"])

    def estimate(self, request: ResolveRequest, proposer: Proposer | None = None) -> Estimate:
        """What the next proposal will cost: as recorded when it is recorded, otherwise the
        proposer's (``proposer`` overrides the run's, e.g. for sandbox runs)."""
        wanted = _wanted(request)
        entry = self._pending_entry()
        if entry is not None and entry.kind == "proposal" and entry.data()["request"] == wanted:
            response = entry.data()["response"]
            return Estimate(cost_usd=response["cost_usd"], seconds=response["seconds"])
        denials = self._denials.get(_key(wanted))
        if denials:
            return Estimate.model_validate(denials.pop(0))
        return self._live(request, proposer).estimate(request, self._occurrence(request))

    def record_denial(self, request: ResolveRequest, estimate: Estimate) -> None:
        """A pre-check denied this request at this estimate: recorded, so a replay is
        denied the same way without asking anyone for an estimate."""
        self.ledger.append("denial", request.operation, "kernel",
                           {"request": _wanted(request),
                            "estimate": estimate.model_dump(mode="json")},
                           goal_id=request.goal_id)

    def get(self, request: ResolveRequest, output_model: type[BaseModel] | None = None,
            proposer: Proposer | None = None) -> Proposal:
        """The proposal answering ``request``, validated against ``output_model`` (by
        default the operation's model)."""
        if output_model is None:
            operation = OPERATIONS.get(request.operation)
            if operation is None:
                raise PermanentError(f"no proposal type for {request.operation!r}",
                                     failure_mode="capability_mismatch")
            output_model = operation.output
        wanted = _wanted(request)
        entry = self._pending_entry()
        if entry is not None:
            recorded = entry.data()["request"] if entry.kind == "proposal" else \
                {"operation": f"observation {entry.operation}", "goal_id": entry.goal_id,
                 "fingerprint": "-" * 12}
            if recorded != wanted:
                raise DivergenceError(
                    f"proposal #{entry.index}: the ledger answers {recorded['operation']} for "
                    f"{recorded['goal_id']} (request {recorded['fingerprint'][:12]}), the "
                    f"kernel now asks {wanted['operation']} for {wanted['goal_id']} "
                    f"(request {wanted['fingerprint'][:12]})")
            if self.replaying:  # the replayed run gets the same ledger as the original
                entry = self.ledger.append(entry.kind, entry.operation, entry.source,
                                           entry.data(), goal_id=entry.goal_id)
                self._record(entry)
            response = entry.data()["response"]
            replayed = True
        else:
            source = self._live(request, proposer)
            resolution = source.propose(request, self._occurrence(request))
            response = {"output": resolution.output, "cost_usd": resolution.cost_usd,
                        "seconds": resolution.seconds, "metadata": resolution.metadata}
            content: dict[str, Any] = {"request": wanted, "response": response}
            if request.context:  # the history block that fed it, readable in the ledger
                content["context"] = request.context
            entry = self.ledger.append("proposal", request.operation, source.source, content,
                                       goal_id=request.goal_id)
            self._record(entry)
            replayed = False
        try:
            output = output_model.model_validate(response["output"])
        except ValidationError as exc:
            raise PermanentError(f"{request.operation}: the proposal does not validate: "
                                 f"{exc.errors()[0]['msg']}", failure_mode="invalid_output",
                                 output_produced=True) from exc
        self.run.proposals += 1
        return Proposal(output=output, cost_usd=float(response["cost_usd"]),
                        seconds=float(response["seconds"]), metadata=response["metadata"],
                        ledger_index=entry.index, ledger_hash=entry.hash, replayed=replayed)

    def observe(self, name: str, goal_id: str, read: Callable[[], Any]) -> Any:
        """What the knowledge graph says for one decision, recorded in the ledger first.

        History is an input like a proposal: it depends on everything stored before the
        run, so a resumed run and a replay (in a scratch graph without that history) are
        served the recorded rows instead of reading the graph again."""
        entry = self._pending_entry()
        if entry is not None:
            if entry.kind != "observation" or entry.operation != name or \
                    entry.goal_id != goal_id:
                raise DivergenceError(
                    f"ledger entry #{entry.index}: recorded {entry.kind} {entry.operation} "
                    f"for {entry.goal_id}, the kernel now reads the history {name} for "
                    f"{goal_id}")
            if self.replaying:
                entry = self.ledger.append(entry.kind, entry.operation, entry.source,
                                           entry.data(), goal_id=entry.goal_id)
                self._record(entry)
            rows = entry.data()["rows"]
        else:
            if self.replaying:
                raise DivergenceError(f"the recorded ledger ends at {len(self._served)} "
                                      f"entries; the kernel reads the history {name} for "
                                      f"{goal_id}")
            rows = read()
            entry = self.ledger.append("observation", name, "knowledge-graph",
                                       {"rows": rows}, goal_id=goal_id)
            self._record(entry)
        self.run.proposals += 1
        return rows

    def _live(self, request: ResolveRequest, proposer: Proposer | None) -> Proposer:
        """Who answers a request nothing recorded answers; a replay has no one."""
        if self.replaying:
            raise DivergenceError(f"the recorded ledger ends at {len(self._served)} proposals; "
                                  f"the kernel asks for another ({request.operation} for "
                                  f"{request.goal_id})")
        source = proposer or self.proposer
        if source is None:
            raise NoProposalError("no proposer is configured for this run")
        return source

    def _pending_entry(self) -> LedgerEntry | None:
        """The recorded proposal the next request must match, if any."""
        index = self.run.proposals
        return self._served[index] if index < len(self._served) else None

    def _record(self, entry: LedgerEntry) -> None:
        self._own.append(entry)
        if entry.kind == "proposal":
            self._calls[(entry.operation, entry.goal_id)] += 1

    def _occurrence(self, request: ResolveRequest) -> int:
        """How many proposals this run already holds for the same operation on the same goal."""
        return self._calls[(request.operation, request.goal_id)]
