"""check-plan, sections 2, 3 and 6: the DAG, every total, status, waterfall and claim,
and the critical path, each recomputed from the tasks and constraints."""

from __future__ import annotations

import itertools
from typing import Any

from kernel.plan.recompute import (
    SCALE,
    WHICH,
    cost_constraint,
    est,
    longest,
    meets,
    order,
    rollup,
    u,
)
from kernel.plan.verdict import Result


def decomposition(doc: dict[str, Any]) -> list[Result]:
    tasks = doc["tasks"]
    ids = {t["id"] for t in tasks}
    dangling = sorted(f"{t['id']}->{d}" for t in tasks for d in t["depends_on"] if d not in ids)
    cyclic = not dangling and _cyclic(tasks)
    entry = [t["id"] for t in tasks if not t["depends_on"]]
    results = [
        Result("2.1", "dependency references resolve", not dangling, ", ".join(dangling)),
        Result("2.2", "no cycles", not dangling and not cyclic,
                "a cycle in the dependencies" if cyclic else "not checked: unresolved "
                "references" if dangling else ""),
        Result("2.3", "an entry task", bool(entry), ", ".join(entry)),
    ]
    if not dangling and not cyclic:  # the exit needs a DAG to be defined
        up = ancestors(tasks)
        exits = [n for n, above in up.items() if above | {n} == ids]
        results.append(Result("2.4", "an exit task every other task leads to", bool(exits),
                               ", ".join(exits)))
    return results


def _cyclic(tasks: list[dict[str, Any]]) -> bool:
    try:
        order(tasks)
    except ValueError:
        return True
    return False


def ancestors(tasks: list[dict[str, Any]]) -> dict[str, set[str]]:
    deps = {t["id"]: set(t["depends_on"]) for t in tasks}
    up: dict[str, set[str]] = {}
    for node in order(tasks):
        up[node] = set().union(*({d} | up[d] for d in deps[node])) if deps[node] else set()
    return up


def arithmetic(doc: dict[str, Any]) -> list[Result]:
    tasks, constraints = doc["tasks"], doc["constraints"]
    bad = [f"{t['id']}.{m}" for t in tasks for m, r in t["estimates"].items()
           if not range_ok(r)]
    results = [Result("3.0", "estimates are non-negative with low <= mid <= high", not bad,
                       ", ".join(bad))]
    computed = rollup(constraints, tasks)
    results += _totals("3", doc["rollup"], computed)
    results += waterfall_checks("3", doc.get("waterfall"), tasks, cost_constraint(constraints))
    results.append(_claims(doc, computed))
    return results


def range_ok(r: Any) -> bool:
    try:
        return 0 <= float(r["low"]) <= float(r["mid"]) <= float(r["high"])
    except (KeyError, TypeError, ValueError):
        return False


def _totals(prefix: str, rows: list[dict[str, Any]], computed: dict[str, dict[str, Any]]) -> list[Result]:
    """Each reported total (low, mid, high) against the recomputed one, and each status
    against the rule applied to the recomputed totals."""
    wrong, mismatched = [], []
    for r in rows:
        mine = computed.get(r["constraint_id"])
        if mine is None:
            continue  # an unknown or unmeasurable constraint: assertion 1.3 names it
        wrong += [f"{r['constraint_id']} {w}: reported {r['totals'][w]:g}, computed "
                  f"{mine['totals'][w]:g}" for w in WHICH
                  if u(r["totals"][w]) != u(mine["totals"][w])]
        if r.get("status") != mine["status"]:
            mismatched.append(f"{r['constraint_id']}: {r.get('status')} != {mine['status']}")
    return [
        Result(f"{prefix}.1", "every total (low, mid, high) is the recomputed one", not wrong,
                "; ".join(wrong)),
        Result(f"{prefix}.4", "every status follows the rule on the recomputed totals",
                not mismatched, "; ".join(mismatched)),
    ]


