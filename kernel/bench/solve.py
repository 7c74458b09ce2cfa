"""SOLVE benchmark: scripted runs over large goal trees, on the store in use.

The root decomposes into ``fanout`` parts, each part into ``fanout`` pieces (leaves), so
``goals`` = 1 + fanout + fanout^2. Scripted proposals cost no resolver time, so the
wall time per dispatch step is the kernel's own overhead: state, budget, ledger, logs.
"""

from __future__ import annotations

import math
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from kernel.bench.peer import durable_checkpoint_step_ms
from kernel.bench.store import Figure
from kernel.runtime.inputs import RunInputs
from kernel.runtime.installed import resolvers
from kernel.runtime.kernel import SolveConfig
from kernel.runtime.start import start
from kernel.solve.dispatch import solve
from kernel.store.base import GraphStore


def _children(prefix: str, count: int) -> list[dict[str, Any]]:
    return [{"key": f"{prefix}{i}", "goal_description": f"{prefix} {i}",
             "goal_summary": f"{prefix} {i}", "relative_complexity": 1.0} for i in range(count)]


def script_for(fanout: int) -> dict[str, Any]:
    def judged(goal: str) -> dict[str, Any]:
        return {"operation": "verify_semantic", "goal": goal, "repeat": True, "output": {
            "checks": [{"constraint_id": "is done", "passed": True, "sigma": 0.95,
                        "rubric_trace": "done"}]}}

    return {"version": 1, "proposals": [
        {"operation": "decompose", "goal": "bench root*", "output": {
            "rationale": "parts", "children": _children("part", fanout), "dependencies": []}},
        {"operation": "decompose", "goal": "part *", "repeat": True, "output": {
            "rationale": "pieces", "children": _children("piece", fanout),
            "dependencies": [{"child": f"piece{i}", "depends_on": f"piece{i - 1}"}
                             for i in range(1, fanout)]}},
        {"operation": "classify_leaf", "goal": "piece *", "repeat": True, "output": {
            "is_leaf": True, "leaf_kind": "atomic", "leaf_reason": "small"}},
        judged("*"),
    ], "fallback": {
        **done_fallback(),
        "classify_leaf": {"output": {"is_leaf": False, "leaf_kind": None,
                                     "leaf_reason": "has parts"}},
    }}


def done_fallback(content: str = "done") -> dict[str, Any]:
    """Fallback answers that take any goal of a benchmark tree to done: one semantic
    constraint, ``is done``; a resolve to ``content``; a consistent, assembled root."""
    return {
        "identify_constraints": {"output": {"required_capabilities": ["generate_code"],
                                            "constraints": [{"type": "semantic",
                                                             "domain": "quality",
                                                             "title": "is done",
                                                             "explicit": True}]}},
        "resolve": {"output": {"artifact_type": "doc", "format": "text", "content": content}},
        "check_global_consistency": {"output": {"verdict": "SAT", "conflicts": []}},
        "assemble": {"output": {"content": "all parts", "format": "text"}},
    }


def bench_solve(store: GraphStore, goals: int) -> list[Figure]:
    fanout = max(1, round((-1 + math.sqrt(4 * goals - 3)) / 2))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.script.yaml"
        path.write_text(yaml.safe_dump(script_for(fanout)))
        inputs = RunInputs(goal="bench root goal", budget_usd=1000.0, time_seconds=10**7,
                           solve=SolveConfig(max_wall_seconds=24 * 3600))
        kernel, root = start(store, inputs, resolvers().scripted(path, None), Path(tmp),
                             resolvers().sandbox.default_root())
        store.stats.reset()
        started = time.perf_counter()
        outcome = solve(kernel, root)
        elapsed = time.perf_counter() - started
    total = 1 + fanout + fanout * fanout
    if outcome.status != "resolved":
        raise RuntimeError(f"the benchmark run ended {outcome.status}"
                           + (f" (stopped: {outcome.stopped})" if outcome.stopped else ""))
    steps = outcome.steps
    step_ms = elapsed / steps * 1000
    data_dir = store.describe().get("data_dir")
    peer_ms = durable_checkpoint_step_ms(total, min(steps, 2000),
                                         Path(data_dir) if data_dir else None)
    stats = store.stats
    figures = [
        Figure(f"scripted run of {total} goals (fan-out {fanout}), wall time", elapsed, "s"),
        Figure("dispatch steps", steps, "steps"),
        Figure("kernel overhead per dispatch step (scripted: no resolver time)", step_ms, "ms"),
        Figure("store round trips per step (mean)", stats.round_trips / steps, "round trips"),
        Figure("store writes per step (mean; each one fsync'd on the embedded store)",
               stats.write_count / steps, "writes"),
        Figure("store round trips per goal", stats.round_trips / total, "round trips"),
        Figure("store writes per goal", stats.write_count / total, "writes"),
        Figure("share of a step spent in the store", 100 * stats.store_seconds / elapsed, "%"),
        Figure("durable checkpoint step of a LangGraph-style SQLite peer (median)", peer_ms,
               "ms"),
        Figure("kernel step / peer step", step_ms / peer_ms, "x"),
        Figure("goals resolved per second", total / elapsed, "goals/s"),
    ]
    figures += [Figure(f"  {name} per step", calls / steps,
                       f"calls ({writes / steps:.2f} writes)" if writes else "calls")
                for name, calls, writes in stats.top(10)]
    return figures
