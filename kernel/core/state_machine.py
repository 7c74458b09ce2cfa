"""The node state machine (axiom B5: the operation sequence is non-negotiable).

The design's transitions are listed first. Three small groups extend them, each
because the design's own dispatch needs it (see docs/state-machine.md):
resumption from ``pending`` into the state ``next_action`` names, composite
resolution of a decomposed node once its children are resolved, and refusal
(``infeasible``) from any budget-gated step. Reopening (backtracking) and
invalidation are separate, explicitly named operations.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Status(StrEnum):
    PENDING = "pending"
    IDENTIFYING_CONSTRAINTS = "identifying_constraints"
    SELECTING_CONSTRAINTS = "selecting_constraints"
    SELECTING_RESOLVER = "selecting_resolver"
    RESOLVING = "resolving"
    VERIFYING = "verifying"
    DECOMPOSING = "decomposing"
    GATED = "gated"
    RESOLVED = "resolved"
    INFEASIBLE = "infeasible"


class Action(StrEnum):
    WAIT = "WAIT"
    IDENTIFY_CONSTRAINTS = "IDENTIFY_CONSTRAINTS"
    SELECT_CONSTRAINTS = "SELECT_CONSTRAINTS"
    SELECT_RESOLVER = "SELECT_RESOLVER"
    RESOLVE = "RESOLVE"
    VERIFY = "VERIFY"
    DECOMPOSE = "DECOMPOSE"


S = Status

SPEC_TRANSITIONS: frozenset[tuple[Status, Status]] = frozenset({
    (S.PENDING, S.IDENTIFYING_CONSTRAINTS),
    (S.IDENTIFYING_CONSTRAINTS, S.SELECTING_CONSTRAINTS),
    (S.SELECTING_CONSTRAINTS, S.SELECTING_RESOLVER),
    (S.SELECTING_RESOLVER, S.RESOLVING),
    (S.RESOLVING, S.VERIFYING),
    (S.VERIFYING, S.DECOMPOSING),          # SAT, not a leaf
    (S.VERIFYING, S.RESOLVED),             # SAT, leaf
    (S.VERIFYING, S.GATED),                # SAT, not a leaf, sigma_path < tau_global
    (S.VERIFYING, S.SELECTING_RESOLVER),   # UNSAT, retry with another resolver
    (S.VERIFYING, S.RESOLVING),            # UNSAT, retry with feedback
    (S.VERIFYING, S.PENDING),              # BUILD subgoal created; waits on it
    (S.SELECTING_RESOLVER, S.INFEASIBLE),  # BUILD and HIRE failed
    (S.DECOMPOSING, S.PENDING),            # children created; waits on them
    (S.GATED, S.PENDING),                  # ancestor reopened
})

# next_action(pending) names these actions for a node that already holds the
# matching step outputs (a resumed run, a node back from waiting on a build).
RESUME_TRANSITIONS: frozenset[tuple[Status, Status]] = frozenset({
    (S.PENDING, S.SELECTING_CONSTRAINTS),
    (S.PENDING, S.SELECTING_RESOLVER),
    (S.PENDING, S.RESOLVING),
    (S.PENDING, S.VERIFYING),
})

# Growth from resolver selection: no registered tool provides what the goal needs, so
# the goal waits on a build subgoal or a HIRE answer (the design's VERIFYING -> PENDING,
# reached when selection finds no candidate at all rather than after a failed TRY).
GROW_TRANSITIONS: frozenset[tuple[Status, Status]] = frozenset({
    (S.SELECTING_RESOLVER, S.PENDING),
})

# A decomposed node waits in pending; it is resolved when all its children are.
COMPOSITE_TRANSITIONS: frozenset[tuple[Status, Status]] = frozenset({(S.PENDING, S.RESOLVED)})

# Refusal: a HIRE that is declined, or a budget that cannot be met, ends the node
# wherever the budget-gated call was (the design's escalate_to_hire sets infeasible).
REFUSAL_TRANSITIONS: frozenset[tuple[Status, Status]] = frozenset(
    (s, S.INFEASIBLE) for s in (S.PENDING, S.IDENTIFYING_CONSTRAINTS, S.SELECTING_CONSTRAINTS,
                                S.RESOLVING, S.VERIFYING, S.DECOMPOSING)
)

TRANSITIONS: frozenset[tuple[Status, Status]] = (
    SPEC_TRANSITIONS | RESUME_TRANSITIONS | GROW_TRANSITIONS | COMPOSITE_TRANSITIONS
    | REFUSAL_TRANSITIONS
)

# Backtracking reopens a node into constraint or resolver selection.
REOPEN_FROM: frozenset[Status] = frozenset(
    {S.PENDING, S.DECOMPOSING, S.GATED, S.RESOLVED, S.VERIFYING})
REOPEN_TO: frozenset[Status] = frozenset({S.SELECTING_CONSTRAINTS, S.SELECTING_RESOLVER})

TERMINAL: frozenset[Status] = frozenset({S.RESOLVED, S.INFEASIBLE})


class InvalidTransitionError(Exception):
    """Raised before anything is written: the graph keeps its state."""


def check_transition(current: Status, target: Status) -> None:
    if (current, target) not in TRANSITIONS:
        raise InvalidTransitionError(f"{current} -> {target} is not a valid transition")


def check_reopen(current: Status, target: Status) -> None:
    if current not in REOPEN_FROM or target not in REOPEN_TO:
        raise InvalidTransitionError(f"cannot reopen a {current} node into {target}")


@dataclass(frozen=True)
class NodeView:
    """What next_action needs to know about a node."""

    status: Status
    has_unresolved_dependencies: bool = False
    has_eligible: bool = False
    has_selected: bool = False
    has_plan: bool = False
    has_output: bool = False


_BY_STATUS = {
    S.IDENTIFYING_CONSTRAINTS: Action.IDENTIFY_CONSTRAINTS,
    S.SELECTING_CONSTRAINTS: Action.SELECT_CONSTRAINTS,
    S.SELECTING_RESOLVER: Action.SELECT_RESOLVER,
    S.RESOLVING: Action.RESOLVE,
    S.VERIFYING: Action.VERIFY,
    S.DECOMPOSING: Action.DECOMPOSE,
}


def next_action(node: NodeView) -> Action:
    """The design's deterministic next_action."""
    if node.status == S.PENDING:
        if node.has_unresolved_dependencies:
            return Action.WAIT
        if not node.has_eligible:
            return Action.IDENTIFY_CONSTRAINTS
        if not node.has_selected:
            return Action.SELECT_CONSTRAINTS
        if not node.has_plan:
            return Action.SELECT_RESOLVER
        if not node.has_output:
            return Action.RESOLVE
        return Action.VERIFY
    return _BY_STATUS.get(node.status, Action.WAIT)


ACTION_STATE = {
    Action.IDENTIFY_CONSTRAINTS: S.IDENTIFYING_CONSTRAINTS,
    Action.SELECT_CONSTRAINTS: S.SELECTING_CONSTRAINTS,
    Action.SELECT_RESOLVER: S.SELECTING_RESOLVER,
    Action.RESOLVE: S.RESOLVING,
    Action.VERIFY: S.VERIFYING,
    Action.DECOMPOSE: S.DECOMPOSING,
}