def waterfall_checks(prefix: str, waterfall: dict[str, Any] | None, tasks: list[dict[str, Any]],
                     cost: dict[str, Any] | None) -> list[Result]:
    """The waterfall shows the cost constraint, every task once, in dependency order, with
    the mid estimates accumulated and the limit minus that remaining."""
    name_cum, name_rem = "the waterfall accumulates every task once", \
        "what remains is the limit minus the accumulated cost, decreasing"
    name_order = "the waterfall is of the cost constraint, in dependency order"
    if cost is None:
        ok = not waterfall
        return [Result(f"{prefix}.2", name_cum, True, "no summed constraint"),
                Result(f"{prefix}.3", name_rem, True, "no summed constraint"),
                Result(f"{prefix}.5", name_order, ok,
                        "no summed constraint" if ok else "a waterfall without a summed "
                        "constraint")]
    if not waterfall:
        missing = f"no waterfall, though {cost['id']} is summed"
        return [Result(f"{prefix}.2", name_cum, False, missing),
                Result(f"{prefix}.3", name_rem, False, missing),
                Result(f"{prefix}.5", name_order, False, missing)]
    rows = waterfall["rows"]
    by_id = {t["id"]: t for t in tasks}
    metric, limit = cost["metric"], u(cost["limit"])
    running, cumulative, remaining = 0, [], []
    previous = None
    for row in rows:
        running += u(est(by_id.get(row["task_id"], {}), metric, "mid"))
        if u(row["cumulative"]) != running:
            cumulative.append(f"{row['task_id']}: {row['cumulative']:g} != {running / SCALE:g}")
        if u(row["remaining"]) != limit - running:
            remaining.append(f"{row['task_id']}: {row['remaining']:g} != "
                             f"{(limit - running) / SCALE:g}")
        if previous is not None and u(row["remaining"]) > previous:
            remaining.append(f"{row['task_id']}: what remains grows")
        previous = u(row["remaining"])
    listed = [r["task_id"] for r in rows]
    if sorted(listed) != sorted(by_id):
        cumulative.append("the waterfall does not list every task once")
    position = {t: i for i, t in enumerate(listed)}
    early = [f"{t} before its dependency {d}" for t in listed if t in by_id
             for d in by_id[t]["depends_on"] if position.get(d, -1) > position[t]]
    if waterfall.get("constraint_id") != cost["id"] or waterfall.get("metric") != metric or \
            u(waterfall.get("limit", -1)) != limit:
        early.append(f"it should show {cost['id']} ({metric}, limit {cost['limit']:g})")
    return [Result(f"{prefix}.2", name_cum, not cumulative, "; ".join(cumulative)),
            Result(f"{prefix}.3", name_rem, not remaining, "; ".join(remaining)),
            Result(f"{prefix}.5", name_order, not early, "; ".join(early))]


def _claims(doc: dict[str, Any], computed: dict[str, dict[str, Any]]) -> Result:
    """A claim's computed value and whether it agrees, recomputed."""
    wrong = []
    known = {c["id"] for c in doc["constraints"]}
    for c in doc.get("claims") or []:
        mine = computed.get(c["constraint_id"])
        if mine is None and c["constraint_id"] in known:
            wrong.append(f"a claim about {c['constraint_id']}, which is not measured: "
                         "nothing computes it, so no claim about it can be checked")
        if mine is None:
            continue  # an unknown constraint: 1.3 names it
        value = mine["totals"][c["estimate"]]
        agrees = u(c["value"]) == u(value)
        if u(c["computed"]) != u(value) or c["agrees"] is not agrees:
            wrong.append(f"{c['constraint_id']} {c['estimate']} {c['value']:g}: computed "
                         f"{value:g}, so agrees={agrees}")
    return Result("3.6", "each claim's computed value and agreement are right", not wrong,
                   "; ".join(wrong))


def critical_path(doc: dict[str, Any]) -> list[Result]:
    timed = [c for c in doc["constraints"] if c.get("aggregation") == "critical_path"
             and c.get("metric") is not None]
    results = path_checks("6", doc.get("critical_path"), doc["tasks"], timed,
                          {r["constraint_id"]: r for r in doc["rollup"]})
    repair = doc.get("repair")
    if repair and repair.get("feasible"):
        revised = path_checks("6.r", repair.get("critical_path"), repair["tasks"], timed,
                              {r["constraint_id"]: r for r in repair["rollup"]})
        results.append(Result("6.3", "the repaired plan's critical path is its longest",
                               all(r.passed for r in revised),
                               "; ".join(r.detail for r in revised if not r.passed)))
    return [*results, _row_paths(doc)]


