"""Step 9, retry: feedback from the violation trace and history, then another attempt,
a RESCOPE that reopens the parent, or growth when tries run out or stagnate."""

from __future__ import annotations

import json
import re

from kernel.core.envelopes import Attempt, Check, Constraint
from kernel.core.goal_node import GoalChanges
from kernel.kg import context as kg_context
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.refusal import RefusalReason
from kernel.runtime.gate import ask
from kernel.runtime.kernel import Kernel
from kernel.solve import moves, prompt_inputs
from kernel.solve.steps._shared import (
    S,
    constraints_of,
    request_for,
)
from kernel.solve.verification import spent_past_limit


def retry(k: Kernel, move: moves.Retry) -> list[str] | moves.Grow:
    """A logic constraint broken by spending alone (`cost_usd`, `seconds`) refuses the
    goal at once (`SPENT_PAST_LIMIT`, with the figure: no attempt takes spending back);
    otherwise proposal `generate_feedback` from the last output, the violation trace and
    history; the diagnosis is stored as the failure mode only when it names a violated
    constraint with evidence from that constraint's trace, else as
    `undiagnosed_<constraint>`; retry up to T_max, or stop early when σ improves by less
    than ε over two attempts (then BUILD); feedback saying RESCOPE reopens the parent
    instead (its decomposition is at fault; same reopening budget)."""
    goal, verification = move.goal, move.verification
    goal_id = goal.id
    selected = constraints_of(k, goal_id, "selected")
    titles = {c.id: c.title for c in selected}
    broken = spent_past_limit(verification.failed())
    if broken is not None:  # another attempt only spends more
        check, figure = broken
        title = titles.get(check.constraint_id, check.constraint_id)
        return k.refuse_goal(goal, RefusalReason.SPENT_PAST_LIMIT,
                             f"{title}: {check.detail.get('expression')} with {figure}",
                             constraint=title, figure=figure)
    history = k.attempts.of_goal(goal_id)
    trace = [c.model_dump(mode="json") for c in verification.failed()]
    _, context = kg_context.block(k, goal, "feedback")
    request = request_for(
        goal, ops.GENERATE_FEEDBACK, selected, context,
        output=prompt_inputs.stored_output(k, history[-1].output_artifact_id),
        violations=trace,
        history=[{"attempt": a.attempt_index, "verdict": a.verdict, "sigma_v": a.sigma_v,
                  "failure_mode": a.failure_mode,
                  "feedback": (a.feedback or {}).get("diagnosis", {}).get("summary")}
                 for a in history])
    proposal = ask(k, goal_id, ops.GENERATE_FEEDBACK, request)
    feedback: models.Feedback = proposal.output
    if cited_constraint(feedback, verification.failed(), selected) is None:
        # nothing names a violated constraint with evidence from its trace
        first = next((titles.get(c.constraint_id, c.constraint_id)
                      for c in verification.failed()), "unknown")
        cause = k.failures.record(history[-1].id, first, feedback.summary, diagnosed=False)
    else:
        cause = k.failures.record(history[-1].id, feedback.failure_mode, feedback.summary)
    note = {"violations": trace, "diagnosis": feedback.model_dump(mode="json"),
            "failure_mode": cause.id}
    # a conflict the goal was reopened for stays its reason until it is decomposed again
    kept = {key: value for key, value in (goal.feedback or {}).items()
            if key in ("conflict", "coupling_goes_to")}
    if feedback.rescope and goal.parent_id:
        parent = k.tree.get(goal.parent_id)
        reopened = parent.reopened
        if reopened < k.config.max_reopens:  # the parent's decomposition is at fault
            k.run.will_wake([parent.id])
            k.tree.reopen(parent.id, S.SELECTING_RESOLVER, GoalChanges(
                reopened=reopened + 1,
                feedback={"rescope_from": goal_id, "summary": goal.summary, **note}))
            k.log.decision(goal_id, "rescope", candidates=[goal_id, parent.id],
                           chosen=parent.id, rationale=feedback.summary)
            return [parent.id]
    if goal.attempt_count < goal.max_attempts and not _stagnant(k, history):
        k.run.will_wake([goal_id])
        k.tree.transition(goal_id, S.RESOLVING, GoalChanges(
            feedback=note | kept, rescope_requested=feedback.rescope))
        k.log.flow(goal_id, f"RETRY {goal.attempt_count + 1}/{goal.max_attempts} "
                            f"with feedback: {feedback.summary}")
        return [goal_id]
    return moves.Grow(goal, GoalChanges(feedback=note | kept))


def _stagnant(k: Kernel, history: list[Attempt]) -> bool:
    """sigma improved by less than epsilon over the last two attempts."""
    sigmas = [a.sigma_v for a in history if a.sigma_v is not None]
    if len(sigmas) < 3:
        return False
    return bool(max(sigmas[-1] - sigmas[-2], sigmas[-2] - sigmas[-3])
                < k.config.stagnation_epsilon)


def cited_constraint(feedback: models.Feedback, failed: list[Check],
                     constraints: list[Constraint]) -> str | None:
    """The first violated constraint the diagnosis explains with evidence found in that
    constraint's own trace (a word of four or more characters from the quote)."""
    titles = {c.title: c.id for c in constraints}
    traces = {c.constraint_id: json.dumps(c.model_dump(mode="json"), sort_keys=True).lower()
              for c in failed}
    for item in feedback.per_constraint:
        named = titles.get(item.constraint_id, item.constraint_id)
        trace = traces.get(named)
        words = re.findall(r"[a-z0-9_]{4,}", item.evidence.lower())
        if trace is not None and any(w in trace for w in words):
            return named
    return None
