"""The first cause in a chain of failures, said in words: when a goal is refused for a
missing or unusable proposal after an attempt failed its checks, the failed check is
what the person has to fix, and the refusal leads with it.

>>> from kernel.core.envelopes import Check
>>> print(said(Check(constraint_id="c", passed=False, sigma_i=1.0,
...            detail={"tests": {"test_reject_garbage": "MISSING", "test_ok": "PASSED"}})))
no test named 'test_reject_garbage' among the output's tests (name one it defines, or have it written)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kernel.core.envelopes import Check
from kernel.core.goal_node import GoalNode

EXCERPT = 200


def first_cause(goal: GoalNode, titles: Mapping[str, str]) -> str | None:
    """The goal's last verification's first failed check, as the cause of what followed
    (None when the goal has no failed verification)."""
    verification = goal.verification
    if verification is None or verification.verdict == "SAT":
        return None
    failed = verification.failed()
    if not failed:
        return None
    check = failed[0]
    title = titles.get(check.constraint_id, check.constraint_id)
    return f"attempt {goal.attempt_count} failed '{title}': {said(check)}"


def said(check: Check) -> str:
    """What a failed check found, in one clause."""
    detail: Mapping[str, Any] = check.detail if isinstance(check.detail, Mapping) else {}
    tests = detail.get("tests")
    if isinstance(tests, Mapping):
        missing = sorted(t for t, s in tests.items() if s == "MISSING")
        failing = sorted(t for t, s in tests.items() if s == "FAILED")
        if missing:
            names = ", ".join(f"'{t}'" for t in missing)
            return (f"no test named {names} among the output's tests (name one it defines, "
                    "or have it written)")
        if detail.get("report_problem"):
            return str(detail["report_problem"])
        if failing:
            return f"{', '.join(failing)} failed"
    if detail.get("expression"):
        facts = detail.get("violated_by") or {}
        values = ", ".join(f"{k} = {v}" for k, v in sorted(facts.items()))
        return f"{detail['expression']} does not hold" + (f" ({values})" if values else "")
    if detail.get("rubric_trace"):
        return f"the judgment: {_excerpt(str(detail['rubric_trace']))}"
    if detail.get("judge"):
        return str(detail["judge"])
    return _excerpt(json.dumps(dict(detail), sort_keys=True, default=str))


def _excerpt(text: str) -> str:
    return text if len(text) <= EXCERPT else text[:EXCERPT] + "…"
