"""A run and its commit sequence.

Every state change of a run is one statement that carries the run's expected
commit number ``seq`` and advances it: the statement matches its guards first and
writes only if all hold. That gives each run a total, replayable order of commits,
lets ids be derived from ``seq``, and makes a second process driving the same run
fail loudly instead of interleaving.

Commits also carry the dispatch queue when it changed, so a resumed run steps its goals
in exactly the order the uninterrupted run would have: a step's first commit stores the
queue it started from (its own goal first, to be stepped again after a crash), and a
step's last commit, once the step has declared the goals it wakes, stores the queue
that follows it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ulid import ULID

from kernel.core import ids
from kernel.core.envelopes import ARTIFACT_REGISTERED
from kernel.core.ids import entity_id
from kernel.errors import KernelError
from kernel.store.base import GraphStore, Row

GENESIS = "0" * 64  # the hash a run's first ledger entry follows


class CommitRejected(KernelError):
    """A commit's precondition did not hold; nothing was written."""


class ConcurrentRunError(KernelError):
    """Another process advanced this run; this one must reload it."""


class LedgerError(KernelError):
    """The ledger could not be extended (another writer moved its head)."""


class UnknownRunError(KernelError):
    """No run with that id."""


@dataclass
class StepBuffer:
    """What the step a run is taking has made and not stored yet, and the queues it
    started from and will leave: the per-step half of a run's state. A run's ``seq``, its
    consumed proposals and its stored queue are what every step shares.

    Each rider rides the next commit whose statement takes it, or is stored just before
    it; ``Run.commit`` empties what it stored."""

    # Log lines not yet stored: the next commit whose statement takes $logs carries them
    # (or flush, when a run stops); logs are observations, never a decision, and a
    # crash loses at most those written since the last commit.
    pending_logs: list[dict[str, Any]] = field(default_factory=list)
    # Ledger entries not yet stored (see ``Ledger.append``): the next commit stores them,
    # inside its own statement when that takes $entries, otherwise just before it.
    pending_entries: list[dict[str, Any]] = field(default_factory=list)
    # What a step made and has not stored yet, in the order a step makes them: artifacts
    # (``Artifacts.register``), the attempt it opened (``Attempts.open``) and the spend
    # that paid for its call (``BudgetEnforcer.record``). The next commit whose statement
    # takes them carries them (``$artifacts``, ``$attempt`` and ``$spend``; an attempt or
    # a spend only on its own goal), so a step is one statement; whatever it cannot carry
    # is stored just before it, as its own commit (see ``_store_riders``).
    pending_artifacts: list[dict[str, Any]] = field(default_factory=list)
    # constraints a step identified that are not stored yet (``$constraints``); stored
    # without a commit when the next one cannot carry them (they are immutable)
    pending_constraints: list[dict[str, Any]] = field(default_factory=list)
    pending_attempt: dict[str, Any] | None = None
    pending_spend: dict[str, Any] | None = None
    # A goal's entry into a step from pending (``GoalTree.enter``): the step's commit that
    # moves the goal on from the state it entered carries it (its guard then expects the
    # stored state, pending); any other commit stores it first, as a transition.
    pending_move: dict[str, str] | None = None
    # The verification of a goal's last attempt (``Attempts.record_verification``), which
    # the step's move of that goal carries (``$checked``); any other commit stores it first,
    # as the commit that consumes the proposals made up to it (``proposals``).
    pending_verification: dict[str, Any] | None = None
    # The queue a step started from, until a commit stores it, and the one that follows
    # the step (``will_wake``), which only the step's own last commit stores: a rider
    # stored just before that commit must not tell a resumed run the step is done.
    start_queue: list[str] | None = None
    final_queue: list[str] | None = None
    rest: list[str] = field(default_factory=list)  # the queue after the step's own goal
    seq: int = 0  # the run's seq when the step began: unchanged, the step committed nothing


