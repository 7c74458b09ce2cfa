"""Many kernel processes, one store: the scale-out the design promises. Four workers solve
different goals at once while two more race to resume the same interrupted run. Every
run resolves and its ledger verifies (``kernel ledger verify`` replays it and compares
every goal, attempt and budget event: a step taken twice or a spend counted twice is a
mismatch), and what its goals were charged is what its spend events add up to; of the
two racers, one drives the run and the other is told who does, or finds it done.

The workers share what they learn (goal patterns, resolver history), so a run's number
of calls may differ from the same example run alone: that is the knowledge graph at
work, not a fault, and is not what this test holds."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner
from ulid import ULID

from kernel.bench.crash import _Child
from kernel.bench.examples import EXAMPLES, EXAMPLES_DIR
from kernel.cli.app import app
from kernel.core.summary import summary
from kernel.store import GraphStore
from tests.conftest import store_env

BY_NAME = {e.name: e for e in EXAMPLES}
CLI = [sys.executable, "-c", "from kernel.cli.app import main; main()"]


def _worker(name: str, goal: str | None = None) -> list[str]:
    """The example's solve command, for ``goal`` if given (its script's globs match it)."""
    example = BY_NAME[name]
    return ["solve", goal or example.goal, "--proposer", "scripted", "--script",
            str(EXAMPLES_DIR / f"{name}.script.yaml"), "--json", "--progress", "none",
            *example.args]


def _charged_and_spent(store: GraphStore, run_id: str) -> tuple[int, int]:
    """What the run's goals were charged, and what its spend events add up to."""
    data = summary(store, run_id)
    spends = [e for e in data["budget"] if e["kind"] == "spend"]
    assert spends and len({e["id"] for e in spends}) == len(spends)
    return (sum(int(g["cost_spent"] or 0) for g in data["goals"]),
            sum(int(e["cost"] or 0) for e in spends))


@pytest.mark.slow
def test_four_workers_and_two_racing_resumes_share_one_store(
        store: GraphStore, data_dir: Path) -> None:
    env = {**os.environ, **store_env(store, data_dir)}
    graph = str(store.describe().get("graph", ""))
    ulid = ULID()
    interrupted = f"run:{ulid}"
    killed = _Child(data_dir, ulid, sys.executable).run(
        graph, BY_NAME["launch-plan"].command(), kill_at=3, only="goal/transition",
        store_env=store_env(store, data_dir))
    assert killed.returncode == -9, killed.stderr[-800:]

    workers = {
        "csv-cli": _worker("csv-cli"),
        "ingest-pipeline": _worker("ingest-pipeline"),
        "launch-plan": _worker("launch-plan"),
        "launch-plan-spring": _worker("launch-plan", "Plan a product launch for the spring"),
    }
    started = {name: subprocess.Popen([*CLI, *args], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
               for name, args in workers.items()}
    racers = [subprocess.Popen([*CLI, "resume", interrupted, "--json", "--progress", "none"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for _ in range(2)]
    finished = {name: (p.wait(timeout=900), *p.communicate()) for name, p in started.items()}
    raced = [(p.wait(timeout=900), *p.communicate()) for p in racers]

    runs: dict[str, str] = {}
    for name, (code, out, err) in finished.items():
        assert code == 0, f"{name}: exit {code}: {err[-800:]}"
        runs[name] = json.loads(out)["run"]
    assert len(set(runs.values())) == 4

    codes = sorted(code for code, _, _ in raced)
    assert codes in ([0, 0], [0, 2]), raced
    for code, _, err in raced:
        assert "Traceback" not in err
        if code == 2:  # it lost the race while the other drove the run
            assert re.search(r"(being driven by|was just taken by) pid \d+", err), err
    runs["launch-plan-resumed"] = interrupted

    # The checks run the same commands in this process: the runs are done, so nothing
    # here needs a process of its own, and each would start Python and the kernel anew.
    kernel = CliRunner()
    checks_env = {**store_env(store, data_dir), "COLUMNS": "200"}
    for name, run_id in runs.items():
        verified = kernel.invoke(app, ["ledger", "verify", run_id], env=checks_env)
        assert verified.exit_code == 0, f"{name}: {verified.output}{verified.exception!r}"
        status = kernel.invoke(app, ["status", run_id], env=checks_env)
        assert status.exit_code == 0 and "resolved" in status.stdout, (name, status.output)
        charged, spent = _charged_and_spent(store, run_id)
        assert charged == spent, name
