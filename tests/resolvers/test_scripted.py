"""Scripts are checked when loaded, so a run never starts on one that cannot match."""

from __future__ import annotations

from pathlib import Path

import pytest

from resolvers.scripted import ScriptError, check_judgments, load_script


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
