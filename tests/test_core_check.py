"""The core constraints are checked together by Z3 before anything is stored or paid for:
a contradiction is refused naming a minimal conflict; an implied one is pointed out."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kernel.api import SolveRequest
from kernel.cli.app import app
from kernel.errors import ConfigError
from kernel.solve.constraint_text import parse_constraint
from kernel.solve.core_check import check_core
from kernel.store import GraphStore
from tests.conftest import store_env


def core(*texts: str) -> list:
    return [parse_constraint(t) for t in texts]


def test_a_contradiction_names_a_minimal_conflict_and_leaves_out_the_rest() -> None:
    report = check_core(core("logic:cost:cost_usd <= 1", "logic:speed:latency_ms < 200",
                             "semantic:ux:errors are helpful", "logic:cost:cost_usd >= 2",
                             "logic:cost:cost_usd + latency_ms >= 0"))
    assert report.conflict == ["cost_usd <= 1", "cost_usd >= 2"]


def test_a_conflict_only_the_combination_makes_is_found_whole() -> None:
    report = check_core(core("logic:a:x + y <= 10", "logic:b:x >= 6", "logic:c:y >= 6"))
    assert report.conflict == ["x + y <= 10", "x >= 6", "y >= 6"]


def test_an_implied_constraint_is_pointed_out_with_what_implies_it() -> None:
    report = check_core(core("logic:cost:cost_usd <= 5", "logic:cost:cost_usd <= 10",
                             "logic:t:latency_ms < 200"))
    assert not report.conflict
    assert report.implied == {"cost_usd <= 10": ["cost_usd <= 5"]}
    assert "'cost_usd <= 10' is implied by 'cost_usd <= 5'" in report.problems()[0]


def test_prose_and_semantic_constraints_are_left_to_verification() -> None:
    assert check_core(core("logic:tests:all tests pass", "semantic:ux:clear")).problems() == []


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["<=", ">="]), st.integers(-5, 5)), min_size=1,
                max_size=5))
def test_bounds_on_one_metric_conflict_exactly_when_a_lower_exceeds_an_upper(
        bounds: list[tuple[str, int]]) -> None:
    uppers = [v for op, v in bounds if op == "<="]
    lowers = [v for op, v in bounds if op == ">="]
    report = check_core(core(*(f"logic:m:x {op} {v}" for op, v in bounds)))
    contradictory = bool(uppers and lowers and max(lowers) > min(uppers))
    assert bool(report.conflict) == contradictory
    if contradictory:  # minimal: one upper below one lower
        assert len(report.conflict) == 2


def test_the_request_refuses_a_contradictory_core_in_one_line() -> None:
    with pytest.raises(ConfigError, match=r"'cost_usd <= 1' and 'cost_usd >= 2' cannot all hold"):
        SolveRequest.checked(goal="g", constraints=["logic:cost:cost_usd <= 1",
                                                    "logic:cost:cost_usd >= 2"])


def test_the_request_keeps_what_the_consistency_check_found_implied() -> None:
    request = SolveRequest.checked(goal="g", constraints=["logic:cost:cost_usd <= 5",
                                                          "logic:cost:cost_usd <= 10"])
    assert request.implied_core() == [
        "'cost_usd <= 10' is implied by 'cost_usd <= 5': it adds nothing to the core; drop it"]
    assert SolveRequest.checked(goal="g").implied_core() == []


def test_solve_stores_and_spends_nothing_on_a_contradictory_core(
        initialised_graph: GraphStore, data_dir: Path) -> None:
    env = {**store_env(initialised_graph, data_dir), "COLUMNS": "200"}
    runner = CliRunner()
    before = runner.invoke(app, ["runs", "--json"], env=env).output
    script = data_dir / "never-asked.yaml"  # loaded (it may carry core constraints), never asked
    script.write_text("version: 1\nproposals: []\n")
    result = runner.invoke(app, ["solve", "build a tool", "-c", "logic:cost:cost_usd <= 1",
                                 "-c", "logic:cost:cost_usd >= 2", "--proposer", "scripted",
                                 "--script", str(script)], env=env)
    assert isinstance(result.exception, ConfigError), result.output  # main() exits 2
    assert "cannot all hold" in str(result.exception)
    assert runner.invoke(app, ["runs", "--json"], env=env).output == before
