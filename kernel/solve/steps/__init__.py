"""The SOLVE loop's steps, one module each, and the one table that runs them.

A step takes the move that names its goal and carries what the step before handed on;
what follows it is the goals to queue, or the move that starts the next step on the same
goal in the same turn. Every step is an effect producer, ``(view, move) ->
Effects[<what follows>]``: it reads through a read-only view, yields its requests and
returns its changes (``kernel.solve.effects``); the loop performs them
(``kernel.solve.perform``). Steps never call or import each other: ``take`` follows the moves
through ``STEPS``, and the edges of the loop are read from each step's return
annotation. ``docs/solve-loop.md``'s table is rendered from the same table
(``python -m kernel.solve.steps``; a test keeps them equal).

Every step is safe to run again after a crash: proposals already recorded are served
from the ledger, spends are idempotent per proposal, an open attempt is continued, and
children of an unfinished decomposition are found by their key.
"""

from __future__ import annotations

import collections.abc
import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from kernel.core.state_machine import Status
from kernel.runtime.kernel import Kernel
from kernel.solve import moves
from kernel.solve.effects import Done, Effects, asking_nothing
from kernel.solve.perform import drive
from kernel.solve.steps import (
    assemble,
    children,
    compose,
    consistency,
    decompose,
    gate,
    grow,
    hire,
    identify,
    intake,
    leaf,
    resolve,
    retry,
    select_constraints,
    select_resolver,
    verify,
)
from kernel.solve.view import KernelView, StepView

M = TypeVar("M", bound=moves.Move)
Next = list[str] | moves.Move


@dataclass(frozen=True)
class Step(Generic[M]):
    """A step of the loop as the design numbers it, the move that starts it and the
    function that takes it."""

    number: str
    name: str
    move: type[M]
    run: Callable[[StepView, M], Effects[Next] | Done[Next]]
    # The state the step works in: a goal resuming from pending enters it before the
    # step runs (``GoalTree.enter``: it rides the step's commit).
    enters: Status | None = None

    def body(self, view: StepView, move: M) -> Effects[Next]:
        """The step's body for ``move``, reading through ``view``: what it yields and
        returns, for the loop to perform."""
        body = self.run(view, move)
        return asking_nothing(body) if isinstance(body, Done) else body

    def goes_to(self) -> tuple[type[moves.Move] | None, ...]:
        """The moves this step can make, from its return annotation (None: the queue)."""
        hints = typing.get_type_hints(self.run)["return"]
        if typing.get_origin(hints) is collections.abc.Generator:
            hints = typing.get_args(hints)[2]  # Effects[X] is Generator[..., Done[X]]
        if typing.get_origin(hints) is Done:
            hints = typing.get_args(hints)[0]
        options = typing.get_args(hints) if isinstance(hints, types.UnionType) else (hints,)
        return tuple(None if typing.get_origin(o) is list else o for o in options)


STEPS: tuple[Step[Any], ...] = (
    Step("1", "intake", moves.Intake, intake.intake),
    Step("2", "identify constraints", moves.Identify, identify.identify,
         enters=Status.IDENTIFYING_CONSTRAINTS),
    Step("3", "select constraints", moves.SelectConstraints, select_constraints.select_constraints,
         enters=Status.SELECTING_CONSTRAINTS),
    Step("4", "select resolver", moves.SelectResolver, select_resolver.select_resolver,
         enters=Status.SELECTING_RESOLVER),
    Step("5", "resolve", moves.Resolve, resolve.resolve, enters=Status.RESOLVING),
    Step("6", "verify", moves.Verify, verify.verify),
    Step("7", "leaf", moves.Leaf, leaf.classify),
    Step("8", "decompose", moves.Decompose, decompose.decompose),
    Step("8", "make children", moves.MakeChildren, children.make_children),
    Step("parts", "composite resolution", moves.Compose, compose.compose),
    Step("gate", "gate and backtrack", moves.Gate, gate.gate),
    Step("9", "retry", moves.Retry, retry.retry),
    Step("10", "BUILD", moves.Grow, grow.grow),
    Step("10", "BUILD finished", moves.BuildDone, grow.on_build_done),
    Step("11", "HIRE", moves.Hire, hire.hire),
    Step("11", "HIRE answered", moves.HireAnswered, hire.on_answer),
    Step("12", "global consistency", moves.Consistency, consistency.check),
    Step("13", "assemble", moves.Assemble, assemble.assemble),
)
BY_MOVE: dict[type[moves.Move], Step[Any]] = {s.move: s for s in STEPS}


def take(k: Kernel, move: moves.Move) -> list[str]:
    """Take ``move`` and every move it leads to on the same turn, each step's requests
    and changes performed by the loop; the goals to queue."""
    view = KernelView(k)
    while True:
        step = BY_MOVE[type(move)]
        if step.enters is not None and k.tree.get(move.goal.id).status == Status.PENDING:
            k.tree.enter(move.goal.id, step.enters)
        result = drive(k, step.body(view, move))
        if isinstance(result, list):
            return result
        move = result


def _label(target: type[moves.Move] | None) -> str:
    if target is None:
        return "queue"
    step = BY_MOVE[target]
    return f"{step.number} {step.name}" if step.number.isdigit() else step.name


def table() -> str:
    """The step table of ``docs/solve-loop.md``, rendered from ``STEPS``."""
    rows = ["| step | where | goes to | what is deterministic code, what is a proposal |",
            "|---|---|---|---|"]
    for step in STEPS:
        module = step.run.__module__.rsplit(".", 1)[-1]
        what = " ".join((inspect.getdoc(step.run) or "").split())
        goes = ", ".join(_label(t) for t in step.goes_to())
        rows.append(f"| {_label(step.move)} | `steps/{module}.py`: `{step.run.__name__}` "
                    f"| {goes} | {what} |")
    return "\n".join(rows) + "\n"


__all__ = ["BY_MOVE", "STEPS", "Step", "table", "take"]
