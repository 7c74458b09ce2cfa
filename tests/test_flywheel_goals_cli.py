"""Each goal of the flywheel experiment solved alone with `kernel solve` and the
experiment's script: the script carries the person's core constraints its judgments and
diagnoses name (its `core` section), so no `-c` is needed, and a titled `-c` gives the
same constraint."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernel.api import SolveRequest
from kernel.bench.flywheel import EXAMPLE, _core, load_experiment
from kernel.cli.app import app
from kernel.store import GraphStore
from tests.conftest import store_env

SCRIPT = EXAMPLE / "script.yaml"


def test_the_script_gives_every_goal_the_core_the_experiment_gives_it() -> None:
    for goal in load_experiment(EXAMPLE / "goals.yaml").goals:
        request = SolveRequest.checked(goal=goal.goal, proposer="scripted", script=SCRIPT)
        assert [c.with_id().id for c in request.constraints] == \
            [c.with_id().id for c in _core(goal.constraints)], goal.goal


def test_a_titled_constraint_is_the_one_the_script_would_give() -> None:
    goal = "Print the top 4 rows of orders.csv by amount"
    titled = SolveRequest.checked(
        goal=goal, constraints=["logic:data:prints exactly the rows asked for: rows == 4"])
    both = SolveRequest.checked(
        goal=goal, proposer="scripted", script=SCRIPT,
        constraints=["logic:data:prints exactly the rows asked for: rows == 4"])
    assert [c.with_id().id for c in titled.constraints] == \
        [c.with_id().id for c in both.constraints]  # the person's own, not twice
    (constraint,) = titled.constraints
    assert (constraint.title, constraint.payload) == (
        "prints exactly the rows asked for", {"check": "arith", "expr": "rows == 4"})


def _kernel(store: GraphStore, data_dir: Path, *args: str) -> tuple[int, str]:
    done = CliRunner().invoke(app, list(args), env={**store_env(store, data_dir),
                                                    "COLUMNS": "200"})
    assert done.exception is None or isinstance(done.exception, SystemExit), done.output
    return done.exit_code, done.output


@pytest.mark.slow
def test_the_flywheels_goals_solve_with_kernel_solve(initialised_graph: GraphStore,
                                                    data_dir: Path) -> None:
    solve = ("--script", str(SCRIPT), "--budget", "3", "--max-attempts", "2")
    code, said = _kernel(initialised_graph, data_dir, "solve",
                         "Print the top 3 rows of sales.csv by revenue", *solve)
    assert code == 0 and "resolved" in said, said  # a tool built for it on the way
    code, said = _kernel(initialised_graph, data_dir, "solve",
                         "Summarise the release notes of version 1.2", *solve)
    assert code == 0 and "resolved" in said, said
    code, said = _kernel(initialised_graph, data_dir, "solve",
                         "Fetch the EUR to USD exchange rate", *solve)
    assert code == 3, said  # waiting on a person for a tool that reaches the rates
    (request,) = re.findall(r"capreq:[0-9A-Z]+", said)[:1]
    code, said = _kernel(initialised_graph, data_dir, "hire", "answer", request,
                         "--resolver", str(EXAMPLE / "rates-tool.yaml"))
    assert code == 0 and "resolved" in said, said
    titles = initialised_graph.execute_adhoc(
        "MATCH (g:Goal)-[r:HAS_CONSTRAINT]->(c:Constraint) WHERE g.depth = 0 "
        "AND 'core' IN r.roles RETURN DISTINCT c.title AS title ORDER BY title", {},
        write=False).records()
    assert [t["title"] for t in titles] == ["covers every listed change",
                                            "prints exactly the rows asked for",
                                            "reports a positive rate"]
