"""Earlier answers reused only when the same source would be asked the same request, said
where they came from, and never with --fresh: an edited script is asked again, so a
constraint naming a test that does not exist is refused by that test's name."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kernel._views import outcome_report, run_refusals
from kernel.bench.concurrency import TREES
from kernel.core.ledger import load_entries
from kernel.paths import seeds_dir
from kernel.runtime.inputs import RunInputs
from kernel.runtime.kernel import SolveConfig
from kernel.runtime.start import start as start_run
from kernel.schema import init_schema
from kernel.solve.dispatch import Outcome, solve
from kernel.solve.session import replay
from kernel.store import GraphStore
from resolvers.sandbox.runner import default_workspace_root
from resolvers.scripted import ScriptedProposer
from tests.conftest import store_settings
from tests.sandbox_support import needs_sandbox
from tests.solve.test_csv_cli import CORE, GOAL
from tests.starting import start

SHIPPED = seeds_dir() / "examples" / "csv-cli.script.yaml"


@pytest.fixture
def workspaces() -> Iterator[Path]:
    root = default_workspace_root() / f"reuse-{uuid.uuid4().hex[:8]}"
    root.mkdir(mode=0o711)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _solve(graph: GraphStore, script: Path, tmp_path: Path, workspaces: Path,
           fresh: bool = False) -> tuple[str, Outcome]:
    kernel, root = start(graph, GOAL, CORE, 5.0, 600, ScriptedProposer.from_file(script),
                         tmp_path, workspaces, extra={"fresh": True} if fresh else None)
    return kernel.run.run_id, solve(kernel, root)


def _asked(graph: GraphStore, run_id: str) -> list[str]:
    """The operations the run asked its proposer (not served from an earlier answer)."""
    return [e.operation for e in load_entries(graph, run_id)[2]
            if e.kind == "proposal" and "reused" not in e.data()]


@pytest.mark.slow
@needs_sandbox
def test_an_edited_script_is_asked_again_and_fresh_asks_everything_again(
        initialised_graph: GraphStore, data_dir: Path, tmp_path: Path,
        workspaces: Path) -> None:
    first_run, first = _solve(initialised_graph, SHIPPED, tmp_path, workspaces)
    assert first.status == "resolved"

    # the same script again: its identification, and the requests asked byte for byte
    # as before, are served from the first run's answers, and the report says so
    again_run, again = _solve(initialised_graph, SHIPPED, tmp_path, workspaces)
    assert again.status == "resolved"
    reused = outcome_report(initialised_graph, again)["reused"]
    assert reused[0]["operation"] == "identify_constraints"
    assert first_run in reused[0]["from"]
    assert "identify_constraints" not in _asked(initialised_graph, again_run)
    result = replay(store_settings(initialised_graph, data_dir), again_run)
    assert result.divergence is None and result.identical and not result.differences

    # an edited script (a constraint now names a test its code does not define) is a
    # different source: it is asked, and the run refuses by the test's name
    edited = tmp_path / "csv-cli.script.yaml"
    edited.write_text(SHIPPED.read_text().replace("tests: [test_top_ten]",
                                                  "tests: [test_fraction]", 1))
    edited_run, outcome = _solve(initialised_graph, edited, tmp_path, workspaces)
    assert "identify_constraints" in _asked(initialised_graph, edited_run)
    assert outcome.status != "resolved"
    assert "test_fraction" in repr(run_refusals(initialised_graph, edited_run))

    # --fresh: the shipped script asked every question again, nothing reused
    fresh_run, fresh = _solve(initialised_graph, SHIPPED, tmp_path, workspaces, fresh=True)
    assert fresh.status == "resolved"
    assert outcome_report(initialised_graph, fresh)["reused"] == []
    assert _asked(initialised_graph, fresh_run) == _asked(initialised_graph, first_run)


@pytest.mark.slow
def test_calls_in_flight_start_none_an_earlier_answer_serves(
        store: GraphStore, data_dir: Path, tmp_path: Path) -> None:
    """A tree of eight leaves side by side, solved twice with four calls in flight: the
    second run is served the first's answers and starts no call ahead that one of them
    serves at its turn (none is left unused); it replays identically."""
    init_schema(store)
    tree = TREES[0]
    path = tmp_path / "tree.script.yaml"
    path.write_text(yaml.safe_dump(tree.script))
    outcomes = []
    for _ in range(2):
        inputs = RunInputs(goal=tree.goal, budget_usd=5.0, time_seconds=600,
                           solve=SolveConfig(max_wall_seconds=600))
        kernel, root = start_run(store, inputs, ScriptedProposer.from_file(path), tmp_path,
                                 default_workspace_root(), concurrency=4)
        outcomes.append(solve(kernel, root))
    first, again = outcomes
    assert first.status == again.status == "resolved"
    assert first.calls_ahead > 0
    asked = (len(_asked(store, first.run_id)), len(_asked(store, again.run_id)))
    assert asked[1] < asked[0], asked
    assert again.calls_unused == 0
    result = replay(store_settings(store, data_dir), again.run_id)
    assert result.divergence is None and result.identical and not result.differences
