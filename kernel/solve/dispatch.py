"""The dispatch loop: pop a goal, ask next_action, run its step, enqueue what it wakes.

The queue is part of the run's committed state (see ``Run.begin_step``): a resumed run
takes it from the graph and steps its goals in the order the uninterrupted run would
have, so every proposal recorded before a crash is asked for again by the goal it
belongs to, and a replay follows the same order. A run that never stored a queue starts
from its live, unfinished goals in creation order. Blocked goals are dropped from the
queue and woken again when what they wait on resolves. A hard wall-time cap stops the
run with a refusal.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass, replace

from kernel.core.constraints import ConstraintEngine
from kernel.core.goal_node import GoalNode
from kernel.core.goals import GoalTree
from kernel.core.run import advance
from kernel.core.state_machine import TERMINAL, Action, Status
from kernel.errors import KernelError
from kernel.proposals import Proposals, ProposerUnavailable
from kernel.protocol import DeadlineReached, EnvironmentFault, NoProposalError, PermanentError
from kernel.refusal import RefusalReason, refuse
from kernel.repositories import goals, requests
from kernel.runtime import progress
from kernel.runtime.gate import BudgetDenied
from kernel.runtime.kernel import Kernel
from kernel.solve import moves
from kernel.solve.capability_requests import budget_gap
from kernel.solve.causes import first_cause
from kernel.solve.lookahead import look_ahead
from kernel.solve.steps import take
from kernel.store import GraphStore

S = Status
# The move that starts a goal's turn, by what ``next_action`` says it needs.
FIRST_MOVE: dict[Action, type[moves.Move]] = {
    Action.IDENTIFY_CONSTRAINTS: moves.Identify,
    Action.SELECT_CONSTRAINTS: moves.SelectConstraints,
    Action.SELECT_RESOLVER: moves.SelectResolver,
    Action.RESOLVE: moves.Resolve,
    Action.VERIFY: moves.Verify,
    Action.DECOMPOSE: moves.Decompose,
}


@dataclass(frozen=True)
class Outcome:
    run_id: str
    root_id: str
    status: str
    sigma_system: float | None
    steps: int
    stopped: str | None = None
    waiting_on: tuple[str, ...] = ()  # capability requests a human has yet to answer
    # Calls started ahead of their turn (--concurrency), and those their turn did not
    # use, with what the unused ones cost: money spent outside the run's budget.
    calls_ahead: int = 0
    calls_unused: int = 0
    unused_cost_usd: float = 0.0


def solve(k: Kernel, root_id: str, on_step: Callable[[str], None] | None = None, *,
          stop_after_intake: bool = False) -> Outcome:
    """Run until nothing is left to do; ``on_step`` sees each goal after its step.
    ``stop_after_intake`` (``kernel intake``): stop once the root's goal is confirmed."""
    stored = k.run.queue
    queue: list[str] = list(stored) if stored is not None else \
        goals.unfinished(k.store, k.run.run_id)
    # Goals parked on a person left the queue; the answer may have come since.
    queue = advance(queue, [r["id"] for r in requests.parked(k.store, k.run.run_id)])
    try:
        with k.store.read_cache():
            outcome = _drive(k, root_id, queue, on_step, stop_after_intake)
    except BaseException:
        k.calls.close(wait_for_calls=False)
        with contextlib.suppress(KernelError):  # what went wrong is the error to show
            k.run.flush()
        raise
    k.calls.close()
    k.run.flush()
    unused = k.calls.unused
    return replace(outcome, calls_ahead=k.calls.asked_ahead, calls_unused=len(unused),
                   unused_cost_usd=round(sum(u.cost_usd for u in unused), 6))


def _drive(k: Kernel, root_id: str, queue: list[str], on_step: Callable[[str], None] | None,
           stop_after_intake: bool) -> Outcome:
    count = 0
    while queue:
        if _wall_time_up(k.proposals, k.elapsed, k.config.max_wall_seconds):
            if k.proposals.original_went_on():
                continue
            return _capped(k, root_id, count)
        goal_id = queue[0]
        look_ahead(k, queue, functools.partial(first_move, k.tree))
        k.run.begin_step(queue)
        try:
            queue = advance(queue[1:], _step(k, goal_id))
        except DeadlineReached:  # mid-step, in a sandbox: that step runs again on resume
            k.run.end_step(queue)
            if k.proposals.original_went_on():
                continue
            return _capped(k, root_id, count)
        except ProposerUnavailable as exc:  # the goal stays first in the queue
            k.run.end_step(queue)
            if k.proposals.original_went_on():
                continue
            return _outcome(k.tree, root_id, count, stopped=f"model unavailable: {exc}")
        except EnvironmentFault as exc:  # the same: the machine, not the goal, is at fault
            k.run.end_step(queue)
            return _outcome(k.tree, root_id, count, stopped=str(exc))
        k.run.end_step(queue)
        k.calls.stepped(goal_id)
        count += 1
        if on_step is not None:
            on_step(goal_id)
        if stop_after_intake and goal_id == root_id and k.tree.get(root_id).intake == "done":
            return _outcome(k.tree, root_id, count, stopped="intake confirmed")
    return _outcome(k.tree, root_id, count)


def _wall_time_up(proposals: Proposals, elapsed: Callable[[], float], cap: float) -> bool:
    """The clock decides a live run's cap; a replay stops where its original did."""
    if proposals.replaying:
        return proposals.replayed_stop()
    return elapsed() > cap


