"""`kernel bench flywheel --keep`: the flywheel's forty runs stay in the graph in use, with
the tools built, the failures diagnosed and the HIRE answers, for a person to explore
(docs/neo4j-browser.md walks through them), and to export: on each store the kept graph
round-trips through `kernel graph export` and `import` byte for byte."""

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


def test_the_kept_flywheel_graph_holds_its_runs_tools_failures_and_answers(
        store: GraphStore, data_dir: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from kernel.cli.app import main; main()", "bench", "flywheel",
         "--keep", "--json"], env={**os.environ, **store_env(store, data_dir)},
        capture_output=True, text=True, timeout=3600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    passes = json.loads(done.stdout)
    assert [p["resolved"] for p in passes] == [20, 20]
    assert _count(store, "MATCH (r:Run) RETURN count(r)") == 40
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
    assert sum('"kind":"node","label":"Run"' in line for line in lines) == 40
    assert any('"type":"ANSWERED_BY"' in line for line in lines)
