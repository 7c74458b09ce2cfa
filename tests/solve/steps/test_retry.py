"""Step 9 driven without a store: a refusal for spending, the feedback call, the cause
it records, and another attempt, a rescope of the parent or growth."""

from __future__ import annotations

from kernel.core.envelopes import Attempt, Check, Verification
from kernel.core.goal_node import GoalChanges
from kernel.core.state_machine import Status
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.refusal import RefusalReason
from kernel.solve import moves
from kernel.solve.effects import (
    Decision,
    Flow,
    ModelCall,
    Observe,
    RecordCause,
    RefuseGoal,
    Reopen,
    Transition,
    Wake,
)
from kernel.solve.steps.retry import retry
from tests.solve.steps.fakes import FakeView, constraint, drive, goal, proposal

S = Status
FAILED = Verification.from_checks([
    Check(constraint_id="c:1", passed=False, sigma_i=0.0,
          detail={"tests": {"test_add": "FAILED"}, "output_tail": "assert add(1, 2) == 3"}),
    Check(constraint_id="c:2", passed=True, sigma_i=1.0)])


def _feedback(evidence: str, rescope: bool = False) -> models.Feedback:
    return models.Feedback(summary="add subtracts", failure_mode="wrong_operator",
                           rescope=rescope, per_constraint=[models.ConstraintFeedback(
                               constraint_id="adds", diagnosis="it subtracts",
                               fix="add", evidence=evidence)])


def _attempt(index: int, sigma: float) -> Attempt:
    return Attempt(id=f"att:{index}", node_id="goal:a", attempt_index=index,
                   resolver_id="claude-1", output_artifact_id=f"art:{index}",
                   verdict="UNSAT", sigma_v=sigma)


def _view(*sigmas: float, **fields: object) -> FakeView:
    g = goal(status=S.VERIFYING, attempt_count=len(sigmas), **fields)  # type: ignore[arg-type]
    parent = goal("goal:root", parent_id=None, depth=0, status=S.DECOMPOSING)
    return FakeView(goals={g.id: g, parent.id: parent}, role_ids={g.id: {"selected": ["c:1", "c:2"]}},
                    known={"c:1": constraint("c:1", "adds", type="logic",
                                             payload={"check": "test", "tests": ["test_add"]}),
                           "c:2": constraint("c:2", "short")},
                    outputs={f"art:{n}": {"text": f"output {n}"} for n in range(1, 4)},
                    attempts={g.id: [_attempt(n, s) for n, s in enumerate(sigmas, start=1)]})


def _retry(view: FakeView, feedback: models.Feedback) -> tuple[list[object], object]:
    return drive(retry(view, moves.Retry(view.goal("goal:a"), FAILED)),  # type: ignore[return-value]
                 [{}, proposal(feedback)])


def test_feedback_with_evidence_from_the_trace_records_its_cause_and_the_goal_tries_again() -> None:
    view = _view(0.2, feedback={"conflict": "c:9", "old": "dropped"})
    asked, done = _retry(view, _feedback("assert add(1, 2) == 3"))
    history, call = asked
    assert history == Observe("history/feedback", "goal:a", lambda: None)
    assert isinstance(call, ModelCall) and call.operation is ops.GENERATE_FEEDBACK
    assert call.request.payload["output"] == {"text": "output 1"}
    assert call.request.payload["violations"] == [FAILED.checks[0].model_dump(mode="json")]
    recorded, wake, transition, said = done.changes.changes  # type: ignore[attr-defined]
    assert isinstance(recorded, RecordCause) and recorded.attempt_id == "att:1"
    assert recorded.cause.id == "failure:wrong_operator" and recorded.cause.diagnosed
    assert wake == Wake(("goal:a",)) and done.then == ["goal:a"]  # type: ignore[attr-defined]
    assert isinstance(transition, Transition) and transition.to == S.RESOLVING
    assert transition.changes is not None and transition.changes.feedback is not None
    assert transition.changes.feedback["failure_mode"] == "failure:wrong_operator"
    assert transition.changes.feedback["conflict"] == "c:9"  # kept until decomposed again
    assert "old" not in transition.changes.feedback
    assert said == Flow("goal:a", "RETRY 2/3 with feedback: add subtracts")


def test_a_diagnosis_without_evidence_is_recorded_undiagnosed_under_the_constraint() -> None:
    _, done = _retry(_view(0.2), _feedback("nothing quoted"))
    recorded = done.changes.changes[0]  # type: ignore[attr-defined]
    assert recorded.cause.id == "failure:undiagnosed_adds" and not recorded.cause.diagnosed


