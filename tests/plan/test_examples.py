"""The shipped planning examples run offline through the store and pass check-plan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernel.cli.app import app
from kernel.core.ledger import load_entries
from kernel.errors import ConfigError
from kernel.plan.checks import check_plan
from kernel.plan.session import example_goal, example_names, example_script, plan_goal
from kernel.store import GraphStore
from resolvers.scripted import ScriptedProposer
from tests.conftest import store_env

EXAMPLES = ["momentum-strategy", "rvl-cdip-classifier", "sensor-kits", "swe-agent"]


def test_the_examples_are_shipped() -> None:
    assert example_names() == EXAMPLES


@pytest.mark.parametrize("name", EXAMPLES)
def test_an_example_plans_offline_and_passes_every_assertion(
        name: str, initialised_graph: GraphStore, tmp_path: Path) -> None:
    script = example_script(name)
    goal, verifications = example_goal(script)
    doc = plan_goal(initialised_graph, tmp_path, goal, ScriptedProposer.from_file(script),
                    {"proposer": "scripted", "script": str(script)}, 5.0, 600, verifications)
    results = check_plan(json.loads(json.dumps(doc)))
    failed = [r for r in results if not r.passed]
    assert not failed, failed
    assert len([r for r in results if r.id.startswith("7.")]) == len(verifications) >= 4
    # the plan lives in the graph: the document, and the tasks as goals with dependencies
    root = initialised_graph.run("run/get", {"run_id": doc["run_id"]})[0]["root_id"]
    goal_row = initialised_graph.run("goal/get", {"goal_id": root})[0]["view"]["goal"]
    assert goal_row["plan_document_id"].startswith("artifact:")
    tree = initialised_graph.run("goal/tree", {"run_id": doc["run_id"]})
    assert len(tree) == 1 + len(doc["tasks"])
    operations = [e.operation for e in load_entries(initialised_graph, doc["run_id"])[2]
                  if e.kind == "proposal"]
    assert operations == ["plan_constraints", "plan_tasks", "survey_approaches"]


def test_the_swe_agent_example_flags_the_narrative_and_repairs_the_budget(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    script = example_script("swe-agent")
    goal, checks = example_goal(script)
    doc = plan_goal(initialised_graph, tmp_path, goal, ScriptedProposer.from_file(script),
                    {}, 5.0, 600, checks)
    c3 = next(r for r in doc["rollup"] if r["constraint_id"] == "c3")
    assert (c3["totals"], c3["status"]) == ({"low": 480.0, "mid": 700.0, "high": 1030.0},
                                            "UNSAT")
    claim = next(c for c in doc["claims"] if c["estimate"] == "high")
    assert (claim["value"], claim["computed"], claim["agrees"]) == (1000.0, 1030.0, False)
    assert any("computed wins" in f for f in doc["flags"])
    assert sorted(doc["survey"]["triggers"]) == ["t6", "t7"]  # the wall and a 0.25 confidence
    assert doc["repair"]["chosen"] == {"t6": "t6-deterministic", "t7": "t7-tests"}
    revised = next(r for r in doc["repair"]["rollup"] if r["constraint_id"] == "c3")
    assert (revised["totals"]["mid"], revised["status"]) == (330.0, "SAT")


def test_no_feasible_repair_is_a_refusal_naming_the_constraint(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    import yaml

    data = yaml.safe_load(example_script("swe-agent").read_text())
    mids = {t["id"]: t["estimates"]["cost_usd"]["mid"]
            for t in data["proposals"][1]["output"]["tasks"]}
    for survey in data["proposals"][2]["output"]["surveys"]:
        mid = mids[survey["task_id"]] - 10  # cheaper, but far from enough
        for approach in survey["approaches"]:
            approach["estimates"]["cost_usd"] = {"low": mid - 10, "mid": mid, "high": mid + 10}
    path = tmp_path / "expensive.plan.yaml"
    path.write_text(yaml.safe_dump(data))
    doc = plan_goal(initialised_graph, tmp_path, data["example"]["goal"],
                    ScriptedProposer.from_file(path), {}, 5.0, 600)
    assert doc["repair"]["feasible"] is False
    assert doc["refusal"]["reason"] == "NO_FEASIBLE_REPAIR"
    assert "'c3' cannot be met" in doc["refusal"]["to_proceed"][0]
    failed = [r for r in check_plan(doc) if not r.passed]
    assert not failed, failed  # the refusal is true and names a real conflict
    assert doc["refusal"]["conflict"] == ["c3"]
    assert doc["refusal"]["searched"] == doc["refusal"]["combinations"]


def _traded_script(tmp_path: Path) -> tuple[str, Path]:
    """The swe-agent proposals with surveys where every approach cheap enough for the cost
    limit takes too long for the time limit, and the fast ones cost too much."""
    import yaml

    data = yaml.safe_load(example_script("swe-agent").read_text())
    for survey in data["proposals"][2]["output"]["surveys"]:
        for approach in survey["approaches"]:
            cheap = approach["estimates"]["cost_usd"]["mid"] < 150
            approach["estimates"]["hours"] = {"low": 18, "mid": 20, "high": 22} if cheap \
                else {"low": 1, "mid": 2, "high": 3}
            if not cheap:
                approach["estimates"]["cost_usd"] = {"low": 500, "mid": 600, "high": 700}
    goal = data.pop("example")["goal"]  # a user's script: the example's checks do not apply
    script = tmp_path / "traded.plan.yaml"
    script.write_text(yaml.safe_dump(data))
    return goal, script


def test_a_truncated_repair_search_says_so(initialised_graph: GraphStore, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from kernel.plan import feasibility

    monkeypatch.setattr(feasibility, "MAX_COMBINATIONS", 5)
    goal, script = _traded_script(tmp_path)
    doc = plan_goal(initialised_graph, tmp_path, goal, ScriptedProposer.from_file(script),
                    {}, 5.0, 600)
    refusal = doc["refusal"]
    assert (refusal["searched"], refusal["combinations"]) == (5, 12)
    assert "the search stopped after 5 of 12" in refusal["to_proceed"][0]
    assert any("the repair search stopped after 5 of 12" in f for f in doc["flags"])


def test_a_repair_that_trades_one_wall_for_another_is_refused_naming_both(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    """The refusal names cost and time together (a real conflict: check-plan enumerates it
    again), the closest choice, and exits 1."""
    goal, script = _traded_script(tmp_path)
    plan_file = tmp_path / "plan.json"
    env = {**store_env(initialised_graph, data_dir), "COLUMNS": "200"}
    result = CliRunner().invoke(app, ["plan", goal, "--proposer",
                                      "scripted", "--script", str(script), "--out",
                                      str(plan_file)], env=env, catch_exceptions=False)
    assert result.exit_code == 1, result.output
    doc = json.loads(plan_file.read_text())
    refusal = doc["refusal"]
    assert refusal["conflict"] == ["c2", "c3"]
    words = refusal["to_proceed"][0]
    assert "constraints 'c2' and 'c3' together cannot be met" in words
    assert "while the others are met" in words and "refused" in result.output
    assert refusal["closest"]["unmet"] and refusal["searched"] == refusal["combinations"]
    listed = json.loads(CliRunner().invoke(app, ["runs", "--json"], env=env).output)
    assert listed[0]["status"] == "plan refused"
    results = {r.id: r for r in check_plan(doc)}
    assert results["5.1"].passed and results["5.7"].passed, results
    assert all(r.passed for r in results.values()), [r for r in results.values()
                                                     if not r.passed]


def test_a_users_own_script_carries_its_goal_and_checks_which_check_plan_runs(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    """``kernel plan --proposer scripted --script F`` with no GOAL takes the script's goal and
    its verification list; check-plan runs that list (one check here is false on purpose);
    an unknown check is bad input: exit 2 and no run started."""
    import yaml

    data = yaml.safe_load(example_script("momentum-strategy").read_text())
    data["example"]["verifications"] = [
        {"check": "constraint_present", "match": "lookahead", "name": "lookahead named"},
        {"check": "status", "constraint": "m6", "is": "SAT", "when": "before",
         "name": "compute fits as first planned"}]
    script = tmp_path / "mine.yaml"
    script.write_text(yaml.safe_dump(data))
    plan_file = tmp_path / "plan.json"
    env = {**store_env(initialised_graph, data_dir), "COLUMNS": "200"}
    runner = CliRunner()
    result = runner.invoke(app, ["plan", "--proposer", "scripted", "--script", str(script),
                                 "--out", str(plan_file)], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    doc = json.loads(plan_file.read_text())
    assert doc["goal"] == data["example"]["goal"]
    assert [v["name"] for v in doc["verifications"]] == ["lookahead named",
                                                         "compute fits as first planned"]
    failed = [r for r in check_plan(doc) if not r.passed]
    assert [(r.id, r.name) for r in failed] == [("7.2", "compute fits as first planned")]
    checked = runner.invoke(app, ["check-plan", str(plan_file)], env=env)
    assert checked.exit_code == 1 and "compute fits as first planned" in checked.output

    runs_before = runner.invoke(app, ["runs", "--json"], env=env).output
    data["example"]["verifications"] = [{"check": "cheapest_overall"}]
    script.write_text(yaml.safe_dump(data))
    bad = runner.invoke(app, ["plan", "--proposer", "scripted", "--script", str(script)],
                        env=env)
    assert isinstance(bad.exception, ConfigError), bad.output  # main() exits 2 on it
    assert "example.verifications.0.check: 'cheapest_overall' is not a verification" \
        in str(bad.exception)
    assert runner.invoke(app, ["runs", "--json"], env=env).output == runs_before


def test_the_cli_plans_reports_and_checks(initialised_graph: GraphStore, tmp_path: Path,
                                          data_dir: Path) -> None:
    env = {**store_env(initialised_graph, data_dir), "COLUMNS": "160"}
    runner = CliRunner()
    plan_file = tmp_path / "plan.json"
    result = runner.invoke(app, ["plan", "--example", "momentum-strategy", "--out",
                                 str(plan_file)], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "repair: o1 -> o1-grid" in result.output
    doc = json.loads(plan_file.read_text())
    checked = runner.invoke(app, ["check-plan", str(plan_file)], env=env)
    assert checked.exit_code == 0 and "assertions passed" in checked.output
    html = tmp_path / "plan.html"
    report = runner.invoke(app, ["plan-report", doc["run_id"], "--html", str(html)], env=env,
                           catch_exceptions=False)
    assert report.exit_code == 0, report.output
    assert "class='node critical'" in html.read_text()
    # '-' is standard output, holding the document alone (no file named '-')
    printed = runner.invoke(app, ["plan-report", doc["run_id"], "--html", "-"], env=env,
                            catch_exceptions=False)
    assert printed.stdout == html.read_text() and not Path("-").exists()
    piped = runner.invoke(app, ["plan", "--example", "momentum-strategy", "--out", "-"],
                          env=env, catch_exceptions=False)
    assert piped.exit_code == 0, piped.output
    assert json.loads(piped.stdout)["constraints"] == doc["constraints"]
    missing = runner.invoke(app, ["plan", "--example", "nope"], env=env)
    assert missing.exit_code != 0 and "the examples are" in str(missing.exception)


def test_planning_runs_against_claude_at_the_http_layer(initialised_graph: GraphStore,
                                                        tmp_path: Path) -> None:
    """With a key set, the same goal runs through claude-code-0: here its Messages API
    answers are recorded bodies carrying the example's proposals as tool calls."""
    import httpx
    import yaml

    from kernel.protocol import MODEL_OPERATIONS
    from resolvers.claude.adapter import ClaudeCode, ClaudeSettings
    from resolvers.claude.proposer import ClaudeProposer
    from tests.resolvers.anthropic_http import MESSAGES_URL, mocked_claude

    data = yaml.safe_load(example_script("swe-agent").read_text())

    def body(entry: dict) -> httpx.Response:
        return httpx.Response(200, json={
            "id": f"msg_{entry['operation']}", "type": "message", "role": "assistant",
            "model": "claude-opus-5", "stop_reason": "tool_use", "stop_sequence": None,
            "content": [{"type": "tool_use", "id": f"toolu_{entry['operation']}",
                         "name": MODEL_OPERATIONS[entry["operation"]].tool,
                         "input": entry["output"]}],
            "usage": {"input_tokens": 3000, "output_tokens": 1500}})

    with mocked_claude() as (router, client):
        route = router.post(MESSAGES_URL).mock(
            side_effect=[body(e) for e in data["proposals"]])
        proposer = ClaudeProposer(ClaudeCode(ClaudeSettings(), client))
        doc = plan_goal(initialised_graph, tmp_path, data["example"]["goal"], proposer,
                        {"proposer": "anthropic"}, 5.0, 600,
                        data["example"]["verifications"])
    sent = [json.loads(call.request.content) for call in route.calls]
    assert [b["tool_choice"]["name"] for b in sent] == [
        "record_plan_constraints", "record_task_dag", "record_surveys"]
    assert "SWE-bench Lite" in sent[0]["messages"][0]["content"]
    assert all(r.passed for r in check_plan(doc))
    root = initialised_graph.run("goal/get", {"goal_id": doc_root(initialised_graph, doc)})
    assert root[0]["view"]["goal"]["cost_spent"] > 0  # the calls were priced and paid for


