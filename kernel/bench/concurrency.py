"""Concurrency benchmark: scripted goal trees whose every call takes a simulated latency,
each run at several ``--concurrency`` values.

For each tree it reports the wall time at each N against two references measured in the
same run: the tree's critical-path bound (the longest chain of calls that must follow one
another, times the latency) and the wall time at N = 1. It also checks what concurrency
must never change: the summary hash is the same at every N (the run id is pinned), or
the benchmark fails.

The trees: a fan-out of independent leaves, a chain (each leaf waits for the one before),
a diamond (one leaf first, two beside each other, one after both), and the shipped
decomposition examples (``launch-plan``: four parts, one waiting on another and one
retried; ``ingest-pipeline``: three chained stages, decomposed twice).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from ulid import ULID

from kernel.bench.examples import EXAMPLES_DIR
from kernel.bench.solve import done_fallback
from kernel.bench.store import Figure
from kernel.core.dag import Dependencies
from kernel.core.ledger import LedgerEntry, load_entries
from kernel.core.summary import summary_hash
from kernel.protocol import Estimate, Proposer, Resolution, ResolveRequest
from kernel.repositories import goals
from kernel.runtime.inputs import RunInputs
from kernel.runtime.installed import resolvers
from kernel.runtime.kernel import SolveConfig
from kernel.runtime.start import start
from kernel.schema import init_schema
from kernel.solve.constraint_text import parse_constraint
from kernel.solve.dispatch import solve
from kernel.store.base import GraphStore

PINNED = ULID.from_str("01K0000000000000000000BENC")
CALLS = ("proposal", "failure")  # the ledger entries that are calls


class Delayed(Proposer):
    """A scripted proposer whose calls take time like a model's: ``latency`` seconds each,
    or, streamed (``tokens_per_second``), ``latency`` plus the answer's tokens (about
    four characters each) at that rate."""

    prefetchable = True

    def __init__(self, inner: Proposer, latency: float,
                 tokens_per_second: float | None = None) -> None:
        self.inner = inner
        self.latency = latency
        self.tokens_per_second = tokens_per_second
        self.source = inner.source
        self.kind = inner.kind
        self.model = inner.model
        self.person = inner.person

    def estimate(self, request: ResolveRequest, occurrence: int) -> Estimate:
        return self.inner.estimate(request, occurrence)

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
        answer = self.inner.propose(request, occurrence)
        time.sleep(self.seconds(answer))
        return answer

    def seconds(self, answer: Resolution) -> float:
        return self.seconds_for(answer.output)

    def seconds_for(self, output: Any) -> float:
        """What a call answering ``output`` (None: an error) takes."""
        if self.tokens_per_second is None or output is None:
            return self.latency
        tokens = len(json.dumps(output)) / 4
        return self.latency + tokens / self.tokens_per_second


@dataclass(frozen=True)
class Tree:
    name: str
    goal: str
    script: dict[str, Any] | Path
    constraints: tuple[str, ...] = ()
    # Streamed like the Messages API at this many tokens a second (after a first-token
    # wait of the benchmark's latency); None: the latency alone, whatever the answer.
    tokens_per_second: float | None = None


# A section of a design document, about 1,500 tokens: its answer streams for some 25
# seconds at 60 tokens a second, where the kernel's own questions (classify, judge,
# decompose) take one to three. The parts then hold most of the waiting, as in a real
# decomposition whose parts are the work.
PART_TEXT = ("Owner, inputs, outputs, failure handling and the checks that show it done; "
             * 80).strip()


def _tree_script(leaves: int, edges: Sequence[tuple[int, int]],
                 content: str = "done") -> dict[str, Any]:
    """A root that outlines its parts in a line, then decomposes into ``leaves`` parts
    with ``edges`` (part, depends on); every goal has one semantic constraint, judged
    met, and each part resolves to ``content``."""
    children = [{"key": f"part{i}", "goal_description": f"bench part {i}",
                 "goal_summary": f"bench part {i}", "relative_complexity": 1.0}
                for i in range(leaves)]
    judged = {"checks": [{"constraint_id": "is done", "passed": True, "sigma": 0.95,
                          "rubric_trace": "done"}]}
    return {"version": 1, "proposals": [
        {"operation": "resolve", "goal": "bench tree*", "repeat": True, "output": {
            "artifact_type": "doc", "format": "text",
            "content": "An outline: " + ", ".join(f"part {i}" for i in range(leaves))}},
        {"operation": "classify_leaf", "goal": "bench tree*", "output": {
            "is_leaf": False, "leaf_kind": None, "leaf_reason": "has parts"}},
        {"operation": "decompose", "goal": "bench tree*", "output": {
            "rationale": "parts", "children": children,
            "dependencies": [{"child": f"part{a}", "depends_on": f"part{b}"}
                             for a, b in edges]}},
        {"operation": "classify_leaf", "goal": "bench part*", "repeat": True, "output": {
            "is_leaf": True, "leaf_kind": "atomic", "leaf_reason": "small"}},
    ], "fallback": {**done_fallback(content), "verify_semantic": {"output": judged}}}


TREES = (
    Tree("fan-out of 8", "bench tree: eight independent parts",
         _tree_script(8, [])),
    Tree("chain of 4", "bench tree: four parts in a chain",
         _tree_script(4, [(1, 0), (2, 1), (3, 2)])),
    Tree("diamond", "bench tree: a diamond of four parts",
         _tree_script(4, [(1, 0), (2, 0), (3, 1), (3, 2)])),
    Tree("four-part decomposition, streamed at 60 tokens/s",
         "bench tree: a design in four independent parts",
         _tree_script(4, [], PART_TEXT), tokens_per_second=60.0),
    Tree("launch-plan (four parts)", "Plan a product launch",
         EXAMPLES_DIR / "launch-plan.script.yaml"),
    Tree("ingest-pipeline (three stages, twice)",
         "Design a three-stage ingest pipeline for the nightly orders export",
         EXAMPLES_DIR / "ingest-pipeline.script.yaml",
         ("logic:latency:sum_latency_ms <= 500", "logic:cost:cost_usd <= 2")),
)


@dataclass(frozen=True)
class TreeRun:
    concurrency: int
    seconds: float
    calls: int
    critical_calls: int
    seconds_of_calls: float  # every call's simulated latency, added up
    bound: float  # the critical path's calls' latencies, added up
    summary_hash: str
    status: str
    unused: int


def run_tree(store: GraphStore, tree: Tree, concurrency: int, latency: float) -> TreeRun:
    """One run of ``tree`` in an emptied graph, its run id pinned."""
    store.drop_all()
    init_schema(store)
    with tempfile.TemporaryDirectory() as tmp:
        path = tree.script if isinstance(tree.script, Path) else Path(tmp) / "tree.script.yaml"
        if not isinstance(tree.script, Path):
            path.write_text(yaml.safe_dump(tree.script))
        proposer = Delayed(resolvers().scripted(path, None), latency, tree.tokens_per_second)
        inputs = RunInputs(goal=tree.goal, budget_usd=5.0, time_seconds=600,
                           core=[parse_constraint(c) for c in tree.constraints],
                           solve=SolveConfig(max_wall_seconds=3600))
        kernel, root = start(store, inputs, proposer, Path(tmp), resolvers().sandbox.default_root(),
                             ulid=PINNED, concurrency=concurrency)
        began = time.perf_counter()
        outcome = solve(kernel, root)
        seconds = time.perf_counter() - began
    run_id = kernel.run.run_id
    calls, critical = critical_path(store, run_id, root, lambda entry: 1)
    waited, bound = critical_path(store, run_id, root, lambda entry: proposer.seconds_for(
        entry.data()["response"].get("output")))
    return TreeRun(concurrency, seconds, int(calls), int(critical), waited, bound,
                   summary_hash(store, run_id), outcome.status, outcome.calls_unused)


def critical_path(store: GraphStore, run_id: str, root: str,
                  weight: Callable[[LedgerEntry], float]) -> tuple[float, float]:
    """The run's calls, and the longest chain of them that must follow one another, each
    counted at its ``weight``: a goal's calls one after another; a decomposition's parts
    after the call that made them, each after the parts it depends on, and the parent's
    next calls after them.

    Dependencies among parts a later decomposition superseded are not read (the graph
    keeps only the live ones), so such parts count as independent: the bound can only
    come out lower than the tree's true one."""
    entries = [e for e in load_entries(store, run_id)[2] if e.kind in CALLS]
    calls_of: dict[str, list[LedgerEntry]] = defaultdict(list)
    decomposes: dict[str, list[int]] = defaultdict(list)
    for entry in entries:
        if entry.goal_id is not None:
            calls_of[entry.goal_id].append(entry)
            if entry.operation == "decompose":
                decomposes[entry.goal_id].append(entry.index)
    kids: dict[str, list[str]] = defaultdict(list)
    for row in goals.tree(store, run_id):
        if row["parent_id"] is not None:
            kids[row["parent_id"]].append(row["id"])
    deps = Dependencies(store)
    first: dict[str, float] = {}

    def first_call(goal_id: str) -> float:
        if goal_id not in first:
            own = [float(e.index) for e in calls_of.get(goal_id, [])] or [float("inf")]
            first[goal_id] = min([min(own), *(first_call(c) for c in kids[goal_id])])
        return first[goal_id]

    def critical(goal_id: str) -> float:
        own = calls_of.get(goal_id, [])
        cuts = decomposes.get(goal_id, [])
        if not kids[goal_id] or not cuts:
            return sum(weight(e) for e in own)
        after = {n.id: n.depends_on for n in deps.children(goal_id)}
        total = sum(weight(e) for e in own if e.index <= cuts[0])
        for number, cut in enumerate(cuts):
            end = cuts[number + 1] if number + 1 < len(cuts) else float("inf")
            parts = [c for c in kids[goal_id] if cut < first_call(c) < end]
            total += _longest(parts, after, critical) + \
                sum(weight(e) for e in own if cut < e.index <= end)
        return total

    return sum(weight(e) for e in entries), critical(root)


