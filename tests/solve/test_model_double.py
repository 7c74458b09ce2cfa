"""Scenarios through the real Claude adapter and SDK against a model double that reads its
prompt (tests/model_double.py): each resolves only because every step's prompt carries
what the step exists to reason about."""

from __future__ import annotations

import dataclasses
import re
import string
import subprocess
import sys
from pathlib import Path

import pytest

from kernel.artifact_files import artifact_files, load_artifact, save_files
from kernel.core.envelopes import ConstraintSpec, Provenance
from kernel.core.ledger import load_entries, verify_chain
from kernel.core.registry import Registry, ResolverSpec
from kernel.plan.session import plan_goal
from kernel.protocol import coverage
from kernel.protocol.intake_models import IntakeAnswer
from kernel.protocol.solve_models import ResolutionOutput
from kernel.repositories.requests import list_requests
from kernel.solve.dispatch import solve
from kernel.solve.session import replay
from kernel.store.base import GraphStore
from resolvers.claude import adapter
from resolvers.sandbox.runner import default_workspace_root
from tests import model_double as model_double_module
from tests.conftest import store_settings
from tests.model_double import (
    DATE_RULE,
    DIGIT_CODES,
    DRAFT_CODES,
    FIXED,
    GUESSED_DATE,
    ISSUED_CODES,
    LAUNCH_DATE,
    model_double,
    section,
)
from tests.sandbox_support import needs_sandbox
from tests.starting import start

HUMAN = Provenance(source="human")


def _core(title: str, payload: dict) -> ConstraintSpec:
    return ConstraintSpec(type="logic", domain="software", title=title, payload=payload,
                          provenance=HUMAN)


def _final(kernel, outcome) -> str:  # type: ignore[no-untyped-def]
    root = kernel.tree.get(outcome.root_id)
    return kernel.artifacts.read(root.require("final_artifact_id")).decode()



