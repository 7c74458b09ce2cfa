"""Scripts are checked when loaded, so a run never starts on one that cannot match."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel.protocol import NoProposalError, ResolveRequest
from resolvers.scripted import ScriptedProposer, ScriptError, check_judgments, load_script


def test_a_judgment_must_name_a_constraint_the_run_can_have(tmp_path: Path) -> None:
    path = tmp_path / "judged.yaml"
    path.write_text(
        "version: 1\nproposals:\n- operation: identify_constraints\n  output:\n"
        "    constraints: [{type: semantic, domain: docs, title: is clear, explicit: true}]\n"
        "- operation: verify_semantic\n  output:\n    checks:\n"
        "    - {constraint_id: is clear, passed: true, sigma: 0.9, rubric_trace: ok}\n"
        "    - {constraint_id: 'constraint:abc', passed: true, sigma: 0.9, rubric_trace: ok}\n"
        "    - {constraint_id: is short, passed: true, sigma: 0.9, rubric_trace: ok}\n")
    script = load_script(path)
    check_judgments(path, script, {"is short"})  # a core constraint's title
    with pytest.raises(ScriptError, match=r"checks\.2\.constraint_id: 'is short' names no "
                                          r"constraint .*'is clear'"):
        check_judgments(path, script, set())


def test_an_unknown_output_field_is_named_with_the_one_it_likely_meant(tmp_path: Path) -> None:
    path = tmp_path / "code.yaml"
    path.write_text("version: 1\nproposals:\n- operation: resolve\n  output:\n"
                    "    artifact_type: code\n    format: python\n    code: print(1)\n")
    with pytest.raises(ScriptError) as raised:
        load_script(path)
    message = str(raised.value)
    assert "proposals.0.output.code: not a field of resolve's output" in message
    assert "(did you mean 'content'?)" in message and "it lacks content" in message


def _asked(operation: str, summary: str) -> ResolveRequest:
    return ResolveRequest(operation=operation, goal_id="goal:x", goal_description=summary,
                          payload={"goal_summary": summary})


def test_a_request_no_entry_answers_says_why(tmp_path: Path) -> None:
    path = tmp_path / "globs.yaml"
    path.write_text("version: 1\nproposals:\n"
                    "- operation: classify_leaf\n  goal: 'write the docs*'\n"
                    "  output: {is_leaf: true, leaf_kind: atomic, leaf_reason: small}\n")
    proposer = ScriptedProposer(load_script(path))
    with pytest.raises(NoProposalError, match=r"no classify_leaf entry's goal pattern matches "
                                              r"it \(they are 'write the docs\*'\)"):
        proposer.propose(_asked("classify_leaf", "Write the tests"), 0)
    with pytest.raises(NoProposalError, match=r"the classify_leaf entry matching it is "
                                              r"used up"):
        proposer.propose(_asked("classify_leaf", "Write the docs for it"), 1)
    with pytest.raises(NoProposalError, match="it has no decompose entry at all"):
        proposer.propose(_asked("decompose", "Write the docs"), 0)


def test_a_feedback_entry_must_name_a_constraint_the_run_can_have(tmp_path: Path) -> None:
    """A diagnosis naming nothing would leave the failure undiagnosed (its failure mode
    then named after the rows, not the script's): refused at load, with what it could mean."""
    path = tmp_path / "feedback.yaml"
    path.write_text(
        "version: 1\nproposals:\n- operation: identify_constraints\n  output:\n"
        "    constraints: [{type: logic, domain: software, title: counts the rows, "
        "explicit: true, payload: {check: test, tests: [test_rows]}}]\n"
        "- operation: generate_feedback\n  output:\n    summary: off by one\n"
        "    failure_mode: row_count_ignores_goal\n    per_constraint:\n"
        "    - {constraint_id: count the rows, diagnosis: d, fix: f, evidence: e}\n")
    script = load_script(path)
    with pytest.raises(ScriptError, match=r"proposals\.1\.output\.per_constraint\.0\."
                                          r"constraint_id: 'count the rows' names no "
                                          r"constraint of this run \(did you mean "
                                          r"'counts the rows'\?"):
        check_judgments(path, script, {"exits 1 on a missing column"})
    fixed = path.read_text().replace("constraint_id: count the rows",
                                     "constraint_id: counts the rows")
    path.write_text(fixed)
    check_judgments(path, load_script(path), set())


def test_a_selection_must_name_constraints_the_run_can_have(tmp_path: Path) -> None:
    """A selection naming nothing would silently keep only the core: refused at load, with
    the titles it could mean; titles the intake's person adds count as the run's own."""
    path = tmp_path / "select.yaml"
    path.write_text(
        "version: 1\nproposals:\n- operation: identify_constraints\n  output:\n"
        "    constraints: [{type: semantic, domain: docs, title: names every flag, "
        "explicit: true}]\n"
        "- operation: select_constraints\n  output:\n"
        "    constraint_ids: ['constraint:abc', words <= 50, name every flag]\n"
        "    rationale: both\n"
        "intake:\n- add: ['logic:cost:words <= 50']\n")
    script = load_script(path)
    with pytest.raises(ScriptError, match=r"proposals\.1\.output\.constraint_ids\.2: "
                                          r"'name every flag' names no constraint of this "
                                          r"run \(did you mean 'names every flag'\?"):
        check_judgments(path, script, set())
    path.write_text(path.read_text().replace(", name every flag]", ", names every flag]"))
    check_judgments(path, load_script(path), set())
