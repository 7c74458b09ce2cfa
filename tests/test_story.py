"""``kernel log RUN`` tells why an attempt failed; ``kernel show ID`` opens any node."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kernel.cli.app import app
from kernel.errors import KernelError
from kernel.solve.dispatch import solve
from kernel.store import GraphStore
from tests.conftest import store_env
from tests.solve import scripts as s
from tests.solve.test_grow import _needs, _start


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
