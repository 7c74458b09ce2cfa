"""check-plan's own arithmetic: every derived number of a plan document, recomputed from
the document's inputs with plain Python over dicts.

Deliberately separate from the planner's code (``feasibility.py``, which works on
pydantic models and the kernel's DAG helpers), so a bug in one is caught by the other.
The rules are the documented ones (docs/planning.md): exact integer thousandths, the
status rule, the waterfall in dependency order, walls, survey triggers, the repair.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

SCALE = 1000
WHICH = ("low", "mid", "high")
LOW_CONFIDENCE = 0.3


def u(value: Any) -> int:
    return round(float(value) * SCALE)


def meets(value: float, op: str, limit: float) -> bool:
    return {"<=": value <= limit, "<": value < limit, ">=": value >= limit,
            ">": value > limit}[op]


def expected_status(totals: dict[str, float], op: str, limit: float) -> str:
    pessimistic = totals["high"] if op in ("<=", "<") else totals["low"]
    if meets(pessimistic, op, limit):
        return "SAT"
    return "UNSAT" if not meets(totals["mid"], op, limit) else "TIGHT"


def est(task: dict[str, Any], metric: str, which: str) -> float:
    found = (task.get("estimates") or {}).get(metric)
    return float(found[which]) if found else 0.0


def measurable(c: dict[str, Any]) -> bool:
    return all(c.get(k) is not None for k in ("metric", "aggregation", "op", "limit")) and \
        (c["aggregation"] != "projection" or c.get("projection") is not None)


def longest(tasks: list[dict[str, Any]], metric: str, which: str) -> int:
    """The longest dependency chain by ``metric`` (thousandths); the tasks form a DAG."""
    by_id = {t["id"]: t for t in tasks}
    memo: dict[str, int] = {}
    for task_id in order(tasks):  # dependencies first: no recursion depth to run out of
        memo[task_id] = u(est(by_id[task_id], metric, which)) + max(
            (memo[d] for d in by_id[task_id]["depends_on"]), default=0)
    return max(memo.values(), default=0)


def order(tasks: list[dict[str, Any]]) -> list[str]:
    """A dependency order (Kahn's algorithm; ties by position in the document)."""
    waiting = {t["id"]: set(t["depends_on"]) for t in tasks}
    done: list[str] = []
    while waiting:
        ready = [t for t in waiting if not waiting[t] - set(done)]
        if not ready:
            raise ValueError("a cycle")
        for t in ready:
            done.append(t)
            del waiting[t]
    return done


def rollup(constraints: list[dict[str, Any]], tasks: list[dict[str, Any]],
           projections: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """Totals and status of every measurable constraint."""
    result = {}
    for c in constraints:
        if not measurable(c):
            continue
        if c["aggregation"] == "sum":
            totals = {w: sum(u(est(t, c["metric"], w)) for t in tasks) / SCALE for w in WHICH}
        elif c["aggregation"] == "critical_path":
            totals = {w: longest(tasks, c["metric"], w) / SCALE for w in WHICH}
        else:
            projection = (projections or {}).get(c["id"]) or c["projection"]
            totals = {w: float(projection[w]) for w in WHICH}
        result[c["id"]] = {"totals": totals,
                           "status": expected_status(totals, c["op"], float(c["limit"]))}
    return result


def cost_constraint(constraints: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The constraint a waterfall shows: a summed cost metric, else the first summed one."""
    summed = [c for c in constraints if measurable(c) and c["aggregation"] == "sum"]
    return next((c for c in summed if str(c["metric"]).startswith("cost")),
                summed[0] if summed else None)


def cost_metrics(constraints: list[dict[str, Any]]) -> list[str]:
    """The summed metrics a repair minimises: the cost ones, else every summed one."""
    summed = {c["metric"] for c in constraints if measurable(c) and c["aggregation"] == "sum"}
    return sorted(m for m in summed if str(m).startswith("cost")) or sorted(summed)


def walls(constraints: list[dict[str, Any]], tasks: list[dict[str, Any]], rolled: dict[str, dict[str, Any]],
          critical: list[str]) -> dict[str, list[str]]:
    """Per UNSAT task-based constraint, the largest contributors whose removal would bring
    the mid estimate within the limit (``critical``: the time constraint's members)."""
    found = {}
    for c in constraints:
        r = rolled.get(c["id"])
        if r is None or r["status"] != "UNSAT" or c["aggregation"] == "projection":
            continue
        by_id = {t["id"]: t for t in tasks}
        members = critical if c["aggregation"] == "critical_path" else list(by_id)
        parts = sorted(((u(est(by_id[m], c["metric"], "mid")), m) for m in members
                        if m in by_id), key=lambda x: (-x[0], x[1]))
        mid, removed, cluster = u(r["totals"]["mid"]), 0, []
        for amount, task_id in parts:
            if amount <= 0 or meets((mid - removed) / SCALE, c["op"], float(c["limit"])):
                break
            cluster.append(task_id)
            removed += amount
        found[c["id"]] = cluster
    return found


def triggers(tasks: list[dict[str, Any]], clusters: dict[str, list[str]]) -> set[str]:
    return {t["id"] for t in tasks if float(t["confidence"]) < LOW_CONFIDENCE} | \
        {task for cluster in clusters.values() for task in cluster}


def applied(tasks: list[dict[str, Any]], chosen: dict[str, dict[str, Any] | None]) -> list[dict[str, Any]]:
    """The tasks with the chosen approaches' estimates and confidence in place."""
    revised = []
    for t in tasks:
        a = chosen.get(t["id"])
        revised.append(t if a is None else {**t, "estimates": {**t["estimates"],
                                                               **a["estimates"]},
                                            "confidence": a["confidence"]})
    return revised


@dataclass(frozen=True)
class Combination:
    chosen: dict[str, str]      # task id -> approach id or "keep"
    unmet: frozenset[str]       # constraints UNSAT with it
    cost: int                   # the cost metrics' mid total, thousandths
    rolled: dict[str, dict[str, Any]]


def combinations(constraints: list[dict[str, Any]], tasks: list[dict[str, Any]],
                 surveys: list[dict[str, Any]]) -> Iterator[Combination]:
    """Every choice of "keep" or one surveyed approach per surveyed task, rolled up."""
    ordered = sorted(surveys, key=lambda s: s["task_id"])
    metrics = cost_metrics(constraints)
    for combo in itertools.product(*[[None, *s["approaches"]] for s in ordered]):
        chosen = {s["task_id"]: a for s, a in zip(ordered, combo, strict=True)}
        revised = applied(tasks, chosen)
        projections = {cid: p for a in combo if a for cid, p in
                       (a.get("projections") or {}).items()}
        rolled = rollup(constraints, revised, projections)
        yield Combination({k: a["id"] if a else "keep" for k, a in chosen.items()},
                          frozenset(c for c, r in rolled.items() if r["status"] == "UNSAT"),
                          sum(u(est(t, m, "mid")) for t in revised for m in metrics), rolled)


def combination_count(surveys: list[dict[str, Any]]) -> int:
    count = 1
    for s in surveys:
        count *= 1 + len(s["approaches"])
    return count
