"""Step 6 driven without a store: the checks it asks for (a test run in the sandbox, one
judgment), the candidates it weighs, and the verification it hands back to record."""

from __future__ import annotations

from typing import Any

from kernel.core.envelopes import Attempt, Check, Lineage, Verification
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.protocol.suggestion_models import Suggestion
from kernel.solve import moves
from kernel.solve.effects import (
    Flow,
    ModelCall,
    NewArtifact,
    Observe,
    RecordVerification,
    Register,
    Sandbox,
    SetSigmaPaths,
    Weigh,
)
from kernel.solve.steps.verify import verify
from kernel.solve.verification import SANDBOX_ID
from tests.solve.steps.fakes import FakeView, constraint, drive, goal, proposal

READS_WELL = constraint("c:judged", "reads well")
TESTED = constraint("c:tests", "tests pass", type="logic",
                    payload={"check": "test", "tests": ["test_add"]})
SHORT = constraint("c:short", "short", type="logic",
                   payload={"check": "arith", "expr": "words <= 3"})
OWN = models.ResolutionOutput(artifact_type="code", format="python", content="a + b",
                              tests={"test_main.py": "def test_add(): ..."})


def _view(selected: list[str], *, attempt: Attempt | None = None, **fields: Any) -> FakeView:
    g = goal(output_artifact_id="art:out", **fields)
    tried = attempt or Attempt(id="attempt:1", node_id=g.id, attempt_index=1,
                               resolver_id="resolver:claude-code-0", output_artifact_id="art:out")
    return FakeView(goals={g.id: g}, role_ids={g.id: {"selected": selected}},
                    known={c.id: c for c in (READS_WELL, TESTED, SHORT)},
                    resolutions={"art:out": OWN}, attempts={g.id: [tried]},
                    sigmas={g.id: ({g.id: 0.5}, [])}, hashes={"art:out": "b" * 64})


def _judgment(passed: bool, sigma: float = 1.0, cid: str = "c:judged") -> Any:
    return proposal(models.SemanticVerification(checks=[models.SemanticCheck(
        constraint_id=cid, passed=passed, sigma=sigma, rubric_trace="why")]))


def _ran(report: dict[str, str], exit_code: int) -> Any:
    return proposal(models.SandboxRun(passed=exit_code == 0, results=[{
        "ran": True, "exit_code": exit_code, "reason": None, "seconds": 0.5,
        "report": {"tests": report}, "stdout": "", "stderr": ""}]))


def test_a_judged_constraint_is_one_judgment_capped_below_certainty_and_rides_to_the_leaf() -> None:
    view = _view(["c:judged"])
    g = view.goal("goal:a")
    asked, done = drive(verify(view, moves.Verify(g)), [_judgment(True, 1.0)])
    [call] = asked
    assert isinstance(call, ModelCall) and call.operation is ops.VERIFY_SEMANTIC
    assert call.answerer is None and [c.id for c in call.request.constraints] == ["c:judged"]
    assert call.request.payload["test_results"] is None
    assert done.then == moves.Leaf(g, 0.99) and done.reread
    [record] = done.changes.changes
    assert isinstance(record, RecordVerification)
    assert record.ride and record.verification.sigma_v == 0.99
    assert record.verification.checks[0].detail["sigma_capped_from"] == 1.0
    assert record.methods == (("c:judged", "judge"),)
    assert record.sigma_paths == ({"id": "goal:a", "sigma_path": 0.99},)


def test_tests_run_in_the_sandbox_first_and_the_judge_is_shown_their_verdicts() -> None:
    view = _view(["c:judged", "c:tests"])
    g = view.goal("goal:a")
    asked, done = drive(verify(view, moves.Verify(g)),
                        [_ran({"test_main.py::test_add": "failed"}, 1), _judgment(True, 0.9)])
    run, judge = asked
    assert isinstance(run, ModelCall) and run.operation is ops.RUN_TESTS
    assert run.answerer == Sandbox() and run.resolver_id == SANDBOX_ID
    assert run.request.payload["files"]["main.py"] == "a + b"
    assert run.request.payload["tests"] == ["test_main.py"]
    assert isinstance(judge, ModelCall)
    assert judge.request.payload["test_results"]["tests"] == {"test_add": "FAILED"}
    [record] = done.changes.changes
    assert isinstance(record, RecordVerification) and not record.ride
    assert record.verification.verdict == "UNSAT"
    assert dict(record.methods) == {"c:judged": "judge", "c:tests": "tests"}
    assert record.diagnosed is None  # a plain failure waits for the retry's diagnosis
    assert isinstance(done.then, moves.Retry) and done.then.verification == record.verification


