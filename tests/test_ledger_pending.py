"""`kernel ledger verify` on a run stopped between recording a proposal and committing what
it decides: intact, with the proposals pending (exit 0), not a mismatch; `kernel resume`
applies them and reaches the uninterrupted run's summary; a graph tampered with in the
same window is still a mismatch.

Where the windows are is found once, in process: the example runs through the real
command with every statement watched, and after each one the run's stored ledger is
compared with what its commits consumed. Each window is then reached by the crash child,
killed right after that statement (by its name and occurrence), as a kill -9 would.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kernel.bench.crash import _Child, _outcome
from kernel.bench.examples import EXAMPLES
from kernel.cli.app import app
from kernel.core.ledger import load_entries
from kernel.proposals import SERVED
from kernel.schema import init_schema
from kernel.store import GraphStore
from tests.conftest import store_env, store_settings
from tests.test_golden_histories import PINNED

BY_NAME = {e.name: e for e in EXAMPLES}
GOLDEN = json.loads((Path(__file__).parent / "golden" / "examples.json").read_text())["solve"]
# The kinds of proposal, and the example that makes each; a run of the examples leaves a
# window (recorded, not consumed) after feedback; the others are consumed by the commit
# that stores them, so a kill right after it leaves nothing pending.
KINDS = {"resolve": "csv-cli", "run_tests": "csv-cli", "verify_semantic": "csv-cli",
         "generate_feedback": "csv-cli", "decompose": "launch-plan"}
WINDOWS = {"generate_feedback"}


def _windows(store: GraphStore, data_dir: Path, example: str, monkeypatch: pytest.MonkeyPatch,
             ) -> tuple[dict[str, tuple[str, int]], dict[str, tuple[str, int]]]:
    """For each operation, the first statement (name, occurrence) after which a recorded
    proposal of it is stored, and the first after which one is stored but not yet consumed
    by a commit (most commits that store a proposal also consume it: no window)."""
    stored: dict[str, tuple[str, int]] = {}
    found: dict[str, tuple[str, int]] = {}
    seen: Counter[str] = Counter()
    run_ids: list[str] = []
    inner = GraphStore.run

    def watched(self: GraphStore, name: str, params: Mapping[str, Any] | None = None,
                identifiers: Mapping[str, str] | None = None) -> Any:
        rows = inner(self, name, params, identifiers)
        seen[name] += 1
        if name == "run/create" and params:
            run_ids.append(str(params["run_id"]))
        if run_ids and self.catalog.get(name).mode != "read":
            with self.reads.bypassed():  # read the store, not the run's cache
                consumed = int(inner(self, "run/get", {"run_id": run_ids[0]})[0]["proposals"] or 0)
                served = [e for e in load_entries(self, run_ids[0])[2] if e.kind in SERVED]
            for entry in served:
                stored.setdefault(entry.operation, (name, seen[name]))
            for entry in served[consumed:]:
                found.setdefault(entry.operation, (name, seen[name]))
        return rows

    monkeypatch.setattr(GraphStore, "run", watched)
    env = store_env(store, data_dir)
    done = CliRunner().invoke(app, BY_NAME[example].command(), env={**env, "COLUMNS": "200"})
    monkeypatch.setattr(GraphStore, "run", inner)
    assert done.exit_code == 0, done.output
    store.drop_all()
    init_schema(store)
    return stored, found


def _kernel(child: _Child, store: GraphStore, data_dir: Path, *args: str) -> Any:
    return child.run(str(store.describe().get("graph", "")), list(args),
                     store_env=store_env(store, data_dir))


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_run_stopped_with_a_recorded_proposal_verifies_as_pending_and_resumes(
        initialised_graph: GraphStore, data_dir: Path, monkeypatch: pytest.MonkeyPatch,
        kind: str) -> None:
    store, example = initialised_graph, KINDS[kind]
    stored, windows = _windows(store, data_dir, example, monkeypatch)
    assert (kind in windows) == (kind in WINDOWS), sorted(windows)
    statement, occurrence = windows.get(kind) or stored[kind]
    child, run_id = _Child(data_dir, PINNED, sys.executable), f"run:{PINNED}"

    killed = child.run(str(store.describe().get("graph", "")), BY_NAME[example].command(),
                       kill_at=occurrence, when="after", only=statement,
                       store_env=store_env(store, data_dir))
    assert killed.returncode == -9, killed.stderr[-800:]
    verified = _kernel(child, store, data_dir, "ledger", "verify", run_id, "--json")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    pending = json.loads(verified.stdout)["pending"]
    assert (kind in [p["operation"] for p in pending]) == (kind in WINDOWS), pending
    if kind in WINDOWS:
        said = _kernel(child, store, data_dir, "ledger", "verify", run_id)
        assert "not yet committed: 'kernel resume" in said.stdout, said.stdout

    resumed = _kernel(child, store, data_dir, "resume", run_id, "--json")
    assert resumed.returncode == 0, resumed.stderr[-800:]
    settings = store_settings(store, data_dir)
    from dataclasses import asdict
    assert asdict(_outcome(settings, run_id, BY_NAME[example].measured)) == GOLDEN[example]
    after = _kernel(child, store, data_dir, "ledger", "verify", run_id, "--json")
    assert after.returncode == 0 and json.loads(after.stdout)["pending"] == []


@pytest.mark.slow
def test_a_graph_tampered_with_while_a_proposal_is_pending_is_still_a_mismatch(
        initialised_graph: GraphStore, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = initialised_graph
    statement, occurrence = _windows(store, data_dir, "csv-cli", monkeypatch)[1]["generate_feedback"]
    child, run_id = _Child(data_dir, PINNED, sys.executable), f"run:{PINNED}"
    killed = child.run(str(store.describe().get("graph", "")), BY_NAME["csv-cli"].command(),
                       kill_at=occurrence, when="after", only=statement,
                       store_env=store_env(store, data_dir))
    assert killed.returncode == -9
    spends = store.execute_adhoc(
        "MATCH (e:BudgetEvent {kind: 'spend'})-[:CHARGED_TO]->(:Goal {run_id: $run}) "
        "RETURN e.id AS id ORDER BY id LIMIT 1", {"run": run_id}, write=False).records()
    store.execute_adhoc("MATCH (e:BudgetEvent {id: $id}) SET e.cost = e.cost + 1",
                        {"id": spends[0]["id"]}, write=True)
    verified = _kernel(child, store, data_dir, "ledger", "verify", run_id)
    assert verified.returncode == 1 and "by the ledger" in verified.stderr, verified.stderr


@pytest.mark.slow
def test_a_run_stopped_right_after_a_hire_answer_verifies_as_pending_and_resumes(
        initialised_graph: GraphStore, data_dir: Path, tmp_path: Path) -> None:
    """`kernel hire answer` stores the answer on the request, then resumes the run, which
    records it in the ledger in the commit that applies it. Stopped between the two (the
    answer stored, the run not resumed), the ledger is intact with nothing pending (the
    answer waits on the request, not in the ledger), and the resume applies it."""
    from kernel.protocol import HireAnswer
    from kernel.repositories.requests import record_answer
    from kernel.solve.dispatch import solve
    from kernel.solve.session import resume
    from tests.solve.test_grow import short_of_budget

    store = initialised_graph
    kernel, root = short_of_budget(store, tmp_path, "pending-hire")
    outcome = solve(kernel, root)
    assert outcome.waiting_on  # parked on a person: the budget is short
    run_id = kernel.run.run_id
    record_answer(store, outcome.waiting_on[0], HireAnswer(kind="add_budget", add_usd=1.0))

    env = {**store_env(store, data_dir), "COLUMNS": "200"}
    verified = CliRunner().invoke(app, ["ledger", "verify", run_id, "--json"], env=env)
    assert verified.exit_code == 0, verified.output
    assert json.loads(verified.output)["pending"] == []
    assert resume(store, run_id, tmp_path,
                  proposer=kernel.proposals.proposer).status == "resolved"
    after = CliRunner().invoke(app, ["ledger", "verify", run_id, "--json"], env=env)
    assert after.exit_code == 0 and json.loads(after.output)["pending"] == [], after.output
    assert "hire" in [e.operation for e in load_entries(store, run_id)[2]]


@pytest.mark.slow
def test_a_run_stopped_before_its_root_goal_verifies_and_resumes(
        initialised_graph: GraphStore, data_dir: Path) -> None:
    """Between the run's creation and its root goal's commit (a kill -9, or an export taken
    then) the run has no goal left to do, yet is not finished: intact, and resumable."""
    store, example = initialised_graph, BY_NAME["launch-plan"]
    child, run_id = _Child(data_dir, PINNED, sys.executable), f"run:{PINNED}"
    killed = child.run(str(store.describe().get("graph", "")), example.command(),
                       kill_at=1, when="before", only="goal/create",
                       store_env=store_env(store, data_dir))
    assert killed.returncode == -9, killed.stderr[-800:]
    verified = _kernel(child, store, data_dir, "ledger", "verify", run_id, "--json")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    resumed = _kernel(child, store, data_dir, "resume", run_id, "--json")
    assert resumed.returncode == 0, resumed.stderr[-800:]
    from dataclasses import asdict
    assert asdict(_outcome(store_settings(store, data_dir), run_id, False)) == \
        GOLDEN["launch-plan"]
