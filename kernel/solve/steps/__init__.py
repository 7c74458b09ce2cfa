"""The SOLVE loop's steps, one module each, and the table from step number to handler.

Every handler is safe to run again after a crash: proposals already recorded are served
from the ledger, spends are idempotent per proposal, an open attempt is continued, and
children of an unfinished decomposition are found by their key. ``docs/solve-loop.md``
lists the same table; a test keeps the two in step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kernel.solve.steps import (
    assemble,
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


@dataclass(frozen=True)
class Step:
    """A step of the loop as the design numbers it, and the function that runs it."""

    number: str
    name: str
    handler: Callable[..., Any]


STEPS: tuple[Step, ...] = (
    Step("1", "intake", intake.intake),
    Step("2", "identify constraints", identify.identify),
    Step("3", "select constraints", select_constraints.select_constraints),
    Step("4", "select resolver", select_resolver.select_resolver),
    Step("5", "resolve", resolve.resolve),
    Step("6", "verify", verify.verify),
    Step("7", "leaf", leaf.classify),
    Step("8", "decompose", decompose.decompose),
    Step("parts", "composite resolution", compose.compose),
    Step("gate", "gate and backtrack", gate.gate),
    Step("9", "retry", retry.retry),
    Step("10", "BUILD", grow.grow),
    Step("11", "HIRE", hire.hire),
    Step("12", "global consistency", consistency.check),
    Step("13", "assemble", assemble.assemble),
)

__all__ = ["STEPS", "Step"]
