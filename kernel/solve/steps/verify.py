"""Step 6, verify: the attempt's verification recorded, then the goal goes on to the leaf
step (SAT at tau_local: the verification rides the goal's next move) or to retry."""

from __future__ import annotations

from kernel.core.envelopes import Check
from kernel.core.goal_node import MissingGoalProperty
from kernel.protocol import solve_models as models
from kernel.runtime.kernel import Kernel
from kernel.solve import moves, suggestions, verification
from kernel.solve.steps._shared import constraints_of


def verify(k: Kernel, move: moves.Verify) -> moves.Leaf | moves.Retry:
    """Per constraint: Z3 for arithmetic logic constraints (facts: the output's metrics,
    what the goal spent), the output's tests in the sandbox for test constraints (a
    recorded `run_tests` proposal), one batched `verify_semantic` judgment for the rest,
    shown the test run's verdicts (a judgment's σ is capped at 0.99: a logic check is 1.0
    or 0.0, a judgment below certainty; no judge is asked when a limit on what the goal
    spent is already broken, since the goal is refused for it); σ_v = min; SAT needs
    σ_v ≥ τ_local. At the root's first attempt of a run given `--suggest`, every candidate
    is verified this way and the best on merit becomes the attempt's output
    (`kernel/solve/suggestions.py`, one commit `cypher/suggestion/weigh`)."""
    goal_id = move.goal.id
    goal = k.tree.get(goal_id)
    attempt = k.attempts.of_goal(goal_id)[-1]
    output = models.ResolutionOutput.model_validate_json(k.artifacts.read(goal.require("output_artifact_id")))
    if attempt.verdict is None:
        selected = constraints_of(k, goal_id, "selected")
        checked = suggestions.verification_of(k, goal, attempt, selected, output)
        # the sigma_path values the verdict changes are written with it: one commit
        sigmas, rows = k.confidence.subtree_sigmas(goal_id, sigma_v=checked.sigma_v)
        # on the way to the leaf step it rides the goal's move; a retry reads it back
        ride = checked.verdict == "SAT" and checked.sigma_v >= goal.tau_local
        k.attempts.record_verification(
            attempt, checked, {c.id: verification.method_of(c) for c in selected},
            diagnosed=_check_diagnosis(checked.failed()), sigma_paths=rows, ride=ride)
        goal = k.tree.get(goal_id)
        sigma_path = sigmas[goal_id]
    else:  # recorded before a crash, with its sigma_path values: nothing to write
        sigma_path = k.confidence.recompute_subtree(goal_id)[goal_id]
    recorded = goal.verification
    if recorded is None:
        raise MissingGoalProperty(f"goal {goal_id} was verified but holds no verification")
    if recorded.verdict == "SAT" and recorded.sigma_v >= goal.tau_local:
        return moves.Leaf(goal, sigma_path)
    return moves.Retry(goal, recorded)


def _check_diagnosis(failed: list[Check]) -> tuple[str, str] | None:
    """A cause a check diagnosed itself (a forged or missing test report), as a name
    and a description; other failures wait for the retry step's diagnosis."""
    found = sorted({(str(c.detail["failure_mode"]), str(c.detail.get("report_problem", "")))
                    for c in failed if isinstance(c.detail, dict) and c.detail.get("failure_mode")})
    if not found:
        return None
    return "__".join(n for n, _ in found), "; ".join(d for _, d in found if d)
