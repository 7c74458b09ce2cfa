"""Failure modes are diagnosed causes: named whole, merged with near-duplicates through
the vector index, linked beside the constraints the attempt VIOLATED."""

from __future__ import annotations

from pathlib import Path

from embeddings.encoder import Encoder
from kernel.core.attempts import Attempts
from kernel.core.budget import Amount, BudgetEnforcer
from kernel.core.constraints import ConstraintEngine
from kernel.core.envelopes import Check, Verification
from kernel.core.goals import GoalSpec, GoalTree
from kernel.core.state_machine import Status
from kernel.kg.failures import FailureModes, normalize
from tests.core.conftest import spec
from tests.core.test_constraints_and_attempts import _to_verifying

LONG = "the_column_lookup_is_case_sensitive_so_a_header_in_capitals_is_reported_missing"


def _failed_attempts(tree: GoalTree, count: int) -> list[str]:
    engine = ConstraintEngine(tree.store)
    ids = engine.upsert([spec("exits 1 when the column is missing")])
    root = tree.create_root(GoalSpec("Build the csv cli", max_attempts=count))
    BudgetEnforcer(tree.run).allocate_root(root, Amount(1_000_000, 60_000))
    _to_verifying(tree, engine, root, ids)
    attempts, made = Attempts(tree.run), []
    for index in range(count):
        attempt = attempts.open(root, "resolver:claude-code-0")
        tree.transition(root, Status.VERIFYING)
        attempts.record_verification(attempt, Verification.from_checks(
            [Check(constraint_id=ids[0], passed=False, sigma_i=1.0)]), {ids[0]: "tests"})
        made.append(attempt.id)
        if index + 1 < count:
            tree.transition(root, Status.RESOLVING)
    return made


def test_causes_are_whole_names_and_near_duplicates_merge(tree: GoalTree, tmp_path: Path) -> None:
    failures = FailureModes(tree.run, Encoder(tmp_path / "embeddings.sqlite"))
    first, second, third, fourth = _failed_attempts(tree, 4)
    known = failures.record(first, "Missing column not reported",
                            "a missing column returns no rows and exits 0")
    assert (known.id, known.name, known.merged_into) == (
        "failure:missing_column_not_reported", "missing_column_not_reported", None)
    same = failures.record(second, "missing_column_unreported",
                           "a missing column returns no rows and exits with status 0")
    assert same.merged_into == known.id and same.name == "missing_column_unreported"
    other = failures.record(third, LONG, "capital letters in the header are not matched")
    assert other.id == f"failure:{LONG}" and other.merged_into is None  # never truncated
    again = failures.record(fourth, "missing_column_not_reported", "the same cause again")
    assert again.id == known.id and again.merged_into is None
    rows = tree.store.execute_adhoc(
        "MATCH (a:Attempt)-[b:FAILED_BECAUSE]->(f:FailureMode) "
        "RETURN f.id AS f, f.description AS d, b.name AS said, a.failure_mode AS on_attempt "
        "ORDER BY said", {}, write=False).records()
    assert rows == [
        {"f": known.id, "d": "a missing column returns no rows and exits 0",
         "said": "missing_column_not_reported", "on_attempt": known.id},
        {"f": known.id, "d": "a missing column returns no rows and exits 0",
         "said": "missing_column_not_reported", "on_attempt": known.id},
        {"f": known.id, "d": "a missing column returns no rows and exits 0",
         "said": "missing_column_unreported", "on_attempt": known.id},
        {"f": other.id, "d": "capital letters in the header are not matched", "said": LONG,
         "on_attempt": other.id}]


def test_a_diagnosis_is_idempotent_for_a_step_served_again(tree: GoalTree,
                                                           tmp_path: Path) -> None:
    failures = FailureModes(tree.run, Encoder(tmp_path / "embeddings.sqlite"))
    (attempt,) = _failed_attempts(tree, 1)
    for _ in range(2):  # a crash before the step's end serves the same diagnosis again
        failures.record(attempt, "rows_not_sorted", "the rows are cut before sorting")
    edges = tree.store.execute_adhoc(
        "MATCH (:Attempt {id: $a})-[b:FAILED_BECAUSE]->(f:FailureMode) RETURN count(b) AS n",
        {"a": attempt}, write=False).records()
    assert edges == [{"n": 1}]


def test_names_are_normalized_not_cut() -> None:
    assert normalize("Missing Column -- not reported!") == "missing_column_not_reported"
    assert normalize("") == "undiagnosed"
    assert normalize("x" * 300) == "x" * 300
