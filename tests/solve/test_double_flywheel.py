"""The flywheel through the real Claude adapter and SDK and the prompt-reading model double
(tests/model_double.py): eight related goals solved twice in one graph. The second pass
asks the model a fraction of what the first did, because a request answered before, byte
for byte, is served from that answer; every run still replays and verifies."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from kernel.core.envelopes import ConstraintSpec, Provenance
from kernel.core.ledger import load_entries
from kernel.solve.dispatch import solve
from kernel.solve.session import replay
from kernel.store.base import GraphStore
from resolvers.sandbox.runner import default_workspace_root
from tests.conftest import store_settings
from tests.model_double import model_double
from tests.starting import start

# Eight release notes of one tool: the same kind of goal, each its own.
GOALS = [f"Write the release note of csvtool {v}" for v in
         ("1.1", "1.2", "1.3", "1.4", "2.0", "2.1", "2.2", "3.0")]
HUMAN = Provenance(source="human")
CORE = [ConstraintSpec(type="semantic", domain="docs", title="names every change",
                       payload={"rubric": "each change in the release is named"},
                       provenance=HUMAN),
        ConstraintSpec(type="logic", domain="docs", title="at most 200 words",
                       payload={"check": "arith", "expr": "words <= 200"}, provenance=HUMAN)]


def _pass(graph: GraphStore, tmp_path: Path, fresh: bool = False
          ) -> tuple[list[str], Counter[str], Counter[str]]:
    """Solve every goal once; the runs, the calls the model answered and those reused."""
    runs: list[str] = []
    asked: Counter[str] = Counter()
    reused: Counter[str] = Counter()
    cost = [0.0]
    with model_double() as (server, proposer):
        for goal in GOALS:
            kernel, root = start(graph, goal, CORE, 2.0, 900, proposer, tmp_path,
                                 default_workspace_root(),
                                 extra={"fresh": True} if fresh else None)
            assert solve(kernel, root).status == "resolved", goal
            runs.append(kernel.run.run_id)
            for entry in load_entries(graph, kernel.run.run_id)[2]:
                if entry.kind == "proposal":
                    (reused if "reused" in entry.data() else asked)[entry.operation] += 1
                    cost[0] += float(entry.data()["response"]["cost_usd"])
        # what the ledgers say was asked is what reached the model
        assert sum(asked.values()) == len(server.prompts)
    print(f"model cost ${cost[0]:.4f}")
    return runs, asked, reused


@pytest.mark.slow
def test_eight_related_goals_twice_cost_the_second_pass_a_fraction_of_the_calls(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    first_runs, first, _ = _pass(initialised_graph, tmp_path)
    second_runs, second, reused = _pass(initialised_graph, tmp_path)
    calls = (sum(first.values()), sum(second.values()))
    print(f"pass 1: {calls[0]} calls {dict(first)}; pass 2: {calls[1]} calls "
          f"{dict(second)}, reused {dict(reused)}")
    assert calls[1] <= 0.3 * calls[0], (first, second, reused)
    settings = store_settings(initialised_graph, data_dir)
    for run_id in first_runs + second_runs:
        result = replay(settings, run_id)
        assert result.divergence is None and result.identical and not result.differences

    # --fresh: the same goals once more, every question asked as in the first pass
    _, fresh, none = _pass(initialised_graph, tmp_path, fresh=True)
    print(f"--fresh: {sum(fresh.values())} calls {dict(fresh)}")
    # the figures docs/flywheel.md gives
    assert (calls, sum(fresh.values()), sum(reused.values())) == ((33, 0), 40, 24)
    assert not none and fresh["identify_constraints"] == fresh["classify_leaf"] == len(GOALS)