def test_a_report_the_exit_status_contradicts_is_a_cause_the_check_diagnoses_itself() -> None:
    view = _view(["c:tests"])
    _, done = drive(verify(view, moves.Verify(view.goal("goal:a"))),
                    [_ran({"test_main.py::test_add": "passed"}, 1)])
    [record] = done.changes.changes
    assert isinstance(record, RecordVerification)
    assert record.diagnosed is not None and record.diagnosed[0] == "test_report_mismatch"


def test_arithmetic_alone_asks_nothing_and_files_named_badly_run_nothing() -> None:
    view = _view(["c:short"])
    asked, done = drive(verify(view, moves.Verify(view.goal("goal:a"))), [])
    assert asked == [] and isinstance(done.then, moves.Leaf)
    view.resolutions["art:out"] = OWN.model_copy(update={"files": {"../up.py": "x"}})
    view.role_ids["goal:a"]["selected"] = ["c:tests"]
    asked, done = drive(verify(view, moves.Verify(view.goal("goal:a"))), [])
    assert asked == [] and isinstance(done.then, moves.Retry)
    assert done.then.verification.checks[0].detail["failure_mode"]


def test_a_verification_recorded_before_a_crash_is_read_back_and_only_sigma_paths_are_stored() -> None:
    recorded = Verification.from_checks([Check(constraint_id="c:judged", passed=True, sigma_i=0.9)])
    done_attempt = Attempt(id="attempt:1", node_id="goal:a", attempt_index=1,
                           resolver_id="r", output_artifact_id="art:out", verdict="SAT")
    view = _view(["c:judged"], attempt=done_attempt, verification=recorded)
    view.sigmas["goal:a"] = ({"goal:a": 0.9}, [{"id": "goal:a", "sigma_path": 0.9}])
    asked, done = drive(verify(view, moves.Verify(view.goal("goal:a"))), [])
    assert asked == []
    assert done.changes.changes == (SetSigmaPaths("goal:a", ({"id": "goal:a", "sigma_path": 0.9},)),)
    assert done.then == moves.Leaf(view.goal("goal:a"), 0.9)


def test_at_a_root_s_first_attempt_suggestions_are_registered_weighed_and_the_best_chosen() -> None:
    view = _view(["c:short"], parent_id=None)
    view.offered = [Suggestion(author="ada", output=models.ResolutionOutput(
        artifact_type="doc", format="text", content="two words"))]
    view.seen_before = [{"sha256": "a" * 64, "passed": 3, "total": 3}]
    g = view.goal("goal:a")
    registered = type("Registered", (), {"id": "art:s1", "sha256": "a" * 64})()
    asked, done = drive(verify(view, moves.Verify(g)), [registered, view.seen_before])
    register, history = asked
    assert isinstance(register, Register) and register.artifact == NewArtifact(
        "goal:a", view.offered[0].output.model_dump_json(), "doc", "json",
        Lineage(node_id="goal:a", resolver_id=None), key="suggestion:run:1:1",
        metadata=(("content_format", "text"), ("suggestion", 1)))
    assert isinstance(history, Observe) and history.name == "suggestion/history"
    weigh, said, record = done.changes.changes
    assert isinstance(weigh, Weigh) and weigh.attempt_id == "attempt:1"
    # both pass "words <= 3"; the suggestion's content has the better history
    assert weigh.chosen_id == "art:s1" and weigh.chosen_kind == "suggestion"
    assert [r["status"] for r in weigh.candidates] == ["chosen", "outranked"]
    assert said == Flow("goal:a", "suggestion by ada: chosen (rank 1 of 2, SAT, sigma_v=1.00)")
    assert isinstance(record, RecordVerification) and record.ride


def test_a_weighing_recorded_before_a_crash_is_read_back_not_weighed_again() -> None:
    weighed = Attempt(id="attempt:1", node_id="goal:a", attempt_index=1, resolver_id="r",
                      output_artifact_id="art:out", weighed=True)
    view = _view(["c:judged"], attempt=weighed, parent_id=None)
    view.offered = [Suggestion(author="ada", output=OWN)]
    won = Verification.from_checks([Check(constraint_id="c:judged", passed=False, sigma_i=0.2)])
    view.weighed["art:out"] = won.model_dump_json()
    asked, done = drive(verify(view, moves.Verify(view.goal("goal:a"))), [])
    assert asked == []
    [record] = done.changes.changes
    assert isinstance(record, RecordVerification) and record.verification == won
    assert done.then == moves.Retry(view.goal("goal:a"), won)