def _longest(parts: list[str], after: dict[str, tuple[str, ...]],
             weight: Callable[[str], float]) -> float:
    """The heaviest chain through ``parts`` along their dependencies."""
    best: dict[str, float] = {}

    def chain(part: str) -> float:
        if part not in best:
            before = [chain(d) for d in after.get(part, ()) if d in parts]
            best[part] = weight(part) + max(before, default=0)
        return best[part]

    return max((chain(p) for p in parts), default=0)


def bench_concurrency(store: GraphStore, latency: float = 1.0,
                      levels: Sequence[int] = (1, 2, 4, 8),
                      trees: Sequence[Tree] = TREES) -> list[Figure]:
    """Each tree at each concurrency level; raises if a level changes the summary hash."""
    figures: list[Figure] = []
    for tree in trees:
        runs = [run_tree(store, tree, n, latency) for n in levels]
        hashes = {r.summary_hash for r in runs}
        if len(hashes) != 1 or any(r.status != "resolved" for r in runs):
            raise RuntimeError(f"{tree.name}: concurrency changed what the run committed: "
                               + ", ".join(f"N={r.concurrency} {r.status} {r.summary_hash[:12]}"
                                           for r in runs))
        one = runs[0]
        bound = one.bound
        figures.append(Figure(f"{tree.name}: calls (critical path)", one.calls,
                              f"calls ({one.critical_calls} on the critical path)"))
        figures.append(Figure(f"{tree.name}: simulated call time, all calls", one.seconds_of_calls,
                              "s"))
        figures.append(Figure(f"{tree.name}: critical-path bound", bound, "s"))
        figures.append(Figure(f"{tree.name}: bound / all call time (the least wall time / "
                              "N=1 any concurrency can reach)", bound / one.seconds_of_calls, "x"))
        for r in runs:
            figures.append(Figure(f"  N={r.concurrency}: wall time", r.seconds, "s"))
            figures.append(Figure(f"  N={r.concurrency}: wall time / critical-path bound",
                                  r.seconds / bound, "x"))
            figures.append(Figure(f"  N={r.concurrency}: wall time / N=1", r.seconds / one.seconds,
                                  "x"))
            if r.unused:
                figures.append(Figure(f"  N={r.concurrency}: calls started ahead, not used",
                                      r.unused, "calls"))
        figures.append(Figure(f"{tree.name}: summary hash the same at N="
                              + ",".join(str(n) for n in levels), 1, hashes.pop()[:12]))
    return figures