def doc_root(graph: GraphStore, doc: dict) -> str:
    return graph.run("run/get", {"run_id": doc["run_id"]})[0]["root_id"]


def test_a_users_script_without_a_wall_survey_is_refused_naming_the_task_and_the_fix(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    """docs/examples/db-migration.plan.yaml with app_changes' survey removed and a
    $15,000 budget: a plan from it would fail check-plan's 4.4, so none is written; the
    refusal (exit 1, recorded in the ledger) names the task, what to add to the script,
    and both constraints UNSAT as planned."""
    import yaml

    data = yaml.safe_load((Path(__file__).parents[2] / "docs" / "examples" /
                           "db-migration.plan.yaml").read_text())
    for entry in data["proposals"]:
        if entry["operation"] == "plan_constraints":
            cost = next(c for c in entry["output"]["constraints"] if c["id"] == "cost")
            cost.update(limit=15000, title="under $15,000", source_text="under $15,000")
        if entry["operation"] == "survey_approaches":
            entry["output"]["surveys"] = [s for s in entry["output"]["surveys"]
                                          if s["task_id"] != "app_changes"]
    goal = data.pop("example")["goal"].replace("$25,000", "$15,000")
    script = tmp_path / "mine.plan.yaml"
    script.write_text(yaml.safe_dump(data))
    plan_file = tmp_path / "plan.json"
    env = {**store_env(initialised_graph, data_dir), "COLUMNS": "200"}
    runner = CliRunner()
    result = runner.invoke(app, ["plan", goal, "--proposer", "scripted", "--script",
                                 str(script), "--out", str(plan_file)], env=env)
    assert result.exit_code == 1 and not plan_file.exists(), result.output
    said = str(result.exception)
    assert "app_changes has no survey (pushes time to UNSAT, pushes cost to UNSAT): add a " \
        "survey with task_id app_changes to the survey_approaches proposal" in said
    assert "'time' mid 9.5 against <= 6.5, 'cost' mid 19800 against <= 15000" in said
    listed = json.loads(runner.invoke(app, ["runs", "--json"], env=env).output)
    assert listed[0]["status"] == "plan refused"
    refusals = [e.data() for e in load_entries(initialised_graph, listed[0]["id"])[2]
                if e.kind == "refusal"]
    assert [r["reasons"] for r in refusals] == [["INVALID_PROPOSAL"]]
    assert "app_changes has no survey" in refusals[0]["to_proceed"][0]
