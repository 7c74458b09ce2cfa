"""`kernel bench flywheel --keep`: the flywheel's forty runs stay in the graph in use, with
the tools built, the failures diagnosed and the HIRE answers, for a person to explore
(docs/neo4j-browser.md walks through them), and to export: on each store the kept graph
round-trips through `kernel graph export` and `import` byte for byte. Here on the embedded
store; tests/test_neo4j_browser.py keeps it on Neo4j and checks the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernel.store import GraphStore
from tests.conftest import store_env
from tests.graph_round_trip import assert_export_round_trips

pytestmark = pytest.mark.slow


def _count(store: GraphStore, query: str) -> int:
    return int(store.execute_adhoc(query, {}, write=False).rows[0][0])


def assert_kept_flywheel(store: GraphStore, data_dir: Path, tmp_path: Path,
                         kept: subprocess.CompletedProcess[str], runs_before: int = 0) -> None:
    """What `kernel bench flywheel --keep` (``kept``) left in ``store``, where
    ``runs_before`` runs were already: forty runs, a tool built and one a person handed
    over, a diagnosed failure, an answered request, UNSAT and SAT attempts; and the graph
    round-trips through export and import byte for byte. (On Neo4j the Browser test keeps
    the flywheel in its graph and checks it here.)"""
    assert kept.returncode == 0, kept.stderr[-2000:]
    passes = json.loads(kept.stdout)
    assert [p["resolved"] for p in passes] == [20, 20]
    runs = runs_before + 40
    assert _count(store, "MATCH (r:Run) RETURN count(r)") == runs
    assert _count(store, "MATCH (t:Resolver) WHERE t.built_by IN ['system', 'human'] "
                         "RETURN count(t)") >= 2  # one built, one a person handed over
    assert _count(store, "MATCH (:Attempt)-[:FAILED_BECAUSE]->(f:FailureMode) "
                         "RETURN count(DISTINCT f)") >= 1
    assert _count(store, "MATCH (q:CapabilityRequest)-[:ANSWERED_BY]->(:Resolver) "
                         "RETURN count(q)") >= 1
    assert _count(store, "MATCH (a:Attempt:Unsat) RETURN count(a)") >= 1
    assert _count(store, "MATCH (a:Attempt:Sat) RETURN count(a)") >= 40
    # what the person keeps can be exported, and imported again without a byte changed
    lines = assert_export_round_trips(store, data_dir, tmp_path)
    assert sum('"kind":"node","label":"Run"' in line for line in lines) == runs
    assert any('"type":"ANSWERED_BY"' in line for line in lines)


def test_the_kept_flywheel_graph_holds_its_runs_tools_failures_and_answers(
        embedded_store: GraphStore, data_dir: Path, tmp_path: Path) -> None:
    kept = subprocess.run(
        [sys.executable, "-c", "from kernel.cli.app import main; main()", "bench", "flywheel",
         "--keep", "--json"], env={**os.environ, **store_env(embedded_store, data_dir)},
        capture_output=True, text=True, timeout=3600, check=False)
    assert_kept_flywheel(embedded_store, data_dir, tmp_path, kept)
