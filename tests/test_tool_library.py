"""`kernel tools` shows the library BUILD and HIRE grow, and `kernel hire show` gives a
person what a request needs to be answered; both read the real store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernel.protocol import HireAnswer, ToolDefinition
from kernel.repositories.requests import list_requests, record_answer
from kernel.solve.dispatch import solve
from kernel.solve.session import resume
from kernel.store import GraphStore
from tests.solve.test_grow import (
    THERMAL_TOOL,
    _build_entries,
    _cli,
    _start,
    _thermal_entries,
    short_of_budget,
)


def test_a_built_tool_is_in_the_library_with_its_code_and_checks(
        initialised_graph: GraphStore, data_dir: Path) -> None:
    # the run's data dir is the CLI's, where the tool's code is stored
    kernel, root = _start(initialised_graph, data_dir, "Summarise the sales CSV",
                          _build_entries(), "build")
    assert solve(kernel, root).status == "resolved"
    (tool,) = json.loads(_cli(data_dir, initialised_graph, "tools", "--json"))
    assert tool["provides"] == ["csv_summary"] and tool["origin"] == "built"
    assert tool["made_by"] == ["resolver:claude-code-0"] and tool["kind"] == "script"
    assert (tool["uses"], tool["passed"], tool["failed"], tool["pass_rate"]) == (1, 1, 0, 1.0)
    assert tool["built_for"] == root and tool["code_artifact"]

    shown = json.loads(_cli(data_dir, initialised_graph, "tools", "show", tool["id"][:-2],
                            "--json"))
    assert shown["id"] == tool["id"] and "def run(request):" in shown["code"]
    (made,) = shown["checks"]  # the build subgoal's attempt that wrote the code
    assert made["verdict"] == "SAT" and made["checks"]
    assert all(c["passed"] for c in made["checks"])

    text = _cli(data_dir, initialised_graph, "tools")
    assert tool["id"] in text and "csv_summary" in text and "100%" in text
    text = _cli(data_dir, initialised_graph, "tools", "show", tool["id"])
    assert "def run(request):" in text and "checked by attempt:" in text


def test_a_request_shows_what_was_tried_and_how_to_answer_it_then_its_tool_is_listed(
        initialised_graph: GraphStore, data_dir: Path) -> None:
    kernel, root = _start(initialised_graph, data_dir, "Measure the PCB temperature",
                          _thermal_entries("measure the*"), "thermal", max_attempts=1)
    outcome = solve(kernel, root)
    (request_id,) = outcome.waiting_on
    view = json.loads(_cli(data_dir, initialised_graph, "hire", "show", request_id, "--json"))
    assert view["capability_tag"] == "thermal_measurement" and view["reason"] == "not_buildable"
    goal = view["goal"]
    assert goal["summary"] == "Measure the PCB temperature" and goal["id"] == root
    assert [c["title"] for c in goal["constraints"]] == ["reports the peak temperature"]
    (attempt,) = goal["attempts"]
    assert attempt["verdict"] == "UNSAT" and attempt["proposer"].startswith("scripted:")
    assert attempt["failed"][0].startswith("reports the peak temperature: the judgment:")
    assert goal["causes"] == [attempt["failure_mode"]] and goal["remaining_usd"] > 0
    assert view["answer_with"][0] == f"kernel hire answer {request_id} --resolver TOOL.yaml"
    assert view["similar"] == []
    listed = json.loads(_cli(data_dir, initialised_graph, "hire", "list", "--json"))
    assert listed == [view]
    text = _cli(data_dir, initialised_graph, "hire", "show", request_id[:12])
    assert "reports the peak temperature" in text and "attempt 1" in text
    assert f"answer: kernel hire answer {request_id} --decline" in text

    tool = ToolDefinition(label="thermal camera reading", capabilities=["thermal_measurement"],
                          type="hybrid", code=THERMAL_TOOL)
    record_answer(initialised_graph, request_id, HireAnswer(kind="resolver", tool=tool))
    assert resume(initialised_graph, kernel.run.run_id, data_dir,
                  proposer=kernel.proposals.proposer).status == "resolved"
    (supplied,) = json.loads(_cli(data_dir, initialised_graph, "tools", "--json"))
    assert supplied["origin"] == "supplied by a person" and supplied["answers"] == [request_id]
    assert supplied["made_by"] == ["actor:human"]
    assert supplied["replaces"] == ["resolver:claude-code-0"] and supplied["uses"] == 1
    shown = json.loads(_cli(data_dir, initialised_graph, "tools", "show", supplied["id"],
                            "--json"))
    assert "peak 71.5 C" in shown["code"] and shown["checks"] == []
    answered = json.loads(_cli(data_dir, initialised_graph, "hire", "show", request_id,
                               "--json"))
    assert answered["status"] == "delivered" and answered["answer_with"] == []


def test_a_request_names_similar_ones_and_how_they_were_answered(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    first, root1 = short_of_budget(initialised_graph, tmp_path, "first")
    (asked,) = solve(first, root1).waiting_on
    record_answer(initialised_graph, asked, HireAnswer(kind="add_budget", add_usd=1.0))
    second, root2 = short_of_budget(initialised_graph, tmp_path, "second")
    (waiting,) = solve(second, root2).waiting_on
    view = json.loads(_cli(data_dir, initialised_graph, "hire", "show", waiting, "--json"))
    assert [(s["id"], s["answered"]) for s in view["similar"]] == [(asked, "add_budget")]
    assert view["answer_with"][0].endswith("--add-budget USD [--add-time SECONDS]")
    assert {r["id"] for r in list_requests(initialised_graph)} == {asked, waiting}


@pytest.mark.slow
def test_at_80_columns_the_tool_and_request_tables_show_ids_their_commands_take(
        initialised_graph: GraphStore, data_dir: Path) -> None:
    from typer.testing import CliRunner

    from kernel.cli.app import app
    from tests.conftest import store_env

    def narrow(*args: str) -> str:
        env = {**store_env(initialised_graph, data_dir), "COLUMNS": "80"}
        result = CliRunner().invoke(app, list(args), env=env, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert max(len(line) for line in result.output.splitlines()) <= 80
        return result.output

    kernel, root = _start(initialised_graph, data_dir, "Summarise the sales CSV",
                          _build_entries(), "build")
    assert solve(kernel, root).status == "resolved"
    waiting, root2 = _start(initialised_graph, data_dir, "Measure the PCB temperature",
                            _thermal_entries("measure the*"), "thermal", max_attempts=1)
    (request_id,) = solve(waiting, root2).waiting_on
    (tool,) = json.loads(_cli(data_dir, initialised_graph, "tools", "--json"))
    for listing, ident, show in ((narrow("tools"), tool["id"], ["tools", "show"]),
                                 (narrow("hire", "list"), request_id, ["hire", "show"])):
        body = ident.split(":", 1)[1]
        (shown,) = [word for line in listing.splitlines() for word in line.split()[:1]
                    if len(word) >= 10 and body.startswith(word)]
        assert ident in _cli(data_dir, initialised_graph, *show, shown, "--json")
    run_prefix = waiting.run.run_id[4:]
    assert any(run_prefix.startswith(word.strip("()")) and len(word) >= 12
               for word in narrow("hire", "list").split())


def test_a_built_tools_spend_counts_toward_what_it_provides(
        initialised_graph: GraphStore, data_dir: Path) -> None:
    from tests.solve import scripts as s
    from tests.solve.test_analytics import _analytics
    from tests.solve.test_grow import _needs

    kernel, root = _start(initialised_graph, data_dir, "Summarise the sales CSV",
                          _build_entries(), "build")
    assert solve(kernel, root).status == "resolved"
    # a goal like the first asks for generate_code; the record routes it to the tool
    later, root2 = _start(initialised_graph, data_dir, "Summarise the purchases CSV", [
        _needs("summarise the purchases*", "generate_code", "states what it read"),
        s.judge("summarise the purchases*", "states what it read", True, 0.9),
        s.leaf("summarise the purchases*", True)], "similar")
    assert solve(later, root2).status == "resolved"
    (tool,) = json.loads(_cli(data_dir, initialised_graph, "tools", "--json"))
    spends = initialised_graph.execute_adhoc(
        "MATCH (e:BudgetEvent {kind: 'spend'})-[:CHARGED_TO]->(g:Goal) RETURN e.resolver_id "
        "AS paid, e.time AS time, g.id AS goal, g.required_capabilities AS required",
        {}, write=False).records()
    used = [e for e in spends if e["paid"] == tool["id"]]
    assert any("csv_summary" not in e["required"] for e in used)
    costs = {c["capability"]: c for c in _analytics(data_dir, initialised_graph,
                                                    "cost_by_capability")}
    to_tool = [e for e in spends if e["paid"] == tool["id"] or
               (e["paid"] != tool["id"] and "csv_summary" in e["required"])]
    assert costs["csv_summary"]["goals"] == len({e["goal"] for e in to_tool})
    assert costs["csv_summary"]["seconds"] == sum(e["time"] for e in to_tool) / 1000
    model = [e for e in spends if e["paid"] != tool["id"] and "generate_code" in e["required"]]
    assert costs["generate_code"]["seconds"] == sum(e["time"] for e in model) / 1000
    (run,) = initialised_graph.execute_adhoc(
        "MATCH (r:Run {id: $id}) RETURN r.cost_spent_tool AS tool, r.cost_spent AS total",
        {"id": later.run.run_id}, write=False).records()
    tool_cost = sum(e["cost"] for e in initialised_graph.execute_adhoc(
        "MATCH (e:BudgetEvent {kind: 'spend', resolver_id: $tool}) RETURN e.cost AS cost",
        {"tool": tool["id"]}, write=False).records())
    assert run["tool"] == tool_cost
    # the build run's log says what the lookup before the build found
    story = _cli(data_dir, initialised_graph, "log", kernel.run.run_id)
    assert "lookup_before_build: None" not in story
    assert "lookup before build for csv_summary: no tool it may use" in " ".join(story.split())