def _row_paths(doc: dict[str, Any]) -> Result:
    """Every rollup row's critical path (the plan's, the repair's, the closest one's) is a
    longest mid chain of its time constraint, the one the critical-path section shows
    for that constraint; a sum or projection row has none."""
    by_id = {c["id"]: c for c in doc["constraints"]}
    repair = doc.get("repair") or {}
    closest = ((doc.get("refusal") or {}).get("closest") or {})
    tables = [("rollup", doc["rollup"], doc["tasks"], doc.get("critical_path"))]
    if repair.get("rollup"):
        tables.append(("repair rollup", repair["rollup"], repair.get("tasks") or [],
                       repair.get("critical_path")))
    if closest.get("rollup"):
        tables.append(("closest rollup", closest["rollup"], [], None))
    wrong = []
    for where, rows, tasks, section in tables:
        for row in rows:
            c = by_id.get(row["constraint_id"])
            chain = list(row.get("critical_path") or [])
            if c is None or c.get("aggregation") != "critical_path":
                wrong += [f"{where} {row['constraint_id']}: a path, but not a time rollup"] \
                    if chain else []
                continue
            if section and section.get("constraint_id") == c["id"] and \
                    chain != list(section.get("tasks") or []):
                wrong.append(f"{where} {c['id']}: {chain} is not the critical path's "
                             f"{section.get('tasks')}")
            elif tasks and not _path_is_longest({"tasks": chain, "totals": row["totals"],
                                                 "metric": c["metric"],
                                                 "constraint_id": c["id"]}, c, tasks)[1]:
                wrong.append(f"{where} {c['id']}: {chain} is not a longest chain")
    return Result("6.4", "each time rollup row's path is the critical path", not wrong,
                  "; ".join(wrong))


def _path_is_longest(path: dict[str, Any], constraint: dict[str, Any],
                     tasks: list[dict[str, Any]]) -> tuple[bool, bool, int]:
    """(a dependency chain, the longest with the right totals and names, the longest mid)."""
    chain = list(path["tasks"])
    by_id = {t["id"]: t for t in tasks}
    linked = bool(chain) and all(t in by_id for t in chain) and all(
        a in by_id[b]["depends_on"] for a, b in itertools.pairwise(chain))
    metric = constraint["metric"]
    length = sum(u(est(by_id[t], metric, "mid")) for t in chain if t in by_id)
    best = longest(tasks, metric, "mid")
    totals_ok = all(u(path["totals"][w]) == longest(tasks, metric, w) for w in WHICH)
    ok = linked and length == best and totals_ok and path.get("metric") == metric and \
        path.get("constraint_id") == constraint["id"]
    return linked, ok, best


def path_checks(prefix: str, path: dict[str, Any] | None, tasks: list[dict[str, Any]],
                timed: list[dict[str, Any]],
                rolled: dict[str, dict[str, Any]]) -> list[Result]:
    name = "the critical path is a chain and the longest by time"
    if not timed:
        return [Result(f"{prefix}.1", name, not path,
                        "no time constraint" if not path else "a path without a time "
                        "constraint"),
                Result(f"{prefix}.2", "the critical path fits the time limit or is flagged",
                        True, "no time constraint")]
    if not path:
        return [Result(f"{prefix}.1", name, False,
                        f"missing, though {timed[0]['id']} is a time constraint"),
                Result(f"{prefix}.2", "the critical path fits the time limit or is flagged",
                        False, "no critical path")]
    constraint = next((c for c in timed if c["id"] == path.get("constraint_id")), timed[0])
    chain = list(path["tasks"])
    linked, ok, best = _path_is_longest(path, constraint, tasks)
    r = rolled.get(constraint["id"])
    flagged = r is not None and (meets(best / SCALE, constraint["op"], float(constraint["limit"]))
                                 or r["status"] in ("TIGHT", "UNSAT"))
    return [
        Result(f"{prefix}.1", name, ok, f"reported {path['totals']['mid']:g} over {chain}; "
                f"longest {best / SCALE:g}" + ("" if linked else "; not a dependency chain")),
        Result(f"{prefix}.2", "the critical path fits the time limit or is flagged", flagged,
                f"status {r['status'] if r else 'missing'}"),
    ]