def test_a_rescope_reopens_the_parent_within_its_budget_and_says_why() -> None:
    view = _view(0.2)
    _, done = _retry(view, _feedback("assert add", rescope=True))
    _, wake, reopen, decision = done.changes.changes  # type: ignore[attr-defined]
    assert wake == Wake(("goal:root",)) and done.then == ["goal:root"]  # type: ignore[attr-defined]
    assert isinstance(reopen, Reopen) and reopen.told is None
    assert (reopen.goal_id, reopen.to, reopen.changes.reopened) == ("goal:root", S.SELECTING_RESOLVER, 1)
    assert decision == Decision("goal:a", "rescope", ("goal:a", "goal:root"), "goal:root",
                                "add subtracts")


def test_out_of_tries_or_stagnant_it_grows_with_the_feedback_and_the_cause_recorded_first() -> None:
    for sigmas in [(0.1, 0.2, 0.3), (0.5, 0.5, 0.5)]:
        view = _view(*sigmas, max_attempts=3 if sigmas[0] == 0.1 else 5)
        _, done = _retry(view, _feedback("assert add"))
        assert isinstance(done.then, moves.Grow)  # type: ignore[attr-defined]
        assert done.then.changes == GoalChanges(feedback={  # type: ignore[attr-defined]
            "violations": [FAILED.checks[0].model_dump(mode="json")],
            "diagnosis": _feedback("assert add").model_dump(mode="json"),
            "failure_mode": "failure:wrong_operator"})
        assert [type(c) for c in done.changes.changes] == [RecordCause]  # type: ignore[attr-defined]
    view = _view(0.1, 0.2, 0.5, max_attempts=5)  # still improving: another try
    _, done = _retry(view, _feedback("assert add"))
    assert done.then == ["goal:a"]  # type: ignore[attr-defined]


def test_a_limit_broken_by_spending_alone_refuses_without_a_call() -> None:
    spent = Verification.from_checks([Check(
        constraint_id="c:1", passed=False, sigma_i=1.0,
        detail={"expression": "cost_usd <= 0.1", "violated_by": {"cost_usd": 0.5}})])
    view = _view(0.0)
    asked, done = drive(retry(view, moves.Retry(view.goal("goal:a"), spent)), [])
    assert asked == []
    assert done.then == ["goal:root"]
    [refused] = done.changes.changes
    assert isinstance(refused, RefuseGoal)
    assert refused.reason is RefusalReason.SPENT_PAST_LIMIT
    assert refused.detail.startswith("adds: cost_usd <= 0.1 with ")


def _not_installed(edited: bool) -> Verification:
    return Verification.from_checks([Check(
        constraint_id="c:1", passed=False, sigma_i=1.0,
        detail={"tests": {"test_add": "NOT_RUN"}, "failure_mode": "dependencies_not_installed",
                "report_problem": "the repository's dependencies (requirements.txt) could not "
                                  "be installed, so no test ran: pip could not install the "
                                  "requirements (ERROR: No matching distribution found for six)",
                "setup": {"source": "requirements.txt", "installed": False, "edited": edited,
                          "reason": "pip could not install the requirements",
                          "output_tail": "ERROR: No matching distribution found for six\n"}})])


def test_the_repositorys_own_dependencies_not_installed_refuse_without_a_call() -> None:
    """The environment is at fault, not the code: no feedback is asked for, no edit tried
    again, and the refusal's advice is about the dependencies."""
    view = _view(0.0)
    asked, done = drive(retry(view, moves.Retry(view.goal("goal:a"), _not_installed(False))),
                        [])
    assert asked == []
    assert done.then == ["goal:root"]
    [refused] = done.changes.changes
    assert isinstance(refused, RefuseGoal)
    assert refused.reason is RefusalReason.DEPENDENCIES_NOT_INSTALLED
    assert refused.detail.endswith("(ERROR: No matching distribution found for six)")
    facts = dict(refused.facts)
    assert facts["source"] == "requirements.txt"
    assert facts["advice"].startswith("check that each requirement in requirements.txt exists "
                                      "on the index KERNEL_REGISTRY_INDEX_URL names")


def test_requirements_the_edits_changed_that_do_not_install_are_the_attempts_to_fix() -> None:
    view = _view(0.0)
    asked, done = drive(retry(view, moves.Retry(view.goal("goal:a"), _not_installed(True))),
                        [{}, proposal(_feedback("six"))])
    assert [type(a) for a in asked] == [Observe, ModelCall]
    assert done.then == ["goal:a"]  # type: ignore[attr-defined]
