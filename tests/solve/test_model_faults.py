"""A misbehaving model, through the real ``anthropic`` client and a local Messages API
server: every kind of bad answer ends a solve or a plan with a recorded outcome (a
refused goal, a stopped run, a refused plan), never an exception escaping the kernel,
and every answer the provider would bill is charged to the budget."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kernel.core.ledger import load_entries
from kernel.plan.planner import PlanRefused
from kernel.plan.session import plan_goal
from kernel.solve.dispatch import solve
from kernel.store.base import GraphStore
from resolvers.claude.adapter import ClaudeCode, ClaudeSettings
from resolvers.claude.proposer import ClaudeProposer
from resolvers.sandbox.runner import default_workspace_root
from tests.messages_server import KINDS, messages_server
from tests.starting import start

UNAVAILABLE = {"http_500", "http_529", "http_429", "reset"}  # retried, then the run stops
STOPS = UNAVAILABLE | {"http_401"}  # refused credentials stop the run too, not retried
NOT_BILLED = STOPS | {"http_400"}  # no answer came back


def _proposer(client: object) -> ClaudeProposer:
    return ClaudeProposer(ClaudeCode(ClaudeSettings(), client=client), delays=(0.0,))  # type: ignore[arg-type]


def _spent(store: GraphStore, run_id: str) -> int:
    return sum(int(e["cost"] or 0) for e in store.run("summary/budget", {"run_id": run_id})
               if e["kind"] == "spend")


def test_at_least_nineteen_kinds_of_bad_answer_are_covered() -> None:
    assert len(KINDS) >= 19


@pytest.mark.parametrize("kind", KINDS)
def test_a_bad_answer_ends_a_solve_with_a_recorded_outcome(
        kind: str, initialised_graph: GraphStore, tmp_path: Path) -> None:
    with messages_server(kind) as (server, client):
        kernel, root = start(initialised_graph, "Write a haiku about graph databases", [],
                             5.0, 600, _proposer(client), tmp_path, default_workspace_root())
        outcome = solve(kernel, root)
    run_id = kernel.run.run_id
    assert server.requests, "the client never reached the server"
    entries = load_entries(initialised_graph, run_id)[2]
    if kind in STOPS:
        assert outcome.stopped is not None and outcome.stopped.startswith("model unavailable")
        assert [e.kind for e in entries if e.kind == "failure"]
    else:
        assert outcome.status == "infeasible", outcome
        refusal = [e.data() for e in entries if e.kind == "refusal"][-1]
        assert refusal["reasons"] == ["INVALID_PROPOSAL"] and "\n" not in refusal["detail"]
    if kind in NOT_BILLED:
        assert _spent(initialised_graph, run_id) == 0
    else:  # billed tokens (or, when the answer did not say, the most it could cost)
        assert _spent(initialised_graph, run_id) > 0
    if kind == "http_401":  # asked once: waiting does not mend a key
        assert len(server.requests) == 1 and "ANTHROPIC_API_KEY" in str(outcome.stopped)
    if kind == "max_tokens":  # cut off: asked again once, then refused
        assert len(server.requests) == 2
    if kind == "lone_surrogate":  # replaced, so the repair turn could be sent back
        assert "\ufffd" in json.dumps(server.requests[1]["messages"], ensure_ascii=False)


@pytest.mark.parametrize("kind", KINDS)
def test_a_bad_answer_ends_a_plan_with_a_refusal(
        kind: str, initialised_graph: GraphStore, tmp_path: Path) -> None:
    with messages_server(kind) as (_, client):
        try:
            plan_goal(initialised_graph, tmp_path, "Ship a search feature in 2 weeks for $1k",
                      _proposer(client), {"proposer": "anthropic"}, 5.0, 600)
        except PlanRefused as exc:
            assert str(exc) and "\n" not in str(exc)


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "code"), [("http_529", 3), ("not_json", 1), ("http_401", 3)])
def test_the_cli_meets_a_bad_model_with_an_exit_code_and_no_traceback(
        kind: str, code: int, data_dir: Path) -> None:
    with messages_server(kind) as (server, _):
        env = {**os.environ, "KERNEL_DATA_DIR": str(data_dir),
               "KERNEL_GRAPH_NAME": f"faults-{kind}", "ANTHROPIC_API_KEY": "sk-ant-local-test",
               "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.server_port}",
               "KERNEL_CLAUDE_RETRY_DELAYS": "[0]", "KERNEL_CLAUDE_SDK_RETRIES": "0"}
        done = subprocess.run(
            [sys.executable, "-c", "from kernel.cli.app import main; main()", "solve",
             "Write a haiku about graph databases", "--proposer", "anthropic"],
            env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    if code == 3:
        assert "kernel resume" in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["deep", "dribble"])
def test_the_cli_meets_a_deep_or_dribbling_answer_within_its_wall_cap(
        kind: str, data_dir: Path) -> None:
    """An answer nested 200,000 deep is a malformed answer (exit 1), not a RecursionError;
    a server that sends headers and then a byte every 2 s cannot hold ``--max-wall 20``:
    the run stops near 20 s, resumable (exit 3)."""
    with messages_server(kind) as (server, _):
        env = {**os.environ, "KERNEL_DATA_DIR": str(data_dir),
               "KERNEL_GRAPH_NAME": f"faults-{kind}", "ANTHROPIC_API_KEY": "sk-ant-local-test",
               "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.server_port}",
               "KERNEL_CLAUDE_RETRY_DELAYS": "[0]", "KERNEL_CLAUDE_SDK_RETRIES": "0"}
        began = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-c", "from kernel.cli.app import main; main()", "solve",
             "Write a haiku about graph databases", "--proposer", "anthropic",
             "--max-wall", "20", "--progress", "plain"],
            env=env, capture_output=True, text=True, timeout=150, check=False)
        took = time.monotonic() - began
    said = " ".join((done.stdout + done.stderr).split())
    assert "Traceback" not in said and "internal error" not in said, said
    if kind == "deep":
        assert done.returncode == 1, said
        assert "nested more than" in said or "INVALID_PROPOSAL" in said, said
    else:
        assert done.returncode == 3 and "wall-time cap" in said, said
        calls = [float(line.rsplit("·", 1)[1].strip(" s")) for line in done.stderr.splitlines()
                 if "] done " in line]
        assert calls and max(calls) < 24, done.stderr  # the call ended at the cap
        assert took < 75, took  # start-up and exit included; unbounded before
