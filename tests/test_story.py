"""``kernel log RUN`` tells why an attempt failed; ``kernel show ID`` opens any node."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernel.cli.app import app
from kernel.core.ledger import load_entries
from kernel.errors import KernelError
from kernel.paths import seeds_dir
from kernel.solve.dispatch import solve
from kernel.store import GraphStore
from kernel.story import ATTEMPT_OPERATIONS
from resolvers.sandbox.runner import default_workspace_root
from resolvers.scripted import ScriptedProposer
from tests.conftest import store_env
from tests.sandbox_support import needs_sandbox
from tests.solve import scripts as s
from tests.solve.test_csv_cli import CORE as CSV_CORE
from tests.solve.test_csv_cli import GOAL as CSV_GOAL
from tests.solve.test_grow import _needs, _start
from tests.starting import start


def _cli(env: dict[str, str], *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={**env, "COLUMNS": "160"})
    if isinstance(result.exception, KernelError):
        return 2, str(result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def test_the_log_shows_each_attempt_its_failed_check_and_the_feedback(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    entries = [_needs("write the summary*", "generate_code", "states what it read"),
               s.resolve("write the summary*", "It has rows.", repeat=True),
               s.judge("write the summary*", "states what it read", False, 0.3),
               s.judge("write the summary*", "states what it read", True, 0.9),
               s.feedback("write the summary*"), s.leaf("write the summary*", True)]
    kernel, root = _start(initialised_graph, tmp_path, "Write the summary", entries, "story")
    assert solve(kernel, root).status == "resolved"
    env = store_env(initialised_graph, data_dir)

    code, out = _cli(env, "log", "latest", "--json")
    story = json.loads(out)
    assert code == 0 and story["run"] == kernel.run.run_id
    first, second = story["goals"][0]["attempts"]
    assert (first["verdict"], second["verdict"]) == ("UNSAT", "SAT")
    assert [c["constraint"] for c in first["failed_checks"]] == ["states what it read"]
    assert second["feedback"] and second["failed_checks"] == []  # the retry was given it
    assert first["cost_usd"] > 0 and isinstance(first["seconds"], float)
    assert any("RESOLVE" in line["summary"] for line in story["log"])

    code, out = _cli(env, "log", kernel.run.run_id[4:14], "--goal", root[5:16])
    assert code == 0
    assert "attempt 1" in out and "UNSAT" in out and "failed states what it read" in out
    assert "given feedback:" in out and "attempt 2" in out

    code, out = _cli(env, "show", first["id"][:-4], "--json")
    shown = json.loads(out)
    assert shown["label"] == "Attempt" and shown["id"] == first["id"]
    assert shown["properties"]["verification"]["verdict"] == "UNSAT"  # decoded, not a string
    assert {"FOR", "USED"} <= {n["type"] for n in shown["neighbours"]}
    code, out = _cli(env, "show", root)
    assert code == 0 and "Goal" in out and "Write the summary" in out
    code, message = _cli(env, "show", "nothing:here")
    assert code == 2 and "no node 'nothing:here'" in message


@pytest.mark.slow
@needs_sandbox
def test_the_log_of_a_failed_then_fixed_run_is_what_the_ledger_paid(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    """The CSV example fails its first attempt and fixes it in the second. Per attempt,
    `kernel log` shows what the ledger's calls cost and who proposed the output; over the
    run it adds up to what `kernel status` says was spent."""
    script = seeds_dir() / "examples" / "csv-cli.script.yaml"
    kernel, root = start(initialised_graph, CSV_GOAL, CSV_CORE, budget_usd=5.0,
                         time_seconds=600, proposer=ScriptedProposer.from_file(script),
                         data_dir=tmp_path, workspace_root=default_workspace_root())
    assert solve(kernel, root).status == "resolved"
    env = store_env(initialised_graph, data_dir)
    story = json.loads(_cli(env, "log", "latest", "--json")[1])
    status = json.loads(_cli(env, "status", "latest", "--json")[1])
    (goal,) = story["goals"]
    first, second = goal["attempts"]
    assert (first["verdict"], second["verdict"]) == ("UNSAT", "SAT")
    # what the calls cost: resolve 0.05, the sandboxed test run 0.01, the judgment 0.01,
    # the feedback 0.01; identification and selection are the goal's, not an attempt's
    entries = load_entries(initialised_graph, kernel.run.run_id)[2]
    paid = [(e.operation, e.data()["response"]["cost_usd"], e.data()["response"]["seconds"])
            for e in entries if e.kind == "proposal"]
    cut = [op for op, _, _ in paid].index("resolve", 3)  # the second attempt's resolution
    in_first = [p for p in paid[2:cut] if p[0] in ATTEMPT_OPERATIONS]
    in_second = [p for p in paid[cut:] if p[0] in ATTEMPT_OPERATIONS]
    assert first["cost_usd"] == round(sum(c for _, c, _ in in_first), 6) == 0.08
    assert second["cost_usd"] == round(sum(c for _, c, _ in in_second), 6) == 0.07
    assert first["seconds"] == round(sum(t for _, _, t in in_first), 6)
    assert second["seconds"] == round(sum(t for _, _, t in in_second), 6)
    assert first["proposer"] == second["proposer"] == "scripted:csv-cli.script.yaml"
    assert goal["spent_usd"] == status["spent_usd"]
    assert goal["spent_seconds"] == status["spent_seconds"]
    assert first["feedback_text"] is None and second["feedback_text"]

    code, text = _cli(env, "log", "latest")
    assert code == 0
    assert "attempt 1 by scripted:csv-cli.script.yaml as resolver:" in text
    assert "UNSAT  $0.0800" in text and "SAT σv=0.85  $0.0700" in text.split("attempt 2 by")[1]
    assert "UNSAT σv" not in text and "constraint:" not in text
    assert "'exits 1 when the column is missing'" in text
    assert "resolved as an atomic leaf" in text
    assert f"given feedback: {second['feedback_text'][:60]}" in text.replace("\n", " ")
