"""Golden histories: every shipped example, run by the real command with its run id
pinned, commits the graph it committed when this file was written (summary hash,
attempts, spends) and prints the same plan, byte for byte.

A change of structure must leave these alone; a change of behaviour updates
``tests/golden/examples.json`` in the same commit and says why
(``KERNEL_GOLDEN_UPDATE=1`` rewrites it).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path

import pytest
from ulid import ULID

from kernel.bench.crash import EXAMPLES, Example, _Child, _outcome
from kernel.store import GraphStore
from tests.conftest import store_env, store_settings

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
                                                        example: Example) -> None:
    """The same golden graph on either backend: the kernel decides, not the store."""
    settings, env = store_settings(store, data_dir), store_env(store, data_dir)
    done = _Child(data_dir, PINNED, sys.executable).run(str(settings.graph_name),
                                                        example.command(), store_env=env)
    assert done.returncode == 0, done.stderr[-800:]
    outcome = asdict(_outcome(settings, f"run:{PINNED}", example.measured))
    _expect("solve", example.name, outcome)


@pytest.mark.slow
@pytest.mark.parametrize("name", PLANS)
def test_a_shipped_planning_example_prints_its_golden_plan(store: GraphStore, data_dir: Path,
                                                          name: str) -> None:
    settings, env = store_settings(store, data_dir), store_env(store, data_dir)
    done = _Child(data_dir, PINNED, sys.executable).run(
        str(settings.graph_name), ["plan", "--example", name, "--json"], store_env=env)
    assert done.returncode == 0, done.stderr[-800:]
    _expect("plan", name, hashlib.sha256(done.stdout.encode()).hexdigest())
