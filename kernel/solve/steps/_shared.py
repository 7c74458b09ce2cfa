"""What the step handlers share: how a request is built, the constraints of a role, and
whom a resolved goal wakes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kernel.core.envelopes import Constraint, ConstraintSpec, Provenance
from kernel.core.goal_node import GoalNode
from kernel.core.state_machine import Status
from kernel.protocol import Operation, ResolveRequest
from kernel.protocol.resolver_ids import CODEX_ID, SELF_MODEL_ID
from kernel.protocol.solve_models import ProposedConstraint
from kernel.repositories import goals
from kernel.runtime.gate import CLAUDE_ID
from kernel.solve.checkable import proposed_spec
from kernel.store import GraphStore

S = Status
DEFAULT_CAPABILITY = "generate_code"
SELF_MODEL = SELF_MODEL_ID
# Registered, but never offered to resolve a goal: the self-model answers the kernel's
# questions about itself, and codex-tools-0 runs the kernel's verification commands (it
# writes no output of its own, so a goal "resolved" by it would be the model's text).
NOT_RESOLVERS = frozenset({SELF_MODEL, CODEX_ID})


def request_for(goal: GoalNode, operation: Operation[Any],
             constraints: list[Constraint] | None = None, context: str = "", *,
             feedback: dict[str, Any] | None = None, input_artifact_ids: list[str] | None = None,
             **payload: Any) -> ResolveRequest:
    """A request about ``goal``: its description and summary, and ``payload`` as the
    operation's inputs (``feedback`` is every prompt's own, never a payload key)."""
    return operation.request(goal.id, goal_description=goal.description,
                             constraints=constraints or [], context=context, feedback=feedback,
                             input_artifact_ids=input_artifact_ids or [],
                             payload={"goal_summary": goal.summary, **payload})


def settled_specs(proposed: Iterable[ProposedConstraint]) -> tuple[list[ConstraintSpec],
                                                                   list[str]]:
    """A model's proposed constraints as stored (settled by the checker language), and a
    note for each one re-typed from logic to semantic."""
    specs, notes = [], []
    for c in proposed:
        spec, note = proposed_spec(c, Provenance(source="resolver", resolver_id=CLAUDE_ID))
        if note:
            notes.append(note)
        specs.append(spec)
    return specs, notes


def by_id_or_title(constraints: list[Constraint], names: list[str]) -> set[str]:
    """Constraint ids a proposal names, by id or by exact title (scripts cannot know ids)."""
    by_title = {c.title: c.id for c in constraints}
    ids = {c.id for c in constraints}
    return {n if n in ids else by_title[n] for n in names if n in ids or n in by_title}


def wake_dependents(store: GraphStore, goal: GoalNode) -> list[str]:
    """The goals to step once ``goal`` resolves: dependents with nothing else to wait
    for, in creation order, then the parent if no other part keeps it waiting."""
    row = goals.wakes(store, goal.id)
    woken = [goal_id for _, goal_id in sorted(r for r in row["ready"] if r is not None)]
    if row["parent_id"] is not None and (row["parent_waits_on"] == 0 or goal.purpose == "build"):
        woken.append(row["parent_id"])
    return woken


def wake_parent(goal: GoalNode) -> list[str]:
    """The goals to step once ``goal`` is refused: its parent, if it has one."""
    return [goal.parent_id] if goal.parent_id else []
