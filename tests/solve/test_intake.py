"""Step 1, the intake dialogue, on the embedded store: questions before commitment, the
core checked with Z3 at review, a headless run parked on its question and resumed, and
replay of all of it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kernel.cli.app import app
from kernel.core.ledger import load_entries
from kernel.errors import ConfigError
from kernel.solve.session import replay
from kernel.store import GraphStore
from tests.conftest import store_env, store_settings
from tests.graph_round_trip import assert_export_round_trips
from tests.solve import scripts as s

RAW = "fix the auth thing"
GOAL = "make login tokens expire*"


def _extraction(clarity: float, constraints: list[dict[str, Any]],
                questions: list[str] | None = None, goal: str = "fix the auth*",
                summary: str = "make login tokens expire after an hour") -> dict[str, Any]:
    return {"operation": "extract_goal", "goal": goal, "cost_usd": 0.01, "seconds": 2,
            "output": {"description": "Make login tokens expire one hour after they are issued "
                                      "and reject expired ones with 401.",
                       "summary": summary, "intent_class": "fix_defect", "clarity": clarity,
                       "core_constraints": constraints, "unstated": ["which service"],
                       "questions": questions or []}}


def _logic(title: str) -> dict[str, Any]:
    return {"type": "logic", "domain": "cost", "title": title, "explicit": True,
            "payload": {"check": "arith", "expr": title}}


SEMANTIC = {"type": "semantic", "domain": "security", "title": "expired tokens get 401",
            "explicit": True}


def _solve_entries() -> list[dict[str, Any]]:
    return [s.identify(GOAL, "expired tokens get 401"),
            {"operation": "select_constraints", "goal": GOAL, "repeat": True, "output": {
                "constraint_ids": ["expired tokens get 401"], "rationale": "the core"}},
            s.resolve(GOAL, "Tokens now carry exp = iat + 3600; the check returns 401."),
            s.judge(GOAL, "expired tokens get 401", True, 0.9),
            s.leaf(GOAL, True)]


def _script(path: Path, entries: list[dict[str, Any]], answers: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump({"version": 1, "proposals": entries, "intake": answers},
                                   sort_keys=False))
    return path


def _cli(graph: GraphStore, data_dir: Path, *args: str, code: int = 0) -> str:
    env = {**store_env(graph, data_dir), "COLUMNS": "200"}
    result = CliRunner().invoke(app, list(args), env=env)
    if code == 2:  # bad input: main() prints the one line and exits 2
        assert isinstance(result.exception, ConfigError), result.output
        return str(result.exception)
    assert result.exit_code == code, result.stdout[-2500:]
    return result.stdout if "--json" in args else result.output


def _intake_entries(graph: GraphStore, run_id: str) -> list[Any]:
    return [e for e in load_entries(graph, run_id)[2]
            if e.operation in ("extract_goal", "intake")]


@pytest.mark.slow
def test_a_vague_goal_is_asked_about_then_confirmed_and_solved(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    script = _script(tmp_path / "vague.yaml", [
        _extraction(0.3, [], ["Which tokens?", "What should expire mean?"]),
        _extraction(0.9, [SEMANTIC, _logic("cost_usd <= 1")]),
        *_solve_entries()],
        [{"answers": ["login tokens", "one hour after issue"]},
         {"add": ["logic:time:seconds <= 600"]}])
    out = json.loads(_cli(initialised_graph, data_dir, "solve", RAW, "--intake",
                          "--proposer", "scripted", "--script", str(script), "--json"))
    assert out["status"] == "resolved"
    run_id = out["run"]
    entries = _intake_entries(initialised_graph, run_id)
    assert [(e.operation, e.source) for e in entries] == [
        ("extract_goal", "scripted:vague.yaml"), ("intake", "actor:human"),
        ("extract_goal", "scripted:vague.yaml"), ("intake", "actor:human")]
    question = entries[1].data()["request"]
    assert question["operation"] == "intake"
    second = entries[2]  # the answers went into the second extraction's request
    assert second.data()["response"]["output"]["clarity"] == 0.9
    root = initialised_graph.run("goal/tree", {"run_id": run_id})[0]
    assert root["summary"] == "make login tokens expire after an hour"
    core_ids = [c["id"] for c in initialised_graph.run(
        "constraint/of_goal", {"goal_id": root["id"]}) if c["role"] == "core"]
    core = {c["title"]: c for c in initialised_graph.run("constraint/get_many",
                                                         {"ids": core_ids})}
    assert set(core) == {"expired tokens get 401", "cost_usd <= 1", "seconds <= 600"}
    result = replay(store_settings(initialised_graph, data_dir), run_id)
    assert result.divergence is None and result.identical


def test_a_contradiction_is_shown_with_its_unsat_core_and_reviewed_again(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    script = _script(tmp_path / "clash.yaml", [
        _extraction(0.9, [SEMANTIC, _logic("cost_usd <= 1")]), *_solve_entries()],
        [{"add": ["logic:cost:cost_usd >= 2"]},
         {"drop": ["cost_usd >= 2"]}])
    out = json.loads(_cli(initialised_graph, data_dir, "solve", RAW, "--intake",
                          "--proposer", "scripted", "--script", str(script), "--json"))
    assert out["status"] == "resolved"
    reviews = [e.data() for e in _intake_entries(initialised_graph, out["run"])
               if e.operation == "intake"]
    assert len(reviews) == 2
    log = json.dumps(initialised_graph.run("log/of_run", {"run_id": out["run"], "max_tier": 1}))
    assert "cannot all hold (Z3: unsat)" in log and "cost_usd >= 2" in log


def test_a_redundant_core_constraint_is_pointed_out_once(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    script = _script(tmp_path / "redundant.yaml", [
        _extraction(0.9, [SEMANTIC, _logic("cost_usd <= 1"), _logic("cost_usd <= 2")]),
        *_solve_entries()],
        [{}, {}])  # confirmed as proposed, then again after the note: the person keeps it
    out = json.loads(_cli(initialised_graph, data_dir, "solve", RAW, "--intake",
                          "--proposer", "scripted", "--script", str(script), "--json"))
    assert out["status"] == "resolved"
    log = json.dumps(initialised_graph.run("log/of_run", {"run_id": out["run"], "max_tier": 1}))
    assert "'cost_usd <= 2' is implied by 'cost_usd <= 1'" in log
    assert len([e for e in _intake_entries(initialised_graph, out["run"])
                if e.operation == "intake"]) == 2


@pytest.mark.slow
def test_a_headless_intake_parks_and_resumes_after_the_answer(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    script = _script(tmp_path / "headless.yaml", [
        _extraction(0.3, [SEMANTIC], ["Which tokens?"]),
        _extraction(0.9, [SEMANTIC]), *_solve_entries()], [])
    parked = json.loads(_cli(initialised_graph, data_dir, "intake", RAW, "--headless",
                             "--proposer", "scripted", "--script", str(script), "--json",
                             code=3))
    assert parked["status"] == "pending" and len(parked["waiting_on"]) == 1
    listed = json.loads(_cli(initialised_graph, data_dir, "hire", "list", "--json"))
    assert [(r["capability_tag"], r["reason"], r["rationale"]) for r in listed] == \
        [("goal_intake", "clarify", "Which tokens?")]
    bad = tmp_path / "bad.yaml"
    bad.write_text("verdict: maybe\n")
    assert "--intake" in _cli(initialised_graph, data_dir, "hire", "answer",
                              parked["waiting_on"][0], "--intake", str(bad), code=2)
    answer = tmp_path / "answer.yaml"
    answer.write_text(yaml.safe_dump({"answers": ["login tokens"]}))
    _cli(initialised_graph, data_dir, "hire", "answer", parked["waiting_on"][0],
         "--intake", str(answer), "--no-resume")
    # The review is the next question: still nobody there, so it parks again.
    again = json.loads(_cli(initialised_graph, data_dir, "resume", parked["run"], "--json",
                            code=3))
    [review] = again["waiting_on"]
    assert review != parked["waiting_on"][0]
    answer.write_text(yaml.safe_dump({"description": "Make login tokens expire after one hour."}))
    _cli(initialised_graph, data_dir, "hire", "answer", review, "--intake", str(answer),
         "--no-resume")
    # `kernel intake` stops once the goal is confirmed, however the answer arrived
    confirmed = json.loads(_cli(initialised_graph, data_dir, "resume", parked["run"], "--json",
                                code=3))
    assert confirmed["stopped"] == "intake confirmed"
    done = json.loads(_cli(initialised_graph, data_dir, "resume", parked["run"], "--json"))
    assert done["status"] == "resolved"
    root = initialised_graph.run("goal/get", {"goal_id": done["root"]})[0]["view"]
    assert root["goal"]["description"] == "Make login tokens expire after one hour."
    statuses = {r["status"] for r in json.loads(_cli(initialised_graph, data_dir, "hire",
                                                      "list", "--all", "--json"))}
    assert statuses == {"delivered"}
    result = replay(store_settings(initialised_graph, data_dir), parked["run"])
    assert result.divergence is None and result.identical


def test_a_rejected_goal_is_refused_and_nothing_more_is_paid(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    script = _script(tmp_path / "reject.yaml", [_extraction(0.9, [SEMANTIC])],
                     [{"verdict": "reject", "note": "not what I meant"}])
    out = json.loads(_cli(initialised_graph, data_dir, "solve", RAW, "--intake",
                          "--proposer", "scripted", "--script", str(script), "--json",
                          code=1))
    assert out["status"] == "infeasible"
    assert out["refusals"][0]["reasons"] == ["INTAKE_REJECTED"]
    operations = [e.operation for e in load_entries(initialised_graph, out["run"])[2]
                  if e.kind == "proposal"]
    assert operations == ["extract_goal", "intake"]


@pytest.mark.slow
def test_the_dialogue_in_a_terminal_refuses_a_contradiction_naming_its_unsat_core(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    """``kernel solve --interactive`` through a pty, answered as a person types."""
    pexpect = pytest.importorskip("pexpect")
    script = _script(tmp_path / "pty.yaml", [
        _extraction(0.3, [], ["Which tokens?"]),
        _extraction(0.9, [SEMANTIC, _logic("cost_usd <= 1")]), *_solve_entries()], [])
    env = {**os.environ, **store_env(initialised_graph, data_dir), "NO_COLOR": "1",
           "TERM": "dumb", "COLUMNS": "200"}
    child = pexpect.spawn(sys.executable, [
        "-c", "from kernel.cli.app import main; main()", "solve", RAW, "--interactive",
        "--proposer", "scripted", "--script", str(script), "--progress", "none"],
        env=env, encoding="utf-8", timeout=90, dimensions=(50, 250))

    def answer(prompt: str, text: str) -> None:
        child.expect_exact(prompt)
        child.sendline(text)

    answer("Which tokens?", "login tokens")
    review = [("the goal", "confirm"), ("edit the description?", "n"),
              ("[semantic/security] expired tokens get 401", "confirm"),
              ("[logic/cost] cost_usd <= 1", "confirm")]
    for prompt, text in review:
        answer(prompt, text)
    answer("add a core constraint", "logic:cost:cost_usd >= 2")
    answer("add a core constraint", "")
    child.expect_exact("'cost_usd <= 1' and 'cost_usd >= 2' cannot all hold")  # the unsat core
    for prompt, text in [*review, ("cost_usd >= 2", "reject")]:
        answer(prompt, text)
    answer("add a core constraint", "")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    run_id = initialised_graph.run("run/list")[0]["id"]  # this test's graph: its one run
    entries = _intake_entries(initialised_graph, run_id)
    assert [e.operation for e in entries] == ["extract_goal", "intake", "extract_goal",
                                              "intake", "intake"]
    result = replay(store_settings(initialised_graph, data_dir), run_id)
    assert result.divergence is None and result.identical


def test_the_shipped_intake_example_resolves(initialised_graph: GraphStore,
                                             data_dir: Path, tmp_path: Path) -> None:
    from kernel.paths import seeds_dir

    script = seeds_dir() / "examples" / "intake.script.yaml"
    out = json.loads(_cli(initialised_graph, data_dir, "solve", RAW, "--intake",
                          "--proposer", "scripted", "--script", str(script), "--json"))
    assert out["status"] == "resolved"
    assert [e.operation for e in _intake_entries(initialised_graph, out["run"])] == \
        ["extract_goal", "intake", "extract_goal", "intake"]
    assert_export_round_trips(initialised_graph, data_dir, tmp_path)
