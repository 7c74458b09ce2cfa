"""`kernel tools` shows the library BUILD and HIRE grow, and `kernel hire show` gives a
person what a request needs to be answered; both read the real store."""

from __future__ import annotations

import json
from pathlib import Path

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
