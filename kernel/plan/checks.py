"""`kernel check-plan`: an independent judge of any plan document.

Every derived number is recomputed from the document's inputs (``recompute.py``, plain
arithmetic independent of the planner) and compared; the inputs themselves are bound by
their digest. Each assertion reports pass or fail with what it saw, under a stable id
(the table in docs/planning.md). A document that is not even shaped like a plan fails
assertion 0 and nothing else runs; a section that is malformed fails its own assertion.
A plan's own verification list (a shipped example's, or a user script's) is checked last.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from kernel.plan.check_numbers import arithmetic, critical_path, decomposition
from kernel.plan.check_repair import repair, surveys
from kernel.plan.check_strict import StrictText, strict
from kernel.plan.check_verifications import verification
from kernel.plan.digest import SCHEMA, inputs_digest
from kernel.plan.recompute import expected_status, measurable
from kernel.plan.verdict import Result

__all__ = ["Result", "check_plan", "check_text", "expected_status"]


Section = Callable[[dict[str, Any]], list[Result]]


def check_text(text: str) -> list[Result]:
    """Judge a file's text: one that is not JSON, or not an object, fails assertion 0; a
    repeated key or a number that is not finite fails 0.5."""
    reading = StrictText()
    try:
        doc = reading.load(text)
    except ValueError as exc:
        return [Result("0", "document structure", False,
                       f"not JSON (truncated or damaged?): {exc}")]
    if not isinstance(doc, dict):
        return [Result("0", "document structure", False,
                       f"a plan document is a JSON object, not {type(doc).__name__}")]
    return check_plan(doc, reading.problems)


def check_plan(doc: dict[str, Any], read: list[str] | None = None) -> list[Result]:
    """Every assertion on ``doc`` (``read``: what reading its file found, see
    ``check_strict.StrictText``)."""
    problem = _shape(doc)
    if problem:
        return [Result("0", "document structure", False, problem)]
    results = [Result("0", "document structure", True,
                      f"{len(doc['tasks'])} tasks, {len(doc['constraints'])} constraints")]
    results += _guarded("0", _identity, doc)
    results += strict(doc, read or [])
    results += _guarded("1", _completeness, doc)
    dag = _guarded("2", decomposition, doc)
    results += dag
    if all(r.passed for r in dag):  # the rest needs a DAG to be defined
        for section, prefix in ((arithmetic, "3"), (surveys, "4"), (repair, "5"),
                                (critical_path, "6")):
            results += _guarded(prefix, section, doc)
    verifications = doc.get("verifications") or []
    if not isinstance(verifications, list):
        return [*results, Result("7", "verification list", False, "not a list")]
    results += [verification(doc, i, v) for i, v in enumerate(verifications)]
    return results


def _guarded(prefix: str, section: Section, doc: dict[str, Any]) -> list[Result]:
    """A section that meets a malformed part of the document fails, naming it."""
    try:
        return section(doc)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
        return [Result(prefix, f"section {prefix} is well-formed", False,
                       f"malformed: {type(exc).__name__}: {exc}")]


def _shape(doc: dict[str, Any]) -> str:
    """What makes the document unlike a plan at all (empty: it is shaped like one)."""
    for key in ("tasks", "constraints", "rollup"):
        if not isinstance(doc.get(key), list) or (key != "rollup" and not doc[key]):
            return f"'{key}' is missing or not a non-empty list"
    problems = [*map(_task_shape, doc["tasks"]), *map(_constraint_shape, doc["constraints"]),
                *map(_rollup_shape, doc["rollup"])]
    return next((p for p in problems if p), "")


def _task_shape(t: Any) -> str:
    if not isinstance(t, dict) or not isinstance(t.get("id"), str) or \
            not isinstance(t.get("depends_on"), list) or \
            not all(isinstance(d, str) for d in t["depends_on"]) or \
            not isinstance(t.get("estimates"), dict) or not _number(t.get("confidence")):
        return f"a task needs id, depends_on (ids), estimates and confidence: {t!r:.120}"
    return next((f"task {t['id']}: estimate {metric!r} needs numeric low, mid and high"
                 for metric, r in t["estimates"].items() if not _range(r)), "")


def _range(r: Any) -> bool:
    return isinstance(r, dict) and all(_number(r.get(w)) for w in ("low", "mid", "high"))


def _constraint_shape(c: Any) -> str:
    if not isinstance(c, dict) or not isinstance(c.get("id"), str) or \
            c.get("kind") not in ("explicit", "implicit"):
        return f"a constraint needs an id and a kind (explicit/implicit): {c!r:.120}"
    return ""


def _rollup_shape(r: Any) -> str:
    if not isinstance(r, dict) or not isinstance(r.get("constraint_id"), str) or \
            not _range(r.get("totals")) or r.get("op") not in ("<=", "<", ">=", ">") or \
            not _number(r.get("limit")):
        return f"a rollup row needs constraint_id, op, limit and numeric totals: {r!r:.120}"
    return ""


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and \
        math.isfinite(value)


def _duplicates(ids: list[Any]) -> list[str]:
    return sorted({str(i) for i in ids if ids.count(i) > 1})


def _identity(doc: dict[str, Any]) -> list[Result]:
    surveys = (doc.get("survey") or {}).get("surveys") or []
    dupes = {
        "task": _duplicates([t["id"] for t in doc["tasks"]]),
        "constraint": _duplicates([c["id"] for c in doc["constraints"]]),
        "rollup row": _duplicates([r["constraint_id"] for r in doc["rollup"]]),
        "survey": _duplicates([s.get("task_id") for s in surveys]),
        "approach": sorted({f"{s.get('task_id')}/{a}" for s in surveys for a in
                            _duplicates([x.get("id") for x in s.get("approaches") or []])}),
    }
    said = [f"{kind} ids {', '.join(ids)}" for kind, ids in dupes.items() if ids]
    digest = doc.get("inputs_digest")
    actual = inputs_digest(doc)
    return [
        Result("0.1", "schema version", doc.get("schema") == SCHEMA,
               f"{doc.get('schema')!r}" + ("" if doc.get("schema") == SCHEMA else
                                           f", expected {SCHEMA!r}: plan it again")),
        Result("0.2", "ids are unique", not said, "; ".join(said) or "tasks, constraints, "
               "rollup rows, surveys and approaches"),
        Result("0.3", "the inputs are the ones the plan was computed from (digest)",
               digest == actual, "intact" if digest == actual else
               "missing" if digest is None else
               "the goal, proposals or verification list were changed after planning"),
    ]


def _completeness(doc: dict[str, Any]) -> list[Result]:
    goal = str(doc.get("goal", "")).lower()
    constraints = doc["constraints"]
    explicit = [c for c in constraints if c["kind"] == "explicit"]
    quoted = [c["id"] for c in explicit if c.get("source_text")
              and str(c["source_text"]).lower() not in goal]
    implicit = [c for c in constraints if c["kind"] == "implicit"]
    bare = [c["id"] for c in implicit if not c.get("removal_consequence")]
    return [
        Result("1.1", "explicit constraints come from the goal", bool(explicit) and not quoted,
               f"{len(explicit)} explicit" + (f"; not in the goal: {quoted}" if quoted else "")),
        Result("1.2", "implicit constraints, each with its removal consequence",
               bool(implicit) and not bare,
               "no implicit constraint" if not implicit else
               f"without a consequence: {bare}" if bare else
               ", ".join(c["id"] for c in implicit)),
        _references(doc),
    ]


def _references(doc: dict[str, Any]) -> Result:
    """Every constraint the document names exists, and every measurable one is rolled up
    with its own metric, aggregation, op and limit."""
    by_id = {c["id"]: c for c in doc["constraints"]}
    problems = [f"{where} names unknown constraint {cid}" for where, cid in _named(doc)
                if cid not in by_id]
    rolled = {r["constraint_id"]: r for r in doc["rollup"]}
    for c in doc["constraints"]:
        problems += _rolled_as_stated(c, rolled.get(c["id"]))
    return Result("1.3", "the constraints named are present, and each measurable one is "
                         "rolled up as stated", not problems, "; ".join(problems))


def _named(doc: dict[str, Any]) -> list[tuple[str, Any]]:
    """(where, constraint id) for every place the document names a constraint."""
    named = [("rollup", r["constraint_id"]) for r in doc["rollup"]]
    named += [("claim", c.get("constraint_id")) for c in doc.get("claims") or []]
    named += [("wall", w.get("constraint_id")) for w in doc.get("walls") or []]
    named += [(section, doc[section].get("constraint_id"))
              for section in ("critical_path", "waterfall") if doc.get(section)]
    repair = doc.get("repair") or {}
    named += [("repair rollup", r.get("constraint_id")) for r in repair.get("rollup") or []]
    named += [("refusal", c) for c in (doc.get("refusal") or {}).get("conflict") or []]
    return named + _projected(doc)


def _projected(doc: dict[str, Any]) -> list[tuple[str, Any]]:
    """(where, constraint id) for every projection a surveyed approach gives."""
    return [(f"approach {s.get('task_id')}/{a.get('id')}'s projection", cid)
            for s in (doc.get("survey") or {}).get("surveys") or []
            for a in s.get("approaches") or [] for cid in a.get("projections") or {}]


MEASURE = ("metric", "aggregation", "op", "limit")


def _rolled_as_stated(c: dict[str, Any], r: dict[str, Any] | None) -> list[str]:
    if not measurable(c):
        given = [k for k in MEASURE if c.get(k) is not None]
        lacking = [k for k in MEASURE if c.get(k) is None] or ["projection"]
        partial = [f"{c['id']} gives its {', '.join(given)} but no {', '.join(lacking)}: "
                   "a measure without its number"] if given else []
        return partial + ([] if r is None else [f"{c['id']} is rolled up but not measurable"])
    if r is None:
        return [f"{c['id']} is measurable but not rolled up"]
    differs = [k for k in ("metric", "aggregation", "op") if r.get(k) != c[k]]
    if float(r["limit"]) != float(c["limit"]):
        differs.append("limit")
    return [f"{c['id']}: the rollup's {k} is not the constraint's" for k in differs]
