"""check-plan, sections 4 and 5: walls, survey triggers and surveys; the repair drawn
only from surveyed approaches, the cheapest that restores SAT (found by enumerating the
combinations again), its side effects; or, with none, a refusal whose conflict really
cannot be met together."""

from __future__ import annotations

from typing import Any

from kernel.plan.check_numbers import range_ok, waterfall_checks
from kernel.plan.recompute import (
    SCALE,
    WHICH,
    Combination,
    applied,
    combination_count,
    combinations,
    cost_constraint,
    est,
    rollup,
    triggers,
    u,
    walls,
    zero_time_build,
)
from kernel.plan.verdict import Result

ENUMERATION_LIMIT = 200_000


def _surveys_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return list((doc.get("survey") or {}).get("surveys") or [])


def _clusters(doc: dict[str, Any], tasks: list[dict[str, Any]],
              rolled: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return walls(doc["constraints"], tasks, rolled)


def surveys(doc: dict[str, Any]) -> list[Result]:
    tasks = doc["tasks"]
    rolled = rollup(doc["constraints"], tasks)
    clusters = _clusters(doc, tasks, rolled)
    wrong_walls = _wrong_walls(doc, clusters, rolled)
    due = triggers(tasks, clusters)
    given = _surveys_of(doc)
    surveyed = {s["task_id"] for s in given}
    listed = set((doc.get("survey") or {}).get("triggers") or {})
    few = [s["task_id"] for s in given if len({a["id"] for a in s["approaches"]}) < 2
           or len({a["title"] for a in s["approaches"]}) < 2]
    not_cheaper = _not_cheaper(doc, given, clusters)
    return [
        Result("4.0", "the walls are the recomputed ones", not wrong_walls,
               "; ".join(wrong_walls) or ", ".join(f"{c}: {v}" for c, v in clusters.items())),
        Result("4.1", "surveyed tasks have confidence < 0.3 or are in a wall",
               surveyed <= due, ", ".join(sorted(surveyed - due))),
        Result("4.2", "each survey has at least two distinct approaches", not few,
               ", ".join(few)),
        Result("4.3", "each survey has an approach cheaper than the original (on the metric "
                      "of the wall it is in)", not not_cheaper, ", ".join(not_cheaper)),
        Result("4.4", "every triggered task was surveyed", due <= surveyed,
               ", ".join(sorted(due - surveyed))),
        Result("4.5", "the listed survey triggers are the recomputed ones", listed == due,
               f"listed {sorted(listed)}, recomputed {sorted(due)}"),
    ]


def _wrong_walls(doc: dict[str, Any], clusters: dict[str, list[str]],
                 rolled: dict[str, dict[str, Any]]) -> list[str]:
    reported = {w["constraint_id"]: list(w.get("cluster") or []) for w in doc.get("walls") or []
                if w.get("cluster") or w["constraint_id"] in clusters}
    wrong = [f"{cid}: {reported.get(cid)} != {cluster}" for cid, cluster in clusters.items()
             if reported.get(cid) != cluster]
    return wrong + [f"{cid}: a wall, but it is not UNSAT" for cid in reported
                    if cid not in clusters] + _wrong_excess(doc, rolled)


def _wrong_excess(doc: dict[str, Any], rolled: dict[str, dict[str, Any]]) -> list[str]:
    """A wall's excess is its constraint's mid total (``rolled``) less its limit."""
    by_id = {c["id"]: c for c in doc["constraints"]}
    wrong = []
    for w in doc.get("walls") or []:
        c, r = by_id.get(w["constraint_id"]), rolled.get(w["constraint_id"])
        if c is None or r is None or w.get("excess") is None:
            continue
        excess = u(r["totals"]["mid"]) - u(c["limit"])
        if u(w["excess"]) != excess:
            wrong.append(f"{w['constraint_id']}: excess {w['excess']:g}, recomputed "
                         f"{excess / 1000:g}")
    return wrong


def _not_cheaper(doc: dict[str, Any], given: list[dict[str, Any]],
                 clusters: dict[str, list[str]]) -> list[str]:
    by_id = {t["id"]: t for t in doc["tasks"]}
    return [s["task_id"] for s in given if s["task_id"] in by_id and not any(
        est(a, m, "mid") < est(by_id[s["task_id"]], m, "mid") for a in s["approaches"]
        for m in _wall_metrics(s["task_id"], doc, clusters))]


def _wall_metrics(task_id: str, doc: dict[str, Any], clusters: dict[str, list[str]]) -> list[str]:
    """A survey must improve the metric of each wall holding its task, or the cost metric
    for a task surveyed for its low confidence."""
    by_id = {c["id"]: c for c in doc["constraints"]}
    metrics = sorted({by_id[cid]["metric"] for cid, cluster in clusters.items()
                      if task_id in cluster})
    cost = cost_constraint(doc["constraints"])
    return metrics or ([cost["metric"]] if cost else [])


def repair(doc: dict[str, Any]) -> list[Result]:
    constraints, tasks = doc["constraints"], doc["tasks"]
    before = rollup(constraints, tasks)
    unsat = sorted(c for c, r in before.items() if r["status"] == "UNSAT")
    fixed = doc.get("repair")
    if not unsat:
        return [Result("5.1", "the repair satisfies every violated constraint", not fixed,
                       "nothing was violated" if not fixed else
                       "a repair, though nothing was violated")]
    given = _surveys_of(doc)
    count = combination_count(given)
    found = list(combinations(constraints, tasks, given)) if count <= ENUMERATION_LIMIT else None
    coverage = [_coverage(doc, count), _one_outcome(doc)]
    if not fixed or not fixed.get("feasible"):
        return [*_refusal(doc, found, count), *coverage]
    return [*_feasible(doc, fixed, before, found, count), *coverage]


def _coverage(doc: dict[str, Any], count: int) -> Result:
    """What the search says it covered: all the combinations there are, or as many as
    MAX_COMBINATIONS allows, and then the flag that says it stopped."""
    from kernel.plan.feasibility import MAX_COMBINATIONS

    said = [(where, part) for where, part in (("repair", doc.get("repair")),
                                              ("refusal", doc.get("refusal"))) if part]
    searched = min(count, MAX_COMBINATIONS)
    wrong = [f"{where}: {part.get('searched')} of {part.get('combinations')}, recomputed "
             f"{searched} of {count}" for where, part in said
             if part.get("combinations") != count or part.get("searched") != searched]
    flagged = any("repair search stopped after" in str(f) for f in doc.get("flags") or [])
    if said and (searched < count) != flagged:
        wrong.append("cut short, but not flagged" if not flagged else
                     "flagged as cut short, but every combination was searched")
    return Result("5.9", "the search covered what it says, and says when it stopped short",
                  not wrong, "; ".join(wrong) or f"{searched:,} of {count:,}")


def _one_outcome(doc: dict[str, Any]) -> Result:
    """A plan is repaired or refused, never both: a refusal beside a feasible repair
    flips a report's headline while each part looks fine alone."""
    fixed, refusal = doc.get("repair"), doc.get("refusal")
    feasible = bool(fixed and fixed.get("feasible"))
    problems = []
    if feasible and refusal:
        problems.append("a refusal beside a feasible repair")
    if fixed and not feasible and not refusal:
        problems.append("an infeasible repair without its refusal")
    if refusal and refusal.get("reason") != "NO_FEASIBLE_REPAIR":
        problems.append(f"a refusal for {refusal.get('reason')!r}, not NO_FEASIBLE_REPAIR")
    return Result("5.10", "repaired or refused, never both", not problems,
                  "; ".join(problems) or ("refused" if refusal else "repaired" if fixed
                                          else "nothing to repair"))


def _feasible(doc: dict[str, Any], fixed: dict[str, Any], before: dict[str, dict[str, Any]],
              found: list[Combination] | None, count: int) -> list[Result]:
    constraints, tasks = doc["constraints"], doc["tasks"]
    unknown, picks = _picks(doc, fixed)
    revised = applied(tasks, picks)
    projections = {cid: p for a in picks.values() if a for cid, p in
                   (a.get("projections") or {}).items()}
    after = rollup(constraints, revised, projections)
    drawn = not unknown and _same_tasks(revised, fixed["tasks"])
    still = sorted(c for c, r in after.items() if r["status"] == "UNSAT")
    implausible = _implausible(fixed["tasks"])
    wrong = _revised_wrong(fixed, after, constraints, revised)
    return [
        Result("5.1", "the repair satisfies every violated constraint", not still,
               ", ".join(still)),
        Result("5.2", "revised estimates are plausible", not implausible, ", ".join(implausible)),
        Result("5.3", "the revised rollup and cost are the recomputed ones", not wrong,
               ", ".join(wrong)),
        Result("5.4", "the repair uses surveyed approaches only, applied to the tasks", drawn,
               "; ".join(unknown) if unknown else "" if drawn else
               "the revised tasks are not the originals with the chosen approaches"),
        _cheapest(found, count, revised, constraints, drawn),
        _side_effects(doc, fixed, before, after),
        *waterfall_checks("5.8", fixed.get("waterfall"), fixed["tasks"],
                          cost_constraint(constraints)),
    ]


def _picks(doc: dict[str, Any], fixed: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """The chosen approaches looked up in the surveys, and the choices no survey offers."""
    by_survey = {s["task_id"]: {a["id"]: a for a in s["approaches"]} for s in _surveys_of(doc)}
    chosen = dict(fixed.get("chosen") or {})
    unknown = [f"{t}: {a}" for t, a in chosen.items() if t not in by_survey
               or (a != "keep" and a not in by_survey[t])]
    picks = {t: (None if a == "keep" else by_survey[t][a]) for t, a in chosen.items()
             if not unknown}
    return unknown, picks


def _implausible(tasks: list[dict[str, Any]]) -> list[str]:
    bad = [f"{t['id']}.{m}" for t in tasks for m, r in t["estimates"].items() if not range_ok(r)]
    return bad + [f"{t['id']}: a zero-time build" for t in tasks if zero_time_build(t)]


def _revised_wrong(fixed: dict[str, Any], after: dict[str, dict[str, Any]], constraints: list[dict[str, Any]],
                   revised: list[dict[str, Any]]) -> list[str]:
    reported = {r["constraint_id"]: r for r in fixed["rollup"]}
    wrong = [f"{c} {w}" for c, r in reported.items() for w in WHICH
             if c in after and u(r["totals"][w]) != u(after[c]["totals"][w])]
    wrong += [f"{c} status" for c, r in reported.items()
              if c in after and r["status"] != after[c]["status"]]
    wrong += [f"{c} is not in the revised rollup" for c in after if c not in reported]
    metrics = {c["metric"] for c in constraints if c.get("aggregation") == "sum"}
    return wrong + [f"cost {m}: {v:g}" for m, v in (fixed.get("cost") or {}).items()
                    if m not in metrics or u(v) != sum(u(est(t, m, "mid")) for t in revised)]


def _side_effects(doc: dict[str, Any], fixed: dict[str, Any], before: dict[str, dict[str, Any]],
                  after: dict[str, dict[str, Any]]) -> Result:
    effects = sorted(c for c, r in after.items()
                     if before[c]["status"] == "SAT" and r["status"] == "TIGHT")
    listed = sorted(e["constraint_id"] for e in fixed.get("side_effects") or [])
    unflagged = [c for c in effects if not any(c in f and "SAT to TIGHT" in f
                                               for f in doc.get("flags") or [])]
    return Result("5.6", "a constraint the repair moves from SAT to TIGHT is listed and flagged",
                  effects == listed and not unflagged,
                  f"recomputed {effects}, listed {listed}"
                  + (f", not flagged {unflagged}" if unflagged else ""))


def _same_tasks(revised: list[dict[str, Any]], reported: list[dict[str, Any]]) -> bool:
    def key(t: dict[str, Any]) -> tuple[Any, ...]:
        return (t["id"], tuple(sorted((m, tuple(u(r[w]) for w in WHICH))
                                      for m, r in t["estimates"].items())),
                u(t["confidence"]), tuple(t["depends_on"]))

    return [key(t) for t in revised] == [key(t) for t in reported]


def _cheapest(found: list[Combination] | None, count: int, revised: list[dict[str, Any]],
              constraints: list[dict[str, Any]], drawn: bool) -> Result:
    name = "the repair is the cheapest choice that leaves nothing UNSAT"
    if found is None:
        return Result("5.5", name, True, f"not enumerated: {count:,} combinations")
    feasible = [c for c in found if not c.unmet]
    if not feasible or not drawn:
        return Result("5.5", name, False, "no combination is feasible" if not feasible else
                      "not checked: the repair is not drawn from the surveys")
    from kernel.plan.recompute import cost_metrics

    cost = sum(u(est(t, m, "mid")) for t in revised for m in cost_metrics(constraints))
    best = min(feasible, key=lambda c: c.cost)
    return Result("5.5", name, cost <= best.cost,
                  f"cost {cost / SCALE:g}; cheapest {best.cost / SCALE:g} ({best.chosen})")


def _closest_named(refusal: dict[str, Any], found: list[Combination]) -> list[str]:
    """The closest choice leaves UNSAT what recomputing it does, and the refusal's words
    name each of those constraints (a minimal conflict is not always all that fails)."""
    closest = refusal.get("closest") or {}
    if not refusal or not closest:
        return []
    chosen = closest.get("chosen")
    recomputed = next((c for c in found if c.chosen == chosen), None)
    unmet = sorted(closest.get("unmet") or [])
    if recomputed is None:
        return [f"the closest choice {chosen} is not a combination of the surveys"]
    if unmet != sorted(recomputed.unmet):
        return [f"the closest choice leaves {sorted(recomputed.unmet)} UNSAT, not {unmet}"]
    words = " ".join(str(w) for w in refusal.get("to_proceed") or [])
    return [f"the refusal does not name {c}, which its closest choice leaves UNSAT"
            for c in unmet if f"'{c}'" not in words]


def _refusal(doc: dict[str, Any], found: list[Combination] | None, count: int) -> list[Result]:
    """No feasible repair: true only if no combination leaves nothing UNSAT; the refusal
    names a conflict that cannot be met together and is minimal."""
    refusal = doc.get("refusal") or {}
    conflict = set(refusal.get("conflict") or [])
    if found is None:
        return [Result("5.1", "no combination of surveyed approaches leaves nothing UNSAT",
                       bool(refusal), f"not enumerated: {count:,} combinations"),
                Result("5.7", "the refusal names constraints that cannot be met together",
                       bool(conflict), "not enumerated")]
    feasible = [c for c in found if not c.unmet]
    unmet = [c.unmet for c in found]

    def meetable(together: set[str]) -> bool:
        return any(not (u_ & together) for u_ in unmet)

    problems = []
    if not refusal:
        problems.append("no refusal report")
    elif not conflict:
        problems.append("the refusal names no conflict")
    elif meetable(conflict):
        problems.append(f"{sorted(conflict)} can be met together")
    else:
        problems += [f"{sorted(conflict - {c})} cannot be met without {c} either: not minimal"
                     for c in sorted(conflict) if not meetable(conflict - {c})]
    problems += _closest_named(refusal, found)
    return [
        Result("5.1", "no combination of surveyed approaches leaves nothing UNSAT",
               not feasible, f"{len(feasible)} feasible, e.g. {feasible[0].chosen}"
               if feasible else f"{count:,} combinations, none feasible"),
        Result("5.7", "the refusal names constraints that cannot be met together, minimally, "
                      "and every one its closest choice leaves UNSAT",
               not problems, "; ".join(problems) or f"{sorted(conflict)}"),
    ]
