"""Step 6, verify: the attempt's verification recorded, then the goal goes on to the leaf
step (SAT at tau_local: the verification rides the goal's next move) or to retry."""

from __future__ import annotations

from kernel.core.envelopes import Check, Verification
from kernel.core.goal_node import MissingGoalProperty
from kernel.solve import moves, suggestions, verification
from kernel.solve.effects import Done, Effects, RecordVerification, SetSigmaPaths, StepChanges
from kernel.solve.view import StepView


def verify(view: StepView, move: moves.Verify) -> Effects[moves.Leaf | moves.Retry]:
    """Per constraint: Z3 for arithmetic logic constraints (facts: the output's metrics,
    what the goal spent), the output's tests in the sandbox for test constraints (a
    recorded `run_tests` proposal), one batched `verify_semantic` judgment for the rest,
    shown the test run's verdicts (a judgment's σ is capped at 0.99: a logic check is 1.0
    or 0.0, a judgment below certainty; no judge is asked when a limit on what the goal
    spent is already broken, since the goal is refused for it); σ_v = min; SAT needs
    σ_v ≥ τ_local. At the root's first attempt of a run given `--suggest`, every candidate
    is verified this way and the best on merit becomes the attempt's output
    (`kernel/solve/suggestions.py`, one commit `cypher/suggestion/weigh`)."""
    goal = view.goal(move.goal.id)
    attempt = view.tried(goal)[-1]
    output = view.resolution(goal.require("output_artifact_id"))
    if attempt.verdict is None:
        selected = view.constraints(view.roles(goal.id)["selected"])
        weighed = yield from suggestions.verification_of(view, goal, attempt, selected, output)
        checked = weighed.verification
        # the sigma_path values the verdict changes are written with it: one commit
        sigmas, rows = view.subtree_sigmas(goal.id, sigma_v=checked.sigma_v)
        # on the way to the leaf step it rides the goal's move; a retry reads it back
        ride = passes(checked, goal.tau_local)
        changes = weighed.changes + RecordVerification(
            attempt, checked, tuple((c.id, verification.method_of(c)) for c in selected),
            _check_diagnosis(checked.failed()), tuple(rows), ride)
    else:  # recorded before a crash, with its sigma_path values: nothing else to write
        if goal.verification is None:
            raise MissingGoalProperty(f"goal {goal.id} was verified but holds no verification")
        checked = goal.verification
        sigmas, rows = view.subtree_sigmas(goal.id)
        changes = StepChanges((SetSigmaPaths(goal.id, tuple(rows)),))
    # the next step is given the goal as the commit leaves it (verification, output)
    if passes(checked, goal.tau_local):
        return Done(moves.Leaf(goal, sigmas[goal.id]), changes, reread=True)
    return Done(moves.Retry(goal, checked), changes, reread=True)


def passes(checked: Verification, tau_local: float) -> bool:
    """SAT at tau_local: the goal goes on to the leaf step."""
    return checked.verdict == "SAT" and checked.sigma_v >= tau_local


def _check_diagnosis(failed: list[Check]) -> tuple[str, str] | None:
    """A cause a check diagnosed itself (a forged or missing test report), as a name
    and a description; other failures wait for the retry step's diagnosis."""
    found = sorted({(str(c.detail["failure_mode"]), str(c.detail.get("report_problem", "")))
                    for c in failed if isinstance(c.detail, dict) and c.detail.get("failure_mode")})
    if not found:
        return None
    return "__".join(n for n, _ in found), "; ".join(d for _, d in found if d)
