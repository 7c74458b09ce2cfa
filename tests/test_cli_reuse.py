"""What ``kernel solve`` says about answers it reused, how ``--fresh`` asks again, and a
script's feedback naming a constraint the run cannot have, through the real command."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_cli import Kernel

SCRIPT = """version: 1
proposals:
- operation: identify_constraints
  output:
    constraints: [{type: semantic, domain: docs, title: names every flag, explicit: true,
                   payload: {rubric: each new flag is named}}]
- operation: resolve
  repeat: true
  output: {artifact_type: doc, format: markdown, content: "--top and --by are new"}
- operation: verify_semantic
  repeat: true
  output: {checks: [{constraint_id: names every flag, passed: true, sigma: 0.9,
                     rubric_trace: both flags named}]}
- operation: classify_leaf
  repeat: true
  output: {is_leaf: true, leaf_kind: atomic, leaf_reason: one note}
"""
GOAL = "Write the release note of the new flags"


@pytest.fixture
def kernel(data_dir: Path) -> Iterator[Kernel]:
    k = Kernel(data_dir)
    yield k
    k("db", "reset", "--yes")


@pytest.mark.slow
def test_a_run_says_what_it_reused_and_fresh_asks_again(kernel: Kernel,
                                                        tmp_path: Path) -> None:
    script = tmp_path / "note.script.yaml"
    script.write_text(SCRIPT)
    solve = ("solve", GOAL, "--proposer", "scripted", "--script", str(script),
             "--progress", "plain")
    _, first = kernel(*solve)
    assert "reused" not in first
    _, again = kernel(*solve)
    assert "reused 4 earlier answer(s) instead of asking again ('kernel solve --fresh'" \
        in again
    assert "identify_constraints for node:" in again and "from goal node:" in again
    assert "classify_leaf for node:" in again
    assert "] reused resolve from ledger:" in again  # the progress line
    _, log = kernel("log", "latest")
    assert "identification_reused: goal node:" in log and "answer_reused: resolve from" in log
    _, verified = kernel("ledger", "verify", "latest")
    assert "ledger intact" in verified and "the committed state is what it implies" in verified
    _, fresh = kernel(*solve, "--fresh")
    assert "reused" not in fresh


def test_feedback_naming_no_constraint_is_refused_when_the_script_loads(
        kernel: Kernel, tmp_path: Path) -> None:
    script = tmp_path / "feedback.script.yaml"
    script.write_text(SCRIPT + """- operation: generate_feedback
  output:
    summary: a flag is missing
    failure_mode: flag_missing
    per_constraint: [{constraint_id: names each flag, diagnosis: d, fix: f, evidence: e}]
""")
    code, message = kernel("solve", GOAL, "--proposer", "scripted", "--script", str(script),
                           ok=False)
    assert code == 2
    assert "'names each flag' names no constraint of this run (did you mean " \
           "'names every flag'?" in message
    _, runs = kernel("runs")
    assert "run:" not in runs  # nothing was stored


def test_a_selection_naming_no_constraint_is_refused_when_the_script_loads(
        kernel: Kernel, tmp_path: Path) -> None:
    script = tmp_path / "select.script.yaml"
    script.write_text(SCRIPT + """- operation: select_constraints
  output: {constraint_ids: [names each flag], rationale: the one that matters}
""")
    code, message = kernel("solve", GOAL, "--proposer", "scripted", "--script", str(script),
                           ok=False)
    assert code == 2
    assert "constraint_ids.0: 'names each flag' names no constraint of this run (did you " \
           "mean 'names every flag'?" in message
    assert len(message.strip().splitlines()) == 1
    _, runs = kernel("runs")
    assert "run:" not in runs  # nothing was stored
