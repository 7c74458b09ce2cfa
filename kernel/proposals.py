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
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from kernel.core.envelopes import canonical_json
from kernel.core.ledger import EntryKind, Ledger, LedgerEntry, answered_before
from kernel.errors import KernelError
from kernel.protocol import (
    DeadlineReached,
    Estimate,
    NoProposalError,
    Operation,
    PermanentError,
    Proposer,
    Resolution,
    ResolveRequest,
    ResolverError,
)
from kernel.refusal import RefusalReason


class DivergenceError(KernelError):
    """A recorded proposal does not answer the request the kernel makes now."""


Out = TypeVar("Out", bound=BaseModel)


@dataclass(frozen=True)
class Proposal(Generic[Out]):
    """A validated answer, recorded in the ledger before the kernel acts on it."""

    output: Out
    cost_usd: float
    seconds: float
    metadata: dict[str, Any]
    ledger_index: int
    ledger_hash: str
    replayed: bool


@dataclass(frozen=True)
class FailedProposal:
    """A call that produced nothing usable: recorded, and paid for all the same."""

    failure: dict[str, Any]
    cost_usd: float
    seconds: float
    ledger_index: int
    ledger_hash: str
    replayed: bool

    def error(self) -> Exception:
        """The error a failed call ends its step with."""
        failure = self.failure or {}
        message = str(failure.get("message", "the proposal failed"))
        if failure.get("retryable"):
            return ProposerUnavailable(message)
        return PermanentError(message, failure_mode=str(failure.get("failure_mode")),
                              output_produced=bool(failure.get("output_produced")))


class ProposerUnavailable(KernelError):
    """The proposer stayed unreachable or overloaded through every retry. The run stops
    where it is (resumable); the calls it paid for are in the ledger and the budget."""


def fingerprint(request: ResolveRequest) -> str:
    return hashlib.sha256(canonical_json(request.model_dump(mode="json")).encode()).hexdigest()


def _wanted(request: ResolveRequest) -> dict[str, Any]:
    return {"operation": request.operation, "goal_id": request.goal_id,
            "fingerprint": fingerprint(request)}


SERVED = ("proposal", "observation")  # the ledger entries a resumed or replayed run re-serves
# A proposer that stayed unavailable is recorded as a "failure": a replay meets it again
# (and pays for it again) where the original did; a resumed run asks anew.
REPLAYED = (*SERVED, "failure")


def _key(wanted: dict[str, Any]) -> str:
    return canonical_json(wanted)


class RecordedSource:
    """Serves what a ledger already holds, in order: the run's own (a resumed run asks
    again for every proposal its commits did not consume) or a recorded run's (a replay,
    which copies each entry it serves into the new ledger, so both chains are equal).
    Each entry must answer the request the kernel makes now."""

    def __init__(self, ledger: Ledger, entries: list[LedgerEntry], *, copying: bool) -> None:
        self.ledger = ledger
        self.copying = copying
        self.entries = [e for e in entries if e.kind in (REPLAYED if copying else SERVED)]

    def pending(self, index: int) -> LedgerEntry | None:
        """The entry the ``index``-th served request must match, if the ledger has it."""
        return self.entries[index] if index < len(self.entries) else None

    def proposal(self, entry: LedgerEntry, wanted: dict[str, Any]) -> LedgerEntry:
        """``entry``, which must answer ``wanted``, as this run's ledger holds it."""
        recorded: dict[str, Any] = entry.data()["request"] if entry.kind in ("proposal", "failure") \
            else {"operation": f"observation {entry.operation}", "goal_id": entry.goal_id,
                  "fingerprint": "-" * 12}
        if recorded != wanted:
            raise DivergenceError(
                f"proposal #{entry.index}: the ledger answers {recorded['operation']} for "
                f"{recorded['goal_id']} (request {recorded['fingerprint'][:12]}), the "
                f"kernel now asks {wanted['operation']} for {wanted['goal_id']} "
                f"(request {wanted['fingerprint'][:12]})")
        return self._held(entry)

    def observation(self, entry: LedgerEntry, name: str, goal_id: str) -> LedgerEntry:
        """``entry``, which must record the history ``name`` for ``goal_id``."""
        if entry.kind != "observation" or entry.operation != name or entry.goal_id != goal_id:
            raise DivergenceError(
                f"ledger entry #{entry.index}: recorded {entry.kind} {entry.operation} "
                f"for {entry.goal_id}, the kernel now reads the history {name} for {goal_id}")
        return self._held(entry)

    def _held(self, entry: LedgerEntry) -> LedgerEntry:
        if not self.copying:
            return entry
        return self.ledger.append(entry.kind, entry.operation, entry.source, entry.data(),
                                  goal_id=entry.goal_id)