@dataclass
class Run:
    store: GraphStore
    run_id: str
    base_ms: int
    seq: int
    # Proposals consumed by committed state: every commit records it, so a resumed run
    # knows which recorded proposals its committed steps already used.
    proposals: int = 0
    committed_proposals: int = 0  # what the last commit recorded
    queue: list[str] | None = None  # the dispatch queue the store holds (None: never stored)
    # What the step being taken has made and not stored yet (its riders), and its queues.
    step: StepBuffer = field(default_factory=lambda: StepBuffer(), repr=False)

    @classmethod
    def start(cls, store: GraphStore, caption: str, config: Mapping[str, Any] | None = None,
              ulid: ULID | None = None, proposed_by: tuple[str, str] | None = None) -> Run:
        """Create a run; its id and start time are recorded and never recomputed (a replay
        passes the recorded ``ulid`` to recreate the same run). ``proposed_by`` is the
        proposer's kind and model (or script): properties of the run and an Actor it is
        PROPOSED_BY, so Cypher can tell scripted runs from model runs."""
        ulid = ulid or ids.new_run_ulid()  # looked up here, so a crash check can pin it
        run_id = f"run:{ulid}"
        started = datetime.fromtimestamp(ulid.timestamp, tz=UTC).isoformat(timespec="milliseconds")
        store.run("run/create", {
            "run_id": run_id, "base_ms": ulid.milliseconds, "started_at": started,
            "caption": caption, "config": json.dumps(dict(config or {}), sort_keys=True),
            "proposer": proposed_by[0] if proposed_by else None,
            "model": proposed_by[1] if proposed_by else None,
        })
        return cls(store, run_id, ulid.milliseconds, 0)

    @classmethod
    def load(cls, store: GraphStore, run_id: str) -> Run:
        rows = store.run("run/get", {"run_id": run_id})
        if not rows:
            raise UnknownRunError(f"no run {run_id!r}; 'kernel runs' lists them")
        consumed = int(rows[0]["proposals"] or 0)
        queue = rows[0].get("queue")
        return cls(store, run_id, int(rows[0]["base_ms"]), int(rows[0]["seq"]), consumed,
                   consumed, list(queue) if queue is not None else None)

    def config(self) -> dict[str, Any]:
        rows = self.store.run("run/get", {"run_id": self.run_id})
        config: dict[str, Any] = json.loads(rows[0]["config"] or "{}")
        return config

    def new_id(self, kind: str, salt: str = "", offset: int = 0) -> str:
        """The id an entity created by the *next* commit gets (a pending entry or spend
        is stored first: it would be that commit); ``offset`` counts on from it, for a
        statement that stands for several commits (see ``commit``'s ``advances``)."""
        self._store_move()
        self.store_verification()
        self.store_spend()
        return self._id(kind, salt, offset)

    def riding_id(self, kind: str, offset: int = 0, salt: str = "") -> str:
        """``new_id`` for a commit that carries what is pending (after ``store_pending``
        kept only what it carries): nothing is stored first."""
        return self._id(kind, salt, offset)

    def rider_id(self, kind: str) -> str:
        """The id of an entity that rides the run's next commit (an artifact or attempt):
        unique among the riders of one commit, whatever else that commit creates."""
        return self._id(kind, f"rider-{len(self.step.pending_artifacts)}"
                        if kind == "artifact" else "rider")

    def _id(self, kind: str, salt: str = "", offset: int = 0) -> str:
        return entity_id(kind, self.run_id, self.base_ms, self.seq + offset, salt)

    def store_spend(self) -> None:
        """Store the pending spend now, as its own commit (nothing when there is none)."""
        if self.step.pending_spend is not None:
            spend = self.step.pending_spend
            self._write("budget/spend", {"goal_id": spend["goal_id"]},
                        what=spend["what"], consumes=spend["consumes"])

    def store_pending(self, keep_spend_of: str | None = None) -> None:
        """Store every pending entry, artifact, attempt and spend now (but a plain spend
        on ``keep_spend_of``, which the next commit carries)."""
        spend = self.step.pending_spend
        if spend is not None and (spend["goal_id"] != keep_spend_of
                                  or not plain_call(spend["params"])):
            keep_spend_of = None
        self._store_move()
        self._store_riders(frozenset({"spend"}) if keep_spend_of else frozenset(),
                           keep_spend_of)

    def store_verification(self) -> None:
        """Store the pending verification now, as its own commit (with the spend of its
        goal, when one is pending); nothing when there is none."""
        checked = self.step.pending_verification
        if checked is not None:
            # never fewer than a commit since consumed (a run's count only grows)
            self._write("attempt/record_verification", {"goal_id": checked["goal_id"]},
                        what=checked["what"], consumes=True,
                        recorded=max(checked["proposals"], self.committed_proposals))

    def _store_move(self) -> None:
        move = self.step.pending_move
        if move is not None:
            self._write("goal/transition", {**move, "changes": {}, "return_id": None},
                        consumes=False,
                        what=f"{move['goal_id']}: {move['from']} -> {move['to']}")
            self.step.pending_move = None

    def commit(self, name: str, params: Mapping[str, Any],
               identifiers: Mapping[str, str] | None = None, *, what: str,
               consumes: bool = True, advances: int = 1) -> list[Row]:
        """Run one guarded write; advance ``seq`` or explain why nothing was written.

        A statement that stands for several commits (the children of a decomposition,
        one number each, as if each had its own commit) ``advances`` seq by that many.

        A step's final commit *consumes* the proposals it used (the run records how many
        it has consumed); intermediate commits (spends, grants, an opened attempt) do
        not, so a crash between them and the step's end serves the same recorded
        proposals again on resume instead of asking for new ones."""
        wanted = self.store.catalog.get(name).parameters
        move = self.step.pending_move
        entry_rides = move is not None and move["goal_id"] == params.get("goal_id") \
            and params.get("from") == move["to"]
        if move is not None and entry_rides:
            params = {**params, "from": move["from"]}  # its guard expects the stored state
        else:
            self._store_move()
        self._store_riders(wanted, params.get("goal_id"))
        rows = self._write(name, params, identifiers, what=what, consumes=consumes,
                           final=True, advances=advances)
        if entry_rides:
            self.step.pending_move = None
        return rows

    def _store_riders(self, wanted: frozenset[str], goal_id: str | None) -> None:
        """Store, each as its own commit, the pending riders a statement taking ``wanted``
        about ``goal_id`` cannot carry: a spend (which carries the artifacts, and the
        attempt of its goal, with it), then an attempt, then artifacts."""
        if self.step.pending_constraints and "constraints" not in wanted:
            self.store.run("constraint/upsert", {"rows": self.step.pending_constraints})
            self.step.pending_constraints = []
        if self.step.pending_verification is not None and not (
                "checked" in wanted and self.step.pending_verification["goal_id"] == goal_id):
            self.store_verification()
        if self.step.pending_spend is not None and not self._rides("spend", wanted, goal_id):
            self.store_spend()
        if self.step.pending_attempt is not None and not self._rides("attempt", wanted, goal_id):
            self._write("attempt/open", {"goal_id": self.step.pending_attempt["goal_id"]},
                        what=f"open attempt {self.step.pending_attempt['params']['attempt_index']} "
                             f"of {self.step.pending_attempt['goal_id']}", consumes=False)
        if self.step.pending_artifacts and "artifacts" not in wanted:
            self._write("artifact/create", {}, what="register artifacts", consumes=False)

    def _rides(self, rider: str, wanted: frozenset[str], goal_id: str | None) -> bool:
        pending = self.step.pending_spend if rider == "spend" else self.step.pending_attempt
        return rider in wanted and pending is not None and pending["goal_id"] == goal_id

    def _write(self, name: str, params: Mapping[str, Any],
               identifiers: Mapping[str, str] | None = None, *, what: str,
               consumes: bool, final: bool = False, advances: int = 1,
               recorded: int | None = None) -> list[Row]:
        """One guarded write; ``final`` when the step asked for it (it may store the queue
        that follows the step), not when it stores riders ahead of one. ``recorded``
        overrides the proposals it consumes (a rider made before later proposals)."""
        wanted = self.store.catalog.get(name).parameters
        if self.step.pending_entries and "entries" not in wanted:
            self._store_entries()  # entries are stored no later than the first commit after them
        extra = self._riders(wanted, params.get("goal_id"))
        if extra.get("spend") is not None and self.step.pending_spend is not None:
            consumes = consumes or self.step.pending_spend["consumes"]
        if recorded is None:
            recorded = self.proposals if consumes else self.committed_proposals
        queue = self.step.final_queue if final and self.step.final_queue is not None \
            else self.step.start_queue
        if "removals" in wanted:
            extra |= split_removals(params.get("changes", {}))
        rows = self.store.run(name, {**params, "run_id": self.run_id, "seq": self.seq,
                                     "proposals": recorded, "queue": queue, **extra},
                              identifiers)
        if rows:
            self._carried(extra)
            self.seq += advances
            self.committed_proposals = recorded
            if queue is not None:
                self.queue, self.step.start_queue = queue, None
                if queue is self.step.final_queue:
                    self.step.final_queue = None
            return rows
        current = self.store.run("run/get", {"run_id": self.run_id})
        if not current:
            raise UnknownRunError(f"run {self.run_id} vanished")
        if int(current[0]["seq"]) != self.seq:
            raise ConcurrentRunError(
                f"run {self.run_id} is at commit {current[0]['seq']}, this process expected "
                f"{self.seq}: another process is driving it")
        raise CommitRejected(f"{what}: not applied (its precondition does not hold)")


    # -- the dispatch queue ------------------------------------------------------------
    def begin_step(self, queue: list[str]) -> None:
        """A step starts on ``queue[0]``: if the stored queue is not this one, the step's
        first commit stores it (so a crash mid-step steps the same goal again first)."""
        self.step.rest = queue[1:]
        self.step.seq = self.seq
        self.step.start_queue = None if queue == self.queue else list(queue)
        self.step.final_queue = None

    def will_wake(self, goal_ids: list[str]) -> None:
        """The step's goal declares what it wakes before its last commit, which then
        stores the queue that follows the step."""
        self.step.final_queue = advance(self.step.rest, goal_ids)

    def end_step(self, queue: list[str]) -> None:
        """After a step: a step that committed leaves the queue that follows it, and the
        proposals it consumed, stored (one more statement only when its last commit could
        not carry them: a step's intermediate commits consume nothing, so that a crash
        between them serves the step's proposals again)."""
        self.store_pending()
        self.step.start_queue = self.step.final_queue = None
        if self.seq == self.step.seq or (queue == self.queue and
                                          self.committed_proposals == self.proposals):
            # nothing committed (the step can run again as it did), or its last commit
            # stored both; log lines it wrote after that commit ride the next one
            return
        extra = self._riders(frozenset({"logs", "entries"}), None)
        if self.store.run("run/save_queue", {"run_id": self.run_id, "seq": self.seq,
                                             "queue": queue, "proposals": self.proposals,
                                             **extra}):
            self._carried(extra)
            self.queue = list(queue)
            self.committed_proposals = self.proposals

    def flush(self) -> None:
        """Store what no commit carried: pending artifacts, attempt and spend as their own
        commits, then ledger entries and log lines (one statement; none when nothing is
        pending)."""
        self.store_pending()
        if self.step.pending_entries:
            self._store_entries()
        elif self.step.pending_logs:
            self.store.run("log/write_many", {"run_id": self.run_id, "logs": self.step.pending_logs})
            self.step.pending_logs = []

    def _store_entries(self) -> None:
        extra = self._riders(frozenset({"logs", "entries"}), None)
        if not self.store.run("ledger/append", {"run_id": self.run_id,
                                                "genesis": GENESIS, **extra}):
            raise LedgerError(f"the ledger of {self.run_id} moved while storing entries "
                              f"from {extra['entries'][0]['props']['index']}")
        self._carried(extra)

    def _riders(self, wanted: frozenset[str], goal_id: str | None) -> dict[str, Any]:
        """The pending riders a statement taking ``wanted`` about ``goal_id`` stores."""
        extra: dict[str, Any] = {}
        if "logs" in wanted:
            extra["logs"] = self.step.pending_logs
        if "entries" in wanted:
            extra["entries"] = self.step.pending_entries
        if "artifacts" in wanted:
            extra["artifacts"] = self.step.pending_artifacts
        if "constraints" in wanted:
            extra["constraints"] = self.step.pending_constraints
        if "attempt" in wanted:
            extra["attempt"] = None
            if self.step.pending_attempt is not None and self._rides("attempt", wanted, goal_id):
                extra["attempt"] = self.step.pending_attempt["params"]
        if "checked" in wanted:
            checked = self.step.pending_verification
            extra["checked"] = checked["params"] if checked is not None \
                and checked["goal_id"] == goal_id else None
        if "spend" in wanted:
            extra["spend"] = None
            if self.step.pending_spend is not None and self._rides("spend", wanted, goal_id):
                params = self.step.pending_spend["params"]
                extra["spend"] = {**params, "event_id": self._id("budget"),
                                  "grant_id": self._id("budget", "cover")}
                if params.get("earlier"):  # plain calls paid before it, charged first
                    extra["spend"]["earlier"] = [
                        {**before, "event_id": self._id("budget", f"earlier-{number}")}
                        for number, before in enumerate(params["earlier"])]
        return extra

    def _carried(self, extra: Mapping[str, Any]) -> None:
        if "logs" in extra:
            self.step.pending_logs = []
        if "entries" in extra:
            self.step.pending_entries = []
        if "artifacts" in extra:
            for made in extra["artifacts"]:  # stored as they are: their next read is known
                props = made["props"]
                self.store.remember("artifact/get", {"artifact_id": props["id"]},
                                    [{"artifact": {k: props.get(k) for k in ARTIFACT_REGISTERED}}])
            self.step.pending_artifacts = []
        if "constraints" in extra:
            self.step.pending_constraints = []
        if extra.get("attempt") is not None:
            self.step.pending_attempt = None
        if extra.get("spend") is not None:
            self.step.pending_spend = None
        if extra.get("checked") is not None:
            self.step.pending_verification = None


def plain_call(spend: Mapping[str, Any]) -> bool:
    """A spend that pays for a call alone: no attempt, no output."""
    return spend["attempt_id"] is None and spend["output_artifact_id"] is None


def advance(rest: list[str], woken: list[str]) -> list[str]:
    """The queue after a step: what was waiting, then each newly woken goal once."""
    queue = list(rest)
    for goal_id in woken:
        if goal_id not in queue:
            queue.append(goal_id)
    return queue


def wall_clock_iso() -> str:
    """Wall time for logs only; it never enters a decision."""
    return datetime.fromtimestamp(time.time(), tz=UTC).isoformat(timespec="milliseconds")


def split_removals(changes: Mapping[str, Any]) -> dict[str, Any]:
    """``changes`` as values to set and properties to remove, one map per removal.

    The embedded store loses the wrong property when one SET clause removes several (or
    removes one beside other writes): it swaps attributes by positions computed before
    the clause ran, so a finished run could drop its ledger head. Statements therefore
    set ``$changes`` and then remove each property in its own
    ``FOREACH (removal IN $removals | SET g += removal)`` iteration."""
    return {"changes": {k: v for k, v in changes.items() if v is not None},
            "removals": [{k: None} for k, v in changes.items() if v is None]}
