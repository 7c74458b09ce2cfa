"""Step 9, retry: feedback from the violation trace and history, then another attempt,
a RESCOPE that reopens the parent, or growth when tries run out or stagnate."""

from __future__ import annotations

import json
import re

from kernel.codebase import diagnostics
from kernel.core.envelopes import Attempt, Check, Constraint
from kernel.core.goal_node import GoalChanges
from kernel.kg.context import StepHistory
from kernel.kg.failures import Diagnosis
from kernel.proposals import Proposal
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.refusal import RefusalReason
from kernel.solve import moves
from kernel.solve.effects import (
    Decision,
    Done,
    Effects,
    Flow,
    ModelCall,
    RecordCause,
    RefuseGoal,
    Reopen,
    StepChanges,
    Transition,
    Wake,
)
from kernel.solve.steps._shared import S, request_for, wake_parent
from kernel.solve.verification import NOT_INSTALLED, spent_past_limit
from kernel.solve.view import StepView


def retry(view: StepView, move: moves.Retry) -> Effects[list[str] | moves.Grow]:
    """A logic constraint broken by spending alone (`cost_usd`, `seconds`) refuses the
    goal at once (`SPENT_PAST_LIMIT`, with the figure: no attempt takes spending back), and
    so do the repository's own dependencies when they could not be installed
    (`DEPENDENCIES_NOT_INSTALLED`, with what to set: no edit of the code fixes that);
    otherwise proposal `generate_feedback` from the last output, the violation trace and
    history; the diagnosis is stored as the failure mode only when it names a violated
    constraint with evidence from that constraint's trace, else as
    `undiagnosed_<constraint>`; retry up to T_max, or stop early when σ improves by less
    than ε over two attempts (then BUILD); feedback saying RESCOPE reopens the parent
    instead (its decomposition is at fault; same reopening budget)."""
    goal, verification = move.goal, move.verification
    selected = view.constraints(view.roles(goal.id)["selected"])
    titles = {c.id: c.title for c in selected}
    broken = spent_past_limit(verification.failed())
    if broken is not None:  # another attempt only spends more
        check, figure = broken
        title = titles.get(check.constraint_id, check.constraint_id)
        return Done(wake_parent(goal), StepChanges((RefuseGoal(
            goal, RefusalReason.SPENT_PAST_LIMIT,
            f"{title}: {check.detail.get('expression')} with {figure}",
            (("constraint", title), ("figure", figure))),)))
    unmet = _dependencies_not_installed(verification.failed())
    if unmet is not None:  # the environment, not the code: another attempt fails the same way
        setup = unmet.detail.get("setup") or {}
        return Done(wake_parent(goal), StepChanges((RefuseGoal(
            goal, RefusalReason.DEPENDENCIES_NOT_INSTALLED, str(unmet.detail["report_problem"]),
            (("source", str(setup.get("source"))),
             ("advice", diagnostics.install_advice(setup)))),)))
    history = view.tried(goal)
    trace = [c.model_dump(mode="json") for c in verification.failed()]
    past = StepHistory.model_validate((yield view.history(goal, "feedback")))
    request = request_for(
        goal, ops.GENERATE_FEEDBACK, selected,
        past.block(goal.summary, view.config.context_chars),
        output=view.stored_output(history[-1].output_artifact_id),
        violations=trace,
        history=[{"attempt": a.attempt_index, "verdict": a.verdict, "sigma_v": a.sigma_v,
                  "failure_mode": a.failure_mode,
                  "feedback": (a.feedback or {}).get("diagnosis", {}).get("summary")}
                 for a in history])
    proposal: Proposal[models.Feedback] = yield ModelCall(ops.GENERATE_FEEDBACK, request)
    feedback = proposal.output
    cause = _cause(view, feedback, verification.failed(), selected)
    recorded = StepChanges((RecordCause(history[-1].id, cause),))
    note = {"violations": trace, "diagnosis": feedback.model_dump(mode="json"),
            "failure_mode": cause.id}
    if feedback.rescope and goal.parent_id:
        parent = view.goal(goal.parent_id)
        if parent.reopened < view.config.max_reopens:  # the decomposition is at fault
            return Done([parent.id], recorded + StepChanges((
                Wake((parent.id,)),
                Reopen(parent.id, S.SELECTING_RESOLVER, GoalChanges(
                    reopened=parent.reopened + 1,
                    feedback={"rescope_from": goal.id, "summary": goal.summary, **note})),
                Decision(goal.id, "rescope", (goal.id, parent.id), parent.id,
                         feedback.summary))))
    # a conflict the goal was reopened for stays its reason until it is decomposed again
    kept = {key: value for key, value in (goal.feedback or {}).items()
            if key in ("conflict", "coupling_goes_to")}
    if goal.attempt_count < goal.max_attempts and \
            not _stagnant(view.config.stagnation_epsilon, history):
        return Done([goal.id], recorded + StepChanges((
            Wake((goal.id,)),
            Transition(goal.id, S.RESOLVING, GoalChanges(
                feedback=note | kept, rescope_requested=feedback.rescope)),
            Flow(goal.id, f"RETRY {goal.attempt_count + 1}/{goal.max_attempts} "
                          f"with feedback: {feedback.summary}"))))
    return Done(moves.Grow(goal, GoalChanges(feedback=note | kept)), recorded)


def _dependencies_not_installed(failed: list[Check]) -> Check | None:
    """A check failed because the repository's own dependencies could not be installed
    (not requirements the attempt's edits changed: those are the attempt's to fix)."""
    for check in failed:
        setup = check.detail.get("setup") if isinstance(check.detail, dict) else None
        if check.detail.get("failure_mode") == NOT_INSTALLED and isinstance(setup, dict) \
                and not setup.get("edited", True):
            return check
    return None


def _cause(view: StepView, feedback: models.Feedback, failed: list[Check],
           selected: list[Constraint]) -> Diagnosis:
    """The failure mode the attempt failed because of: the diagnosis when it names a
    violated constraint with evidence from its trace, else that constraint undiagnosed."""
    if cited_constraint(feedback, failed, selected) is None:
        titles = {c.id: c.title for c in selected}
        first = next((titles.get(c.constraint_id, c.constraint_id) for c in failed), "unknown")
        return view.diagnosis(first, feedback.summary, diagnosed=False)
    return view.diagnosis(feedback.failure_mode, feedback.summary)


def _stagnant(epsilon: float, history: list[Attempt]) -> bool:
    """sigma improved by less than epsilon over the last two attempts."""
    sigmas = [a.sigma_v for a in history if a.sigma_v is not None]
    if len(sigmas) < 3:
        return False
    return bool(max(sigmas[-1] - sigmas[-2], sigmas[-2] - sigmas[-3]) < epsilon)


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
