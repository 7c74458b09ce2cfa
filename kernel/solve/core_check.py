"""The core constraints checked together before anything is spent (Z3).

A goal's core constraints must be consistent (some assignment of the metrics meets all
the logic ones) and irreducible (none is implied by the others). Only logic constraints
with an arithmetic expression are decided here; prose and semantic constraints cannot
contradict by arithmetic and are left to verification. Metrics are unconstrained reals:
``cost_usd <= -1`` alone is not a contradiction, ``cost_usd <= 1`` with ``cost_usd >= 2`` is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import z3

from kernel.core.envelopes import ConstraintSpec
from kernel.errors import ConfigError
from kernel.solve import arith


@dataclass(frozen=True)
class CoreReport:
    """``conflict``: a minimal set of titles that cannot hold together (empty when
    consistent). ``implied``: title -> the titles that imply it."""

    conflict: list[str] = field(default_factory=list)
    implied: dict[str, list[str]] = field(default_factory=dict)

    def problems(self) -> list[str]:
        said = []
        if self.conflict:
            said.append("the core constraints " + " and ".join(repr(t) for t in self.conflict)
                        + " cannot all hold (Z3: unsat); drop or change one of them")
        for title, by in self.implied.items():
            said.append(f"{title!r} is implied by " + " and ".join(repr(t) for t in by)
                        + ": it adds nothing to the core; drop it")
        return said


def _terms(core: Sequence[ConstraintSpec]) -> list[tuple[str, z3.ExprRef]]:
    terms = []
    for spec in core:
        if spec.type.value == "logic" and spec.payload.get("check") == "arith":
            term, _ = arith.parse(spec.payload["expr"])
            terms.append((spec.title, term))
    return terms


def _solver() -> z3.Solver:
    solver = z3.Solver()
    solver.set("timeout", arith.TIMEOUT_MS)
    return solver


def _sat(terms: Sequence[z3.ExprRef]) -> bool:
    solver = _solver()
    solver.add(*terms)
    verdict = solver.check()
    if verdict == z3.unknown:
        raise ConfigError("Z3 could not decide whether the core constraints are consistent; "
                          "simplify their expressions")
    return bool(verdict == z3.sat)


def check_core(core: Sequence[ConstraintSpec]) -> CoreReport:
    terms = _terms(core)
    if not terms:
        return CoreReport()
    if not _sat([t for _, t in terms]):
        return CoreReport(conflict=_minimal_conflict(terms))
    implied: dict[str, list[str]] = {}
    for i, (title, term) in enumerate(terms):
        others = [(t, x) for j, (t, x) in enumerate(terms) if j != i]
        if others and not _sat([*(x for _, x in others), z3.Not(term)]):
            implied[title] = _minimal_support(others, term)
    return CoreReport(implied=implied)


def _minimal_conflict(terms: list[tuple[str, z3.ExprRef]]) -> list[str]:
    """Deletion: drop each member whose removal leaves the rest still unsat. Minimal, not
    necessarily the smallest; the core is a handful of constraints, so this is cheap."""
    kept = list(terms)
    for item in list(terms):
        rest = [t for t in kept if t is not item]
        if rest and not _sat([x for _, x in rest]):
            kept = rest
    return [title for title, _ in kept]


def _minimal_support(others: list[tuple[str, z3.ExprRef]], term: z3.ExprRef) -> list[str]:
    kept = list(others)
    for item in list(others):
        rest = [t for t in kept if t is not item]
        if rest and not _sat([*(x for _, x in rest), z3.Not(term)]):
            kept = rest
    return [title for title, _ in kept]


def refuse_contradiction(core: Sequence[ConstraintSpec]) -> CoreReport:
    """Bad input when the core contradicts itself (nothing is stored or paid for); the
    report otherwise, whose ``implied`` the caller points out."""
    report = check_core(core)
    if report.conflict:
        raise ConfigError(report.problems()[0])
    return report
