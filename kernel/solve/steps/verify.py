"""Step 6, verify: the attempt's verification recorded, then the goal goes on to the leaf
step (SAT at tau_local) or to retry."""

from __future__ import annotations

import re

from kernel.core.goal_node import MissingGoalProperty
from kernel.protocol import solve_models as models
from kernel.runtime.kernel import Kernel
from kernel.solve import verification
from kernel.solve.steps import leaf, retry
from kernel.solve.steps._shared import constraints_of


def verify(k: Kernel, goal_id: str) -> list[str]:
    goal = k.tree.get(goal_id)
    attempt = k.attempts.of_goal(goal_id)[-1]
    output = models.ResolutionOutput.model_validate_json(k.artifacts.read(goal.require("output_artifact_id")))
    if attempt.verdict is None:
        checked = verification.verify(k, goal, constraints_of(k, goal_id, "selected"), output)
        failed = checked.failed()
        titles = {c.id: c.title for c in constraints_of(k, goal_id, "selected")}
        k.attempts.record_verification(attempt.id, checked,
                                       failure_slug=_failure_slug(failed, titles) if failed
                                       else None)
        goal = k.tree.get(goal_id)
    recorded = goal.verification
    if recorded is None:
        raise MissingGoalProperty(f"goal {goal_id} was verified but holds no verification")
    sigma_path = k.confidence.recompute_subtree(goal_id)[goal_id]
    if recorded.verdict == "SAT" and recorded.sigma_v >= goal.tau_local:
        return leaf.classify(k, goal, sigma_path)
    return retry.retry(k, goal, recorded)


def _failure_slug(failed: list, titles: dict[str, str]) -> str:
    """A readable, stable failure mode: a cause a check diagnosed itself (a forged or
    missing test report), else the titles of the violated constraints."""
    diagnosed = sorted({str(c.detail["failure_mode"]) for c in failed
                        if isinstance(c.detail, dict) and c.detail.get("failure_mode")})
    if diagnosed:
        return "__".join(diagnosed)
    names = sorted({re.sub(r"[^a-z0-9]+", "_", titles.get(c.constraint_id, c.constraint_id)
                           .lower()).strip("_")[:40] for c in failed})
    return "violated_" + "__".join(names)[:120]