@needs_sandbox
def test_code_with_a_wrong_first_attempt_is_fixed_from_the_failure_in_the_prompt(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    with model_double() as (server, proposer):
        kernel, root = start(initialised_graph, "Write a Python function count_words(text) "
                             "returning how many words the text has",
                             [_core("counts words", {"check": "test", "tests": ["test_counts"]})],
                             2.0, 900, proposer, tmp_path, default_workspace_root())
        outcome = solve(kernel, root)
    assert outcome.status == "resolved", outcome
    output = ResolutionOutput.model_validate_json(_final(kernel, outcome))
    assert output.content == FIXED
    attempts = kernel.attempts.of_goal(root)
    assert [a.verdict for a in attempts] == ["UNSAT", "SAT"]
    # the diagnosis cited the failing test, so it is stored as diagnosed
    assert attempts[0].failure_mode == "failure:splits_on_single_spaces"
    feedback_prompt = server.prompts_for("record_feedback")[0]
    assert "test_counts" in feedback_prompt and "def count_words" in feedback_prompt
    first, second = server.prompts_for("record_output")
    assert "split(' ')" not in section(first, "The last attempt's output")
    last = section(second, "The last attempt's output")  # the code the feedback is about
    assert "return len(text.split(' '))" in last and "verdict: UNSAT" in last


def test_a_part_totals_the_rows_its_dependency_produced(initialised_graph: GraphStore,
                                                        tmp_path: Path) -> None:
    with model_double() as (server, proposer):
        kernel, root = start(initialised_graph, "Report the total of the sales ledger", [],
                             2.0, 900, proposer, tmp_path, default_workspace_root())
        outcome = solve(kernel, root)
    assert outcome.status == "resolved", outcome
    final = _final(kernel, outcome)
    assert "total: 12" in final and "north,3" in final
    totals = next(p for p in server.prompts_for("record_output") if "total the parsed" in p)
    assert "north,3" in totals  # the sibling's rows, by content, not an id


@pytest.mark.slow
def test_a_dependent_gets_what_a_decomposed_dependency_ships(initialised_graph: GraphStore,
                                                             tmp_path: Path,
                                                             data_dir: Path) -> None:
    """Three levels: the price list depends on the catalog layer, which was itself split
    into codes and a parser; the list is made from the codes leaf's output, never from
    the catalog's own output from before it was split. The review then finds the codes
    at odds with the parser: the catalog is reopened once, and the price list, which
    consumed the old codes, is redone from the new ones."""
    with model_double() as (server, proposer):
        kernel, root = start(initialised_graph, "Publish the price list of the product "
                             "catalog", [], 2.0, 900, proposer, tmp_path,
                             default_workspace_root())
        outcome = solve(kernel, root)
    assert outcome.status == "resolved", outcome
    first, again = [p for p in server.prompts_for("record_output") if "Print the price" in p]
    assert ISSUED_CODES in first and DRAFT_CODES not in first
    assert "issue the product codes" in first  # the part it comes from, named
    assert "their modules cannot be imported" in first  # and that it is text, not a module
    assert DIGIT_CODES in again and ISSUED_CODES not in again
    final = _final(kernel, outcome)
    assert "price list: FF2 T81 Y33" in final and "T8F" not in final
    conflicts = [e["detail"] for e in kernel.log.entries(2)
                 if e["summary"].startswith("global_conflict")]
    assert len(conflicts) == 1 and "dependents redone" in conflicts[0], conflicts
    head, size, entries = load_entries(initialised_graph, kernel.run.run_id)
    assert verify_chain(entries, head=head, size=size) == []
    result = replay(store_settings(initialised_graph, data_dir), kernel.run.run_id)
    assert result.divergence is None and result.identical, result


@pytest.mark.slow
@needs_sandbox
def test_an_assembly_that_writes_no_tests_keeps_every_part_s_tests_and_files(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    """Both parts put their test in test_main.py and the assembly writes none: each is
    kept under its part's name, each part's test constraint is decided on the whole, and
    the saved deliverable holds the code and both tests, which pass under plain pytest."""
    with model_double() as (server, proposer):
        kernel, root = start(initialised_graph, "Write the Python functions parse_rows and "
                             "total_rows for the sales ledger", [], 2.0, 900, proposer,
                             tmp_path, default_workspace_root())
        outcome = solve(kernel, root)
    assert outcome.status == "resolved", outcome
    final = kernel.tree.get(outcome.root_id).require("final_artifact_id")
    record, data = load_artifact(initialised_graph, tmp_path, final)
    files = artifact_files(record, data)
    assert sorted(files) == ["main.py", "test_main__parse_rows.py", "test_main__total_rows.py"]
    out = tmp_path / "deliverable"
    save_files(files, out)
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                         cwd=out, capture_output=True, text=True, check=False)
    assert ran.returncode == 0 and "2 passed" in ran.stdout, ran.stdout + ran.stderr
    prompt = server.prompts_for("record_assembly")[0]
    assert "test_main.py" in prompt and "renamed" in prompt  # the parts' tests, the rule


def test_a_word_limit_is_decided_on_the_words_the_kernel_counts(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    with model_double() as (_, proposer):
        kernel, root = start(initialised_graph, "Write a summary of what a graph database is",
                             [_core("at most 40 words", {"check": "arith", "expr": "words <= 40"})],
                             2.0, 900, proposer, tmp_path, default_workspace_root())
        outcome = solve(kernel, root)
    assert outcome.status == "resolved", outcome
    first, second = kernel.attempts.of_goal(root)
    assert first.verdict == "UNSAT" and second.verdict == "SAT"
    check = next(c for c in first.verification.checks if not c.passed)  # type: ignore[union-attr]
    # the output claimed 30 words; the kernel counted 60 and decided on that, at sigma 1
    assert check.detail["facts"] == {"words": 60.0} and check.sigma_i == 1.0
    assert first.failure_mode == "failure:text_too_long"


def test_a_plan_estimates_the_metrics_its_constraints_name(initialised_graph: GraphStore,
                                                           tmp_path: Path) -> None:
    with model_double() as (server, proposer):
        document = plan_goal(initialised_graph, tmp_path,
                             "Launch the beta for $500 in 10 days", proposer,
                             {"proposer": "anthropic"}, 2.0, 900)
    rollups = {r["constraint_id"]: r for r in document["rollup"]}
    assert set(rollups) == {"budget", "deadline"}
    assert [(r["totals"]["mid"], r["status"]) for r in rollups.values()] == [(4.0, "SAT")] * 2
    assert "metric: cost_usd" in server.prompts_for("record_task_dag")[0]


def test_every_call_s_prompt_and_cost_are_in_the_ledger(initialised_graph: GraphStore,
                                                         tmp_path: Path) -> None:
    with model_double() as (server, proposer):
        kernel, root = start(initialised_graph, "Report the total of the sales ledger", [],
                             2.0, 900, proposer, tmp_path, default_workspace_root())
        solve(kernel, root)
    entries = [e for e in load_entries(initialised_graph, kernel.run.run_id)[2]
               if e.kind == "proposal"]
    assert len(entries) == len(server.prompts)
    assert all(e.data()["estimate"]["cost_usd"] > 0 for e in entries)
    assert all(re.fullmatch(r"[0-9a-f]{64}", e.data()["request"]["fingerprint"]) for e in entries)


def _person(question: dict) -> IntakeAnswer:  # type: ignore[type-arg]
    """Answers the clarifying question, then confirms the goal as understood."""
    if question["kind"] == "clarify":
        return IntakeAnswer(answers=["login tokens"])
    return IntakeAnswer(verdict="confirm")


def test_intake_asks_then_commits_to_the_goal_the_answer_made_clear(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    with model_double() as (server, proposer):
        kernel, root = start(initialised_graph, "fix the auth thing", [], 2.0, 900, proposer,
                             tmp_path, default_workspace_root(), extra={"intake": True})
        kernel = dataclasses.replace(kernel, human_prompt=_person)
        outcome = solve(kernel, root)
    assert outcome.status == "resolved", outcome
    goal = kernel.tree.get(root)
    assert goal.description == "Make login tokens expire after one hour"
    first, second = server.prompts_for("record_goal")
    assert "login tokens" in second and "login tokens" not in first
    titles = [c.title for c in kernel.constraints.get_many(
        kernel.constraints.roles(root)["core"])]
    assert titles == ["expired tokens are refused"]


def test_a_person_is_asked_for_time_only_when_the_tree_cannot_pay_and_told_what_it_holds(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    """60 s for the tree, and its first resolve, before any answer was seen, is estimated
    at 126 s: nothing in the tree can pay, so a person is asked, and the question says
    what the tree holds."""
    with model_double() as (_, proposer):
        kernel, root = start(initialised_graph, "Report the total of the sales ledger", [],
                             2.0, 60, proposer, tmp_path, default_workspace_root())
        outcome = solve(kernel, root)
    assert outcome.status != "resolved" and len(outcome.waiting_on) == 1, outcome
    (asked,) = list_requests(initialised_graph)
    assert asked["capability_tag"] == "budget" and asked["goals"][0]["id"] == root
    assert "the tree holds $" in asked["rationale"], asked["rationale"]
    assert "with the goal and above it" in asked["rationale"]

def _launch(initialised_graph: GraphStore, tmp_path: Path):  # type: ignore[no-untyped-def]
    with model_double() as (server, proposer):
        kernel, root = start(initialised_graph, "Announce the product launch", [], 2.0, 900,
                             proposer, tmp_path, default_workspace_root())
        return server, kernel, solve(kernel, root)


def test_a_conflict_reopens_once_and_the_next_split_learns_from_its_reason(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    """The announcement, unable to see the date, guesses another: the review finds them
    in conflict and the root is reopened. Its decompose prompt says why, with each
    part's output as evidence, so the next split lets the announcement see the date;
    the coupling constraint is each new part's own, and the tree resolves."""
    server, kernel, outcome = _launch(initialised_graph, tmp_path)
    assert outcome.status == "resolved", outcome
    first, second = server.prompts_for("record_decomposition")
    assert GUESSED_DATE not in section(first, "Why the last decomposition was reopened")
    reason = section(second, "Why the last decomposition was reopened")
    assert f"We launch on {GUESSED_DATE}." in reason and LAUNCH_DATE in reason, reason
    assert "coupling_goes_to" in reason and DATE_RULE in reason
    assert len(server.prompts_for("record_review")) == 2
    note = next(p for p in server.prompts_for("record_output")[::-1]
                if "Write the launch announcement" in p)
    assert DATE_RULE in section(note, "Constraints")  # pushed to the part, not only the root
    assert f"We launch on {LAUNCH_DATE}." in _final(kernel, outcome)


def test_the_same_conflict_right_after_its_reopening_is_refused_by_name(
        initialised_graph: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the reason in the decompose prompt the next split is the same, and so is
    the conflict: refused at once, naming the pair, not reviewed again and again."""
    real = adapter._template

    def without_reason(template: str) -> string.Template:
        text = real(template).template
        return string.Template(text.replace("$feedback", "(removed)")
                               if template == "decompose" else text)

    monkeypatch.setattr(adapter, "_template", without_reason)
    server, kernel, outcome = _launch(initialised_graph, tmp_path)
    assert outcome.status == "infeasible", outcome
    assert len(server.prompts_for("record_review")) == 2
    refusal = [e.data() for e in load_entries(initialised_graph, kernel.run.run_id)[2]
               if e.kind == "refusal"][-1]
    assert refusal["reasons"] == ["CONTRADICTION_REPEATED"]
    assert "'pick the launch date' and 'write the launch announcement'" in refusal["detail"]


# Each (template, input) whose removal must break a scenario, and the scenario it breaks.
ABLATIONS = [
    ("resolve", "feedback", "code"), ("resolve", "sandbox", "code"),
    ("generate_feedback", "violations", "code"),
    ("resolve", "inputs", "parts"), ("assemble", "parts", "parts"),
    ("resolve", "feedback", "words"), ("plan_tasks", "planned_constraints", "plan"),
    ("extract_goal", "clarifications", "intake"), ("extract_goal", "intent_classes", "intake"),
    ("resolve", "inherited", "sales"), ("decompose", "constraints", "sales"),
    ("decompose", "feedback", "reopen"), ("resolve", "last_output", "code"),
]
SCENARIOS = {
    "code": test_code_with_a_wrong_first_attempt_is_fixed_from_the_failure_in_the_prompt,
    "parts": test_a_part_totals_the_rows_its_dependency_produced,
    "words": test_a_word_limit_is_decided_on_the_words_the_kernel_counts,
    "plan": test_a_plan_estimates_the_metrics_its_constraints_name,
    "intake": test_intake_asks_then_commits_to_the_goal_the_answer_made_clear,
    "sales": lambda graph, tmp_path: _sales_resolves(graph, tmp_path),  # defined below
    "reopen": test_a_conflict_reopens_once_and_the_next_split_learns_from_its_reason,
}


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize(("operation", "name", "scenario"), ABLATIONS)
def test_a_prompt_without_its_input_makes_the_scenario_fail(
        operation: str, name: str, scenario: str, initialised_graph: GraphStore,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = adapter._template

    def without(template: str) -> string.Template:
        text = real(template).template
        if template == operation:
            assert f"${name}" in text
            text = text.replace(f"${name}", "(removed)")
        return string.Template(text)

    monkeypatch.setattr(adapter, "_template", without)
    with pytest.raises(AssertionError):
        SCENARIOS[scenario](initialised_graph, tmp_path)  # type: ignore[operator]


@pytest.mark.slow
def test_a_tree_of_about_a_fifth_of_a_dollar_resolves_within_a_budget_of_0_6(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    """Estimates from the answers seen so far, not from max_tokens: about $0.21 of real
    cost resolves in a $0.6 budget, and replays identically (grants replaying: see
    test_paths.test_a_replay_draws_the_grants_the_recorded_estimates_drew)."""
    with model_double() as (_, proposer):
        kernel, root = start(initialised_graph, "Report the total of the sales ledger", [],
                             0.6, 900, proposer, tmp_path, default_workspace_root())
        outcome = solve(kernel, root)
    assert outcome.status == "resolved", outcome
    run_id = kernel.run.run_id
    events = initialised_graph.run("summary/budget", {"run_id": run_id})
    spent = sum(int(e["cost"] or 0) for e in events if e["kind"] == "spend") / 1e6
    assert 0.15 < spent < 0.3, spent
    result = replay(store_settings(initialised_graph, data_dir), run_id)
    assert result.divergence is None and result.identical, result



SALES_GOAL = ("Build the category sales report: read the rows, sum each category and rank "
              "them")
SALES_TESTS = {"parse_rows(text) gives the (category, amount) pairs": "test_parses_rows",
               "totals_per_category(rows) sums each category": "test_totals_per_category",
               "report_sorted(totals) lists the categories largest first": "test_report_sorted"}


def _sales_report(graph: GraphStore, tmp_path: Path):  # type: ignore[no-untyped-def]
    """The root has three tests; the double splits it into a part per function."""
    with model_double() as (server, proposer):
        kernel, root = start(graph, SALES_GOAL, [_core(title, {"check": "test", "tests": [test]})
                                                 for title, test in SALES_TESTS.items()],
                             3.0, 900, proposer, tmp_path, default_workspace_root())
        outcome = solve(kernel, root)
    return server, kernel, outcome


@needs_sandbox
def test_parts_answer_for_the_root_s_tests_so_an_assembly_that_writes_none_resolves(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    """The root's three tests are given one to each part; each part's prompt shows the
    one it answers for (and the others, which it relies on), defines that test, and is
    verified against it; the assembly writes no tests, and the whole passes the root's
    tests because the parts' code and tests are in it, which pass under plain pytest.
    The run replays identically."""
    _sales_resolves(initialised_graph, tmp_path, data_dir)


def _sales_resolves(initialised_graph: GraphStore, tmp_path: Path,
                    data_dir: Path | None = None) -> None:
    server, kernel, outcome = _sales_report(initialised_graph, tmp_path)
    assert outcome.status == "resolved", outcome
    decompose = server.prompts_for("record_decomposition")[0]
    assert "answers_for" in decompose and "assembly_answers_for" in decompose
    for part, test in (("Read the category rows", "test_parses_rows"),
                       ("Sum the amounts per category", "test_totals_per_category"),
                       ("Rank the categories by total", "test_report_sorted")):
        prompt = next(p for p in server.prompts_for("record_output") if f"({part.lower()})" in p)
        owed, relied = prompt.split("\nrelies_on:")
        assert f"define the tests {test} in" in owed.split("Inherited from the goals above")[1]
        assert f"define tests named exactly {test}." in prompt  # the output contract
        assert all(other in relied for other in SALES_TESTS.values() if other != test)
        leaf = next(p for p in server.prompts_for("record_leaf") if f"({part.lower()})" in p)
        assert f"define the tests {test} in" in leaf
        # identification is told which of the inherited constraints the part answers for
        named = next(p for p in server.prompts_for("record_constraints")
                     if p.startswith(f"Goal:\n{part}"))
        owes, relies = named.split("\nanswers_for:")[1].split("\nrelies_on:")
        assert f"define the tests {test} in" in owes and test not in relies
    final = kernel.tree.get(outcome.root_id).require("final_artifact_id")
    record, data = load_artifact(initialised_graph, tmp_path, final)
    files = artifact_files(record, data)
    for test in SALES_TESTS.values():  # the root's own test file, and the part's
        assert sum(f"def {test}()".encode() in text for text in files.values()) == 2, files
    assert not any(name.endswith("__assembly.py") for name in files)  # it wrote none
    out = tmp_path / "deliverable"
    save_files(files, out)
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                         cwd=out, capture_output=True, text=True, check=False)
    assert ran.returncode == 0 and "6 passed" in ran.stdout, ran.stdout + ran.stderr
    if data_dir is not None:  # when the test runs it, not an ablation
        head, size, entries = load_entries(initialised_graph, kernel.run.run_id)
        assert verify_chain(entries, head=head, size=size) == []
        result = replay(store_settings(initialised_graph, data_dir), kernel.run.run_id)
        assert result.divergence is None and result.identical, result


@needs_sandbox
def test_a_decomposition_leaving_the_root_s_tests_unanswered_is_refused_naming_them(
        initialised_graph: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A decomposition that gives the root's tests to no part is refused before any part
    runs; the repair turn names each one, and a second such answer refuses the root."""
    monkeypatch.setitem(model_double_module.HANDLERS, "record_decomposition",
                        lambda prompt: {**model_double_module.decompose(prompt),
                                        "assembly_answers_for": [], "children": [
                                            {**c, "answers_for": []} for c in
                                            model_double_module.decompose(prompt)["children"]]})
    server, kernel, outcome = _sales_report(initialised_graph, tmp_path)
    assert outcome.status == "infeasible", outcome
    assert kernel.deps.children(outcome.root_id) == []
    [(tool, said)] = server.repairs
    assert tool == "record_decomposition" and said.startswith("The answer was refused")
    for title in SALES_TESTS:
        assert "nothing answers for constraint:" in said and repr(title) in said


@needs_sandbox
def test_without_coverage_the_parts_miss_the_root_s_interface_and_the_assembly_is_refused(
        initialised_graph: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Coverage switched off (the decomposition's mapping is still given and checked, but
    no part is handed what it answers for): each part names its function from its own
    goal, the whole fails the root's tests twice, and the root is refused."""
    monkeypatch.setattr(coverage.Coverage, "owed_by", lambda self, key: [])
    server, kernel, outcome = _sales_report(initialised_graph, tmp_path)
    assert outcome.status == "infeasible", outcome
    entries = load_entries(initialised_graph, kernel.run.run_id)[2]
    refusal = [e.data() for e in entries if e.kind == "refusal"][-1]
    assert refusal["reasons"] == ["ASSEMBLY_VIOLATES_CONSTRAINTS"]
    assert "test_parses_rows" in refusal["detail"] and "ImportError" in refusal["detail"]
    assert len(server.prompts_for("record_assembly")) == 2


def test_what_resolved_parts_leave_unspent_pays_the_review_their_parent_needs(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    """150 s for the whole tree: the root keeps a fifth (30 s) when it splits, and its
    consistency review, an operation not seen before, is estimated at 33.7 s. The parts
    spent milliseconds of their 60 s each; what they did not spend came back to the root
    as each resolved, so the review is paid from it and nobody is asked for more time."""
    with model_double() as (server, proposer):
        kernel, root = start(initialised_graph, "Report the total of the sales ledger", [],
                             2.0, 150, proposer, tmp_path, default_workspace_root())
        outcome = solve(kernel, root)
    assert outcome.status == "resolved", outcome
    assert outcome.waiting_on == () and list_requests(initialised_graph) == []
    assert len(server.prompts_for("record_review")) == 1
    back = [e for e in initialised_graph.run("summary/budget", {"run_id": kernel.run.run_id})
            if e["kind"] == "refund" and e["goal_id"] == root]
    assert len(back) == 2 and all(e["time"] > 50_000 for e in back), back
    result = replay(store_settings(initialised_graph, data_dir), kernel.run.run_id)
    assert result.divergence is None and result.identical, result


def _judged(title: str, rubric: str) -> ConstraintSpec:
    return ConstraintSpec(type="semantic", domain="quality", title=title,
                          payload={"rubric": rubric}, provenance=HUMAN)


def test_a_document_goal_is_asked_for_as_a_document_and_measured_as_one(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    """A release note is checked by no test: its contract asks for the note itself (no
    main.py, no pytest), and its word limit is decided on the words the kernel counts."""
    with model_double() as (server, proposer):
        kernel, root = start(initialised_graph, "Write a release note for the CSV tool",
                             [_core("at most 60 words", {"check": "arith", "expr": "words <= 60"})],
                             2.0, 900, proposer, tmp_path, default_workspace_root())
        outcome = solve(kernel, root)
    assert outcome.status == "resolved", outcome
    (prompt,) = server.prompts_for("record_output")
    contract = section(prompt, "How the output is checked")
    assert "main.py" not in contract and "pytest" not in contract, contract
    assert "`content` is the document itself" in contract and "give no `tests`" in contract
    output = ResolutionOutput.model_validate_json(_final(kernel, outcome))
    assert output.format == "markdown" and output.tests == {}
    (attempt,) = kernel.attempts.of_goal(root)
    (check,) = attempt.verification.checks  # type: ignore[union-attr]
    assert check.detail["facts"] == {"words": float(len(output.content.split()))}


@needs_sandbox
def test_the_judge_is_shown_the_test_run_of_the_output_it_judges(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    """A judged constraint about what the tests show is judged on the run: failed while
    test_counts fails, passed once it passes."""
    with model_double() as (server, proposer):
        kernel, root = start(initialised_graph, "Write a Python function count_words(text) "
                             "returning how many words the text has",
                             [_core("counts words", {"check": "test", "tests": ["test_counts"]}),
                              _judged(model_double_module.TESTED_RULE, "the tests pass")],
                             2.0, 900, proposer, tmp_path, default_workspace_root())
        outcome = solve(kernel, root)
    assert outcome.status == "resolved", outcome
    first, second = server.prompts_for("record_judgments")
    assert "test_counts: FAILED" in section(first, "Its test run in the sandbox")
    assert "tests_failed: 1" in first
    assert "test_counts: PASSED" in section(second, "Its test run in the sandbox")
    failed = kernel.attempts.of_goal(root)[0].verification.failed()  # type: ignore[union-attr]
    assert any(c.detail.get("rubric_trace") == "the run shows test_counts FAILED"
               for c in failed), failed


@needs_sandbox
def test_a_ranking_is_made_from_what_each_candidate_provides(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    """Two tools provide generate_code; the kernel lists the outliner first, but its
    description says it writes no code, so a model ranking from the prompt picks the
    other for a code goal."""
    Registry(initialised_graph).register(ResolverSpec(
        id="resolver:outliner-0", label="outliner", capabilities=["generate_code"],
        description="Drafts outlines: headings only, no code"))
    with model_double() as (server, proposer):
        kernel, root = start(initialised_graph, "Write a Python function count_words(text) "
                             "returning how many words the text has",
                             [_core("counts words", {"check": "test", "tests": ["test_counts"]})],
                             2.0, 900, proposer, tmp_path, default_workspace_root())
        solve(kernel, root)
    (ranking,) = server.prompts_for("record_tool_plan")
    listed = section(ranking, "Candidate tools")
    assert listed.index("resolver:outliner-0") < listed.index("resolver:claude-code-0")
    assert "headings only, no code" in listed and "generate_code" in listed
    assert kernel.attempts.of_goal(root)[0].resolver_id == "resolver:claude-code-0"


def test_a_capability_gap_is_judged_against_the_sandbox_s_limits(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    """A rate on a remote service: the gap prompt says the sandbox reaches no network
    (and its time, memory and disk), so the model says software built here cannot
    provide it, and a person is asked instead of a build being tried."""
    with model_double() as (server, proposer):
        kernel, root = start(initialised_graph, "Fetch the EUR to USD exchange rate",
                             [ConstraintSpec(type="logic", domain="data",
                                             title="reports a positive rate",
                                             payload={"check": "arith", "expr": "rate > 0"},
                                             provenance=HUMAN)],
                             2.0, 900, proposer, tmp_path, default_workspace_root(),
                             max_attempts=2)
        outcome = solve(kernel, root)
    assert outcome.status != "resolved" and outcome.waiting_on, outcome
    (prompt,) = server.prompts_for("record_gap")
    limits = section(prompt, "What software built here runs under")
    assert "no request leaves the sandbox" in limits
    assert all(word in limits for word in ("s wall", "MiB memory", "Disk:")), limits
    gap = kernel.tree.get(root).capability_gap
    assert gap is not None and gap["buildable"] is False, gap
    assert not [g for g in kernel.deps.children(root)
                if kernel.tree.get(g).purpose == "build"]


def test_an_output_refused_for_its_spending_is_not_judged(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    """The first answer already spends past a cost limit no attempt can take back: the
    goal is refused for it, and no judge is paid to look at the output."""
    with model_double() as (server, proposer):
        kernel, root = start(initialised_graph, "Write a summary of what a graph database is",
                             [ConstraintSpec(type="logic", domain="cost", title="nearly free",
                                             payload={"check": "arith",
                                                      "expr": "cost_usd <= 0.0001"},
                                             provenance=HUMAN),
                              _judged("reads well", "plain words")],
                             2.0, 900, proposer, tmp_path, default_workspace_root())
        outcome = solve(kernel, root)
    assert outcome.status == "infeasible", outcome
    refusal = [e.data() for e in load_entries(initialised_graph, kernel.run.run_id)[2]
               if e.kind == "refusal"][-1]
    assert refusal["reasons"] == ["SPENT_PAST_LIMIT"], refusal
    assert server.prompts_for("record_judgments") == []
    (attempt,) = kernel.attempts.of_goal(root)
    unjudged = [c for c in attempt.verification.checks  # type: ignore[union-attr]
                if "judge" in c.detail]
    assert len(unjudged) == 1 and "refused for its spending" in unjudged[0].detail["judge"]


def test_each_part_reports_its_own_figure_of_a_sum_the_whole_is_checked_by(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    """The whole's latency is the sum of its stages'. Each stage relies on the whole for
    the sum, and its prompts say its own latency is one of the terms: it reports it, so
    the assembly's sum is decided (a part told to take the sum as met reports nothing,
    and the sum cannot be computed)."""
    with model_double() as (server, proposer):
        kernel, root = start(initialised_graph, "Design the two-stage ingest of the orders "
                             "export", [ConstraintSpec(
                                 type="logic", domain="latency", title="under 500 ms in all",
                                 payload={"check": "arith", "expr": "sum_latency_ms <= 500"},
                                 provenance=HUMAN)],
                             2.0, 900, proposer, tmp_path, default_workspace_root())
        outcome = solve(kernel, root)
    refusals = [e.data() for e in load_entries(initialised_graph, kernel.run.run_id)[2]
                if e.kind == "refusal"]
    assert outcome.status == "resolved", (outcome, refusals)
    for stage in ("stage: extract", "stage: load"):
        for tool in ("record_constraints", "record_output"):
            prompt = next(p for p in server.prompts_for(tool) if stage in p.lower())
            relied = " ".join(prompt.split("\nrelies_on:")[1].split())
            assert "Report the latency_ms of this part in metrics" in relied, prompt
            assert "no part alone may pass it" in relied
            assert "take them as met" not in prompt
    root_goal = kernel.tree.get(outcome.root_id)
    assert root_goal.verification is not None and root_goal.verification.verdict == "SAT"
