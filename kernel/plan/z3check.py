"""Z3 as the independent check of planning arithmetic: a sum over task estimates and the
longest dependency chain are re-derived as constraints over exact rationals, and a
stated value is accepted only if Z3 finds it consistent with them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import z3

from kernel.plan.feasibility import SCALE, units


def _q(amount: int) -> z3.ArithRef:
    return z3.Q(amount, SCALE)


def sum_is(values: Sequence[float], stated: float) -> bool:
    """Does the sum of ``values`` equal ``stated``?"""
    solver = z3.Solver()
    xs = [z3.Real(f"x{i}") for i in range(len(values))]
    for x, value in zip(xs, values, strict=True):
        solver.add(x == _q(units(value)))
    total = z3.Sum(xs) if xs else z3.RealVal(0)
    solver.add(total == _q(units(stated)))
    return bool(solver.check() == z3.sat)


def longest_chain_is(durations: Mapping[str, float], depends_on: Mapping[str, Sequence[str]],
                     stated: float) -> bool:
    """Is ``stated`` the length of the longest dependency chain? Finish times are defined
    by finish(t) = duration(t) + max(finish of its dependencies); the stated value must
    be the largest finish time."""
    solver = z3.Solver()
    finish = {t: z3.Real(f"finish_{t}") for t in durations}
    for task, duration in durations.items():
        start = z3.RealVal(0)
        for dep in depends_on.get(task, ()):
            start = z3.If(finish[dep] > start, finish[dep], start)
        solver.add(finish[task] == start + _q(units(duration)))
    target = _q(units(stated))
    solver.add(z3.And([f <= target for f in finish.values()]))
    solver.add(z3.Or([f == target for f in finish.values()]))
    return bool(solver.check() == z3.sat)
