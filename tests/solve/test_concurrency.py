"""Concurrency: calls of the goals behind the one taking its step go out early, and what
the run commits is the same at every ``--concurrency`` (golden histories, benchmark trees,
a budget that runs out while several goals' calls are out)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

from kernel.bench.concurrency import TREES, Delayed, Tree, bench_concurrency, run_tree
from kernel.bench.crash import EXAMPLES, Example, _Child, _outcome
from kernel.bench.examples import EXAMPLES_DIR
from kernel.cli.progress import LineView, _Status
from kernel.core.summary import summary_hash
from kernel.protocol import (
    Estimate,
    Proposer,
    Resolution,
    ResolveRequest,
    RetryableError,
    RetryClock,
)
from kernel.protocol.errors import with_retries
from kernel.runtime import progress
from kernel.runtime.calls import Calls
from kernel.runtime.inputs import RunInputs
from kernel.runtime.kernel import SolveConfig
from kernel.runtime.progress import Event
from kernel.runtime.start import start
from kernel.schema import init_schema
from kernel.settings import KernelSettings
from kernel.solve.dispatch import solve
from kernel.store import GraphStore
from resolvers.sandbox.runner import default_workspace_root
from resolvers.scripted import ScriptedProposer
from tests.conftest import store_env, store_settings
from tests.test_golden_histories import GOLDEN, PINNED

LEVELS = (1, 2, 4, 8)
# The most goals any shipped example or benchmark tree but the fan-out of eight has with a
# call out at once (four parts; the root waits for them): a level past it changes nothing.
WIDEST = 4
# What a run uses unless told otherwise, and so what the golden-history test runs at.
DEFAULT_CONCURRENCY = KernelSettings.model_fields["concurrency"].default


def _pairs() -> list[tuple[Example, int]]:
    """Every example at the levels where the limit binds, and not at the default (the
    golden histories run that): no shipped example has more than ``WIDEST`` goals with a
    call out at once, so a level past it takes the default's path again. A repository
    goal, one goal whose steps follow each other, runs at 1 only (it takes real test
    runs): at 2 and over it has nothing to start ahead, as at the default."""
    return [(example, level) for example in EXAMPLES for level in LEVELS
            if level != DEFAULT_CONCURRENCY and level <= WIDEST
            and ("--repo" not in example.args or level == 1)]


@pytest.mark.slow
@pytest.mark.parametrize(("example", "level"), _pairs(),
                         ids=lambda v: v.name if isinstance(v, Example) else str(v))
def test_every_shipped_example_commits_its_golden_graph_at_every_concurrency(
        store: GraphStore, data_dir: Path, example: Example, level: int) -> None:
    """The golden histories were recorded one call at a time; at 1, 2 and 8 calls in
    flight each example commits the same graph (summary hash, attempts, spends). The
    default, 4, is what tests/test_golden_histories.py runs each example at."""
    golden = json.loads(GOLDEN.read_text())["solve"]
    settings, env = store_settings(store, data_dir), store_env(store, data_dir)
    done = _Child(data_dir, PINNED, sys.executable).run(
        str(settings.graph_name), [*example.command(), "--concurrency", str(level)],
        store_env=env)
    assert done.returncode == 0, done.stderr[-800:]
    outcome = _outcome(settings, f"run:{PINNED}", example.measured)
    assert outcome.__dict__ == golden[example.name], (example.name, level)


@pytest.mark.slow
def test_the_benchmark_trees_commit_the_same_at_every_concurrency(initialised: GraphStore) -> None:
    """The benchmark itself fails on a differing hash; the streamed tree runs at a fixed
    latency here, to keep the test short, and only the fan-out of eight runs at a level
    past ``WIDEST``."""
    trees = [replace(t, tokens_per_second=None) for t in TREES]
    figures = bench_concurrency(initialised, latency=0.01, levels=LEVELS, trees=trees[:1])
    figures += bench_concurrency(initialised, latency=0.01,
                                 levels=[n for n in LEVELS if n <= WIDEST], trees=trees[1:])
    same = [f for f in figures if "summary hash the same" in f.name]
    assert len(same) == len(TREES)


@pytest.mark.slow
def test_the_critical_path_of_a_fan_out_is_one_leaf_and_of_a_chain_every_call(
        initialised: GraphStore) -> None:
    fan_out, chain = TREES[0], TREES[1]
    spread = run_tree(initialised, fan_out, 1, 0.0)
    in_line = run_tree(initialised, chain, 1, 0.0)
    leaf_calls = (spread.calls - spread.critical_calls) // 7  # eight leaves, one on the path
    assert spread.critical_calls == spread.calls - 7 * leaf_calls
    assert in_line.critical_calls == in_line.calls  # nothing can overlap


class _Counting(Delayed):
    """Counts the calls in flight at once. Given ``until``, a call on one of the tree's
    parts first waits (up to ``patience`` seconds) until that many calls are in flight or
    were once: on a loaded machine one call could otherwise end before the kernel starts
    the next, and the count would say less than the kernel allows; a kernel that allows
    fewer still shows fewer, and one that allows more shows more."""

    def __init__(self, inner: ScriptedProposer, latency: float, until: int = 0,
                 patience: float = 30.0) -> None:
        super().__init__(inner, latency)
        self.changed = threading.Condition()
        self.until = until
        self.patience = patience
        self.now = 0
        self.most = 0

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
        with self.changed:
            self.now += 1
            self.most = max(self.most, self.now)
            self.changed.notify_all()
            if request.goal_description.startswith("bench part"):
                self.changed.wait_for(lambda: self.most >= self.until,
                                      timeout=self.patience)
        try:
            return super().propose(request, occurrence)
        finally:
            with self.changed:
                self.now -= 1


def _fan_out_run(store: GraphStore, tmp_path: Path, level: int, budget: float = 5.0,
                 tree: Tree = TREES[0], latency: float = 0.05,
                 until: int = 0) -> tuple[Any, Any]:
    init_schema(store)
    path = tmp_path / "tree.script.yaml"  # its name is recorded: the same at every level
    path.write_text(yaml.safe_dump(tree.script))
    # long enough that a call outlasts the kernel's work between two (on either store)
    proposer = _Counting(ScriptedProposer.from_file(path), latency, until)
    inputs = RunInputs(goal=tree.goal, budget_usd=budget, time_seconds=600,
                       solve=SolveConfig(max_wall_seconds=600))
    kernel, root = start(store, inputs, proposer, tmp_path, default_workspace_root(),
                         ulid=PINNED, concurrency=level)
    return solve(kernel, root), proposer


@pytest.mark.slow
@pytest.mark.parametrize("level", [1, 4])
def test_calls_overlap_up_to_the_concurrency_and_no_further(
        store: GraphStore, tmp_path: Path, level: int) -> None:
    # the first calls wait until `level` are in flight (see _Counting); a kernel that
    # started more than `level` would still be counted past it
    outcome, proposer = _fan_out_run(store, tmp_path, level, latency=0.3, until=level)
    assert outcome.status == "resolved"
    assert proposer.most == level  # eight leaves: there is always more to start
    assert (outcome.calls_ahead > 0) == (level > 1)
    assert outcome.calls_unused == 0


@pytest.mark.slow
def test_a_budget_that_runs_out_among_calls_in_flight_is_refused_the_same_at_every_level(
        store: GraphStore, tmp_path: Path) -> None:
    """Each leaf's resolve costs more than its share, so leaves draw on the root while
    others' calls are out; the root runs dry part-way through, and the leaves after that
    point are denied, at every level alike."""
    script = json.loads(json.dumps(TREES[0].script))
    script["fallback"]["resolve"]["cost_usd"] = 0.4
    tree = replace(TREES[0], script=script)
    seen = set()
    for level in LEVELS:
        store.drop_all()
        outcome, _ = _fan_out_run(store, tmp_path, level, budget=2.0, tree=tree)
        assert outcome.status != "resolved"
        seen.add((outcome.status, outcome.waiting_on, summary_hash(store, outcome.run_id)))
    assert len(seen) == 1, seen
    assert next(iter(seen))[1], "some leaf is waiting on more budget"


class _Slow(Proposer):
    """A proposer whose call outlives the run's wish for it."""

    source = "slow"
    prefetchable = True

    def estimate(self, request: ResolveRequest, occurrence: int) -> Estimate:
        return Estimate(cost_usd=0.0, seconds=1.0)

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
        time.sleep(0.1)
        return Resolution(output={}, cost_usd=0.25, seconds=0.1)