class CallRunner(Protocol):
    """Where a live call runs (``kernel.runtime.calls.Calls``): now, or started ahead of
    its turn and answered in it."""

    @property
    def ahead(self) -> bool: ...

    def start(self, source: Proposer, request: ResolveRequest, fingerprint: str,
              occurrence: int) -> None: ...

    def answer(self, source: Proposer, request: ResolveRequest, fingerprint: str,
               occurrence: int) -> Resolution: ...


class LiveSource:
    """Asks the run's proposer (or the one a request names) what nothing recorded
    answers, and appends the answer to the ledger before the kernel sees it."""

    def __init__(self, ledger: Ledger, proposer: Proposer | None,
                 calls: CallRunner | None = None) -> None:
        self.ledger = ledger
        self.proposer = proposer
        self.calls = calls

    def answerer(self, proposer: Proposer | None) -> Proposer:
        source = proposer or self.proposer
        if source is None:
            raise NoProposalError("no proposer is configured for this run")
        return source

    def proposal(self, request: ResolveRequest, wanted: dict[str, Any], occurrence: int,
                 proposer: Proposer | None, estimate: Estimate | None,
                 reuse_key: str | None = None) -> LedgerEntry:
        source = self.answerer(proposer)
        kind: EntryKind = "proposal"
        try:
            resolution = source.propose(request, occurrence) if self.calls is None else \
                self.calls.answer(source, request, wanted["fingerprint"], occurrence)
            response = {"output": resolution.output, "cost_usd": resolution.cost_usd,
                        "seconds": resolution.seconds, "metadata": resolution.metadata}
        except ResolverError as exc:  # nothing usable, but recorded and paid for
            kind = "failure" if exc.retryable else "proposal"
            response = {"error": {"message": str(exc), "failure_mode": exc.failure_mode,
                                  "retryable": exc.retryable,
                                  "output_produced": exc.output_produced},
                        "cost_usd": exc.cost_usd, "seconds": exc.seconds, "metadata": {}}
        content: dict[str, Any] = {"request": wanted, "response": response}
        if estimate is not None:
            content["estimate"] = estimate.model_dump(mode="json")
        if request.context:  # the history block that fed it, readable in the ledger
            content["context"] = request.context
        usable = kind == "proposal" and "error" not in response
        return self.ledger.append(kind, request.operation, source.source, content,
                                  goal_id=request.goal_id,
                                  reuse_key=reuse_key if usable else None)

    def reuse(self, request: ResolveRequest, wanted: dict[str, Any],
              earlier: LedgerEntry) -> LedgerEntry:
        """``earlier``'s answer, recorded as this run's answer to ``request`` (nothing is
        asked, nothing paid): a proposal entry that names the entry it reuses, so a
        resumed run and a replay serve it like any other."""
        response = earlier.data()["response"]
        reused = {"entry": earlier.id, "run_id": earlier.run_id, "hash": earlier.hash,
                  "source": earlier.source}
        content: dict[str, Any] = {
            "request": wanted, "reused": reused,
            "response": {"output": response["output"], "cost_usd": 0.0, "seconds": 0.0,
                         "metadata": {"reused": reused}},
            "estimate": {"cost_usd": 0.0, "seconds": 0.0}}
        if request.context:
            content["context"] = request.context
        return self.ledger.append("proposal", request.operation, earlier.source, content,
                                  goal_id=request.goal_id)

    def observation(self, name: str, goal_id: str, rows: Any, source: str) -> LedgerEntry:
        return self.ledger.append("observation", name, source, {"rows": rows}, goal_id=goal_id)

    def ahead(self, request: ResolveRequest, wanted: dict[str, Any], occurrence: int,
              proposer: Proposer | None) -> None:
        """Start the call a step taken ahead of its turn has reached, if its proposer may
        be asked ahead."""
        source = self.answerer(proposer)
        if self.calls is not None and self.calls.ahead and source.prefetchable:
            self.calls.start(source, request, wanted["fingerprint"], occurrence)


