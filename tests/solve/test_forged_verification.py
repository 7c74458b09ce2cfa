"""A proposal cannot forge its way past its tests: verdicts come from the kernel's report,
cross-checked with the exit status, through the real store."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kernel.core.envelopes import ConstraintSpec, Provenance
from kernel.solve.dispatch import solve
from kernel.store import GraphStore
from resolvers.sandbox.runner import default_workspace_root
from resolvers.scripted import ScriptedProposer
from tests.sandbox_support import needs_sandbox
from tests.starting import start

pytestmark = needs_sandbox

GOAL = "Write value() returning two"
CORE = [ConstraintSpec(type="logic", domain="software", title="value is two",
                       payload={"check": "test", "tests": ["test_value"]},
                       provenance=Provenance(source="human"))]
FAILING_TEST = "from main import value\n\n\ndef test_value():\n    assert value() == 2\n"
FAKE_PASS = "print('PASSED test_main.py::test_value')\n"


# The code under test, when pytest imports it, writes a passing run to the descriptor the
# runner reports on (argv[1]) and ends before pytest can report the real outcome.
FORGED_RECORDS = """import json, os, sys
for when in ("setup", "call", "teardown"):
    record = {"node": "test_main.py::test_value", "when": when, "outcome": "passed"}
    os.write(int(sys.argv[1]), (json.dumps(record) + "\\n").encode())
os.write(int(sys.argv[1]), b'{"node": "", "when": "session", "outcome": "finished"}\\n')
os._exit(0)
"""


def _script(tmp_path: Path, files: dict[str, str], tests: dict[str, str],
            before: str = "") -> ScriptedProposer:
    resolve: dict[str, Any] = {
        "artifact_type": "code", "format": "python", "files": files, "tests": tests,
        "content": before + FAKE_PASS + "\n\ndef value():\n    " + FAKE_PASS.strip()
        + "\n    return 1\n"}
    script = {"version": 1, "proposals": [
        {"operation": "identify_constraints", "goal": "*", "output": {"constraints": []}},
        {"operation": "resolve", "goal": "*", "repeat": True, "output": resolve}],
        "fallback": {"classify_leaf": {"output": {
            "is_leaf": True, "leaf_kind": "atomic", "leaf_reason": "one function"}}}}
    path = tmp_path / "forged.script.yaml"
    path.write_text(yaml.safe_dump(script, sort_keys=False))
    return ScriptedProposer.from_file(path)


@pytest.fixture
def workspaces() -> Iterator[Path]:
    root = default_workspace_root() / f"forged-{uuid.uuid4().hex[:8]}"
    root.mkdir(mode=0o711)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize(("files", "tests", "failure_mode", "before"), [
    ({"conftest.py": FAKE_PASS + "import _pytest.reports\n"
                     "_pytest.reports.TestReport.passed = property(lambda self: True)\n",
      "pytest.ini": "[pytest]\naddopts = -k nothing\n", "sitecustomize.py": "raise SystemExit(0)\n"},
     {"test_main.py": FAILING_TEST}, None, ""),  # no check diagnosed it, no script did either
    ({}, {"test_main.py": "import os\nos._exit(0)\n" + FAILING_TEST},
     "failure:test_report_missing", ""),
    ({}, {"test_main.py": "import atexit, os\natexit.register(os._exit, 0)\n" + FAILING_TEST},
     "failure:test_report_mismatch", ""),
    ({}, {"test_main.py": FAILING_TEST}, "failure:test_report_missing", FORGED_RECORDS),
], ids=["proposal-config-and-fake-output", "exit-before-report", "exit-status-disagrees",
        "records-forged-at-import"])
def test_a_forged_pass_cannot_resolve_a_goal(initialised_graph: GraphStore, tmp_path: Path,
                                             workspaces: Path, files: dict[str, str],
                                             tests: dict[str, str], failure_mode: str,
                                             before: str) -> None:
    kernel, root = start(initialised_graph, GOAL, CORE, budget_usd=1.0, time_seconds=300,
                         proposer=_script(tmp_path, files, tests, before), data_dir=tmp_path,
                         workspace_root=workspaces, max_attempts=1)
    outcome = solve(kernel, root)
    assert outcome.status != "resolved"
    first = kernel.attempts.of_goal(root)[0]
    assert first.verdict == "UNSAT"
    check = next(c for c in first.verification.checks if not c.passed)
    assert check.detail["tests"] == {"test_value": "FAILED"} or "report_problem" in check.detail
    assert first.failure_mode == failure_mode
    if before:
        assert "forged" in check.detail["report_problem"]
    violated = initialised_graph.execute_adhoc(
        "MATCH (:Attempt {id: $a})-[v:VIOLATED]->(c:Constraint) RETURN c.title AS t, v.check AS k",
        {"a": first.id}, write=False).records()
    assert violated == [{"t": "value is two", "k": "tests"}]
    assert list(workspaces.iterdir()) == []  # each sandbox workspace is gone once answered
