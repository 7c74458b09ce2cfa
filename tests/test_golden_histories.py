"""Golden histories: every shipped example, run by the real command with its run id
pinned, commits the graph it committed when this file was written (summary hash,
attempts, spends), replays to it, and prints the same plan, byte for byte.

A change of structure must leave these alone; a change of behaviour updates
``tests/golden/examples.json`` in the same commit and says why
(``KERNEL_GOLDEN_UPDATE=1`` rewrites it).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from dataclasses import asdict
from pathlib import Path

import pytest
from ulid import ULID

from kernel.bench.crash import EXAMPLES, Example, _Child, _outcome
from kernel.paths import cypher_dir
from kernel.store import GraphStore
from tests.conftest import store_env, store_settings
from tests.graph_round_trip import assert_export_round_trips

GOLDEN = Path(__file__).parent / "golden" / "examples.json"
PINNED = ULID.from_str("01JZZZZZZZZZZZZZZZZZZZZZZZ")
PLANS = ("momentum-strategy", "rvl-cdip-classifier", "sensor-kits", "swe-agent")
_UPDATE = os.environ.get("KERNEL_GOLDEN_UPDATE") == "1"


def _expect(section: str, name: str, actual: object) -> None:
    golden = json.loads(GOLDEN.read_text())
    if _UPDATE:
        golden[section][name] = actual
        GOLDEN.write_text(json.dumps(golden, indent=2, sort_keys=True) + "\n")
        return
    assert actual == golden[section][name], f"{section} {name} changed"


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.name)
def test_a_shipped_solve_example_commits_its_golden_graph(store: GraphStore, data_dir: Path,
                                                        example: Example,
                                                        tmp_path: Path) -> None:
    """The same golden graph on either backend: the kernel decides, not the store; the
    run replays to its summary hash; and what the example left exports, and round-trips
    byte for byte."""
    settings, env = store_settings(store, data_dir), store_env(store, data_dir)
    child = _Child(data_dir, PINNED, sys.executable)
    done = child.run(str(settings.graph_name), example.command(), store_env=env)
    assert done.returncode == 0, done.stderr[-800:]
    outcome = asdict(_outcome(settings, f"run:{PINNED}", example.measured))
    _expect("solve", example.name, outcome)
    replayed = child.run(str(settings.graph_name), ["replay", f"run:{PINNED}"], store_env=env)
    assert replayed.returncode == 0, replayed.stderr[-800:]
    assert "replay identical" in replayed.stdout
    if not example.measured:  # a measured run's durations differ between any two runs
        _expect("analytics", example.name, _analytics_digest(store, data_dir))
    assert_export_round_trips(store, data_dir, tmp_path)


def _analytics_digest(store: GraphStore, data_dir: Path) -> dict[str, str]:
    """What a person's analytics see after the run: each `kernel analytics NAME --json`
    and each starter query of the Browser guide, as a digest of its rows (floats to 6
    places, since the backends' averages differ in the last bits; embeddings left out,
    stored as float32 by one backend and float64 by the other). The golden file holds the
    embedded store's, so Neo4j must return the same rows."""
    def canonical(value: object) -> object:
        if isinstance(value, float):
            return round(value, 6)
        if isinstance(value, dict):
            return {k: canonical(v) for k, v in value.items() if k != "embedding"}
        if isinstance(value, list):
            return [canonical(v) for v in value]
        return value

    def digest(rows: object) -> str:
        """Of the rows as a set: ties in an ORDER BY may come in either backend's order."""
        lines = sorted(json.dumps(canonical(r), sort_keys=True) for r in
                       (rows if isinstance(rows, list) else [rows]))
        return hashlib.sha256("\n".join(lines).encode()).hexdigest()

    child, env = _Child(data_dir, PINNED, sys.executable), store_env(store, data_dir)
    graph = str(store_settings(store, data_dir).graph_name)
    found = {}
    for name in sorted(p.stem for p in (cypher_dir() / "analytics").glob("*.cypher")):
        done = child.run(graph, ["analytics", name, "--json"], store_env=env)
        assert done.returncode == 0, done.stderr[-800:]
        found[f"analytics {name}"] = digest(json.loads(done.stdout))
    guide = (Path(__file__).parents[1] / "docs" / "neo4j-browser.md").read_text()
    for number, query in enumerate(re.findall(r"```cypher\n(.*?)```", guide, re.S)):
        rows = store.execute_adhoc(query, {}, write=False).records()
        found[f"starter {number + 1}"] = digest(rows)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("name", PLANS)
def test_a_shipped_planning_example_prints_its_golden_plan(store: GraphStore, data_dir: Path,
                                                          name: str) -> None:
    settings, env = store_settings(store, data_dir), store_env(store, data_dir)
    done = _Child(data_dir, PINNED, sys.executable).run(
        str(settings.graph_name), ["plan", "--example", name, "--json"], store_env=env)
    assert done.returncode == 0, done.stderr[-800:]
    _expect("plan", name, hashlib.sha256(done.stdout.encode()).hexdigest())