class Proposals:
    """The kernel's single way to obtain a proposal: from what is recorded first, then,
    outside a replay, from a live proposer."""

    def __init__(self, ledger: Ledger, proposer: Proposer | None,
                 recorded: list[LedgerEntry] | None = None,
                 calls: CallRunner | None = None, reuse: bool = True) -> None:
        """``recorded``: a ledger to replay (every proposal must come from it); otherwise
        the run's own ledger serves what it already holds and the proposer the rest,
        its calls run by ``calls`` (None: each in the calling thread). ``reuse``: a
        request the run's proposer answered before in this graph, byte for byte, is
        served that answer instead of being asked again (``--fresh``: False)."""
        self.ledger = ledger
        self.run = ledger.run
        self.replaying = recorded is not None
        self.reuse = reuse and not self.replaying
        self._recorded = recorded or []
        # The run is this process's alone (commits are guarded), so the ledger is read once.
        self._own = [e for e in ledger.entries() if e.kind in SERVED]
        self.served = RecordedSource(ledger, recorded if recorded is not None else self._own,
                                     copying=recorded is not None)
        self.live: LiveSource | None = None if self.replaying else \
            LiveSource(ledger, proposer, calls)
        self._calls: Counter[tuple[str, str | None]] = Counter(
            (e.operation, e.goal_id) for e in self._own if e.kind == "proposal")
        # A replay meets the same budget denials as the original: the estimates that led
        # to them are in the ledger (estimates of served proposals are their costs).
        self._denials: dict[str, list[dict[str, Any]]] = {}
        # Earlier answers looked up for a call not yet made (its estimate, a step taken
        # ahead), kept until the call itself: one read per call instead of two to four.
        self._looked_up: dict[str, LedgerEntry | None] = {}
        for entry in recorded or []:
            if entry.kind == "denial":
                data = entry.data()
                self._denials.setdefault(_key(data["request"]), []).append(data["estimate"])

    def answering(self) -> str | None:
        """Who answers the run's questions (a script's content, a model), when earlier
        answers may be reused for it; None with ``--fresh``, in a replay, or for a
        proposer that does not say."""
        if not self.reuse or self.live is None or self.live.proposer is None:
            return None
        return self.live.proposer.identity

    @property
    def proposer(self) -> Proposer | None:
        """The run's own proposer (None in a replay)."""
        return self.live.proposer if self.live is not None else None

    def estimate(self, request: ResolveRequest, proposer: Proposer | None = None) -> Estimate:
        """What the next proposal will cost: as recorded when it is recorded, otherwise the
        proposer's (``proposer`` overrides the run's, e.g. for sandbox runs)."""
        wanted = _wanted(request)
        entry = self._pending_entry()
        if entry is not None and entry.kind in ("proposal", "failure") and \
                entry.data()["request"] == wanted:
            # the estimate the original pre-check used, so the same grant is drawn (a
            # ledger from before estimates were recorded: what the call cost)
            data = entry.data()
            recorded = data.get("estimate") or {"cost_usd": data["response"]["cost_usd"],
                                                "seconds": data["response"]["seconds"]}
            return Estimate.model_validate(recorded)
        denials = self._denials.get(_key(wanted))
        if denials:
            return Estimate.model_validate(denials.pop(0))
        if entry is None and self._earlier_answer(request, proposer)[1] is not None:
            return Estimate(cost_usd=0.0, seconds=0.0)  # served from the graph, unpaid
        return self._live(request).answerer(proposer).estimate(request,
                                                               self._occurrence(request))

    def _earlier_answer(self, request: ResolveRequest, proposer: Proposer | None,
                        *, calling: bool = False) -> tuple[str | None, LedgerEntry | None]:
        """The reuse key of ``request`` as the run's proposer sees it (None: the call is
        not reusable: a replay, ``--fresh``, another proposer such as the sandbox, or a
        proposer that gives no key), and the first answer in the graph to that key.
        ``calling``: the call is being made now, so what was looked up for it is let go."""
        if not self.reuse or proposer is not None or self.live is None \
                or self.live.proposer is None:
            return None, None
        key = self.live.proposer.reuse_key(request, self._occurrence(request))
        if key is None:
            return None, None
        if key in self._looked_up:
            return key, self._looked_up.pop(key) if calling else self._looked_up[key]
        earlier = answered_before(self.run.store, key)
        if not calling:
            self._looked_up[key] = earlier
        return key, earlier

    def record_denial(self, request: ResolveRequest, estimate: Estimate) -> None:
        """A pre-check denied this request at this estimate: recorded, so a replay is
        denied the same way without asking anyone for an estimate."""
        self.ledger.append("denial", request.operation, "kernel",
                           {"request": _wanted(request),
                            "estimate": estimate.model_dump(mode="json")},
                           goal_id=request.goal_id)

    def get(self, operation: Operation[Out], request: ResolveRequest,
            proposer: Proposer | None = None,
            estimate: Estimate | None = None) -> Proposal[Out] | FailedProposal:
        """The proposal answering ``request``, validated against the operation's model;
        ``estimate``, what the pre-check allowed it at, is recorded with a new one."""
        if request.operation != operation.name:
            raise ValueError(f"a {request.operation!r} request asked as {operation.name!r}")
        wanted = _wanted(request)
        if self.replayed_stop():
            raise DeadlineReached("the recorded run reached its wall-time cap here")
        pending = self._pending_entry()
        if pending is not None:
            entry, replayed = self.served.proposal(pending, wanted), True
        else:
            entry, replayed = self._asked(request, wanted, proposer, estimate), False
        if not replayed or self.replaying:
            self._record(entry)
        if entry.kind != "failure" or self.replaying:
            self.run.proposals += 1  # a resumed run does not serve failures (see REPLAYED)
        # Used as the ledger holds it (canonical: keys sorted), so a live run builds the
        # same artifacts, byte for byte, as its resume and replay will.
        return _validated(operation, request, entry, replayed)

    def _asked(self, request: ResolveRequest, wanted: dict[str, Any],
               proposer: Proposer | None, estimate: Estimate | None) -> LedgerEntry:
        """What nothing recorded in this run answers: an identical request answered before
        in this graph, or the proposer."""
        live = self._live(request)
        key, earlier = self._earlier_answer(request, proposer, calling=True)
        if earlier is not None:
            return live.reuse(request, wanted, earlier)
        return live.proposal(request, wanted, self._occurrence(request), proposer, estimate,
                             reuse_key=key)

    def start_ahead(self, request: ResolveRequest, proposer: Proposer | None = None) -> None:
        """Start, ahead of its turn, the call ``request`` will make on it, unless what is
        recorded or an answer given before in this graph will serve it."""
        if self.replaying or self._pending_entry() is not None:
            return
        _, earlier = self._earlier_answer(request, proposer)
        if earlier is None:
            self._live(request).ahead(request, _wanted(request), self._occurrence(request),
                                      proposer)

    def observe(self, name: str, goal_id: str, read: Callable[[], Any],
                source: str = "knowledge-graph") -> Any:
        """What the knowledge graph says for one decision, recorded in the ledger first.

        History is an input like a proposal: it depends on everything stored before the
        run, so a resumed run and a replay (in a scratch graph without that history) are
        served the recorded rows instead of reading the graph again."""
        pending = self._pending_entry()
        if pending is not None:
            entry = self.served.observation(pending, name, goal_id)
            if self.replaying:
                self._record(entry)
            rows = entry.data()["rows"]
        elif self.live is None:
            raise DivergenceError(f"the recorded ledger ends at {len(self.served.entries)} "
                                  f"entries; the kernel reads the history {name} for {goal_id}")
        else:
            rows = read()
            self._record(self.live.observation(name, goal_id, rows, source))
        self.run.proposals += 1
        return rows

    def recall(self, name: str, goal_id: str, read: Callable[[], Any]) -> Any | None:
        """A verified record from the knowledge graph standing in for a proposal.

        Found, it is recorded like an observation (source ``knowledge-graph``) before it
        is used; not found (``read`` returns None), nothing is recorded and the caller
        asks the model, so a run that reuses nothing keeps the ledger it always had. A
        resumed run or a replay follows its ledger: a recorded recall is served again,
        and a recorded proposal in its place means the original asked (None here)."""
        entry = self._pending_entry()
        if entry is not None:
            if entry.kind == "observation" and entry.operation == name and \
                    entry.goal_id == goal_id:
                return self.observe(name, goal_id, read)
            return None
        if self.replaying:
            return None
        rows = read()
        if rows is None:
            return None
        return self.observe(name, goal_id, lambda: rows)

    def _live(self, request: ResolveRequest) -> LiveSource:
        """Who answers a request nothing recorded answers; a replay has no one."""
        if self.live is None:
            raise DivergenceError(f"the recorded ledger ends at {len(self.served.entries)} "
                                  f"proposals; the kernel asks for another "
                                  f"({request.operation} for {request.goal_id})")
        return self.live

    def replayed_stop(self) -> bool:
        """In a replay, whether the original stopped here at its wall-time cap: its refusal
        is the next entry of the recorded chain. It is copied as recorded, so the replay
        stops (or, where the original was resumed, goes on) at the same point with the
        same chain. Outside a replay the clock decides, and this is always False."""
        if not self.replaying:
            return False
        size = self.ledger.size()
        entry = self._recorded[size] if size < len(self._recorded) else None
        if entry is None or entry.kind != "refusal" or \
                entry.operation != RefusalReason.WALL_TIME_EXCEEDED.value:
            return False
        self.ledger.append(entry.kind, entry.operation, entry.source, entry.data(),
                           goal_id=entry.goal_id)
        return True

    def original_went_on(self) -> bool:
        """In a replay, at a point where its original stopped (a cap, an unreachable model):
        whether the original was resumed afterwards, so the replay goes on too."""
        return self.replaying and self.has_pending()

    def has_pending(self) -> bool:
        """Whether recorded entries remain to be served."""
        return self._pending_entry() is not None

    def _pending_entry(self) -> LedgerEntry | None:
        """The recorded proposal the next request must match, if any."""
        return self.served.pending(self.run.proposals)

    def _record(self, entry: LedgerEntry) -> None:
        self._own.append(entry)
        if entry.kind == "proposal":
            self._calls[(entry.operation, entry.goal_id)] += 1

    def _occurrence(self, request: ResolveRequest) -> int:
        """How many proposals this run already holds for the same operation on the same goal."""
        return self._calls[(request.operation, request.goal_id)]


