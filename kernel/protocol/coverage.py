"""Which part of a decomposition answers for each of the goal's constraints.

A goal's constraints hold of the whole its parts make up, so a decomposition says who
answers for each: one part (it is verified against the constraint and defines the
tests it names) or the whole (the assembly, or the parts added up). Every logic
constraint of the goal must be answered for exactly once; a semantic one may be given
to a part, never to two. The same check refuses a model's answer (its repair turn gets
the problems) and a recorded one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kernel.core.envelopes import Constraint, ConstraintType
from kernel.protocol.requests import ResolveRequest
from kernel.protocol.solve_models import Decomposition

ASSEMBLY = "assembly"  # who answers for a constraint no single part answers for


@dataclass(frozen=True)
class Coverage:
    """``answered_by``: constraint id -> a child's key or ASSEMBLY; ``problems``: why the
    decomposition is refused (empty when it is not)."""

    answered_by: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def owed_by(self, key: str) -> list[str]:
        """The constraint ids the part ``key`` answers for."""
        return sorted(cid for cid, who in self.answered_by.items() if who == key)


def coverage(constraints: Sequence[Constraint], plan: Decomposition) -> Coverage:
    """Who answers for each of ``constraints`` (named by id or exact title) in ``plan``,
    and every problem with it, each naming the constraints concerned."""
    by_name = {c.title: c for c in constraints} | {c.id: c for c in constraints}
    claims: dict[str, list[str]] = {}
    problems: list[str] = []
    keys = [child.key for child in plan.children]
    named = [(child.key, name) for child in plan.children for name in child.answers_for]
    named += [(ASSEMBLY, name) for name in plan.assembly_answers_for]
    for who, name in named:
        constraint = by_name.get(name)
        if constraint is None:
            problems.append(f"{_where(who)} names {name!r}, which is none of the goal's "
                            f"constraints (name one by its id or exact title)")
            continue
        if who not in claims.setdefault(constraint.id, []):
            claims[constraint.id].append(who)
    if ASSEMBLY in keys:
        problems.append(f"a part is keyed {ASSEMBLY!r}, which names the whole: key it otherwise")
    for c in constraints:
        claimed = claims.get(c.id, [])
        if len(claimed) > 1:
            problems.append(f"{_said(c)} is answered for more than once (by "
                            f"{', '.join(claimed)}): give it to one part or to the assembly")
        elif not claimed and c.type == ConstraintType.LOGIC:
            problems.append(f"nothing answers for {_said(c)}: name it in one part's "
                            f"answers_for, or in assembly_answers_for")
    return Coverage({cid: who[0] for cid, who in claims.items() if len(who) == 1}, problems)


def left_to_the_whole(constraints: Sequence[Constraint],
                      output: dict[str, Any]) -> dict[str, Any]:
    """A decomposition's ``output`` (as a script gives it) with every logic constraint it
    names nowhere given to the assembly: how a scripted decomposition written without
    the mapping is read (a model's answer gets no such default)."""
    named = {str(n) for child in output.get("children") or [] if isinstance(child, dict)
             for n in child.get("answers_for") or []}
    named |= {str(n) for n in output.get("assembly_answers_for") or []}
    missing = [c.id for c in constraints if c.type == ConstraintType.LOGIC
               and c.id not in named and c.title not in named]
    if not missing:
        return output
    given = list(output.get("assembly_answers_for") or [])
    return {**output, "assembly_answers_for": [*given, *missing]}


def problems(request: ResolveRequest, answer: Any) -> list[str]:
    """The coverage problems of a decomposition answering ``request`` (its constraints
    are the goal's, the ones to answer for)."""
    if not isinstance(answer, Decomposition):
        return []
    return coverage(request.constraints, answer).problems


def _where(who: str) -> str:
    return "assembly_answers_for" if who == ASSEMBLY else f"part {who!r}'s answers_for"


def _said(constraint: Constraint) -> str:
    return f"{constraint.id} ({constraint.title!r})"
