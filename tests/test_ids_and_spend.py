"""Ids as people copy them (a run's prefix anywhere an id is taken, ``latest`` meaning a
run that has something to show, tables that keep ids whole or uniquely cut at 80
columns) and spend where people look for it (a run's total split by who was paid, a
goal's subtree spend), on both stores, driven through the ``kernel`` command."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernel.bench.examples import EXAMPLES
from kernel.cli.app import app
from kernel.errors import KernelError
from kernel.store import GraphStore
from tests.conftest import store_env

INGEST = next(e for e in EXAMPLES if e.name == "ingest-pipeline")


def _cli(graph: GraphStore, data_dir: Path, *args: str, code: int = 0,
         columns: int = 200) -> str:
    env = {**store_env(graph, data_dir), "COLUMNS": str(columns)}
    result = CliRunner().invoke(app, list(args), env=env, catch_exceptions=True)
    if isinstance(result.exception, KernelError):
        assert code == 2, str(result.exception)
        return str(result.exception)
    assert result.exit_code == code, result.output
    return result.stdout if "--json" in args else result.output


def _ingest_then_plan(graph: GraphStore, data_dir: Path) -> tuple[dict, str]:
    """The ingest example resolved, then a plan (which has no final artifact) after it."""
    solved = json.loads(_cli(graph, data_dir, *INGEST.command(), "--progress", "none"))
    assert solved["status"] == "resolved"
    planned = json.loads(_cli(graph, data_dir, "runs", "--json"))
    _cli(graph, data_dir, "plan", "--example", "sensor-kits", "--out", str(data_dir / "p.json"))
    (plan,) = [r for r in json.loads(_cli(graph, data_dir, "runs", "--json"))
               if r["id"] not in {p["id"] for p in planned}]
    return solved, plan["id"]


@pytest.mark.slow
def test_a_run_prefix_and_latest_name_what_artifact_show_can_show(
        initialised_graph: GraphStore, data_dir: Path) -> None:
    solved, plan_id = _ingest_then_plan(initialised_graph, data_dir)
    run_id, final = solved["run"], solved["final_artifact"]
    text = _cli(initialised_graph, data_dir, "artifact", "show", final, "--json")
    # the newest run is the plan; latest means the newest run with a final artifact
    assert json.loads(_cli(initialised_graph, data_dir, "artifact", "show", "latest",
                           "--json")) == json.loads(text)
    # a run's prefix without its namespace, as `kernel runs` shows it
    shown = _cli(initialised_graph, data_dir, "artifact", "show", run_id[4:16], "--json")
    assert json.loads(shown)["id"] == final
    said = _cli(initialised_graph, data_dir, "artifact", "show", plan_id[4:16], code=2)
    assert f"{plan_id} has no final artifact" in said
    said = _cli(initialised_graph, data_dir, "artifact", "show", "ZZZZ", code=2)
    assert "no artifact 'ZZZZ' in this graph, nor a run" in said


@pytest.mark.slow
def test_show_takes_a_run_prefix_and_names_ledger_entries_in_plural(
        initialised_graph: GraphStore, data_dir: Path) -> None:
    solved, _ = _ingest_then_plan(initialised_graph, data_dir)
    run_id = solved["run"]
    # a run's whole ULID prefixes its ledger entries' ids too: it names the run
    found = json.loads(_cli(initialised_graph, data_dir, "show", run_id[4:], "--json"))
    assert (found["label"], found["id"]) == ("Run", run_id)
    said = _cli(initialised_graph, data_dir, "show", "ledger:" + run_id[4:], code=2)
    assert "matches several ledger entries" in said


@pytest.mark.slow
def test_kernel_runs_at_80_columns_shows_ids_a_command_takes_and_the_spend_split(
        initialised_graph: GraphStore, data_dir: Path) -> None:
    solved, plan_id = _ingest_then_plan(initialised_graph, data_dir)
    text = _cli(initialised_graph, data_dir, "runs", columns=80)
    assert max(len(line) for line in text.splitlines()) <= 80
    for run_id in (solved["run"], plan_id):
        (line,) = [ln for ln in text.splitlines() if ln.split()[:1] and
                   run_id.removeprefix("run:").startswith(ln.split()[0])]
        shown = line.split()[0]
        assert len(shown) >= 10 and "…" not in line.split()[0]
        status = json.loads(_cli(initialised_graph, data_dir, "status", shown, "--json"))
        assert status["run"] == run_id
    assert "model" in text and "sandbox" in text and "tool" in text


@pytest.mark.slow
def test_a_run_carries_its_spend_split_and_a_goal_its_subtree_spend(
        initialised_graph: GraphStore, data_dir: Path) -> None:
    solved, _ = _ingest_then_plan(initialised_graph, data_dir)
    run_id = solved["run"]
    (run,) = initialised_graph.execute_adhoc(
        "MATCH (r:Run {id: $id}) RETURN r.cost_spent AS total, r.cost_spent_model AS model, "
        "r.cost_spent_sandbox AS sandbox, r.cost_spent_tool AS tool", {"id": run_id},
        write=False).records()
    goals = initialised_graph.execute_adhoc(
        "MATCH (g:Goal {run_id: $id}) RETURN g.id AS id, g.parent_id AS parent, "
        "g.cost_spent AS own, g.subtree_cost_spent AS subtree", {"id": run_id},
        write=False).records()
    every = sum(g["own"] for g in goals)
    assert every == 610_000  # the root's own $0.19 and its parts' $0.42
    assert (run["total"], run["model"], run["sandbox"], run["tool"]) == (every, every, 0, 0)
    (root,) = [g for g in goals if g["parent"] is None]
    assert (root["own"], root["subtree"]) == (190_000, every)
    assert all(g["subtree"] == g["own"] for g in goals if g["parent"] is not None)

    status = json.loads(_cli(initialised_graph, data_dir, "status", run_id, "--json"))
    assert status["spent_by_usd"] == {"model": 0.61, "sandbox": 0.0, "tool": 0.0}
    (listed,) = [r for r in json.loads(_cli(initialised_graph, data_dir, "runs", "--json"))
                 if r["id"] == run_id]
    assert listed["spent_by_usd"] == status["spent_by_usd"]
    tree = json.loads(_cli(initialised_graph, data_dir, "tree", run_id, "--json"))
    assert tree[0]["subtree_cost_spent_usd"] == 0.61 and tree[0]["cost_spent_usd"] == 0.19
    for command in (["status", run_id], ["log", run_id]):
        assert "model $0.6100, sandbox $0.0000, tool $0.0000" in " ".join(
            _cli(initialised_graph, data_dir, *command).split())

    # a graph written before runs carried these gets them from its budget ledger
    from kernel.repositories.schema_versions import backfill_spend_totals

    initialised_graph.execute_adhoc(
        "MATCH (r:Run) REMOVE r.cost_spent, r.cost_spent_model, r.cost_spent_sandbox, "
        "r.cost_spent_tool WITH count(r) AS n MATCH (g:Goal) REMOVE g.subtree_cost_spent",
        {}, write=True)
    backfill_spend_totals(initialised_graph)
    assert json.loads(_cli(initialised_graph, data_dir, "status", run_id, "--json")) \
        ["spent_by_usd"] == status["spent_by_usd"]
    assert json.loads(_cli(initialised_graph, data_dir, "tree", run_id, "--json")) == tree


@pytest.mark.slow
def test_the_sandbox_charge_is_a_setting_the_run_records(
        initialised_graph: GraphStore, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kernel.protocol import ResolveRequest
    from kernel.runtime.inputs import RunInputs
    from kernel.settings import KernelSettings
    from resolvers.codex_tools import CodexTools
    from resolvers.sandbox.runner import default_workspace_root

    assert KernelSettings().sandbox_run_usd == 0.01
    monkeypatch.setenv("KERNEL_SANDBOX_RUN_USD", "0.05")
    solved = json.loads(_cli(initialised_graph, data_dir, *INGEST.command(),
                             "--progress", "none"))
    (config,) = initialised_graph.execute_adhoc(
        "MATCH (r:Run {id: $id}) RETURN r.config AS config", {"id": solved["run"]},
        write=False).records()
    assert RunInputs.from_record(json.loads(config["config"])).solve.sandbox_run_usd == 0.05
    tools = CodexTools(default_workspace_root() / f"charge-{uuid.uuid4().hex[:8]}",
                       cost_per_command=0.05)
    tools.sandbox.remove()
    request = ResolveRequest(operation="run_tests", goal_id="node:x",
                             payload={"commands": [["true"], ["true"]]})
    assert tools.estimate_cost_time(request).cost_usd == pytest.approx(0.10)


def test_the_log_says_a_run_stopped_for_a_missing_sandbox(
        initialised_graph: GraphStore, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kernel.bench.examples import EXAMPLES_DIR
    from resolvers.sandbox import runner

    monkeypatch.setattr(runner, "bwrap_binary", lambda: None)  # bubblewrap hidden
    goal = next(e for e in EXAMPLES if e.name == "csv-cli").goal
    stopped = json.loads(_cli(initialised_graph, data_dir, "solve", goal, "--proposer",
                              "scripted", "--script", str(EXAMPLES_DIR / "csv-cli.script.yaml"),
                              "--json", "--progress", "none", code=3))
    story = " ".join(_cli(initialised_graph, data_dir, "log", stopped["run"]).split())
    assert "stopped: the sandbox is unavailable (now: bubblewrap (bwrap) is not installed" \
        in story and f"kernel resume {stopped['run']}" in story
    assert json.loads(_cli(initialised_graph, data_dir, "log", stopped["run"], "--json")) \
        ["stopped"] == "the sandbox is unavailable"
