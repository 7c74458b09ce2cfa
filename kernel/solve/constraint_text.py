"""Core constraints from text (``--constraint``, intake edits) as typed ``ConstraintSpec``.

A logic constraint written as a comparison is checked by Z3 later, so a comparison that
does not parse is refused now, with what to write instead, before anything is stored.
"""

from __future__ import annotations

from typing import Any

from kernel.core.envelopes import ConstraintSpec, ConstraintType, Provenance
from kernel.core.written_constraint import COMPARISONS, titled_comparison
from kernel.errors import ConfigError

CONSTRAINT_HELP = ("TYPE[:DOMAIN]:TEXT, e.g. 'logic:cost:cost_usd <= 5' (an arithmetic "
                   "expression is checked by Z3; sum_M, max_M, min_M total a metric M over "
                   "the goal's parts; 'logic:data:TITLE: rows == 3' titles it) or "
                   "'semantic:usability:errors are helpful'")


def _shown(text: str, limit: int = 120) -> str:
    """The constraint as an error message quotes it: long input is cut, so the error stays
    one readable line."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def parse_constraint(text: str) -> ConstraintSpec:
    """One ``--constraint``: a logic constraint given as a comparison (titled by it, or by
    the title written before it) is checked by Z3; one in prose about tests by running
    every test in the sandbox; any other prose is refused, since nothing could decide it
    deterministically."""
    parts = [p.strip() for p in text.split(":", 2)]
    if len(parts) >= 2 and parts[0] not in ("logic", "semantic"):
        raise ConfigError(f"--constraint {_shown(text)}: the type {parts[0]!r} must be 'logic' "
                          f"(checked deterministically) or 'semantic' (judged); write "
                          f"{CONSTRAINT_HELP}")
    if len(parts) < 2 or not parts[-1]:
        raise ConfigError(f"--constraint {_shown(text)} is not {CONSTRAINT_HELP}")
    kind, domain, title = (parts[0], parts[1], parts[2]) if len(parts) == 3 else \
        (parts[0], "general", parts[1])
    payload: dict[str, Any] = {}
    if kind == "logic":
        title, payload = _logic(text, title)
    return ConstraintSpec(type=ConstraintType(kind), domain=domain, title=title, payload=payload,
                          provenance=Provenance(source="human"))


def _logic(text: str, written: str) -> tuple[str, dict[str, Any]]:
    """A logic constraint's title and payload from its TEXT: a comparison, ``TITLE:
    COMPARISON``, or prose saying the tests pass."""
    from kernel.solve import arith  # Z3 loads only when a logic constraint is given

    title, expression = titled_comparison(written) or (written, written)
    try:
        arith.parse(expression)
        return title, {"check": "arith", "expr": expression}
    except arith.ExpressionError as exc:
        # Prose ("all tests pass") is a logic constraint checked by tests; a comparison
        # that does not parse is a typo the user should hear about now, not after a run.
        if any(op in expression for op in COMPARISONS):
            raise ConfigError(f"--constraint {_shown(text)}: {exc}; write a comparison such as "
                              "'cost_usd <= 5' or 'latency_ms < 200', titled if you like "
                              "('logic:cost:stays cheap: cost_usd <= 5')") from None
        if "test" not in written.lower():
            raise ConfigError(f"--constraint {_shown(text)}: a logic constraint is decided by "
                              "a program; write a comparison ('logic:cost:cost_usd <= 5'), "
                              "say that the tests pass ('logic:tests:all tests pass'), or "
                              "type it semantic ('semantic:...')") from None
        return title, {"check": "test", "tests": []}  # every test passes, in the sandbox
