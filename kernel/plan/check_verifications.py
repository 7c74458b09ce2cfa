"""check-plan, section 7: a plan's own verification list.

A shipped example carries one, and so can a user's planning script (``example:
verifications:``): named checks of what the plan must contain, each by kind. They are
part of the plan's inputs, so its digest covers them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kernel.plan.check_numbers import ancestors
from kernel.plan.recompute import SCALE, est, meets, u
from kernel.plan.verdict import Result


def _find(items: list[dict[str, Any]], needle: str, key: str = "title") -> list[dict[str, Any]]:
    """The items whose id is ``needle``; with none, those whose title contains it."""
    needle = needle.lower()
    exact = [i for i in items if str(i.get("id", "")).lower() == needle]
    return exact or [i for i in items if needle in str(i.get(key, "")).lower()]


def verification_problem(check: dict[str, Any], constraints: list[dict[str, Any]]) -> str:
    """Why ``check`` cannot hold on any plan of ``constraints`` (the script's own), said
    before anything is planned; empty when it can."""
    if check.get("check") != "approach_split" or not constraints:
        return ""
    found = _find(constraints, str(check.get("constraint", "")))
    kinds = sorted({str(c.get("aggregation")) for c in found})
    if found and kinds != ["sum"]:
        return (f"approach_split compares each approach's total of a summed constraint, but "
                f"{check.get('constraint')!r} is rolled up as {' and '.join(kinds)}; name a "
                "sum constraint (a cost), or check a projection with 'status'")
    return ""


def verification(doc: dict[str, Any], index: int, v: Any) -> Result:
    if not isinstance(v, dict):
        return Result(f"7.{index + 1}", "verification", False, f"not a mapping: {v!r:.80}")
    kind = v.get("check", "")
    handler = VERIFICATIONS.get(kind)
    name = v.get("name") or kind
    if handler is None:
        return Result(f"7.{index + 1}", name, False, f"unknown verification {kind!r}")
    try:
        passed, detail = handler(doc, v)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        return Result(f"7.{index + 1}", name, False, f"malformed: {type(exc).__name__}: {exc}")
    return Result(f"7.{index + 1}", name, passed, detail)


def _constraint_present(doc: dict[str, Any], v: dict[str, Any]) -> tuple[bool, str]:
    found = _find(doc["constraints"], v["match"])
    kind = v.get("kind")
    found = [c for c in found if kind is None or c["kind"] == kind]
    return bool(found), ", ".join(c["id"] for c in found)


def _status(doc: dict[str, Any], v: dict[str, Any]) -> tuple[bool, str]:
    rollups = doc["rollup"] if v.get("when", "before") == "before" else \
        (doc.get("repair") or {}).get("rollup", [])
    ids = {c["id"] for c in _find(doc["constraints"], v["constraint"])}
    found = [r for r in rollups if r["constraint_id"] in ids]
    allowed = v["is"] if isinstance(v["is"], list) else [v["is"]]
    return bool(found) and all(r["status"] in allowed for r in found), \
        ", ".join(f"{r['constraint_id']}={r['status']}" for r in found)


def _separate(doc: dict[str, Any], v: dict[str, Any]) -> tuple[bool, str]:
    groups = [{c["id"] for c in _find(doc["constraints"], m)} for m in v["match"]]
    distinct = all(groups) and all(not (a & b) for i, a in enumerate(groups)
                                   for b in groups[i + 1:])
    rolled = {r["constraint_id"] for r in doc["rollup"]}
    return distinct and all(g & rolled for g in groups), str([sorted(g) for g in groups])


def _depends(doc: dict[str, Any], v: dict[str, Any]) -> tuple[bool, str]:
    tasks = doc["tasks"]
    up = ancestors(tasks)
    targets = _find(tasks, v["task"])
    if "on" not in v:
        return bool(targets) and all(not t["depends_on"] for t in targets), \
            ", ".join(f"{t['id']} depends on {t['depends_on']}" for t in targets)
    needed = [{t["id"] for t in _find(tasks, n)} for n in v["on"]]
    ok = bool(targets) and all(all(up[t["id"]] & n for n in needed) for t in targets)
    return ok, ", ".join(f"{t['id']} <- {sorted(up[t['id']])}" for t in targets)


def _cost_metric(rollups: list[dict[str, Any]]) -> str | None:
    sums = [r["metric"] for r in rollups if r["aggregation"] == "sum"]
    return next((m for m in sums if m.startswith("cost")), sums[0] if sums else None)


def _wall_metrics(task_id: str, doc: dict[str, Any], rollups: list[dict[str, Any]]) -> list[str]:
    """The metrics a survey must improve: those of the UNSAT constraints whose wall holds
    the task, or the cost metric for a task surveyed for its low confidence."""
    unsat = {r["constraint_id"]: r["metric"] for r in rollups if r["status"] == "UNSAT"}
    metrics = sorted({unsat[w["constraint_id"]] for w in doc.get("walls") or []
                      if w["constraint_id"] in unsat and task_id in w.get("cluster", [])})
    cost = _cost_metric(rollups)
    return metrics or ([cost] if cost else [])


def _has_cheaper(survey: dict[str, Any], task: dict[str, Any], doc: dict[str, Any],
                 rollups: list[dict[str, Any]]) -> bool:
    metrics = _wall_metrics(survey["task_id"], doc, rollups)
    return not metrics or any(est(a, m, "mid") < est(task, m, "mid")
                              for a in survey["approaches"] for m in metrics)


def _cheaper_for_walls(doc: dict[str, Any], v: dict[str, Any]) -> tuple[bool, str]:
    by_task = {s["task_id"]: s for s in (doc.get("survey") or {}).get("surveys", [])}
    tasks = {t["id"]: t for t in doc["tasks"]}
    walls = sorted({t for w in doc.get("walls") or [] for t in w.get("cluster", [])})
    missing = [t for t in walls if t not in by_task
               or not _has_cheaper(by_task[t], tasks[t], doc, doc["rollup"])]
    return bool(walls) and not missing, f"wall tasks {walls}; without a cheaper approach {missing}"


def _revised_within(doc: dict[str, Any], v: dict[str, Any]) -> tuple[bool, str]:
    repair = doc.get("repair") or {}
    ids = {c["id"] for c in _find(doc["constraints"], v["constraint"])}
    found = [r for r in repair.get("rollup", []) if r["constraint_id"] in ids]
    ok = bool(found) and all(meets(r["totals"]["mid"], r["op"], r["limit"]) for r in found)
    return ok, ", ".join(f"{r['constraint_id']} mid {r['totals']['mid']} {r['op']} "
                         f"{r['limit']}" for r in found)


def _approach_split(doc: dict[str, Any], v: dict[str, Any]) -> tuple[bool, str]:
    """Some approach matching ``match`` alone pushes the constraint over its limit, and
    another approach in the same survey does not."""
    ids = {c["id"] for c in _find(doc["constraints"], v["constraint"])}
    limit = next((r for r in doc["rollup"] if r["constraint_id"] in ids), None)
    if limit is None or limit["aggregation"] != "sum":
        return False, "the constraint is not a sum rollup"
    tasks = {t["id"]: t for t in doc["tasks"]}
    base = sum(u(est(t, limit["metric"], "mid")) for t in tasks.values())
    for s in (doc.get("survey") or {}).get("surveys", []):
        own = u(est(tasks[s["task_id"]], limit["metric"], "mid"))
        totals = {a["id"]: (base - own + u(est(a, limit["metric"], "mid"))) / SCALE
                  for a in s["approaches"]}
        heavy = [a for a in _find(s["approaches"], v["match"])
                 if not meets(totals[a["id"]], limit["op"], limit["limit"])]
        light = [a for a in s["approaches"] if a not in heavy
                 and meets(totals[a["id"]], limit["op"], limit["limit"])]
        if heavy and light:
            return True, f"{s['task_id']}: {heavy[0]['id']} -> {totals[heavy[0]['id']]}, " \
                         f"{light[0]['id']} -> {totals[light[0]['id']]}"
    return False, "no survey has both"


def _explicit_at_least(doc: dict[str, Any], v: dict[str, Any]) -> tuple[bool, str]:
    count = sum(1 for c in doc["constraints"] if c["kind"] == "explicit")
    return count >= int(v["n"]), f"{count} explicit"


def _hire_leaf(doc: dict[str, Any], v: dict[str, Any]) -> tuple[bool, str]:
    found = [t["id"] for t in doc["tasks"] if t.get("type") == "hire"]
    return bool(found), ", ".join(found)


VERIFICATIONS: dict[str, Callable[[dict[str, Any], dict[str, Any]], tuple[bool, str]]] = {
    "constraint_present": _constraint_present, "status": _status,
    "separate_constraints": _separate, "depends": _depends,
    "cheaper_approach_for_walls": _cheaper_for_walls, "revised_within": _revised_within,
    "approach_split": _approach_split, "explicit_at_least": _explicit_at_least,
    "hire_task": _hire_leaf,
}
