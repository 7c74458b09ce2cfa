"""The design's CSV CLI example, end to end: scripted proposals, real verification.

The generated code and its tests run in the sandbox; the first attempt's bug is caught
(UNSAT), the feedback drives a second attempt, and every logic constraint comes out
with sigma = 1.0."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

from kernel._views import run_refusals, sandbox_status
from kernel.cli.solve import report
from kernel.core.envelopes import ConstraintSpec, Provenance
from kernel.core.ledger import load_entries, verify_chain
from kernel.paths import seeds_dir
from kernel.solve.dispatch import solve
from kernel.solve.session import resume
from kernel.store import GraphStore
from resolvers.sandbox import runner
from resolvers.sandbox.runner import default_workspace_root
from resolvers.scripted import ScriptedProposer
from tests.sandbox_support import needs_sandbox
from tests.starting import start

GOAL = ("Build a Python CLI tool that reads a CSV file and outputs the top 10 rows sorted by "
        "a user-specified column")
CORE = [ConstraintSpec(type="logic", domain="software", title="exits 1 when the column is missing",
                       payload={"check": "test", "tests": ["test_missing_column"]},
                       provenance=Provenance(source="human"))]

pytestmark = needs_sandbox


@pytest.fixture
def workspaces() -> Path:
    root = default_workspace_root() / f"e2e-{uuid.uuid4().hex[:8]}"
    root.mkdir(mode=0o711)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.slow
def test_the_csv_cli_example_resolves_with_real_verification(
        initialised_graph: GraphStore, tmp_path: Path, workspaces: Path) -> None:
    proposer = ScriptedProposer.from_file(seeds_dir() / "examples" / "csv-cli.script.yaml")
    kernel, root = start(initialised_graph, GOAL, CORE, budget_usd=5.0, time_seconds=600,
                         proposer=proposer, data_dir=tmp_path, workspace_root=workspaces)
    outcome = solve(kernel, root)
    assert (outcome.status, outcome.stopped) == ("resolved", None)

    attempts = kernel.attempts.of_goal(root)
    assert [a.verdict for a in attempts] == ["UNSAT", "SAT"]
    first, second = attempts
    failed = {c.constraint_id for c in first.verification.failed()}
    titles = {c.id: c.title for c in kernel.constraints.get_many(
        [c.constraint_id for c in second.verification.checks])}
    assert {titles[i] for i in failed} == {"exits 1 when the column is missing"}
    trace = next(c for c in first.verification.checks if c.constraint_id in failed)
    assert trace.detail["tests"] == {"test_missing_column": "FAILED"}
    assert trace.repair_suggestion == {"fix": "make these tests pass",
                                       "failing": ["test_missing_column"]}
    logic = [c for c in second.verification.checks
             if titles[c.constraint_id] != "error messages are helpful"]
    assert len(logic) == 4 and all(c.passed and c.sigma_i == 1.0 for c in logic)
    assert second.verification.sigma_v == 0.85
    goal = kernel.tree.get(root)
    assert goal.leaf_kind == "atomic" and goal.sigma_path == 0.85
    assert outcome.sigma_system == 0.85
    # The cause is the diagnosis, whole; the violated constraint is an edge with its check.
    assert first.failure_mode == "failure:missing_column_not_reported"
    cause = initialised_graph.execute_adhoc(
        "MATCH (a:Attempt {id: $a})-[b:FAILED_BECAUSE]->(f:FailureMode) "
        "MATCH (a)-[v:VIOLATED]->(c:Constraint) "
        "RETURN f.name AS name, f.description AS description, b.source AS source, "
        "c.title AS violated, v.check AS check, v.sigma AS sigma, a.proposer AS proposer",
        {"a": first.id}, write=False).records()
    assert cause == [{"name": "missing_column_not_reported", "source": "diagnosis",
                      "description": cause[0]["description"],
                      "violated": "exits 1 when the column is missing", "check": "tests",
                      "sigma": 1.0, "proposer": "scripted"}]
    assert cause[0]["description"] and "violated" not in cause[0]["description"]
    satisfied = initialised_graph.execute_adhoc(
        "MATCH (:Attempt {id: $a})-[:PRODUCED]->(art:Artifact)-[s:SATISFIES]->(c:Constraint) "
        "RETURN s.check AS check, s.sigma AS sigma ORDER BY check",
        {"a": second.id}, write=False).records()
    assert [r["check"] for r in satisfied] == ["judge", "tests", "tests", "tests", "tests"]
    assert {r["check"]: r["sigma"] for r in satisfied}["judge"] == 0.85
    assert all(r["sigma"] == 1.0 for r in satisfied if r["check"] != "judge")
    # The human's core constraint and the identified one with the same content are one.
    roles = kernel.constraints.roles(root)
    assert set(roles["core"]) <= set(roles["selected"]) and len(roles["selected"]) == 5
    head, size, entries = load_entries(initialised_graph, kernel.run.run_id)
    assert verify_chain(entries, head=head, size=size) == []
    assert [e.operation for e in entries if e.kind == "proposal"] == [
        "identify_constraints", "select_constraints", "resolve", "run_tests", "verify_semantic",
        "generate_feedback", "resolve", "run_tests", "verify_semantic", "classify_leaf"]
    spent = kernel.budget.ledger_totals(root)
    assert spent["cost_spent"] == 12_000 + 50_000 * 2 + 10_000 * 2 + 10_000 + 20_000


@pytest.mark.slow
def test_without_bubblewrap_the_run_stops_resumable_and_blames_nothing_on_the_goal(
        initialised_graph: GraphStore, tmp_path: Path, workspaces: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    proposer = ScriptedProposer.from_file(seeds_dir() / "examples" / "csv-cli.script.yaml")
    kernel, root = start(initialised_graph, GOAL, CORE, budget_usd=5.0, time_seconds=600,
                         proposer=proposer, data_dir=tmp_path, workspace_root=workspaces)
    monkeypatch.setattr(runner, "bwrap_binary", lambda: None)  # bubblewrap hidden
    outcome = solve(kernel, root)
    assert outcome.status == "verifying" and "bubblewrap" in str(outcome.stopped)
    assert "apt-get install bubblewrap" in str(outcome.stopped)
    assert report(initialised_graph, outcome, as_json=True) == 3
    attempt = kernel.attempts.of_goal(root)[0]
    assert attempt.verdict is None and attempt.failure_mode is None  # not failed: not judged
    assert not initialised_graph.execute_adhoc(
        "MATCH (f:FailureMode)<-[:FAILED_BECAUSE]-(:Attempt {run_id: $run}) RETURN f.id AS id",
        {"run": kernel.run.run_id}, write=False).records()
    assert not any(e.kind == "failure" or e.operation == "run_tests"
                   for e in load_entries(initialised_graph, kernel.run.run_id)[2])
    assert sandbox_status()["problem"] and not sandbox_status()["available"]

    monkeypatch.undo()  # bubblewrap is back
    resumed = resume(initialised_graph, kernel.run.run_id, tmp_path, proposer=proposer)
    assert (resumed.status, resumed.stopped) == ("resolved", None)
    assert [a.verdict for a in kernel.attempts.of_goal(root)] == ["UNSAT", "SAT"]


@pytest.mark.slow
def test_the_test_counts_are_facts_the_kernel_measured(
        initialised_graph: GraphStore, tmp_path: Path, workspaces: Path) -> None:
    none_failed = ConstraintSpec(type="logic", domain="software", title="no test fails",
                                 payload={"check": "arith", "expr": "tests_failed == 0"},
                                 provenance=Provenance(source="human"))
    proposer = ScriptedProposer.from_file(seeds_dir() / "examples" / "csv-cli.script.yaml")
    kernel, root = start(initialised_graph, GOAL, [*CORE, none_failed], budget_usd=5.0,
                         time_seconds=600, proposer=proposer, data_dir=tmp_path,
                         workspace_root=workspaces)
    assert solve(kernel, root).status == "resolved"
    first, second = kernel.attempts.of_goal(root)
    counted = [c for a in (first, second) for c in a.verification.checks  # type: ignore[union-attr]
               if c.detail.get("expression") == "tests_failed == 0"]
    assert [(c.passed, c.sigma_i, c.detail["facts"]) for c in counted] == [
        (False, 1.0, {"tests_failed": 1.0}), (True, 1.0, {"tests_failed": 0.0})]


@pytest.mark.slow
def test_a_test_name_the_output_lacks_is_named_as_the_cause_of_the_refusal(
        initialised_graph: GraphStore, tmp_path: Path, workspaces: Path) -> None:
    """The constraint names a test no output defines; the script has feedback for one
    failed attempt only. The refusal leads with the missing test, not the missing entry."""
    garbage = ConstraintSpec(type="logic", domain="software", title="rejects garbage input",
                             payload={"check": "test", "tests": ["test_reject_garbage"]},
                             provenance=Provenance(source="human"))
    proposer = ScriptedProposer.from_file(seeds_dir() / "examples" / "csv-cli.script.yaml")
    kernel, root = start(initialised_graph, GOAL, [garbage], budget_usd=5.0, time_seconds=600,
                         proposer=proposer, data_dir=tmp_path, workspace_root=workspaces)
    outcome = solve(kernel, root)
    assert outcome.status == "infeasible"
    (refusal,) = run_refusals(initialised_graph, kernel.run.run_id)
    assert refusal["reasons"] == ["NO_PROPOSALS"]
    assert refusal["detail"].startswith(
        "attempt 2 failed 'rejects garbage input': no test named 'test_reject_garbage' "
        "among the output's tests")
    assert "; then the script has no proposal for generate_feedback call #2" in \
        refusal["detail"]
