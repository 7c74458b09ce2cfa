"""Planning mode's numbers, all computed here from the model's estimates, never taken
from its narrative.

Every estimate is converted to integer milli-units first, so sums and paths are exact.

**The status rule** (one rule, used everywhere): for a constraint with a limit, take the
pessimistic end of the rolled-up range (``high`` for an upper limit such as cost <= 500,
``low`` for a lower limit such as F1 >= 0.88).

* SAT: the pessimistic end meets the limit;
* UNSAT: the mid estimate misses it;
* TIGHT: otherwise (the mid meets it, the pessimistic end does not).

Rollups: ``sum`` adds task estimates of the constraint's metric, ``critical_path`` takes
the longest dependency chain by that metric (each of low/mid/high on its own), and
``projection`` uses the plan's projection of a property of the result.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from kernel.core.dag import DagNode, critical_path, find_cycle, topological_order
from kernel.protocol.plan_models import (
    Approach,
    PlanConstraint,
    PlanTask,
    Range,
    TaskSurvey,
)

SCALE = 1000
ESTIMATES = ("low", "mid", "high")
Status = Literal["SAT", "TIGHT", "UNSAT"]
LOW_CONFIDENCE = 0.3
MAX_COMBINATIONS = 200_000


def units(value: float) -> int:
    return round(value * SCALE)


def plain(amount: int) -> float:
    return amount / SCALE


def meets(value: float, op: str, limit: float) -> bool:
    return {"<=": value <= limit, "<": value < limit, ">=": value >= limit,
            ">": value > limit}[op]


def status(totals: Mapping[str, float], op: str, limit: float) -> Status:
    pessimistic = totals["high"] if op in ("<=", "<") else totals["low"]
    if meets(pessimistic, op, limit):
        return "SAT"
    if not meets(totals["mid"], op, limit):
        return "UNSAT"
    return "TIGHT"


def checkable(constraint: PlanConstraint) -> bool:
    return constraint.aggregation is not None and constraint.op is not None \
        and constraint.limit is not None and constraint.metric is not None \
        and (constraint.aggregation != "projection" or constraint.projection is not None)


@dataclass(frozen=True)
class Rollup:
    constraint_id: str
    metric: str
    aggregation: str
    op: str
    limit: float
    totals: dict[str, float]
    status: Status
    path: list[str] = field(default_factory=list)  # the mid critical path, when relevant

    def as_dict(self) -> dict[str, Any]:
        return {"constraint_id": self.constraint_id, "metric": self.metric,
                "aggregation": self.aggregation, "op": self.op, "limit": self.limit,
                "totals": self.totals, "status": self.status, "critical_path": self.path}


def dag_nodes(tasks: Sequence[PlanTask], metric: str | None = None,
              which: str = "mid") -> list[DagNode]:
    return [DagNode(t.id, i, tuple(sorted(set(t.depends_on))),
                    duration=units(estimate(t, metric, which)) if metric else 0)
            for i, t in enumerate(tasks)]


def estimate(task: PlanTask, metric: str | None, which: str) -> float:
    found = task.estimates.get(metric or "")
    return getattr(found, which) if found is not None else 0.0


def longest_path(tasks: Sequence[PlanTask], metric: str, which: str) -> tuple[list[str], int]:
    return critical_path(dag_nodes(tasks, metric, which))


def rollup(constraints: Sequence[PlanConstraint], tasks: Sequence[PlanTask],
           projections: Mapping[str, Range] | None = None) -> list[Rollup]:
    """The rollup of every checkable constraint (``projections`` override the plan's)."""
    result = []
    for c in constraints:
        if not checkable(c):
            continue
        assert c.metric is not None and c.op is not None and c.limit is not None
        path: list[str] = []
        if c.aggregation == "sum":
            totals = {e: plain(sum(units(estimate(t, c.metric, e)) for t in tasks))
                      for e in ESTIMATES}
        elif c.aggregation == "critical_path":
            totals = {}
            for e in ESTIMATES:
                chain, length = longest_path(tasks, c.metric, e)
                totals[e] = plain(length)
                if e == "mid":
                    path = chain
        else:
            projection = (projections or {}).get(c.id) or c.projection
            assert projection is not None
            totals = {e: getattr(projection, e) for e in ESTIMATES}
        result.append(Rollup(c.id, c.metric, c.aggregation or "", c.op, c.limit, totals,
                             status(totals, c.op, c.limit), path))
    return result


def waterfall(tasks: Sequence[PlanTask], metric: str, limit: float) -> list[dict[str, Any]]:
    """Cumulative mid estimate of ``metric`` in dependency order, and what remains."""
    by_id = {t.id: t for t in tasks}
    spent = 0
    rows = []
    for task_id in topological_order(dag_nodes(tasks)):
        spent += units(estimate(by_id[task_id], metric, "mid"))
        rows.append({"task_id": task_id, "cumulative": plain(spent),
                     "remaining": plain(units(limit) - spent)})
    return rows


def walls(rollups: Sequence[Rollup], tasks: Sequence[PlanTask]) -> list[dict[str, Any]]:
    """For each UNSAT constraint, the tasks pushing it there (largest contribution first)
    and its wall: a smallest set of them whose removal brings the mid estimate within the
    limit (docs/planning.md, "Walls"). For a sum that is its largest contributors; for a
    critical path broken on parallel branches it holds a task of each branch, since
    removing one branch's task leaves the other over the limit."""
    by_id = {t.id: t for t in tasks}
    result: list[dict[str, Any]] = []
    for r in rollups:
        if r.status != "UNSAT" or r.aggregation == "projection":
            if r.status == "UNSAT":
                result.append({"constraint_id": r.constraint_id, "tasks": [], "cluster": [],
                               "note": "a projected property of the result, not a task sum"})
            continue
        members = [t.id for t in tasks]
        if r.aggregation == "critical_path":
            members = over_the_limit(tasks, r) if r.op in ("<=", "<") else r.path
        contributions = sorted(((units(estimate(by_id[m], r.metric, "mid")), m)
                                for m in members), key=lambda x: (-x[0], x[1]))
        contributions = [(c, m) for c, m in contributions if c > 0]
        result.append({"constraint_id": r.constraint_id,
                       "tasks": [{"task_id": m, "contribution": plain(c)}
                                 for c, m in contributions],
                       "cluster": wall(tasks, r, [m for _, m in contributions]),
                       "excess": plain(units(r.totals["mid"]) - units(r.limit))})
    return result


MAX_WALL_CHECKS = 20_000  # sets tried before the wall is built greedily instead


def wall(tasks: Sequence[PlanTask], r: Rollup, candidates: list[str]) -> list[str]:
    """The first set, by size and then in ``candidates``' order (largest contribution
    first), whose tasks at zero bring ``r``'s mid within its limit; none frees a lower
    limit (removing work never raises a total), so then every candidate is listed."""
    def frees(removed: frozenset[str]) -> bool:
        return meets(plain(_mid_without(tasks, r, removed)), r.op, r.limit)

    if r.op in (">=", ">"):
        return list(candidates)
    checks = 0
    for size in range(1, len(candidates) + 1):
        for chosen in itertools.combinations(candidates, size):
            checks += 1
            if checks > MAX_WALL_CHECKS:
                return _greedy_wall(candidates, frees)
            if frees(frozenset(chosen)):
                return list(chosen)
    return list(candidates)


def _greedy_wall(candidates: list[str], frees: Callable[[frozenset[str]], bool]) -> list[str]:
    """Too many sets to try: the largest contributors, one at a time, until freed."""
    chosen: list[str] = []
    for task_id in candidates:
        chosen.append(task_id)
        if frees(frozenset(chosen)):
            break
    return chosen


def _mid_without(tasks: Sequence[PlanTask], r: Rollup, removed: frozenset[str]) -> int:
    """``r``'s mid total, in thousandths, with the ``removed`` tasks at zero."""
    if r.aggregation == "sum":
        return sum(units(estimate(t, r.metric, "mid")) for t in tasks if t.id not in removed)
    nodes = [DagNode(n.id, n.seq, n.depends_on, 0 if n.id in removed else n.duration)
             for n in dag_nodes(tasks, r.metric, "mid")]
    return critical_path(nodes)[1]


def over_the_limit(tasks: Sequence[PlanTask], r: Rollup) -> list[str]:
    """The tasks on some dependency chain whose mid length misses ``r``'s limit."""
    nodes = {n.id: n for n in dag_nodes(tasks, r.metric, "mid")}
    ordered = topological_order(nodes.values())
    into: dict[str, int] = {}
    for node_id in ordered:
        into[node_id] = nodes[node_id].duration + max(
            (into[d] for d in nodes[node_id].depends_on), default=0)
    out_of: dict[str, int] = {}
    after: dict[str, list[str]] = {n: [] for n in nodes}
    for n in nodes.values():
        for d in n.depends_on:
            after[d].append(n.id)
    for node_id in reversed(ordered):
        out_of[node_id] = nodes[node_id].duration + max(
            (out_of[a] for a in after[node_id]), default=0)
    return [t.id for t in tasks if not meets(
        plain(into[t.id] + out_of[t.id] - nodes[t.id].duration), r.op, r.limit)]


def survey_triggers(tasks: Sequence[PlanTask], wall_list: Sequence[dict[str, Any]]) -> dict[str, list[str]]:
    """Tasks that must be surveyed, with why: low confidence, or a wall's cluster."""
    reasons: dict[str, list[str]] = {}
    for t in tasks:
        if t.confidence < LOW_CONFIDENCE:
            reasons.setdefault(t.id, []).append(f"confidence {t.confidence} < {LOW_CONFIDENCE}")
    for wall in wall_list:
        for task_id in wall["cluster"]:
            reasons.setdefault(task_id, []).append(f"pushes {wall['constraint_id']} to UNSAT")
    return {k: reasons[k] for k in sorted(reasons)}


@dataclass(frozen=True)
class Repair:
    """The outcome of the repair search.

    Feasible: the chosen approaches, the revised tasks and rollups, and ``side_effects``
    (constraints the repair moves from SAT to TIGHT). Infeasible: ``conflict``, a minimal
    set of constraints no searched combination meets together, each with the best mid
    value it reaches while the rest of the set is met (``blocking``), and the ``closest``
    combination (fewest constraints UNSAT, then the cheapest). ``searched`` of
    ``combinations`` were tried: the search stops at MAX_COMBINATIONS and says so.
    """

    chosen: dict[str, str]                 # task id -> approach id ("keep": the original)
    tasks: list[PlanTask]
    rollups: list[Rollup]
    feasible: bool
    cost: dict[str, float]
    searched: int = 0
    combinations: int = 0
    side_effects: list[dict[str, Any]] = field(default_factory=list)
    conflict: list[str] = field(default_factory=list)
    blocking: list[dict[str, Any]] = field(default_factory=list)
    closest: dict[str, Any] = field(default_factory=dict)

    @property
    def truncated(self) -> bool:
        return self.searched < self.combinations


def apply(tasks: Sequence[PlanTask], chosen: Mapping[str, Approach | None]) -> list[PlanTask]:
    revised = []
    for t in tasks:
        approach = chosen.get(t.id)
        if approach is None:
            revised.append(t)
        else:
            estimates = {**t.estimates, **approach.estimates}
            revised.append(t.model_copy(update={"estimates": estimates,
                                                "confidence": approach.confidence}))
    return revised


@dataclass
class _Search:
    """What the search keeps: the best feasible choice, the closest infeasible one, and
    per distinct set of UNSAT constraints the best mid value each constraint reached."""

    best: tuple[tuple[Any, ...], dict[str, Approach | None], list[PlanTask],
                list[Rollup]] | None = None
    closest: tuple[tuple[Any, ...], dict[str, Approach | None], list[Rollup]] | None = None
    reached: dict[frozenset[str], dict[str, float]] = field(default_factory=dict)
    searched: int = 0


def repair(constraints: Sequence[PlanConstraint], tasks: Sequence[PlanTask],
           surveys: Iterable[TaskSurvey]) -> Repair:
    """Search the combinations of approaches jointly for the cheapest (total mid estimate
    of the cost metrics, then the highest mean confidence, then ids) that leaves no
    constraint UNSAT; with none, find what cannot be met together."""
    options: list[tuple[str, list[Approach | None]]] = [
        (s.task_id, [None, *s.approaches]) for s in sorted(surveys, key=lambda s: s.task_id)]
    combinations = math.prod(len(choices) for _, choices in options)
    cost_metrics = _cost_metrics(constraints)
    search = _Search()
    combos = itertools.product(*[choices for _, choices in options])
    for combo in itertools.islice(combos, MAX_COMBINATIONS):
        chosen = {task_id: a for (task_id, _), a in zip(options, combo, strict=True)}
        _try(constraints, tasks, combo, chosen, cost_metrics, search)
    before = {r.constraint_id: r for r in rollup(constraints, tasks)}
    if search.best is None:
        return _infeasible(tasks, before, search, combinations)
    _, chosen, revised, rolled = search.best
    return Repair({k: (a.id if a else "keep") for k, a in chosen.items()}, revised, rolled,
                  True, {m: plain(sum(units(estimate(t, m, "mid")) for t in revised))
                         for m in cost_metrics}, search.searched, combinations,
                  side_effects=[{"constraint_id": r.constraint_id, "before": "SAT",
                                 "after": r.status, "totals": r.totals, "op": r.op,
                                 "limit": r.limit}
                                for r in rolled if r.status == "TIGHT"
                                and before[r.constraint_id].status == "SAT"])


def _cost_metrics(constraints: Sequence[PlanConstraint]) -> list[str]:
    """The summed metrics a repair minimises: the cost ones, else every summed metric."""
    summed = {c.metric for c in constraints
              if checkable(c) and c.aggregation == "sum" and c.metric}
    return sorted({m for m in summed if m.startswith("cost")}) or sorted(summed)


TIME_WORDS = frozenset({"time", "duration", "second", "minute", "hour", "day", "week",
                        "month", "year"})


def is_time_metric(metric: str) -> bool:
    """A metric measured in time: a word of its name is a unit of time (``hours``,
    ``time_weeks``, ``duration_days``), singular or plural."""
    words = [w.removesuffix("s") for w in re.split(r"[^a-z]+", metric.lower()) if w]
    return any(w in TIME_WORDS for w in words)


def zero_time_builds(tasks: Sequence[PlanTask]) -> list[str]:
    """Build tasks that would take no time at all, in any unit: no approach builds
    something in zero hours, days or weeks, so a repair may not choose one."""
    return [t.id for t in tasks if t.type == "build" and any(
        is_time_metric(m) and r.mid == 0 for m, r in t.estimates.items())]


def _try(constraints: Sequence[PlanConstraint], tasks: Sequence[PlanTask],
         combo: tuple[Approach | None, ...], chosen: dict[str, Approach | None],
         cost_metrics: list[str], search: _Search) -> None:
    """Roll up one combination of approaches and keep what the search needs of it (a
    combination that makes a build take no time is searched, and never kept)."""
    search.searched += 1
    revised = apply(tasks, chosen)
    if zero_time_builds(revised) and any(a is not None for a in combo):
        return
    projections = {cid: p for a in combo if a is not None for cid, p in a.projections.items()}
    rolled = rollup(constraints, revised, projections)
    unmet = frozenset(r.constraint_id for r in rolled if r.status == "UNSAT")
    reached = search.reached.setdefault(unmet, {})
    for r in rolled:
        reached[r.constraint_id] = _better(reached.get(r.constraint_id), r)
    cost = sum(units(estimate(t, m, "mid")) for t in revised for m in cost_metrics)
    confidence = sum(t.confidence for t in revised) / len(revised)
    ids = tuple(a.id if a else "keep" for a in combo)
    key = (cost, -confidence, ids)
    if unmet:
        if search.closest is None or (len(unmet), key) < search.closest[0]:
            search.closest = ((len(unmet), key), chosen, rolled)
    elif search.best is None or key < search.best[0]:
        search.best = (key, chosen, revised, rolled)


def _better(best: float | None, r: Rollup) -> float:
    mid = r.totals["mid"]
    if best is None:
        return mid
    return min(best, mid) if r.op in ("<=", "<") else max(best, mid)


def _infeasible(tasks: Sequence[PlanTask], before: dict[str, Rollup], search: _Search,
                combinations: int) -> Repair:
    """No combination leaves nothing UNSAT: a minimal conflict (deletion-based: drop each
    constraint in turn while the rest still cannot be met together), what each of its
    members reaches at best while the others are met, and the closest combination."""
    unmet_sets = list(search.reached)

    def meetable(together: set[str]) -> bool:
        return any(not (unmet & together) for unmet in unmet_sets)

    conflict = set(before)
    for cid in sorted(before):
        if not meetable(conflict - {cid}):
            conflict.discard(cid)
    blocking = []
    for cid in sorted(conflict):
        others = conflict - {cid}
        reached = [values[cid] for unmet, values in search.reached.items()
                   if not (unmet & others)]
        r = before[cid]
        best = min(reached) if r.op in ("<=", "<") else max(reached)
        blocking.append({"constraint_id": cid, "op": r.op, "limit": r.limit, "best_mid": best,
                         "before_mid": r.totals["mid"]})
    closest: dict[str, Any] = {}
    if search.closest is not None:
        _, chosen, rolled = search.closest
        closest = {"chosen": {k: (a.id if a else "keep") for k, a in chosen.items()},
                   "unmet": sorted(r.constraint_id for r in rolled if r.status == "UNSAT"),
                   "rollup": [r.as_dict() for r in rolled]}
    return Repair({}, list(tasks), list(before.values()), False, {}, search.searched,
                  combinations, conflict=sorted(conflict), blocking=blocking, closest=closest)


def validate_dag(tasks: Sequence[PlanTask]) -> list[str]:
    """What makes the task list an invalid DAG (empty: valid)."""
    ids = [t.id for t in tasks]
    problems = [f"task id {i} appears twice" for i in sorted({i for i in ids if ids.count(i) > 1})]
    known = set(ids)
    for t in tasks:
        problems += [f"{t.id} depends on unknown task {d}" for d in t.depends_on if d not in known]
    if problems:
        return problems
    cycle = find_cycle(dag_nodes(tasks))
    if cycle:
        return [f"dependency cycle: {' -> '.join(cycle)}"]
    if not any(not t.depends_on for t in tasks):
        problems.append("no entry task (every task depends on another)")
    if not exit_tasks(tasks):
        problems.append("no exit task that every other task leads to")
    return problems


def exit_tasks(tasks: Sequence[PlanTask]) -> list[str]:
    """Tasks that every other task reaches through dependencies."""
    deps = {t.id: set(t.depends_on) for t in tasks}
    reach: dict[str, set[str]] = {}

    def ancestors(task_id: str) -> set[str]:
        if task_id not in reach:
            found: set[str] = set()
            for d in deps[task_id]:
                found |= {d} | ancestors(d)
            reach[task_id] = found
        return reach[task_id]

    everyone = set(deps)
    return sorted(t for t in deps if ancestors(t) | {t} == everyone)