def reused_in(entries: list[LedgerEntry]) -> list[dict[str, Any]]:
    """What a run took from earlier answers instead of asking, in ledger order: each
    operation, for which goal, and where the answer came from."""
    found: list[dict[str, Any]] = []
    for entry in entries:
        data = entry.data()
        if entry.kind == "proposal" and "reused" in data:
            reused = data["reused"]
            found.append({"operation": entry.operation, "goal_id": entry.goal_id,
                          "from": f"{reused['entry']} ({reused['source']}, "
                                  f"{reused['run_id']})"})
        elif entry.kind == "observation" and entry.operation == "reuse/identify":
            rows = data["rows"]
            found.append({"operation": "identify_constraints", "goal_id": entry.goal_id,
                          "from": f"goal {rows['goal_id']} of {rows['run_id']}"})
        elif entry.kind == "observation" and entry.operation == "reuse/classify_leaf":
            found.append({"operation": "classify_leaf", "goal_id": entry.goal_id,
                          "from": f"the record of this kind of goal ({data['rows']['atomic']} "
                                  "verified atomic leaf goal(s), none decomposed)"})
    return found


def _validated(operation: Operation[Out], request: ResolveRequest, entry: LedgerEntry,
               replayed: bool) -> Proposal[Out] | FailedProposal:
    """The entry's response checked against the operation's output model, then against
    its request (a decomposition that leaves a constraint unanswered is refused)."""
    response = entry.data()["response"]
    failure = response.get("error")
    if failure is None:
        try:
            output = operation.output.model_validate(response["output"])
        except ValidationError as exc:
            failure = {"message": f"{request.operation}: the proposal does not validate: "
                                  f"{exc.errors()[0]['msg']}",
                       "failure_mode": "invalid_output", "output_produced": True}
        else:
            refused = operation.problems(request, output)
            if refused:
                failure = {"message": f"{request.operation}: the proposal is refused: "
                                      + "; ".join(refused),
                           "failure_mode": "invalid_output", "output_produced": True}
    cost, seconds = float(response["cost_usd"]), float(response["seconds"])
    if failure is not None:
        return FailedProposal(failure=failure, cost_usd=cost, seconds=seconds,
                              ledger_index=entry.index, ledger_hash=entry.hash,
                              replayed=replayed)
    return Proposal(output=output, cost_usd=cost, seconds=seconds, metadata=response["metadata"],
                    ledger_index=entry.index, ledger_hash=entry.hash, replayed=replayed)
