"""Deterministic arithmetic checks with Z3 (logic constraints, sigma = 1.0).

A constraint's payload gives an expression such as ``cost_usd <= 5 and p99_ms < 500``.
It is parsed with ``ast`` into Z3 terms (never evaluated as Python); the facts the
kernel knows (the output's metrics, what the goal spent, sums over its children) are
asserted as tracked equalities. Unsat means violated, and the unsat core names the
facts that violate it: that is the violation trace.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

import z3

from kernel.errors import KernelError

TIMEOUT_MS = 30_000


class ExpressionError(KernelError):
    """The expression is outside the arithmetic the checker accepts."""


_Binary = Callable[[Any, Any], Any]  # over z3 terms, which z3 leaves untyped
_COMPARE: dict[type[ast.cmpop], _Binary] = {
    ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b}
_ARITH: dict[type[ast.operator], _Binary] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b}


def _real(value: float | int) -> z3.ArithRef:
    if isinstance(value, float) and not math.isfinite(value):
        raise ExpressionError(f"{value} is not a finite number; the checker compares finite "
                              "numbers only")
    return z3.RealVal(str(Decimal(repr(value)))) if isinstance(value, float) else z3.RealVal(value)


def _condition(node: ast.AST, names: set[str]) -> z3.BoolRef:
    """A term that must be true or false (an operand of and, or, not; the whole)."""
    term = _term(node, names)
    if not z3.is_bool(term):
        raise ExpressionError(f"{_shown(node)} is a number where a condition is needed: "
                              "compare it, as in 'cost_usd <= 5'")
    return term


def _number(node: ast.AST, names: set[str]) -> z3.ArithRef:
    """A term that must be a number (an operand of + - * / and of a comparison)."""
    term = _term(node, names)
    if not z3.is_arith(term):
        raise ExpressionError(f"{_shown(node)} is a condition where a number is needed")
    return term


def _shown(node: ast.AST) -> str:
    try:
        return repr(ast.unparse(node)[:60])
    except (ValueError, RecursionError):
        return "a part"


def _term(node: ast.AST, names: set[str]) -> z3.ExprRef:
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return z3.BoolVal(node.value)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return _real(node.value)
    if isinstance(node, ast.Name):
        names.add(node.id)
        return z3.Real(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_number(node.operand, names)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return z3.Not(_condition(node.operand, names))
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        return _arith(node, names)
    if isinstance(node, ast.BoolOp):
        parts = [_condition(v, names) for v in node.values]
        return z3.And(*parts) if isinstance(node.op, ast.And) else z3.Or(*parts)
    if isinstance(node, ast.Compare):
        return _compare(node, names)
    raise ExpressionError(f"unsupported syntax: {ast.dump(node)[:60]}")


def _arith(node: ast.expr, names: set[str]) -> z3.ExprRef:
    """a + b + c ... nests to the left: walk that spine iteratively, so a sum of any
    length costs no recursion depth."""
    spine = []
    while isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        spine.append(node)
        node = node.left
    total = _number(node, names)
    for step in reversed(spine):
        total = _ARITH[type(step.op)](total, _number(step.right, names))
    return total


def _compare(node: ast.Compare, names: set[str]) -> z3.ExprRef:
    """A chained comparison (a < b <= c) is the conjunction of its links."""
    left = _number(node.left, names)
    parts = []
    for op, right_node in zip(node.ops, node.comparators, strict=True):
        if type(op) not in _COMPARE:
            raise ExpressionError(f"unsupported comparison {type(op).__name__}")
        right = _number(right_node, names)
        parts.append(_COMPARE[type(op)](left, right))
        left = right
    return z3.And(*parts) if len(parts) > 1 else parts[0]


MAX_EXPRESSION_CHARS = 100_000


def parse(expression: str) -> tuple[z3.ExprRef, set[str]]:
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ExpressionError(f"the expression has {len(expression)} characters; at most "
                              f"{MAX_EXPRESSION_CHARS} are accepted: split the constraint")
    try:
        tree = ast.parse(expression, mode="eval")
        names: set[str] = set()
        return _condition(tree.body, names), names
    except SyntaxError as exc:
        raise ExpressionError(f"cannot parse {expression[:80]!r}: {exc.msg}") from None
    except ValueError as exc:  # a null byte, a literal of more digits than Python reads
        raise ExpressionError(f"cannot parse {expression[:80]!r}: {exc}") from None
    except (RecursionError, MemoryError):
        raise ExpressionError("the expression nests too deeply (parentheses or operators "
                              "inside one another); flatten it or split the constraint") from None


def check(expression: str, facts: Mapping[str, float | int]) -> tuple[bool, dict[str, Any]]:
    """(holds, detail). The detail lists the facts used and, when violated, the unsat core."""
    term, names = parse(expression)
    missing = sorted(names - set(facts))
    if missing:
        raise ExpressionError(f"no value for {', '.join(missing)} in {expression!r}")
    solver = z3.Solver()
    solver.set("timeout", TIMEOUT_MS)
    for name in sorted(names):
        try:
            fact = _real(facts[name])
        except ExpressionError as exc:
            raise ExpressionError(f"the value of {name}: {exc}") from None
        solver.assert_and_track(z3.Real(name) == fact, f"fact:{name}")
    solver.assert_and_track(term, "constraint")
    try:
        verdict = solver.check()
    except z3.Z3Exception as exc:
        raise ExpressionError(f"z3 could not decide {expression[:80]!r}: {exc}") from None
    if verdict == z3.unknown:
        raise ExpressionError(f"z3 could not decide {expression!r}")
    used = {name: facts[name] for name in sorted(names)}
    if verdict == z3.sat:
        return True, {"expression": expression, "facts": used}
    core = sorted(str(c) for c in solver.unsat_core())
    violating = {c.removeprefix("fact:"): used[c.removeprefix("fact:")]
                 for c in core if c.startswith("fact:")}
    return False, {"expression": expression, "facts": used, "violated_by": violating}
