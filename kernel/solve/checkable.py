"""The checker language: the forms in which a logic constraint is decided deterministically.

A logic constraint is one a program decides exactly, so it must come in one of the forms
verification runs: ``{"check": "arith", "expr": "cost_usd <= 5"}`` (Z3 over named
metrics), ``{"check": "test", "tests": [...]}`` (the sandbox; no names: every test), or
``{"check": "tool_contract"}``. A proposal that types a constraint "logic" without one of
these is re-typed semantic here, when the proposal is taken, and says so in the
constraint's payload (``retyped``) and in the goal's log: a logic constraint therefore
always ends with σ 1.0 or 0.0, and a judged one below 1.
"""

from __future__ import annotations

from typing import Any

from kernel.core.envelopes import ConstraintSpec, ConstraintType, Provenance
from kernel.protocol.solve_models import ProposedConstraint
from kernel.solve import arith

FORMS = ("{'check': 'arith', 'expr': 'cost_usd <= 5'}", "{'check': 'test', 'tests': [...]}",
         "{'check': 'tool_contract'}")


def why_not_checkable(payload: dict[str, Any]) -> str | None:
    """None when ``payload`` is a form verification decides; otherwise what is wrong."""
    check = payload.get("check")
    if check == "arith":
        expr = payload.get("expr")
        if not isinstance(expr, str) or not expr.strip():
            return "an arith check without an expression"
        try:
            arith.parse(expr)
        except arith.ExpressionError as exc:
            return f"its expression does not parse: {exc}"
        return None
    if check == "test":
        tests = payload.get("tests", [])
        if not isinstance(tests, list) or not all(isinstance(t, str) and t for t in tests):
            return "a test check whose tests are not a list of test names"
        return None
    if check == "tool_contract":
        return None
    return f"no deterministic check in {payload!r:.120}"


def settle(kind: ConstraintType, payload: dict[str, Any]) -> tuple[ConstraintType,
                                                                    dict[str, Any], str | None]:
    """(type, payload, note): a logic constraint without a checkable form becomes semantic,
    its original payload kept and the reason recorded; the note is for the log."""
    if kind != ConstraintType.LOGIC:
        return kind, payload, None
    problem = why_not_checkable(payload)
    if problem is None:
        return kind, payload, None
    retyped = {"retyped": {"from": "logic", "reason": problem}, "original": payload}
    return ConstraintType.SEMANTIC, retyped, problem


def proposed_spec(proposed: ProposedConstraint,
                  provenance: Provenance) -> tuple[ConstraintSpec, str | None]:
    """A model's proposed constraint as stored, settled as above; the note, when it was
    re-typed, says why in words for the goal's log."""
    kind, payload, problem = settle(ConstraintType(proposed.type), proposed.payload)
    spec = ConstraintSpec(type=kind, domain=proposed.domain, title=proposed.title,
                          payload=payload, provenance=provenance)
    note = None if problem is None else \
        f"{proposed.title!r} was proposed as logic but {problem}: re-typed semantic, judged"
    return spec, note