@pytest.mark.slow
def test_a_call_started_ahead_and_not_used_is_told_with_its_cost() -> None:
    calls = Calls(2)
    request = ResolveRequest(operation="resolve", goal_id="goal:a")
    calls.start(_Slow(), request, "f" * 64, 0)
    calls.start(_Slow(), ResolveRequest(operation="resolve", goal_id="goal:b"), "e" * 64, 0)
    answered = calls.answer(_Slow(), request, "f" * 64, 0)  # goal:a's turn uses its call
    assert answered.cost_usd == 0.25
    calls.drop(lambda goal_id: goal_id != "goal:b")
    calls.close()
    assert [(u.goal_id, u.cost_usd) for u in calls.unused] == [("goal:b", 0.25)]
    assert (calls.asked_ahead, calls.answered_ahead) == (2, 1)


def test_a_rate_limit_met_by_one_call_holds_every_call_of_the_run() -> None:
    """One shared clock: the second call waits out the first one's Retry-After."""
    clock = RetryClock()
    started: dict[str, float] = {}
    tries = {"a": 0}

    def first() -> str:
        tries["a"] += 1
        if tries["a"] == 1:
            started["limited"] = time.monotonic()
            raise RetryableError("429", failure_mode="rate_limited", retry_after=0.3)
        return "a"

    def second() -> str:
        started["b"] = time.monotonic()
        return "b"

    one = threading.Thread(target=with_retries, args=(first, (0.0,)), kwargs={"clock": clock})
    one.start()
    while "limited" not in started:
        time.sleep(0.005)
    time.sleep(0.02)  # the hold is in place once the first call has raised
    assert with_retries(second, (0.0,), clock=clock) == "b"
    one.join()
    assert started["b"] - started["limited"] >= 0.3


