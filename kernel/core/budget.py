"""Budget ledger and enforcer (axioms B1, B2).

The ledger of allocate / spend / refund events is the source of truth; each goal's
``cost_*`` / ``time_*`` properties are caches written in the same statement as the
event. Amounts are integers (micro-dollars, milliseconds). A grant from a parent to a
child is one ``allocate`` event drawn from the parent, so budget is conserved:
remaining = allocated + refunded - spent - granted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from typing import Any

from kernel.core.run import Run, plain_call
from kernel.errors import KernelError

RESERVE_FRACTION = Fraction(1, 5)  # 20% of a parent's remaining budget stays with it


class BudgetError(KernelError):
    """A budget operation cannot be applied."""


@dataclass(frozen=True)
class Amount:
    cost: int  # micro-dollars
    time: int  # milliseconds

    def covers(self, other: Amount) -> bool:
        return self.cost >= other.cost and self.time >= other.time


class Decision(StrEnum):
    ALLOWED = "ALLOWED"
    DENIED = "DENIED"


@dataclass(frozen=True)
class PreCheck:
    decision: Decision
    remaining: Amount
    granted: Amount | None = None  # drawn from the parent to allow the call


@dataclass(frozen=True)
class Split:
    allocations: dict[str, Amount]
    reserve: Amount


@dataclass(frozen=True)
class ChildGrants:
    """A split stored by the commit that creates the children (see
    ``BudgetEnforcer.grants_to_children``): an allocation row per child, and the total
    drawn from the parent with what the parent must hold for it."""
    rows: list[dict[str, Any]]
    total: dict[str, int]


def split(remaining: Amount, weights: Mapping[str, float],
          share: Fraction | None = None) -> Split:
    """Proportional allocation with a 20% reserve; exact integers, deterministic.

    Each child gets floor(allocatable * w / sum(w)); what rounding leaves over stays
    in the reserve, so allocations + reserve == remaining exactly. ``share`` replaces
    the allocatable fraction (a build subgoal gets half, say)."""
    if not weights:
        raise BudgetError("no children to allocate to")
    exact = {k: Fraction(repr(float(w))) for k, w in weights.items()}
    if any(w < 0 for w in exact.values()):
        raise BudgetError("child weights must not be negative")
    if sum(exact.values()) == 0:
        exact = dict.fromkeys(exact, Fraction(1))
    cost = _shares(max(remaining.cost, 0), exact, share)
    time = _shares(max(remaining.time, 0), exact, share)
    allocations = {k: Amount(cost[k], time[k]) for k in sorted(exact)}
    reserve = Amount(max(remaining.cost, 0) - sum(cost.values()),
                     max(remaining.time, 0) - sum(time.values()))
    return Split(allocations, reserve)


def _shares(have: int, weights: Mapping[str, Fraction],
            share: Fraction | None = None) -> dict[str, int]:
    allocatable = have - int(have * RESERVE_FRACTION) if share is None else int(have * share)
    total_weight = sum(weights.values())
    return {k: int(allocatable * w / total_weight) for k, w in weights.items()}


class BudgetEnforcer:
    def __init__(self, run: Run) -> None:
        self.run = run
        self.store = run.store

    def allocate_root(self, goal_id: str, amount: Amount, description: str = "run budget") -> None:
        self._positive(amount)
        self.run.commit("budget/allocate_root", {
            "goal_id": goal_id, "cost": amount.cost, "time": amount.time,
            "event_id": self.run.new_id("budget"), "description": description,
        }, what=f"allocate the run budget to {goal_id}")

    def remaining(self, goal_id: str) -> Amount:
        row = self._state(goal_id)
        return Amount(int(row["cost_left"]), int(row["time_left"]))

    def allocate_children(self, parent_id: str, weights: Mapping[str, float],
                          share: Fraction | None = None) -> Split:
        """Give each child its share of the parent's remaining budget, in one commit."""
        plan = split(self.remaining(parent_id), weights, share)
        rows = [{"child_id": cid, "cost": a.cost, "time": a.time, "weight": float(weights[cid]),
                 "event_id": self.run.new_id("budget", cid)} for cid, a in plan.allocations.items()]
        self.run.commit("budget/allocate_children", {
            "goal_id": parent_id, "rows": rows, "child_ids": [r["child_id"] for r in rows],
            "total_cost": sum(a.cost for a in plan.allocations.values()),
            "total_time": sum(a.time for a in plan.allocations.values()),
        }, what=f"allocate {parent_id}'s budget to its children", consumes=False)
        return plan

    def grants_to_children(self, parent_id: str, remaining: Amount,
                           weights: Mapping[str, float]) -> ChildGrants:
        """``allocate_children`` for a commit that creates the children it grants to (a
        fresh decomposition): the same split of the parent's ``remaining`` budget (as
        ``remaining`` gave it), as the rows that commit stores. What the parent must hold
        includes the plain calls that commit pays for it."""
        plan = split(remaining, weights)
        chain = self._waiting(parent_id) or []
        rows = [{"child_id": cid, "cost": a.cost, "time": a.time, "weight": float(weights[cid]),
                 "event_id": self.run.riding_id("budget", salt=cid)}
                for cid, a in plan.allocations.items()]
        cost = sum(a.cost for a in plan.allocations.values())
        time = sum(a.time for a in plan.allocations.values())
        return ChildGrants(rows, {"cost": cost, "time": time,
                                  "need_cost": cost + sum(c["cost"] for c in chain),
                                  "need_time": time + sum(c["time"] for c in chain)})

    def pre_check(self, goal_id: str, estimate: Amount) -> PreCheck:
        """ALLOWED if the goal can pay, drawing the shortfall from the goals above it
        (its parent first, then each level further up, as recorded grants down the
        chain) when together they have it; otherwise DENIED (the caller escalates to
        HIRE), with what the goal and the goals above it hold as ``remaining``."""
        row = self._state(goal_id)
        left = Amount(int(row["cost_left"]), int(row["time_left"]))
        if left.covers(estimate):
            return PreCheck(Decision.ALLOWED, left)
        need = Amount(max(estimate.cost - left.cost, 0), max(estimate.time - left.time, 0))
        if row["parent_id"] is None:
            return PreCheck(Decision.DENIED, left)
        parent_left = Amount(int(row["parent_cost_left"]), int(row["parent_time_left"]))
        if parent_left.covers(need):
            self._transfer(goal_id, need, "pre-check shortfall drawn from parent")
            return PreCheck(Decision.ALLOWED, total([left, need]), need)
        above = [(str(r["id"]), Amount(max(int(r["cost_left"]), 0), max(int(r["time_left"]), 0)))
                 for r in self.store.run("budget/ancestors", {"goal_id": goal_id})]
        held = total([a for _, a in above])
        if not held.covers(need):
            return PreCheck(Decision.DENIED, total([left, held]))
        for child_id, amount in reversed(_draws(goal_id, above, need)):
            self._transfer(child_id, amount, "pre-check shortfall drawn from above")
        return PreCheck(Decision.ALLOWED, total([left, need]), need)

    def covers(self, goal_id: str, estimate: Amount) -> bool:
        """Whether the goal's own budget pays ``estimate`` as it stands (reads only: a call
        started ahead of its turn; a draw on the goals above is left to the turn)."""
        waiting = self._waiting(goal_id)
        if waiting is None:
            return False
        view = self._view(goal_id)
        return Amount(int(view["cost_left"]) - sum(c["cost"] for c in waiting),
                      int(view["time_left"]) - sum(c["time"] for c in waiting)).covers(estimate)

    def _transfer(self, goal_id: str, amount: Amount, description: str) -> None:
        self.run.commit("budget/transfer", {
            "goal_id": goal_id, "cost": amount.cost, "time": amount.time,
            "event_id": self.run.new_id("budget"), "description": description,
        }, what=f"grant {goal_id} its shortfall", consumes=False)

    def tree_holdings(self, goal_id: str) -> dict[str, Amount]:
        """What the goal's tree holds, for a question asking a person for more: with the
        goal and the goals above it (what it could draw on), and with the other live
        goals (each kept for its own work)."""
        goal = self._view(goal_id)["goal"]
        above = {str(r["id"]) for r in self.store.run("budget/ancestors", {"goal_id": goal_id})}
        mine: list[Amount] = []
        others: list[Amount] = []
        for r in self.store.run("budget/tree_left", {"root_id": goal["root_id"]}):
            amount = Amount(max(int(r["cost_left"]), 0), max(int(r["time_left"]), 0))
            (mine if r["id"] in above | {goal_id} else others).append(amount)
        return {"reachable": total(mine), "elsewhere": total(others)}

    def record(self, goal_id: str, spent: Amount, resolver_id: str, operation: str,
               attempt_id: str | None = None, output_artifact_id: str | None = None,
               proposal: str | None = None, replayed: bool = True) -> None:
        """Record a call's actual cost, with the attempt (and output) it paid for.

        The spend is stored by the run's next commit: the step's commit on this goal
        carries it (one statement), anything else stores it first (see ``Run.commit``).
        An overrun beyond what the goal has is drawn from its parent
        when the parent can cover it; otherwise the goal is marked over budget.

        ``proposal`` (the ledger hash of what was paid for) makes the spend idempotent:
        a proposal served again after a crash (``replayed``) is not paid for twice; one
        just obtained cannot have been paid for yet, so that check is skipped. A spend that records
        an attempt's output consumes the proposals behind it: a step resumed after it goes
        straight on from the stored output and never asks for them again."""
        self._non_negative(spent)
        earlier = self._waiting(goal_id)
        if earlier is None:
            self.run.store_spend()  # it cannot wait for this one's commit
        if proposal is not None and replayed and self.store.run("budget/spend_for_proposal",
                                                   {"proposal": proposal}):
            return
        params = {
            "goal_id": goal_id, "cost": spent.cost, "time": spent.time,
            "resolver_id": resolver_id, "operation": operation, "attempt_id": attempt_id,
            "output_artifact_id": output_artifact_id, "proposal": proposal,
        }
        if earlier:
            params["earlier"] = earlier
        self.run.step.pending_spend = {"goal_id": goal_id, "params": params,
                                  "what": f"record a spend on {goal_id}",
                                  "consumes": output_artifact_id is not None}

    def _waiting(self, goal_id: str) -> list[dict[str, Any]] | None:
        """The plain calls already paid on ``goal_id`` and not stored yet, which can ride
        with its next spend ([] when there are none); None when the pending spend must be
        stored first: it is another goal's, pays for an attempt or an output, or the
        goal's remaining budget might not cover it (only a commit's last spend may
        overrun, so the parent's grant stays the store's decision)."""
        pending = self.run.step.pending_spend
        if pending is None:
            return []
        params = pending["params"]
        chain = [*params.get("earlier", []),
                 {k: v for k, v in params.items() if k != "earlier"}]
        if pending["goal_id"] != goal_id or not all(plain_call(c) for c in chain):
            return None
        view = self._view(goal_id)
        if sum(c["cost"] for c in chain) > int(view["cost_left"]) or \
                sum(c["time"] for c in chain) > int(view["time_left"]):
            return None
        return chain

    def refund(self, goal_id: str, amount: Amount, description: str) -> None:
        self._non_negative(amount)
        self.run.commit("budget/refund", {
            "goal_id": goal_id, "cost": amount.cost, "time": amount.time,
            "event_id": self.run.new_id("budget"), "description": description,
        }, what=f"refund {goal_id}")

    def ledger_totals(self, goal_id: str) -> dict[str, int]:
        """Totals derived from the events alone, beside the caches (for audits and tests)."""
        return self.store.run("budget/ledger_totals", {"goal_id": goal_id})[0]

    def _state(self, goal_id: str) -> dict[str, Any]:
        """The goal's budget as every spend made before it leaves it: plain calls that
        wait to ride its next spend are counted here (see ``_waiting``); any other
        pending spend is stored first."""
        waiting = self._waiting(goal_id)
        if waiting is None:
            self.run.store_spend()
            waiting = []
        view = self._view(goal_id)
        view["cost_left"] = int(view["cost_left"]) - sum(c["cost"] for c in waiting)
        view["time_left"] = int(view["time_left"]) - sum(c["time"] for c in waiting)
        return view

    def _view(self, goal_id: str) -> dict[str, Any]:
        rows = self.store.run("goal/get", {"goal_id": goal_id})  # the step's read of its goal
        if not rows:
            raise BudgetError(f"no goal {goal_id!r}")
        return dict(rows[0]["view"])

    @staticmethod
    def _positive(amount: Amount) -> None:
        if amount.cost <= 0 and amount.time <= 0:
            raise BudgetError("a budget needs a positive cost or time")
        BudgetEnforcer._non_negative(amount)

    @staticmethod
    def _non_negative(amount: Amount) -> None:
        if amount.cost < 0 or amount.time < 0:
            raise BudgetError(f"amounts must not be negative: {amount}")


def _draws(goal_id: str, above: Sequence[tuple[str, Amount]],
           need: Amount) -> list[tuple[str, Amount]]:
    """The grants that bring ``need`` down to ``goal_id`` from the goals ``above`` it
    (nearest first, each with what it holds), as (receiving goal, amount), lowest first:
    each level passes on what the levels below it cannot cover, so the nearest pay first."""
    draws: list[tuple[str, Amount]] = []
    receiver, below = goal_id, Amount(0, 0)
    for giver, held in above:
        amount = Amount(max(need.cost - below.cost, 0), max(need.time - below.time, 0))
        if amount.cost == 0 and amount.time == 0:
            break
        draws.append((receiver, amount))
        receiver, below = giver, total([below, held])
    return draws


def total(amounts: Sequence[Amount]) -> Amount:
    return Amount(sum(a.cost for a in amounts), sum(a.time for a in amounts))
