"""What a SOLVE step is given: one frozen move per step, naming its goal and what the
step before handed on.

A step never calls another. It returns either the goals to queue (``list[str]``, ids in
the order they run) or the move that starts the next step on the same goal within the
same turn; the table in ``kernel.solve.steps`` maps each move to its step, and a step's
return annotation names the moves it can make, so the loop's graph is read from the
code (``docs/solve-loop.md`` is generated from it).

>>> from kernel.solve.steps import BY_MOVE
>>> [t.__name__ if t else "queue" for t in BY_MOVE[Verify].goes_to()]
['Leaf', 'Retry']
>>> [t.__name__ if t else "queue" for t in BY_MOVE[Leaf].goes_to()]
['queue', 'Gate']
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from kernel.core.envelopes import Verification
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.state_machine import Status
from kernel.protocol.coverage import Coverage
from kernel.protocol.solve_models import Decomposition


@dataclass(frozen=True)
class Move:
    """A step to take on ``goal``; subclasses add what the previous step hands on."""

    goal: GoalNode

    def as_committed(self, goal: GoalNode) -> Move:
        """The move on ``goal`` as the step before left it committed."""
        return replace(self, goal=goal)


@dataclass(frozen=True)
class Intake(Move):
    """Step 1 on a root whose intake is open."""


@dataclass(frozen=True)
class Identify(Move):
    """Step 2."""


@dataclass(frozen=True)
class SelectConstraints(Move):
    """Step 3."""


@dataclass(frozen=True)
class SelectResolver(Move):
    """Step 4."""


@dataclass(frozen=True)
class Resolve(Move):
    """Step 5."""


@dataclass(frozen=True)
class Verify(Move):
    """Step 6."""


@dataclass(frozen=True)
class Leaf(Move):
    """Step 7, with the goal's path confidence after its verification."""

    sigma_path: float


@dataclass(frozen=True)
class Decompose(Move):
    """Step 8."""


@dataclass(frozen=True)
class MakeChildren(Move):
    """Step 8, once the decomposition is settled: ``plan``, its ``round`` and who
    answers for each of the goal's constraints (``covered``)."""

    plan: Decomposition = field(hash=False)
    round: int
    covered: Coverage = field(hash=False)


@dataclass(frozen=True)
class Compose(Move):
    """A decomposed goal whose children have all resolved."""


@dataclass(frozen=True)
class Gate(Move):
    """The gate before decomposition, with the path confidence it compares."""

    sigma_path: float


@dataclass(frozen=True)
class Retry(Move):
    """Step 9, with the verification that failed."""

    verification: Verification

    def as_committed(self, goal: GoalNode) -> Move:
        """The move on ``goal`` and the verification recorded on it."""
        return replace(self, goal=goal, verification=goal.verification or self.verification)


@dataclass(frozen=True)
class Grow(Move):
    """Step 10: TRY exhausted (``changes`` ride the goal's move), or no registered tool
    provides ``missing``."""

    changes: GoalChanges | None = None
    missing: str | None = None


@dataclass(frozen=True)
class BuildDone(Move):
    """Step 10 again: the goal waited on its build subgoal, which has moved on."""


@dataclass(frozen=True)
class Hire(Move):
    """Step 11: park the goal on the request for ``gap`` (moving it to ``to``)."""

    gap: dict[str, Any] = field(hash=False)
    reason: str
    to: Status
    changes: GoalChanges | None = None
    supersede: bool = False


@dataclass(frozen=True)
class HireAnswered(Move):
    """Step 11 again: the goal is parked on a request that may have its answer."""


@dataclass(frozen=True)
class Consistency(Move):
    """Step 12 on the root once every part has resolved."""


@dataclass(frozen=True)
class Assemble(Move):
    """Step 13 on a consistent root."""
