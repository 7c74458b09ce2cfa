"""BUILD, lookup-before-build, HIRE and budget escalation, end to end on the embedded store.

Built and hired tools really run: their code executes in the sandbox through the
kernel's harness, and what they return is what gets verified.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kernel.cli.app import app
from kernel.core.ledger import load_entries
from kernel.protocol import HireAnswer
from kernel.repositories.requests import list_requests, record_answer
from kernel.runtime.kernel import Kernel
from kernel.solve.dispatch import solve
from kernel.solve.session import resume
from kernel.store import GraphStore
from resolvers.sandbox.runner import default_workspace_root
from resolvers.scripted import ScriptedProposer
from tests.conftest import store_env, store_settings
from tests.solve import scripts as s
from tests.starting import start

SUMMARY_TOOL = '''
def run(request):
    words = request["goal"].split()
    return {"artifact_type": "doc", "format": "text",
            "content": "summary tool read " + str(len(words)) + " words of the goal"}
'''
THERMAL_TOOL = '''
def run(request):
    return {"artifact_type": "data", "format": "json", "content": "peak 71.5 C",
            "metrics": {"peak_celsius": 71.5}}
'''


def _needs(goal: str, capability: str, title: str) -> dict:
    entry = s.identify(goal, title)
    entry["output"]["required_capabilities"] = [capability]
    return entry


def _build_entries() -> list[dict]:
    return [
        _needs("summarise the sales*", "csv_summary", "states what it read"),
        {"operation": "identify_constraints", "goal": "build tool: csv_summary",
         "output": {"required_capabilities": ["generate_code"], "constraints": []}},
        {"operation": "resolve", "goal": "build tool: csv_summary", "cost_usd": 0.2,
         "seconds": 30, "output": {"artifact_type": "code", "format": "python",
                                   "content": SUMMARY_TOOL, "notes": "counts words"}},
        s.leaf("build tool: csv_summary", True),
        s.judge("summarise the sales*", "states what it read", True, 0.9),
        s.leaf("summarise the sales*", True),
    ]


def needs_the_built_tool_entries() -> list[dict]:
    """A goal claude-code-0 fails whose gap names csv_summary, the capability a build
    provided: lookup-before-build must find that tool instead of building again."""
    return [
        _needs("tally the refund*", "generate_code", "states what it read"),
        s.resolve("tally the refund*", "I could not read it."),
        s.judge("tally the refund*", "states what it read", False, 0.2),
        s.feedback("tally the refund*"),
        {"operation": "detect_capability_gap", "goal": "tally the refund*",
         "output": {"capability_tag": "csv_summary", "buildable": True,
                    "rationale": "needs to read CSV files"}},
        s.judge("tally the refund*", "states what it read", True, 0.85),
        s.leaf("tally the refund*", True),
    ]


def _start(graph: GraphStore, tmp_path: Path, goal: str, entries: list[dict],
           name: str, budget: float = 5.0, max_attempts: int = 5) -> tuple[Kernel, str]:
    script = s.write(tmp_path / f"{name}.yaml", entries)
    return start(graph, goal, [], budget, 600, ScriptedProposer.from_file(script), tmp_path,
                 default_workspace_root(), max_attempts=max_attempts)


def _resolver(graph: GraphStore, capability: str) -> dict:
    rows = graph.run("grow/lookup_before_build", {"tag": capability})[0]["tools"]
    assert len(rows) == 1, rows
    return graph.run("registry/get", {"id": rows[0]["id"]})[0]["resolver"]


def _edges(graph: GraphStore, resolver_id: str) -> set[tuple[str, str]]:
    rows = graph.run("graph_io/export_relationships", {"ids": [resolver_id]},
                     {"label": "Resolver"})
    return {(r["type"], r["to_id"]) for r in rows}


@pytest.mark.slow
def test_build_registers_a_tool_and_a_later_goal_finds_it(initialised_graph: GraphStore,
                                                           tmp_path: Path) -> None:
    kernel, root = _start(initialised_graph, tmp_path, "Summarise the sales CSV",
                          _build_entries(), "build")
    outcome = solve(kernel, root)
    assert outcome.status == "resolved"
    tool = _resolver(initialised_graph, "csv_summary")
    assert tool["built_by"] == "system"
    edges = _edges(initialised_graph, tool["id"])
    assert ("BUILT_BY", "resolver:claude-code-0") in edges
    assert ("PROVIDES", "capability:csv_summary") in edges
    assert any(t == "IMPLEMENTED_BY" for t, _ in edges)
    attempts = kernel.attempts.of_goal(root)
    assert [a.resolver_id for a in attempts] == [tool["id"]]
    output = json.loads(kernel.artifacts.read(attempts[0].output_artifact_id))
    assert output["content"] == "summary tool read 4 words of the goal"  # the tool ran

    # A later goal of another kind: claude-code-0 fails, the gap names the same
    # capability, and the mandatory lookup finds the built tool: nothing is built again.
    kernel2, root2 = _start(initialised_graph, tmp_path, "Tally the refund ledger",
                            needs_the_built_tool_entries(),
                            "later", max_attempts=1)
    outcome2 = solve(kernel2, root2)
    assert outcome2.status == "resolved"
    assert [a.resolver_id for a in kernel2.attempts.of_goal(root2)] == \
        ["resolver:claude-code-0", tool["id"]]
    goals = initialised_graph.run("goal/tree", {"run_id": kernel2.run.run_id})
    assert len(goals) == 1  # no build subgoal
    ops = [e.operation for e in load_entries(initialised_graph, kernel2.run.run_id)[2]]
    assert ops.count("resolve") == 2 and "hire" not in ops

    # A goal like the first: the graph's record routes it to the built tool at once (it
    # asks for generate_code, which the tool does not claim): no ranking call, no failure.
    similar = [
        _needs("summarise the purchases*", "generate_code", "states what it read"),
        s.judge("summarise the purchases*", "states what it read", True, 0.9),
        s.leaf("summarise the purchases*", True),
    ]
    kernel3, root3 = _start(initialised_graph, tmp_path, "Summarise the purchases CSV",
                            similar, "similar")
    assert solve(kernel3, root3).status == "resolved"
    assert [a.resolver_id for a in kernel3.attempts.of_goal(root3)] == [tool["id"]]
    entries = load_entries(initialised_graph, kernel3.run.run_id)[2]
    # its script is another source than the one that classified the first goal: it is
    # asked whether the goal is a leaf (tests/solve/test_reuse.py: the same source is not)
    assert [e.operation for e in entries if e.kind == "proposal"] == [
        "identify_constraints", "resolve", "verify_semantic", "classify_leaf"]
    assert "reuse/classify_leaf" not in [e.operation for e in entries
                                         if e.kind == "observation"]
    routed = kernel3.store.run("log/of_run", {"run_id": kernel3.run.run_id, "max_tier": 2})
    assert any("learned route" in json.dumps(r) for r in routed)


def test_a_failed_build_is_not_tried_again(initialised_graph: GraphStore,
                                           tmp_path: Path) -> None:
    entries = [e for e in _build_entries() if e["goal"] != "build tool: csv_summary"]
    entries += [
        {"operation": "identify_constraints", "goal": "build tool: csv_summary",
         "output": {"required_capabilities": ["generate_code"], "constraints": []}},
        {"operation": "resolve", "goal": "build tool: csv_summary", "repeat": True,
         "output": {"artifact_type": "code", "format": "python",
                    "content": "import os\n\ndef run(request):\n    return {}\n"}},
        {**s.feedback("build tool: csv_summary")},
        {"operation": "detect_capability_gap", "goal": "build tool: csv_summary",
         "output": {"capability_tag": "python_sandbox_escape", "buildable": False,
                    "rationale": "wants os"}},
    ]
    kernel, root = _start(initialised_graph, tmp_path, "Summarise the sales CSV", entries,
                          "failing-build", max_attempts=2)
    outcome = solve(kernel, root)
    # the build's TRY fails the static check twice and its own gap goes to a human
    assert outcome.status == "pending" and len(outcome.waiting_on) == 1
    builds = [g for g in initialised_graph.run("goal/tree", {"run_id": kernel.run.run_id})
              if g["summary"] == "build tool: csv_summary"]
    assert len(builds) == 1
    check = kernel.attempts.of_goal(builds[0]["id"])[0].verification.checks[0]
    assert not check.passed and "FORBIDDEN_IMPORT" in check.detail["problems"][0]
    # declined: the build fails, and the goal asks a human for csv_summary itself
    record_answer(initialised_graph, outcome.waiting_on[0], HireAnswer(kind="decline"))
    proposer = kernel.proposals.proposer
    resumed = resume(initialised_graph, kernel.run.run_id, tmp_path, proposer=proposer)
    assert kernel.tree.get(builds[0]["id"]).status == "infeasible"
    assert resumed.status == "pending" and len(resumed.waiting_on) == 1
    asked = list_requests(initialised_graph, ["requested"])
    assert [(r["capability_tag"], r["reason"]) for r in asked] == \
        [("csv_summary", "build_failed")]

    # A later goal needing csv_summary: lookup-before-build sees the failed build, so it
    # does not build; the same request is open, so it waits on it instead of asking again.
    kernel2, root2 = _start(initialised_graph, tmp_path, "Summarise the sales CSV", entries,
                            "failing-build-2", max_attempts=2)
    later = solve(kernel2, root2)
    assert later.waiting_on == resumed.waiting_on
    goals = initialised_graph.run("goal/tree", {"run_id": kernel2.run.run_id})
    assert len(goals) == 1  # no second build
    assert len(list_requests(initialised_graph, ["requested"])) == 1


def _cli(data_dir: Path, graph: GraphStore, *args: str, code: int = 0) -> str:
    env = {**store_env(graph, data_dir), "COLUMNS": "200"}
    result = CliRunner().invoke(app, list(args), env=env, catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.stdout if "--json" in args else result.output  # progress goes to stderr


def _thermal_entries(goal: str) -> list[dict]:
    return [
        _needs(goal, "generate_code", "reports the peak temperature"),
        s.resolve(goal, "It is probably warm."),
        s.judge(goal, "reports the peak temperature", False, 0.1),
        s.feedback(goal),
        {"operation": "detect_capability_gap", "goal": goal, "output": {
            "capability_tag": "thermal_measurement", "buildable": False,
            "rationale": "a physical measurement of the board"}},
        {**s.judge(goal, "reports the peak temperature", True, 0.95), "repeat": True},
        {**s.leaf(goal, True), "repeat": True},
    ]


@pytest.mark.slow
def test_hire_parks_is_answered_from_the_cli_and_is_never_asked_again(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    script = s.write(tmp_path / "thermal.yaml", _thermal_entries("measure the*"))
    out = _cli(data_dir, initialised_graph, "solve", "Measure the PCB temperature",
               "--proposer", "scripted", "--script", str(script), "--max-attempts", "1",
               "--json", code=3)  # unfinished: waiting on a person
    parked = json.loads(out)
    assert parked["status"] == "pending" and len(parked["waiting_on"]) == 1
    request_id = parked["waiting_on"][0]
    listed = json.loads(_cli(data_dir, initialised_graph, "hire", "list", "--json"))
    assert [r["id"] for r in listed] == [request_id]
    assert listed[0]["capability_tag"] == "thermal_measurement"
    assert listed[0]["reason"] == "not_buildable"

    (tmp_path / "thermal.py").write_text(THERMAL_TOOL)
    (tmp_path / "thermal-tool.yaml").write_text(yaml.safe_dump({
        "label": "thermal camera reading", "capabilities": ["thermal_measurement"],
        "type": "hybrid", "script": "thermal.py", "cost_per_invocation": 0.5}))
    said = _cli(data_dir, initialised_graph, "hire", "answer", request_id,
                "--resolver", str(tmp_path / "thermal-tool.yaml"), "--progress", "plain")
    assert "] step " in said  # the resumed run's progress, as kernel resume shows it
    run_id = parked["run"]
    status = json.loads(_cli(data_dir, initialised_graph, "status", run_id, "--json"))
    assert status["status"] == "resolved"
    tool = _resolver(initialised_graph, "thermal_measurement")
    assert tool["built_by"] == "human"
    assert ("BUILT_BY", "actor:human") in _edges(initialised_graph, tool["id"])
    # claude-code-0 failed on the goal the tool was given for
    assert ("REPLACED_BY", tool["id"]) in _edges(initialised_graph, "resolver:claude-code-0")
    answered = list_requests(initialised_graph)
    assert [(r["status"], r["resolver_id"]) for r in answered] == [("delivered", tool["id"])]
    entries = load_entries(initialised_graph, run_id)[2]
    hire_entry = next(e for e in entries if e.operation == "hire")
    assert hire_entry.source == "actor:human"  # the answer is in the ledger

    # A goal of the same kind later: the graph routes it to the human's tool (learned
    # routing), nobody is asked and claude-code-0 is not tried.
    script2 = s.write(tmp_path / "thermal2.yaml", [
        _needs("measure the case*", "generate_code", "reports the peak temperature"),
        s.judge("measure the case*", "reports the peak temperature", True, 0.95),
        s.leaf("measure the case*", True)])
    again = json.loads(_cli(data_dir, initialised_graph, "solve",
                            "Measure the case temperature", "--proposer", "scripted",
                            "--script", str(script2), "--max-attempts", "1", "--json"))
    assert again["status"] == "resolved" and again["waiting_on"] == []
    assert len(list_requests(initialised_graph)) == 1


def test_a_declined_request_is_never_asked_again(initialised_graph: GraphStore,
                                                 tmp_path: Path) -> None:
    kernel, root = _start(initialised_graph, tmp_path, "Measure the PCB temperature",
                          _thermal_entries("measure the*"), "decline", max_attempts=1)
    outcome = solve(kernel, root)
    record_answer(initialised_graph, outcome.waiting_on[0],
                  HireAnswer(kind="decline", note="no thermal camera here"))
    assert resume(initialised_graph, kernel.run.run_id, tmp_path,
                  proposer=kernel.proposals.proposer).status == "infeasible"
    refusal = [e.data() for e in load_entries(initialised_graph, kernel.run.run_id)[2]
               if e.kind == "refusal"][-1]
    assert refusal["reasons"] == ["HIRE_DECLINED"]

    kernel2, root2 = _start(initialised_graph, tmp_path, "Measure the PCB temperature",
                            _thermal_entries("measure the*"), "decline2", max_attempts=1)
    outcome2 = solve(kernel2, root2)
    assert outcome2.status == "infeasible" and outcome2.waiting_on == ()
    assert len(list_requests(initialised_graph)) == 1  # not asked again
    ops = [e.operation for e in load_entries(initialised_graph, kernel2.run.run_id)[2]]
    assert "hire" not in ops


@pytest.mark.parametrize("answer", ["add_budget", "decline"])
def test_a_budget_denial_escalates_to_hire(initialised_graph: GraphStore, tmp_path: Path,
                                           answer: str) -> None:
    entries = [s.identify("write a release*", "mentions the new flags"),
               s.resolve("write a release*", "The CSV tool now takes --file and --column."),
               s.judge("write a release*", "mentions the new flags", True, 0.9),
               s.leaf("write a release*", True)]
    kernel, root = _start(initialised_graph, tmp_path, "Write a release note", entries,
                          f"budget-{answer}", budget=0.005)
    outcome = solve(kernel, root)
    assert outcome.status == "identifying_constraints" and len(outcome.waiting_on) == 1
    request = list_requests(initialised_graph, ["requested"])[0]
    assert (request["capability_tag"], request["reason"]) == ("budget", "over_budget")
    given = HireAnswer(kind="add_budget", add_usd=1.0, add_seconds=100) \
        if answer == "add_budget" else HireAnswer(kind="decline")
    record_answer(initialised_graph, request["id"], given)
    final = resume(initialised_graph, kernel.run.run_id, tmp_path,
                   proposer=kernel.proposals.proposer)
    if answer == "add_budget":
        assert final.status == "resolved"
        assert kernel.budget.ledger_totals(root)["cost_allocated"] == 1_005_000
    else:
        assert final.status == "infeasible"
        refusal = [e.data() for e in load_entries(initialised_graph, kernel.run.run_id)[2]
                   if e.kind == "refusal"][-1]
        assert refusal["reasons"] == ["BUDGET_EXHAUSTED"]
        assert "needs $0.0050" in refusal["to_proceed"][0]


COUNTER = '''
def run(request):
    return {"artifact_type": "data", "format": "text",
            "content": str(len(request["goal"].split())), "metrics": {}}
'''


def test_interactive_hire_then_a_composite_build_of_the_hired_tool(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    asked: list[dict] = []

    def prompt(payload: dict) -> HireAnswer:
        asked.append(payload)
        from kernel.protocol import ToolDefinition

        if payload["capability_tag"] == "budget":
            return HireAnswer(kind="add_budget", add_usd=0.5)
        return HireAnswer(kind="resolver", tool=ToolDefinition(
            id="resolver:word-counter", label="word counter", capabilities=["word_count"],
            code=COUNTER))

    entries = [
        _needs("count the words*", "word_count", "gives a number"),
        {"operation": "detect_capability_gap", "goal": "count the words*", "output": {
            "capability_tag": "word_count", "buildable": False, "rationale": "policy"}},
        {**s.judge("count the words*", "gives a number", True, 0.9), "repeat": True},
        {**s.leaf("count the words*", True), "repeat": True},
    ]
    kernel, root = _start(initialised_graph, tmp_path, "Count the words here", entries,
                          "interactive", budget=0.01)  # too little to build: HIRE
    kernel = dataclasses.replace(kernel, human_prompt=prompt)
    outcome = solve(kernel, root)
    assert outcome.status == "resolved"
    assert [(a["capability_tag"], a["reason"]) for a in asked] == \
        [("word_count", "build_unaffordable"), ("budget", "over_budget")]
    output = json.loads(kernel.artifacts.read(kernel.tree.get(root).output_artifact_id))
    assert output["content"] == "4"

    # A composite: a build whose output chains registered script tools (a goal of
    # another kind, so the graph's record does not route it to the counter directly).
    build = [
        _needs("audit paragraph*", "word_report", "gives a number"),
        {"operation": "identify_constraints", "goal": "build tool: word_report",
         "output": {"required_capabilities": ["generate_code"], "constraints": []}},
        {"operation": "resolve", "goal": "build tool: word_report", "output": {
            "artifact_type": "tool_plan", "format": "tool_plan",
            "content": json.dumps({"steps": ["resolver:word-counter"]})}},
        s.leaf("build tool: word_report", True),
        {**s.judge("audit paragraph*", "gives a number", True, 0.9), "repeat": True},
        {**s.leaf("audit paragraph*", True), "repeat": True},
    ]
    kernel2, root2 = _start(initialised_graph, tmp_path,
                            "Audit paragraph length for the style guide", build, "composite")
    assert solve(kernel2, root2).status == "resolved"
    tool = _resolver(initialised_graph, "word_report")
    assert ("COMPOSED_OF", "resolver:word-counter") in _edges(initialised_graph, tool["id"])
    enables = initialised_graph.execute_adhoc(
        "MATCH (a:Capability)-[e:ENABLES]->(b:Capability) RETURN a.tag AS part, b.tag AS whole, "
        "e.via AS via", {}, write=False).records()
    assert enables == [{"part": "word_count", "whole": "word_report", "via": tool["id"]}]
    output = json.loads(kernel2.artifacts.read(kernel2.tree.get(root2).output_artifact_id))
    assert output["content"] == "7"  # the chain ran


def short_of_budget(graph: GraphStore, tmp_path: Path, tag: str) -> tuple[Kernel, str]:
    """A release note started on $0.005: it parks on a person (HIRE) for more budget."""
    return _start(graph, tmp_path, "Write a release note", [
        s.identify("write a release*", "mentions the new flags"),
        s.resolve("write a release*", "The CSV tool now takes --file and --column."),
        s.judge("write a release*", "mentions the new flags", True, 0.9),
        s.leaf("write a release*", True)], tag, budget=0.005)


def test_a_run_with_a_hire_answer_replays_identically(initialised_graph: GraphStore,
                                                      tmp_path: Path, data_dir: Path) -> None:
    from kernel.solve.session import replay

    kernel, root = short_of_budget(initialised_graph, tmp_path, "replay-hire")
    outcome = solve(kernel, root)
    record_answer(initialised_graph, outcome.waiting_on[0],
                  HireAnswer(kind="add_budget", add_usd=1.0))
    assert resume(initialised_graph, kernel.run.run_id, tmp_path,
                  proposer=kernel.proposals.proposer).status == "resolved"
    settings = store_settings(initialised_graph, data_dir)
    result = replay(settings, kernel.run.run_id)
    assert result.divergence is None and result.identical


def test_solve_interactive_asks_in_the_terminal(initialised_graph: GraphStore, tmp_path: Path,
                                                data_dir: Path) -> None:
    script = s.write(tmp_path / "thermal-i.yaml", _thermal_entries("measure the*"))
    (tmp_path / "thermal.py").write_text(THERMAL_TOOL)
    (tmp_path / "tool.yaml").write_text(yaml.safe_dump({
        "label": "thermal camera", "capabilities": ["thermal_measurement"],
        "script": "thermal.py"}))
    env = {**store_env(initialised_graph, data_dir), "COLUMNS": "200"}
    # first an unusable answer (no such file), then a usable one
    answers = f"resolver\n{tmp_path / 'missing.yaml'}\nresolver\n{tmp_path / 'tool.yaml'}\n"
    result = CliRunner().invoke(app, [
        "solve", "Measure the PCB temperature", "--proposer", "scripted", "--script",
        str(script), "--max-attempts", "1", "--interactive", "--no-intake", "--json"], env=env,
        input=answers, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "HIRE: the kernel needs 'thermal_measurement'" in result.output
    assert "missing.yaml" in result.output  # the bad answer was refused, then asked again
    outcome = json.loads(result.output[result.output.rindex("\n{\n") + 1:])  # the last object
    assert outcome["status"] == "resolved" and outcome["waiting_on"] == []


def test_a_malformed_tool_file_is_named_on_one_line(tmp_path: Path) -> None:
    """The file a person answers a HIRE with: a YAML error says where, on one line."""
    from kernel.solve.tools import ToolDefinitionError, load_tool_file

    path = tmp_path / "tool.yaml"
    path.write_text("label: thermal\ncapabilities: [thermal_measurement\n")
    with pytest.raises(ToolDefinitionError, match=r"cannot read it as YAML or JSON: line 3, "
                                                   r"column 1: expected ',' or '\]'") as raised:
        load_tool_file(path)
    assert "\n" not in str(raised.value)
