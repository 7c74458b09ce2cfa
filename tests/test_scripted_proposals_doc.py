"""docs/scripted-proposals.md is enough to write a script: its example runs as written,
and its operation reference is the one the models generate."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kernel.protocol.reference import BEGIN, END, operations_markdown, rewrite
from kernel.store import GraphStore
from tests.sandbox_support import needs_sandbox

DOC = Path(__file__).resolve().parents[1] / "docs" / "scripted-proposals.md"


def test_the_operation_reference_is_generated_from_the_models() -> None:
    text = DOC.read_text()
    written = text[text.index(BEGIN):text.index(END) + len(END)]
    assert written == operations_markdown(), \
        "regenerate it: python -m kernel.protocol.reference --write"
    assert (text.count(BEGIN), text.count(END)) == (1, 1)


def test_regenerating_the_reference_leaves_one_section_however_many_end_markers(
        tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(f"intro\n{BEGIN}\nold\n{END}\n{END}\n{END}\noutro\n")
    rewrite(doc)
    assert doc.read_text() == f"intro\n{operations_markdown()}\noutro\n"


@pytest.mark.slow
@needs_sandbox
def test_the_example_runs_as_the_doc_says(data_dir: Path, tmp_path: Path) -> None:
    text = DOC.read_text()
    block = text.split("<!-- example:begin -->")[1].split("<!-- example:end -->")[0]
    (tmp_path / "add.script.yaml").write_text(block.split("```yaml\n")[1].split("```")[0])
    command = re.search(r"```sh\n(kernel solve .*)\n```", text)
    assert command is not None
    args = re.findall(r'"[^"]*"|\S+', command.group(1))[1:]
    env = {**os.environ, "KERNEL_DATA_DIR": str(data_dir),
           "KERNEL_GRAPH_NAME": "doc-example", "COLUMNS": "120"}
    done = subprocess.run([sys.executable, "-c", "from kernel.cli.app import main; main()",
                           *[a.strip('"') for a in args], "--json"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["status"] == "resolved" and outcome["sigma_system"] == 0.9
    assert sorted(p.name for p in (tmp_path / "add").iterdir()) == ["main.py", "test_add.py"]
    tested = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                            cwd=tmp_path / "add", capture_output=True, text=True, check=False)
    assert tested.returncode == 0, tested.stdout


def test_the_planning_example_plans_and_passes_check_plan_as_the_doc_says(
        initialised_graph: GraphStore, data_dir: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from kernel.cli.app import app
    from kernel.plan.checks import check_plan
    from tests.conftest import store_env

    text = DOC.read_text()
    block = text.split("<!-- plan-example:begin -->")[1].split("<!-- plan-example:end -->")[0]
    script = tmp_path / "wiki.plan.yaml"
    script.write_text(block.split("```yaml\n")[1].split("```")[0])
    plan_file = tmp_path / "plan.json"
    env = {**store_env(initialised_graph, data_dir), "COLUMNS": "160"}
    result = CliRunner().invoke(app, ["plan", "--proposer", "scripted", "--script",
                                      str(script), "--out", str(plan_file)], env=env,
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    doc = json.loads(plan_file.read_text())
    assert doc["repair"]["chosen"] == {"convert": "convert-tool"}
    assert doc["repair"]["cost"] == {"cost_usd": 400.0}
    results = check_plan(doc)
    assert all(r.passed for r in results) and any(r.id == "7.3" for r in results)