@pytest.mark.parametrize(("args", "env", "said"), [
    (["--concurrency", "0"], {}, "--concurrency must be between 1 and 64"),
    (["--concurrency", "65"], {}, "--concurrency must be between 1 and 64"),
    ([], {"KERNEL_CONCURRENCY": "0"}, "KERNEL_CONCURRENCY"),
    ([], {"KERNEL_MAX_CALLS": "many"}, "KERNEL_MAX_CALLS must be a whole number"),
])
@pytest.mark.slow
def test_a_concurrency_that_cannot_be_is_a_one_line_error_and_nothing_runs(
        args: list[str], env: dict[str, str], said: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from kernel.cli.app import main; main()", "solve",
         "Plan a product launch", "--proposer", "scripted", "--script",
         str(EXAMPLES_DIR / "launch-plan.script.yaml"), "--progress", "none", *args],
        capture_output=True, text=True, check=False,
        env={**os.environ, "KERNEL_DATA_DIR": str(tmp_path / "data"), **env})
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], done.stderr
    assert "started" not in done.stdout


@pytest.mark.slow
def test_the_progress_lines_show_several_goals_calls_out_at_once(
        store: GraphStore, tmp_path: Path) -> None:
    lines = io.StringIO()
    with progress.watching(LineView(as_json=True, stream=lines)):
        outcome, _ = _fan_out_run(store, tmp_path, 4, latency=0.3)
    assert outcome.status == "resolved"
    events = [json.loads(line) for line in lines.getvalue().splitlines()]
    out: set[tuple[str, str]] = set()
    most = 0
    for event in events:
        key = (event["goal_id"], event["what"])
        if event["kind"] == "call":
            out.add(key)
            most = max(most, len({goal for goal, _ in out}))
        elif event["kind"] == "done":
            assert key in out and event["took_seconds"] >= 0.05
            out.discard(key)
    assert most >= 2 and not out


def test_the_live_view_lists_the_other_goals_whose_calls_are_out() -> None:
    status = _Status()
    status.went_out(Event("call", "resolve", "goal:b"))
    status.went_out(Event("call", "run_tests", "goal:c"))
    status.step = Event("step", "resolve", "goal:a", "the head goal")
    status.went_out(Event("call", "resolve", "goal:a"))
    status.came_back(Event("done", "resolve", "goal:b", took=1.0))
    console = Console(record=True, width=120)
    console.print(status)
    text = console.export_text()
    assert "also out: running the tests in the sandbox for goal:c" in text
    assert "goal:b" not in text and "also out: asking for resolve for goal:a" not in text
