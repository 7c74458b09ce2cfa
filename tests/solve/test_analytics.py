"""The analytics queries answer from what runs leave in the graph."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernel.cli.app import app
from kernel.errors import ConfigError
from kernel.protocol import HireAnswer
from kernel.repositories.requests import record_answer
from kernel.solve.dispatch import solve
from kernel.solve.session import resume
from kernel.store import GraphStore
from tests.conftest import store_env
from tests.solve import scripts as s
from tests.solve.test_grow import _build_entries, _needs, _start, _thermal_entries


def _analytics(data_dir: Path, graph: GraphStore, *args: str) -> list | dict:
    env = store_env(graph, data_dir)
    result = CliRunner().invoke(app, ["analytics", *args, "--json"], env=env,
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.slow
def test_every_analytics_query_answers_from_real_runs(initialised_graph: GraphStore,
                                                     tmp_path: Path, data_dir: Path) -> None:
    kernel, root = _start(initialised_graph, tmp_path, "Summarise the sales CSV",
                          _build_entries(), "build")
    assert solve(kernel, root).status == "resolved"
    retried = [_needs("write the summary*", "generate_code", "states what it read"),
               s.resolve("write the summary*", "It has rows.", repeat=True),
               s.judge("write the summary*", "states what it read", False, 0.3),
               s.judge("write the summary*", "states what it read", True, 0.9),
               s.feedback("write the summary*", cites="states what it read"),
               s.leaf("write the summary*", True)]
    kernel3, root3 = _start(initialised_graph, tmp_path, "Write the summary", retried, "retry")
    assert solve(kernel3, root3).status == "resolved"
    kernel2, root2 = _start(initialised_graph, tmp_path, "Measure the PCB temperature",
                            _thermal_entries("measure the*"), "thermal", max_attempts=1)
    parked = solve(kernel2, root2)
    record_answer(initialised_graph, parked.waiting_on[0], HireAnswer(kind="decline"))
    resume(initialised_graph, kernel2.run.run_id, tmp_path, proposer=kernel2.proposals.proposer)

    names = _analytics(data_dir, initialised_graph)
    assert set(names) == {"build_reuse", "cost_by_capability", "failure_modes",
                          "failure_modes_by_resolver", "hire_requests", "retries_per_goal",
                          "sigma_by_depth"}
    built = _analytics(data_dir, initialised_graph, "build_reuse")
    assert [(b["built_by"], b["attempts"], b["goals"]) for b in built] == [("system", 1, 1)]
    failures = _analytics(data_dir, initialised_graph, "failure_modes")
    # causes as diagnosed, with what the failed attempts violated beside them
    assert failures and not any(f["cause"].startswith("violated_") for f in failures)
    only = _analytics(data_dir, initialised_graph, "failure_modes", "--run", kernel3.run.run_id)
    assert [(f["cause"], f["description"], f["attempts"], f["runs"], f["violated"])
            for f in only] == [("too_vague", "be more specific", 1, 1, ["states what it read"])]
    assert _analytics(data_dir, initialised_graph, "failure_modes", "--run", "run:none") == []
    assert _analytics(data_dir, initialised_graph, "failure_modes", "--proposer",
                      "scripted") == failures
    assert _analytics(data_dir, initialised_graph, "failure_modes", "--proposer",
                      "anthropic") == []
    assert _analytics(data_dir, initialised_graph, "failure_modes", "--since", "2999-01-01") \
        == []
    assert _analytics(data_dir, initialised_graph, "failure_modes", "--since", "2000-01-01",
                      "--until", "2999-01-01T00:00+02:00") == failures
    by_resolver = _analytics(data_dir, initialised_graph, "failure_modes_by_resolver")
    assert by_resolver[0]["resolver"] == "resolver:claude-code-0"
    assert {r["proposer"] for r in by_resolver} <= {"scripted:retry.yaml", "scripted:build.yaml",
                                                    "scripted:thermal.yaml"}
    hires = _analytics(data_dir, initialised_graph, "hire_requests")
    assert [(h["capability"], h["status"]) for h in hires] == [("thermal_measurement",
                                                                "declined")]
    costs = {c["capability"]: c for c in _analytics(data_dir, initialised_graph,
                                                    "cost_by_capability")}
    assert costs["csv_summary"]["goals"] == 1 and costs["generate_code"]["usd"] > 0
    depths = _analytics(data_dir, initialised_graph, "sigma_by_depth")
    assert [d["depth"] for d in depths] == [0, 1]
    retries = _analytics(data_dir, initialised_graph, "retries_per_goal")
    assert [(r["goal"], r["retries"]) for r in retries] == [("Write the summary", 1)]


def test_analytics_filters_are_checked_before_anything_runs(initialised_graph: GraphStore,
                                                           data_dir: Path) -> None:
    env = store_env(initialised_graph, data_dir)
    for args, said in ((["failure_modes", "--since", "yesterday"], "is not an ISO date"),
                       (["failure_modes", "--proposer", "gpt"], "is not one of scripted"),
                       (["cost_by_capability", "--run", "run:x"], "has no filter --run")):
        result = CliRunner().invoke(app, ["analytics", *args], env=env)
        assert isinstance(result.exception, ConfigError) and said in str(result.exception)


@pytest.mark.slow
def test_every_node_has_the_caption_the_browser_style_shows(initialised_graph: GraphStore,
                                                            tmp_path: Path) -> None:
    import io
    import re

    from kernel.graph_io.exporter import export_graph
    from kernel.plan.session import example_goal, example_script, plan_goal
    from kernel.store.ontology import LABELS
    from resolvers.scripted import ScriptedProposer

    kernel, root = _start(initialised_graph, tmp_path, "Summarise the sales CSV",
                          _build_entries(), "build")
    solve(kernel, root)
    kernel2, root2 = _start(initialised_graph, tmp_path, "Measure the PCB temperature",
                            _thermal_entries("measure the*"), "thermal", max_attempts=1)
    solve(kernel2, root2)
    script = example_script("sensor-kits")
    goal, _ = example_goal(script)
    plan_goal(initialised_graph, tmp_path, goal, ScriptedProposer.from_file(script), {}, 5.0,
              600)
    style = (Path(__file__).parents[2] / "docs" / "neo4j-browser.grass").read_text()
    styled = dict(re.findall(r'node\.(\w+) \{[^}]*caption: "\{(\w+)\}"', style))
    # Every label is styled, and every node shows its `caption` property.
    assert styled == {s.name: "caption" for s in LABELS}
    buffer = io.StringIO()
    export_graph(initialised_graph, buffer)
    seen: dict[str, int] = {}
    for line in buffer.getvalue().splitlines():
        row = json.loads(line)
        if row.get("kind") != "node":
            continue
        seen[row["label"]] = seen.get(row["label"], 0) + 1
        caption = row["props"].get("caption")
        assert caption, f"{row['id']} ({row['label']}) has no caption"
        if row["label"] == "Attempt" and row["props"].get("verdict"):
            assert caption.endswith(": " + row["props"]["verdict"]), caption
        if row["label"] == "BudgetEvent":  # USD, not micro-dollars that read as dollars
            assert re.fullmatch(r"[a-z ]+ \$\d+\.\d{6}", caption), caption
            whole, frac = caption.split("$")[1].split(".")
            assert int(whole) * 1_000_000 + int(frac) == row["props"]["cost"]
        assert "avg_cost" not in row["props"]
    # The Browser guide's starter queries answer on this graph, one per job.
    guide = (Path(__file__).parents[2] / "docs" / "neo4j-browser.md").read_text()
    answers = [initialised_graph.execute_adhoc(block, {}, write=False).records()
               for block in re.findall(r"```cypher\n(.*?)```", guide, re.S)]
    assert all(answers[:5]) and any(r["uses"] for r in answers[4])
    bookkeeping = initialised_graph.execute_adhoc(
        "MATCH (n) WHERE n:SchemaInfo OR n:Migration RETURN n.caption AS caption", {},
        write=False).records()
    assert bookkeeping and all(r["caption"] for r in bookkeeping)
    assert {"Goal", "Resolver", "CapabilityRequest", "Attempt", "LedgerEntry", "BudgetEvent",
            "Constraint", "FailureMode", "LogEntry"} <= set(seen)


def test_the_knowledge_graph_edges_are_written_with_each_step(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    """INSTANCE_OF/REQUIRES at identification, TRIED_FOR/USED_CONSTRAINT with the attempt,
    SUCCEEDED_ON/FAILED_ON and FAILED_BECAUSE with the verification."""
    entries = [_needs("write the summary*", "generate_code", "states what it read"),
               s.resolve("write the summary*", "It has rows.", repeat=True),
               s.judge("write the summary*", "states what it read", False, 0.3),
               s.judge("write the summary*", "states what it read", True, 0.9),
               s.feedback("write the summary*"), s.leaf("write the summary*", True)]
    kernel, root = _start(initialised_graph, tmp_path, "Write the summary", entries, "edges")
    assert solve(kernel, root).status == "resolved"
    goal = kernel.tree.get(root)
    pattern = goal.pattern_id
    assert pattern.startswith("goal_pattern:")

    def edges(label: str, ids: list[str]) -> list[tuple[str, str, dict]]:
        rows = initialised_graph.run("graph_io/export_relationships", {"ids": ids},
                                     {"label": label})
        return [(r["type"], r["to_id"], r["props"]) for r in rows]

    assert ("INSTANCE_OF", pattern, {}) in [(t, to, {}) for t, to, _ in edges("Goal", [root])]
    assert ("REQUIRES", "capability:generate_code") in [
        (t, to) for t, to, _ in edges("GoalPattern", [pattern])]
    attempts = kernel.attempts.of_goal(root)
    first, second = (edges("Attempt", [a.id]) for a in attempts)
    for out in (first, second):
        kinds = {t for t, _, _ in out}
        assert {"FOR", "USED", "TRIED_FOR", "USED_CONSTRAINT"} <= kinds
    assert "FAILED_BECAUSE" in {t for t, _, _ in first}
    outcomes = [(t, p["id"], p["sigma_v"]) for t, to, p in
                edges("Resolver", ["resolver:claude-code-0"]) if to == pattern]
    assert sorted(outcomes) == sorted([("FAILED_ON", attempts[0].id, 0.3),
                                       ("SUCCEEDED_ON", attempts[1].id, 0.9)])
    failed = next(p for t, to, p in edges("Resolver", ["resolver:claude-code-0"])
                  if t == "FAILED_ON")
    assert failed["cost"] > 0 and failed["modality"] == "text"
    assert failed["input_signature"] == '[["semantic", "quality"]]'
    produced = {to for t, to, _ in edges("Resolver", ["resolver:claude-code-0"])
                if t == "PRODUCED"}
    assert produced == {a.output_artifact_id for a in attempts}
