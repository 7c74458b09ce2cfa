"""The self-model answers "can the kernel itself build this?" before BUILD (axiom S6),
from the graph, recorded in the ledger, on the embedded store."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel.core.budget import Amount
from kernel.core.ledger import load_entries
from kernel.core.registry import Registry, ResolverSpec
from kernel.repositories.requests import list_requests
from kernel.solve.dispatch import solve
from kernel.solve.session import replay
from kernel.solve.steps.grow import OUTLOOK
from kernel.store import GraphStore
from resolvers.self_model import SelfModel
from tests.conftest import store_settings
from tests.solve import scripts as s
from tests.solve.test_grow import _build_entries, _needs, _start


def _outlooks(graph: GraphStore, run_id: str) -> list[dict]:
    entries = [e for e in load_entries(graph, run_id)[2] if e.operation == OUTLOOK]
    assert all(e.source == "resolver:self-model-0" for e in entries)
    return [e.data()["rows"] for e in entries]


def _gap(goal: str, tag: str) -> list[dict]:
    """claude-code-0 fails once and the gap names ``tag``, a capability nobody provides."""
    return [
        _needs(goal, "generate_code", "states what it read"),
        s.resolve(goal, "I could not read it."),
        s.judge(goal, "states what it read", False, 0.2),
        s.feedback(goal),
        {"operation": "detect_capability_gap", "goal": goal, "cost_usd": 0.01,
         "output": {"capability_tag": tag, "buildable": True, "rationale": "needs a parser"}},
    ]


def test_at_boot_the_kernel_can_build_and_says_so_before_it_builds(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    kernel, root = _start(initialised_graph, tmp_path, "Summarise the sales CSV",
                          _build_entries(), "build")
    assert solve(kernel, root).status == "resolved"
    [outlook] = _outlooks(initialised_graph, kernel.run.run_id)
    assert outlook["reason"] is None and outlook["capability"] == "csv_summary"
    assert outlook["builders"] == ["resolver:claude-code-0"]
    assert outlook["builds_finished"] == 0  # no history: the configured minimum
    assert outlook["expected_cost_usd"] == kernel.config.build_min_usd


@pytest.mark.slow
def test_what_earlier_builds_cost_decides_that_a_build_is_unaffordable(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    first, root = _start(initialised_graph, tmp_path, "Summarise the sales CSV",
                         _build_entries(), "build")
    assert solve(first, root).status == "resolved"
    build = next(g for g in initialised_graph.run("goal/tree", {"run_id": first.run.run_id})
                 if g["summary"] == "build tool: csv_summary")
    spent = first.tree.get(build["id"]).cost_spent / 1e6
    assert spent >= 0.2  # the build's resolve alone cost $0.20

    # Half of what this goal has left after one failed try is above the configured
    # minimum ($0.05) but below what the one build on record cost: it asks a person.
    kernel, root2 = _start(initialised_graph, tmp_path, "Pivot the refund CSV",
                           _gap("pivot the refund*", "csv_pivot"), "pivot", budget=0.3,
                           max_attempts=1)
    outcome = solve(kernel, root2)
    assert outcome.status == "pending" and len(outcome.waiting_on) == 1
    [outlook] = _outlooks(initialised_graph, kernel.run.run_id)
    assert outlook["reason"] == "build_unaffordable"
    assert outlook["builds_finished"] == 1 and outlook["builds_resolved"] == 1
    assert outlook["expected_cost_usd"] == pytest.approx(spent)
    assert kernel.config.build_min_usd < outlook["share_usd"] < spent
    [request] = list_requests(initialised_graph, ["requested"])
    assert (request["capability_tag"], request["reason"]) == ("csv_pivot", "build_unaffordable")
    goals = initialised_graph.run("goal/tree", {"run_id": kernel.run.run_id})
    assert len(goals) == 1  # nothing built

    # The answer is in the ledger: a replay in a graph without that history agrees.
    result = replay(store_settings(initialised_graph, data_dir), kernel.run.run_id)
    assert result.divergence is None and result.identical


def test_a_goal_no_built_tool_could_serve_goes_to_a_person(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    """A physical child: no tool accepts its modality and a Python tool the kernel
    built would not either, so building one would be paid for and never used."""
    entries = [
        s.identify("check the enclosure*", "covers the board"),
        s.resolve("check the enclosure*", "An outline: measure the board."),
        s.judge("check the enclosure*", "covers the board", True, 0.9),
        s.leaf("check the enclosure*", False),
        s.decompose("check the enclosure*", [("board", "measure the board heat", 1.0)], []),
        s.identify("measure the board heat", "reports the peak temperature"),
    ]
    entries[4]["output"]["children"][0]["modality"] = "physical"
    kernel, root = _start(initialised_graph, tmp_path, "Check the enclosure design",
                          entries, "physical")
    outcome = solve(kernel, root)
    assert outcome.status == "pending" and len(outcome.waiting_on) == 1
    [outlook] = _outlooks(initialised_graph, kernel.run.run_id)
    assert (outlook["modality"], outlook["reason"]) == ("physical", "modality_not_buildable")
    [request] = list_requests(initialised_graph, ["requested"])
    assert request["reason"] == "modality_not_buildable"
    summaries = {g["summary"] for g in initialised_graph.run(
        "goal/tree", {"run_id": kernel.run.run_id})}
    assert not any(x.startswith("build tool") for x in summaries)


def test_without_a_resolver_that_writes_code_nothing_can_be_built(
        initialised_graph: GraphStore, tmp_path: Path) -> None:
    kernel, _ = _start(initialised_graph, tmp_path, "Summarise the sales CSV", [], "bare")
    Registry(initialised_graph).register(ResolverSpec(  # claude-code-0 stops writing code
        id="resolver:claude-code-0", label="Claude Code", capabilities=["reason"]))
    outlook = SelfModel(kernel.run).build_outlook("csv_summary", "text",
                                                  Amount(10_000_000, 600_000), 0.05, 30)
    assert outlook.reason == "no_builder" and not outlook.can_build
