"""`kernel check-plan`: the assertion framework, run on any plan document.

Every number is recomputed from the document's own tasks and constraints (with plain
arithmetic, independent of the planner), and each assertion reports pass or fail with
what it saw. A document that does not even parse fails assertion 0 and nothing else runs.
Example plans carry their own "digital verification" list (``verifications``), checked
after the framework.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SCALE = 1000


@dataclass(frozen=True)
class Result:
    id: str
    name: str
    passed: bool
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "passed": self.passed, "detail": self.detail}


def _u(value: Any) -> int:
    return round(float(value) * SCALE)


def _meets(value: float, op: str, limit: float) -> bool:
    return {"<=": value <= limit, "<": value < limit, ">=": value >= limit,
            ">": value > limit}[op]


def expected_status(totals: dict[str, float], op: str, limit: float) -> str:
    pessimistic = totals["high"] if op in ("<=", "<") else totals["low"]
    if _meets(pessimistic, op, limit):
        return "SAT"
    return "UNSAT" if not _meets(totals["mid"], op, limit) else "TIGHT"


def _est(task: dict, metric: str, which: str) -> float:
    found = (task.get("estimates") or {}).get(metric)
    return float(found[which]) if found else 0.0


def _longest(tasks: list[dict], metric: str, which: str) -> int:
    """Longest chain by memoised recursion over dependencies (the DAG is checked first)."""
    by_id = {t["id"]: t for t in tasks}
    memo: dict[str, int] = {}

    def finish(task_id: str) -> int:
        if task_id not in memo:
            task = by_id[task_id]
            memo[task_id] = _u(_est(task, metric, which)) + max(
                (finish(d) for d in task.get("depends_on", [])), default=0)
        return memo[task_id]

    return max((finish(t) for t in by_id), default=0)


def _cycle(tasks: list[dict]) -> bool:
    deps = {t["id"]: list(t.get("depends_on", [])) for t in tasks}
    state: dict[str, int] = {}

    def visit(node: str) -> bool:
        state[node] = 1
        for d in deps.get(node, []):
            if state.get(d) == 1 or (d in deps and not state.get(d) and visit(d)):
                return True
        state[node] = 2
        return False

    return any(not state.get(n) and visit(n) for n in deps)


def _ancestors(tasks: list[dict]) -> dict[str, set[str]]:
    deps = {t["id"]: set(t.get("depends_on", [])) for t in tasks}
    memo: dict[str, set[str]] = {}

    def up(node: str) -> set[str]:
        if node not in memo:
            memo[node] = set()
            for d in deps.get(node, ()):
                if d in deps:
                    memo[node] |= {d} | up(d)
        return memo[node]

    return {n: up(n) for n in deps}


def check_plan(doc: dict[str, Any]) -> list[Result]:
    try:
        tasks, constraints = list(doc["tasks"]), list(doc["constraints"])
        rollups = list(doc["rollup"])
        missing = [t for t in tasks if not {"id", "depends_on", "estimates"} <= set(t)]
        if missing:
            raise KeyError(f"a task without id, depends_on or estimates: {missing[0]}")
    except (KeyError, TypeError) as exc:
        return [Result("0", "document structure", False, f"missing or malformed: {exc}")]
    results = [Result("0", "document structure", True, f"schema {doc.get('schema')}")]
    results += _completeness(doc, constraints)
    dag_ok, dag_results = _decomposition(tasks)
    results += dag_results
    if not dag_ok:
        return results
    results += _arithmetic(doc, tasks, constraints, rollups)
    results += _surveys(doc, tasks, rollups)
    results += _repair(doc, constraints, rollups)
    results += _critical_path(doc, tasks, rollups)
    results += [_verification(doc, i, v) for i, v in enumerate(doc.get("verifications") or [])]
    return results


def _completeness(doc: dict, constraints: list[dict]) -> list[Result]:
    goal = str(doc.get("goal", "")).lower()
    explicit = [c for c in constraints if c.get("kind") == "explicit"]
    quoted = [c["id"] for c in explicit if c.get("source_text")
              and str(c["source_text"]).lower() not in goal]
    implicit = [c["id"] for c in constraints if c.get("kind") == "implicit"
                and c.get("removal_consequence")]
    return [
        Result("1.1", "explicit constraints come from the goal", bool(explicit) and not quoted,
               f"{len(explicit)} explicit" + (f"; not in the goal: {quoted}" if quoted else "")),
        Result("1.2", "an implicit constraint with its removal consequence", bool(implicit),
               f"{implicit}"),
    ]


def _decomposition(tasks: list[dict]) -> tuple[bool, list[Result]]:
    ids = {t["id"] for t in tasks}
    dangling = sorted(f"{t['id']}->{d}" for t in tasks for d in t["depends_on"] if d not in ids)
    cyclic = not dangling and _cycle(tasks)
    entry = [t["id"] for t in tasks if not t["depends_on"]]
    ancestors = _ancestors(tasks) if not dangling and not cyclic else {}
    exits = [n for n, up in ancestors.items() if up | {n} == ids]
    results = [
        Result("2.1", "dependency references resolve", not dangling, ", ".join(dangling)),
        Result("2.2", "no cycles", not dangling and not cyclic,
               "a cycle in the dependencies" if cyclic else "not checked: unresolved references"
               if dangling else ""),
        Result("2.3", "an entry task", bool(entry), ", ".join(entry)),
    ]
    if not dangling and not cyclic:  # the exit needs a DAG to be defined
        results.append(Result("2.4", "an exit task every other task leads to", bool(exits),
                              ", ".join(exits)))
    return not dangling and not cyclic, results


def _range_ok(r: Any) -> bool:
    try:
        return 0 <= float(r["low"]) <= float(r["mid"]) <= float(r["high"])
    except (KeyError, TypeError, ValueError):
        return False


def _arithmetic(doc: dict, tasks: list[dict], constraints: list[dict],
                rollups: list[dict]) -> list[Result]:
    bad = [f"{t['id']}.{m}" for t in tasks for m, r in t["estimates"].items()
           if not _range_ok(r)]
    results = [Result("3.0", "estimates are non-negative with low <= mid <= high", not bad,
                      ", ".join(bad))]
    wrong = []
    for r in rollups:
        if r["aggregation"] == "sum":
            for which in ("low", "mid", "high"):
                total = sum(_u(_est(t, r["metric"], which)) for t in tasks)
                if total != _u(r["totals"][which]):
                    wrong.append(f"{r['constraint_id']} {which}: reported {r['totals'][which]}, "
                                 f"sum {total / SCALE}")
    results.append(Result("3.1", "task estimates sum to the reported totals", not wrong,
                          "; ".join(wrong)))
    results += _waterfall_checks("3", doc.get("waterfall"), tasks)
    mismatched = [f"{r['constraint_id']}: {r['status']} != "
                  f"{expected_status(r['totals'], r['op'], r['limit'])}" for r in rollups
                  if r["status"] != expected_status(r["totals"], r["op"], r["limit"])]
    results.append(Result("3.4", "feasibility status matches the threshold comparison",
                          not mismatched, "; ".join(mismatched)))
    return results


def _waterfall_checks(prefix: str, waterfall: dict | None, tasks: list[dict]) -> list[Result]:
    if not waterfall:
        return [Result(f"{prefix}.2", "cumulative waterfall increases", True, "no cost sum"),
                Result(f"{prefix}.3", "remaining budget decreases", True, "no cost sum")]
    rows = waterfall["rows"]
    by_id = {t["id"]: t for t in tasks}
    running, ok_cum, ok_rem, detail = 0, True, True, []
    previous_rem = None
    for row in rows:
        running += _u(_est(by_id.get(row["task_id"], {}), waterfall["metric"], "mid"))
        if _u(row["cumulative"]) != running:
            ok_cum = False
            detail.append(f"{row['task_id']}: cumulative {row['cumulative']} != {running / SCALE}")
        if _u(row["remaining"]) != _u(waterfall["limit"]) - running:
            ok_rem = False
            detail.append(f"{row['task_id']}: remaining {row['remaining']} is not limit - "
                          "cumulative")
        if previous_rem is not None and _u(row["remaining"]) > previous_rem:
            ok_rem = False
        previous_rem = _u(row["remaining"])
    if sorted(r["task_id"] for r in rows) != sorted(by_id):
        ok_cum = False
        detail.append("the waterfall does not list every task once")
    return [Result(f"{prefix}.2", "cumulative waterfall increases", ok_cum, "; ".join(detail)),
            Result(f"{prefix}.3", "remaining budget decreases", ok_rem, "; ".join(detail))]


def _cost_metric(rollups: list[dict]) -> str | None:
    sums = [r["metric"] for r in rollups if r["aggregation"] == "sum"]
    return next((m for m in sums if m.startswith("cost")), sums[0] if sums else None)


def _surveys(doc: dict, tasks: list[dict], rollups: list[dict]) -> list[Result]:
    survey = doc.get("survey") or {}
    surveys = survey.get("surveys") or []
    by_id = {t["id"]: t for t in tasks}
    in_walls = _wall_tasks(doc, None)
    wall_tasks = _wall_tasks(doc, {r["constraint_id"] for r in rollups if r["status"] == "UNSAT"})
    untriggered = [s["task_id"] for s in surveys if not _triggered(s["task_id"], by_id, wall_tasks)]
    few = [s["task_id"] for s in surveys if not _two_distinct(s["approaches"])]
    not_cheaper = [s["task_id"] for s in surveys
                   if not _has_cheaper(s, by_id.get(s["task_id"], {}), doc, rollups)]
    missing = sorted((in_walls | {t["id"] for t in tasks if float(t["confidence"]) < 0.3})
                     - {s["task_id"] for s in surveys})
    return [
        Result("4.1", "surveyed tasks have confidence < 0.3 or push a constraint to UNSAT",
               not untriggered, ", ".join(untriggered)),
        Result("4.2", "each survey has at least two distinct approaches", not few,
               ", ".join(few)),
        Result("4.3", "each survey has an approach cheaper than the original (on the metric "
                      "of the wall it is in)", not not_cheaper, ", ".join(not_cheaper)),
        Result("4.4", "every triggering task was surveyed", not missing, ", ".join(missing)),
    ]


def _wall_tasks(doc: dict, constraint_ids: set[str] | None) -> set[str]:
    """Tasks in the walls of those constraints (of every wall for None)."""
    return {task for w in doc.get("walls") or []
            if constraint_ids is None or w["constraint_id"] in constraint_ids
            for task in w.get("cluster", [])}


def _triggered(task_id: str, by_id: dict[str, dict], wall_tasks: set[str]) -> bool:
    """A survey is due for a known task of confidence below 0.3 or in an UNSAT wall."""
    return task_id in by_id and (float(by_id[task_id]["confidence"]) < 0.3
                                 or task_id in wall_tasks)


def _two_distinct(approaches: list[dict]) -> bool:
    return len({a["id"] for a in approaches}) >= 2 and len({a["title"] for a in approaches}) >= 2


def _wall_metrics(task_id: str, doc: dict, rollups: list[dict]) -> list[str]:
    """The metrics a survey must improve: those of the UNSAT constraints whose wall holds
    the task, or the cost metric for a task surveyed for its low confidence."""
    unsat = {r["constraint_id"]: r["metric"] for r in rollups if r["status"] == "UNSAT"}
    metrics = sorted({unsat[w["constraint_id"]] for w in doc.get("walls") or []
                      if w["constraint_id"] in unsat and task_id in w.get("cluster", [])})
    cost = _cost_metric(rollups)
    return metrics or ([cost] if cost else [])


def _has_cheaper(survey: dict, task: dict, doc: dict, rollups: list[dict]) -> bool:
    metrics = _wall_metrics(survey["task_id"], doc, rollups)
    return not metrics or any(_est(a, m, "mid") < _est(task, m, "mid")
                              for a in survey["approaches"] for m in metrics)


def _repair(doc: dict, constraints: list[dict], rollups: list[dict]) -> list[Result]:
    unsat = [r["constraint_id"] for r in rollups  # by the rule, whatever the report says
             if expected_status(r["totals"], r["op"], r["limit"]) == "UNSAT"]
    repair = doc.get("repair")
    if not unsat:
        return [Result("5.1", "the repair satisfies every violated constraint", True,
                       "nothing was violated")]
    if not repair or not repair.get("feasible"):
        refused = bool(doc.get("refusal"))
        return [Result("5.1", "the repair satisfies every violated constraint", False,
                       "no feasible repair" + ("; refused with what would have to change"
                                               if refused else "; and no refusal report"))]
    after = {r["constraint_id"]: r for r in repair["rollup"]}
    still = [c for c in unsat if after.get(c, {}).get("status") not in ("SAT", "TIGHT")]
    implausible = _implausible(repair["tasks"])
    wrong = _wrong_totals(repair["rollup"], repair["tasks"])
    return [
        Result("5.1", "the repair satisfies every violated constraint", not still,
               ", ".join(still)),
        Result("5.2", "revised estimates are plausible", not implausible,
               ", ".join(implausible)),
        Result("5.3", "the revised rollup is arithmetically right", not wrong, ", ".join(wrong)),
    ]


def _implausible(revised: list[dict]) -> list[str]:
    """Revised estimates that are not a low <= mid <= high range, and builds taking no time."""
    found = [f"{t['id']}.{m}" for t in revised for m, r in t["estimates"].items()
             if not _range_ok(r)]
    return found + [f"{t['id']}: a zero-time build" for t in revised
                    if t.get("type") == "build" and any(
                        m in ("hours", "time_hours", "days") and float(r["mid"]) == 0
                        for m, r in t["estimates"].items())]


def _wrong_totals(rollup: list[dict], revised: list[dict]) -> list[str]:
    """Summed totals that are not the sum of the revised tasks, and statuses the rule
    does not give."""
    wrong = [f"{r['constraint_id']} {w}" for r in rollup if r["aggregation"] == "sum"
             for w in ("low", "mid", "high")
             if sum(_u(_est(t, r["metric"], w)) for t in revised) != _u(r["totals"][w])]
    return wrong + [f"{r['constraint_id']} status" for r in rollup
                    if r["status"] != expected_status(r["totals"], r["op"], r["limit"])]


def _critical_path(doc: dict, tasks: list[dict], rollups: list[dict]) -> list[Result]:
    path = doc.get("critical_path")
    if not path:
        return [Result("6.1", "the critical path is the longest path by time", True,
                       "no time constraint")]
    chain = list(path["tasks"])
    by_id = {t["id"]: t for t in tasks}
    linked = all(a in by_id.get(b, {}).get("depends_on", []) for a, b in itertools.pairwise(chain))
    length = sum(_u(_est(by_id[t], path["metric"], "mid")) for t in chain if t in by_id)
    longest = _longest(tasks, path["metric"], "mid")
    ok = linked and length == longest == _u(path["totals"]["mid"])
    r = next((x for x in rollups if x["constraint_id"] == path["constraint_id"]), None)
    within = r is not None and (_meets(longest / SCALE, r["op"], r["limit"])
                                or r["status"] in ("TIGHT", "UNSAT"))
    return [
        Result("6.1", "the critical path is the longest path by time", ok,
               f"reported {path['totals']['mid']} over {chain}; longest {longest / SCALE}"),
        Result("6.2", "the critical path fits the time limit or is flagged", within,
               f"status {r['status'] if r else 'missing'}"),
    ]


# -- an example's own digital verification list ------------------------------------------
def _find(items: list[dict], needle: str, key: str = "title") -> list[dict]:
    needle = needle.lower()
    return [i for i in items if i.get("id", "").lower() == needle
            or needle in str(i.get(key, "")).lower()]


def _verification(doc: dict, index: int, v: dict) -> Result:
    kind = v.get("check", "")
    handler = VERIFICATIONS.get(kind)
    name = v.get("name") or kind
    if handler is None:
        return Result(f"7.{index + 1}", name, False, f"unknown verification {kind!r}")
    passed, detail = handler(doc, v)
    return Result(f"7.{index + 1}", name, passed, detail)


def _constraint_present(doc: dict, v: dict) -> tuple[bool, str]:
    found = _find(doc["constraints"], v["match"])
    kind = v.get("kind")
    found = [c for c in found if kind is None or c["kind"] == kind]
    return bool(found), ", ".join(c["id"] for c in found)


def _status(doc: dict, v: dict) -> tuple[bool, str]:
    rollups = doc["rollup"] if v.get("when", "before") == "before" else \
        (doc.get("repair") or {}).get("rollup", [])
    ids = {c["id"] for c in _find(doc["constraints"], v["constraint"])}
    found = [r for r in rollups if r["constraint_id"] in ids]
    allowed = v["is"] if isinstance(v["is"], list) else [v["is"]]
    return bool(found) and all(r["status"] in allowed for r in found), \
        ", ".join(f"{r['constraint_id']}={r['status']}" for r in found)


def _separate(doc: dict, v: dict) -> tuple[bool, str]:
    groups = [{c["id"] for c in _find(doc["constraints"], m)} for m in v["match"]]
    distinct = all(groups) and all(not (a & b) for i, a in enumerate(groups)
                                   for b in groups[i + 1:])
    rolled = {r["constraint_id"] for r in doc["rollup"]}
    return distinct and all(g & rolled for g in groups), str([sorted(g) for g in groups])


def _depends(doc: dict, v: dict) -> tuple[bool, str]:
    tasks = doc["tasks"]
    up = _ancestors(tasks)
    targets = _find(tasks, v["task"])
    if "on" not in v:
        return bool(targets) and all(not t["depends_on"] for t in targets), \
            ", ".join(f"{t['id']} depends on {t['depends_on']}" for t in targets)
    needed = [{t["id"] for t in _find(tasks, n)} for n in v["on"]]
    ok = bool(targets) and all(all(up[t["id"]] & n for n in needed) for t in targets)
    return ok, ", ".join(f"{t['id']} <- {sorted(up[t['id']])}" for t in targets)


def _cheaper_for_walls(doc: dict, v: dict) -> tuple[bool, str]:
    by_task = {s["task_id"]: s for s in (doc.get("survey") or {}).get("surveys", [])}
    tasks = {t["id"]: t for t in doc["tasks"]}
    walls = sorted({t for w in doc.get("walls") or [] for t in w.get("cluster", [])})
    missing = [t for t in walls if t not in by_task
               or not _has_cheaper(by_task[t], tasks[t], doc, doc["rollup"])]
    return bool(walls) and not missing, f"wall tasks {walls}; without a cheaper approach {missing}"


def _revised_within(doc: dict, v: dict) -> tuple[bool, str]:
    repair = doc.get("repair") or {}
    ids = {c["id"] for c in _find(doc["constraints"], v["constraint"])}
    found = [r for r in repair.get("rollup", []) if r["constraint_id"] in ids]
    ok = bool(found) and all(_meets(r["totals"]["mid"], r["op"], r["limit"]) for r in found)
    return ok, ", ".join(f"{r['constraint_id']} mid {r['totals']['mid']} {r['op']} "
                         f"{r['limit']}" for r in found)


def _approach_split(doc: dict, v: dict) -> tuple[bool, str]:
    """Some approach matching ``match`` alone pushes the constraint over its limit, and
    another approach in the same survey does not."""
    ids = {c["id"] for c in _find(doc["constraints"], v["constraint"])}
    limit = next((r for r in doc["rollup"] if r["constraint_id"] in ids), None)
    if limit is None or limit["aggregation"] != "sum":
        return False, "the constraint is not a sum rollup"
    tasks = {t["id"]: t for t in doc["tasks"]}
    base = sum(_u(_est(t, limit["metric"], "mid")) for t in tasks.values())
    for s in (doc.get("survey") or {}).get("surveys", []):
        own = _u(_est(tasks[s["task_id"]], limit["metric"], "mid"))
        totals = {a["id"]: (base - own + _u(_est(a, limit["metric"], "mid"))) / SCALE
                  for a in s["approaches"]}
        heavy = [a for a in _find(s["approaches"], v["match"])
                 if not _meets(totals[a["id"]], limit["op"], limit["limit"])]
        light = [a for a in s["approaches"] if a not in heavy
                 and _meets(totals[a["id"]], limit["op"], limit["limit"])]
        if heavy and light:
            return True, f"{s['task_id']}: {heavy[0]['id']} -> {totals[heavy[0]['id']]}, " \
                         f"{light[0]['id']} -> {totals[light[0]['id']]}"
    return False, "no survey has both"


def _explicit_at_least(doc: dict, v: dict) -> tuple[bool, str]:
    count = sum(1 for c in doc["constraints"] if c["kind"] == "explicit")
    return count >= int(v["n"]), f"{count} explicit"


def _hire_leaf(doc: dict, v: dict) -> tuple[bool, str]:
    found = [t["id"] for t in doc["tasks"] if t.get("type") == "hire"]
    return bool(found), ", ".join(found)


VERIFICATIONS: dict[str, Callable[[dict, dict], tuple[bool, str]]] = {
    "constraint_present": _constraint_present, "status": _status,
    "separate_constraints": _separate, "depends": _depends,
    "cheaper_approach_for_walls": _cheaper_for_walls, "revised_within": _revised_within,
    "approach_split": _approach_split, "explicit_at_least": _explicit_at_least,
    "hire_task": _hire_leaf,
}
