"""check-plan's own arithmetic: every derived number of a plan document, recomputed from
the document's inputs with plain Python over dicts.

Deliberately separate from the planner's code (``feasibility.py``, which works on
pydantic models and the kernel's DAG helpers), so a bug in one is caught by the other.
The rules are the documented ones (docs/planning.md): exact integer thousandths, the
status rule, the waterfall in dependency order, walls, survey triggers, the repair.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

SCALE = 1000
WHICH = ("low", "mid", "high")
LOW_CONFIDENCE = 0.3


TIME_UNITS = ("time", "duration", "second", "minute", "hour", "day", "week", "month", "year")


def time_metric(metric: str) -> bool:
    """Whether a metric counts time: one of the words of its name is a unit of time."""
    return any(word.rstrip("s") in TIME_UNITS
               for word in re.findall(r"[a-z]+", metric.lower()))


def zero_time_build(task: dict[str, Any]) -> bool:
    return task.get("type") == "build" and any(
        time_metric(m) and float(r["mid"]) == 0 for m, r in task["estimates"].items())


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


MAX_WALL_SETS = 20_000  # sets tried before the wall is taken greedily (as the planner does)


def walls(constraints: list[dict[str, Any]], tasks: list[dict[str, Any]],
          rolled: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """Per UNSAT task-based constraint, its wall: the first set, by size and then by
    contribution (largest first, ties by id), whose tasks at zero bring the mid estimate
    within the limit. Candidates: every contributing task of a sum; of a critical path
    (upper limit), every task on a chain over the limit, so that parallel branches each
    give one; a lower limit cannot be freed by removing work (all of them)."""
    found = {}
    for c in constraints:
        r = rolled.get(c["id"])
        if r is None or r["status"] != "UNSAT" or c["aggregation"] == "projection":
            continue
        metric, op, limit = c["metric"], c["op"], float(c["limit"])
        upper = op in ("<=", "<")
        if c["aggregation"] == "sum":
            members = [t["id"] for t in tasks]
        elif upper:
            members = _over(tasks, metric, op, limit)
        else:
            members = _mid_chain(tasks, metric)
        by_id = {t["id"]: t for t in tasks}
        parts = [m for _, m in sorted(((u(est(by_id[m], metric, "mid")), m) for m in members),
                                      key=lambda x: (-x[0], x[1])) if _ > 0]
        found[c["id"]] = _smallest_freeing(tasks, c, parts) if upper else parts
    return found


def _without(tasks: list[dict[str, Any]], removed: set[str], metric: str) -> list[dict[str, Any]]:
    return [{**t, "estimates": {**t["estimates"], metric: {w: 0 for w in WHICH}}}
            if t["id"] in removed else t for t in tasks]


def _mid_of(tasks: list[dict[str, Any]], c: dict[str, Any]) -> int:
    if c["aggregation"] == "sum":
        return sum(u(est(t, c["metric"], "mid")) for t in tasks)
    return longest(tasks, c["metric"], "mid")


def _smallest_freeing(tasks: list[dict[str, Any]], c: dict[str, Any], parts: list[str]) -> list[str]:
    def frees(chosen: tuple[str, ...]) -> bool:
        mid = _mid_of(_without(tasks, set(chosen), c["metric"]), c)
        return meets(mid / SCALE, c["op"], float(c["limit"]))

    tried = 0
    for size in range(1, len(parts) + 1):
        for chosen in itertools.combinations(parts, size):
            tried += 1
            if tried > MAX_WALL_SETS:
                greedy: list[str] = []
                for task_id in parts:
                    greedy.append(task_id)
                    if frees(tuple(greedy)):
                        break
                return greedy
            if frees(chosen):
                return list(chosen)
    return parts


def _over(tasks: list[dict[str, Any]], metric: str, op: str, limit: float) -> list[str]:
    """Tasks on a chain whose mid length misses the limit: the longest chain through a
    task is the longest ending at it plus the longest starting at it, less itself."""
    ids = order(tasks)
    by_id = {t["id"]: t for t in tasks}
    own = {i: u(est(by_id[i], metric, "mid")) for i in ids}
    ending: dict[str, int] = {}
    for i in ids:
        ending[i] = own[i] + max((ending[d] for d in by_id[i]["depends_on"]), default=0)
    starting: dict[str, int] = {}
    for i in reversed(ids):
        starting[i] = own[i] + max((starting[t["id"]] for t in tasks if i in t["depends_on"]),
                                   default=0)
    return [t["id"] for t in tasks
            if not meets((ending[t["id"]] + starting[t["id"]] - own[t["id"]]) / SCALE, op, limit)]


def _mid_chain(tasks: list[dict[str, Any]], metric: str) -> list[str]:
    """The tasks of a longest mid chain."""
    ids = order(tasks)
    by_id = {t["id"]: t for t in tasks}
    best: dict[str, tuple[int, list[str]]] = {}
    for i in ids:
        before = max((best[d] for d in by_id[i]["depends_on"]), default=(0, []),
                     key=lambda b: b[0])
        best[i] = (before[0] + u(est(by_id[i], metric, "mid")), [*before[1], i])
    return max(best.values(), default=(0, []), key=lambda b: b[0])[1]


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
        if any(a for a in combo) and any(zero_time_build(t) for t in revised):
            continue  # no repair may make a build take no time
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