def _capped(k: Kernel, root_id: str, count: int) -> Outcome:
    """Stop at the wall-time cap, refused with the remedy (a replay copied the refusal)."""
    if not k.proposals.replaying:
        refuse(k.ledger, root_id, RefusalReason.WALL_TIME_EXCEEDED,
               f"stopped after {count} steps", cap_seconds=k.config.max_wall_seconds)
    return _outcome(k.tree, root_id, count, stopped="wall-time cap")


def _step(k: Kernel, goal_id: str) -> list[str]:
    try:
        return _run_step(k, goal_id)
    except BudgetDenied as denied:
        return escalate(k, denied)


def escalate(k: Kernel, denied: BudgetDenied) -> list[str]:
    """A budget denial, wherever in a step it happens, escalates to HIRE: a human may add
    budget (or decline)."""
    goal = k.tree.get(denied.goal_id)
    gap = budget_gap(goal, denied.operation, denied.estimate, denied.remaining,
                     k.budget.tree_holdings(goal.id))
    k.log.flow(goal.id, f"{denied.operation}: budget pre-check denied; escalating to HIRE")
    return take(k, moves.Hire(goal, gap, "over_budget", goal.status))


@dataclass(frozen=True)
class Turn:
    """The move a goal's turn starts with; ``name`` (INTAKE, or the action) when the turn
    is shown as a step and a missing or unusable proposal refuses the goal."""

    move: moves.Move
    name: str | None = None
    attempt: int | None = None


@dataclass(frozen=True)
class Blocked:
    """A decomposed goal whose infeasible children leave it nothing to wait for."""

    children: tuple[str, ...]


def opening(tree: GoalTree, goal: GoalNode) -> Turn | Blocked | None:
    """How the goal's turn starts, from the graph as committed (reads only): None when
    it has nothing to do."""
    status = goal.status
    if status in TERMINAL or status == S.GATED or goal.stale:
        return None
    if goal.intake == "open":  # step 1 first, parked on the person or not
        return Turn(moves.Intake(goal), "INTAKE")
    if goal.awaiting:  # a build subgoal or a HIRE answer
        if goal.awaiting.startswith("capreq:"):
            return Turn(moves.HireAnswered(goal))
        return Turn(moves.BuildDone(goal))
    if status == S.PENDING and goal.decompositions > 0:
        return _waiting_on_children(tree.store, goal)
    action = tree.next_action(goal.id)
    if action == Action.WAIT:
        return None
    attempt = goal.attempt_count + (action == Action.RESOLVE) \
        if action in (Action.RESOLVE, Action.VERIFY) else None
    return Turn(FIRST_MOVE[action](goal), action.value, attempt)


def first_move(tree: GoalTree, goal: GoalNode) -> moves.Move | None:
    """The move the goal's turn starts with, if it has one to take ahead of its turn."""
    turn = opening(tree, goal)
    return turn.move if isinstance(turn, Turn) else None


def _run_step(k: Kernel, goal_id: str) -> list[str]:
    goal = k.tree.get(goal_id)
    turn = opening(k.tree, goal)
    if turn is None:
        return []
    if isinstance(turn, Blocked):
        return k.refuse_goal(goal, RefusalReason.SUBGOAL_INFEASIBLE,
                             f"children {list(turn.children)} are infeasible",
                             children=", ".join(turn.children))
    if turn.name is None:
        return take(k, turn.move)
    progress.report("step", turn.name.lower(), goal.id, goal.summary, turn.attempt)
    return _handled(k, goal, turn.name, turn.move)


def _handled(k: Kernel, goal: GoalNode, name: str, move: moves.Move) -> list[str]:
    """A turn whose proposals may be missing or unusable: the goal is refused, saying so,
    led by the failed check that sent it there when an attempt failed first."""
    try:
        return take(k, move)
    except NoProposalError as exc:
        return k.refuse_goal(goal, RefusalReason.NO_PROPOSALS,
                             _led_by_cause(k.tree, k.constraints, goal, str(exc)),
                             operation=exc.operation or name, goal=goal.summary)
    except PermanentError as exc:
        return k.refuse_goal(goal, RefusalReason.INVALID_PROPOSAL,
                             _led_by_cause(k.tree, k.constraints, goal, f"{name}: {exc}"),
                             operation=name, failure=exc.failure_mode)


def _led_by_cause(tree: GoalTree, constraints: ConstraintEngine, goal: GoalNode,
                  detail: str) -> str:
    """``detail``, after the first cause in the chain (an attempt's failed check)."""
    now = tree.get(goal.id)
    verification = now.verification
    if verification is None:
        return detail
    titles = {c.id: c.title for c in constraints.get_many(
        [c.constraint_id for c in verification.failed()])}
    cause = first_cause(now, titles)
    return detail if cause is None else f"{cause}; then {detail}"


def _waiting_on_children(store: GraphStore, goal: GoalNode) -> Turn | Blocked | None:
    children = goals.children(store, goal.id)
    statuses = {c["status"] for c in children}
    if children and statuses == {S.RESOLVED.value}:
        return Turn(moves.Compose(goal))
    if S.INFEASIBLE.value in statuses and not statuses - TERMINAL:
        return Blocked(tuple(c["id"] for c in children if c["status"] == S.INFEASIBLE.value))
    return None


def _outcome(tree: GoalTree, root_id: str, count: int, stopped: str | None = None) -> Outcome:
    root = tree.get(root_id)
    sigma = root.sigma_system if root.status == S.RESOLVED else None
    run_id = tree.run.run_id
    waiting = tuple(sorted({r["awaiting"] for r in requests.parked(tree.store, run_id)}))
    return Outcome(run_id, root_id, root.status.value, sigma, count, stopped, waiting)
