"""A plan as one self-contained HTML page (inline SVG and CSS, no scripts, no server)
that a person reads without the JSON: the verdict, the constraints before and after
repair, the task DAG at the page's width with the critical path and walls marked, the
cost waterfall, the surveyed approaches, the repair's revised totals and critical path,
and a refusal's conflict."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from kernel.plan.report_chart import waterfall_svg
from kernel.plan.report_dag import dag_svg, duration, quantity
from kernel.plan.report_sections import (
    chosen_list,
    constraints_table,
    named,
    refusal_section,
    repair_table,
    surveys_section,
    titles,
    walls_section,
)

Doc = Mapping[str, Any]

CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 1.5rem auto; padding: 0 1rem;
       max-width: 1000px; color: #1d2330; }
h1 { font-size: 1.35rem; } h2 { font-size: 1.1rem; margin-top: 2rem; } h3 { font-size: 1rem; }
table { border-collapse: collapse; margin: .5rem 0; } thead th { background: #f2f4f7; }
td, th { border: 1px solid #d5d9e0; padding: .3rem .55rem; text-align: left;
         vertical-align: top; }
.status { padding: 0 .35rem; border-radius: 3px; font-weight: 600; }
.SAT { background: #dff3e4; } .TIGHT { background: #fff0c2; } .UNSAT { background: #fbe0de; }
.verdict { font-size: 1.05rem; font-weight: 600; } .refused { color: #a82a1f; }
.mark { font-weight: 600; color: #1f6f3f; } .flag { color: #8a5a00; }
.legend span { display: inline-block; margin-right: 1.2rem; }
.swatch { display: inline-block; width: .9rem; height: .9rem; vertical-align: -2px;
          margin-right: .3rem; border: 2px solid #8592a6; background: #eef2f8; }
.swatch.critical { border-color: #c0392b; } .swatch.wall { background: #ffe6b3; }
svg text { font: 13px system-ui, sans-serif; fill: #1d2330; }
.node rect { fill: #eef2f8; stroke: #8592a6; stroke-width: 1.2; }
.node.wall rect { fill: #ffe6b3; }
.node.critical rect { stroke: #c0392b; stroke-width: 3; }
.node .head { font-weight: 600; font-size: 12px; } .node .length { fill: #3d4a5c; }
.edge { stroke: #8592a6; stroke-width: 1.4; fill: none; marker-end: url(#arrow); }
.edge.critical { stroke: #c0392b; stroke-width: 3.2; }
.bar { fill: #5b7db1; } .bar.over { fill: #d0645a; }
.grid { stroke: #e4e7ec; } .axis { stroke: #4a5567; stroke-width: 1.2; }
.limit { stroke: #c0392b; stroke-dasharray: 6 4; stroke-width: 2; }
.limit-label { fill: #c0392b; font-weight: 600; } .chart-title { font-weight: 600; }
.tick, .value { font-size: 12px; } .nowrap { white-space: nowrap; } figure { margin: .5rem 0; }
.value, .limit-label { paint-order: stroke; stroke: #fff; stroke-width: 3px; }
"""


def render_html(doc: Doc) -> str:
    repair = doc.get("repair") or {}
    names = titles(doc)
    metric, unit = _time_unit(doc)
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>Plan: {escape(doc.get('goal', ''))}</title><style>{CSS}</style></head><body>",
        f"<h1>{escape(doc.get('goal', ''))}</h1>",
        f"<p class='verdict {'refused' if doc.get('refusal') else ''}'>{escape(_verdict(doc))}"
        f"</p><p>Plan document {escape(doc.get('schema', ''))}, run "
        f"{escape(doc.get('run_id', ''))}. Check it with <code>kernel check-plan</code>.</p>",
        "<h2>Constraints</h2>", constraints_table(doc),
        "<h2>Task graph</h2>",
        "<p class='legend'><span><i class='swatch critical'></i>critical path"
        f"{_path_note(doc.get('critical_path'), unit)}</span>"
        "<span><i class='swatch wall'></i>task in a wall</span>"
        f"<span>durations in {escape(unit or 'the time metric')}: mid (low-high)"
        "</span></p>",
        dag_svg(doc.get("tasks", []), (doc.get("critical_path") or {}).get("tasks", []),
                _wall_tasks(doc), metric, unit),
        _critical_path(doc.get("critical_path"), doc, metric, unit),
        "<h2>Cost waterfall</h2>",
        _waterfall(doc.get("waterfall"), doc, names, "as planned"),
        "<h2>Walls</h2>", walls_section(doc),
        "<h2>Surveyed approaches</h2>", surveys_section(doc),
    ]
    if repair.get("feasible"):
        parts += ["<h2>After repair</h2>", chosen_list(repair["chosen"], doc),
                  repair_table(doc), _side_effects(repair),
                  _critical_path(repair.get("critical_path"),
                                 {**doc, "tasks": repair.get("tasks", [])}, metric, unit,
                                 "Revised critical path"),
                  _waterfall(repair.get("waterfall"), doc, names, "after repair")]
    if doc.get("refusal"):
        parts += ["<h2>Refused</h2>", refusal_section(doc)]
    parts += _listing("Flags", doc.get("flags"), "flag")
    parts += _listing("Open questions", doc.get("open_questions"))
    parts += _listing("Assertions this plan carries (run by check-plan)",
                      [v.get("name") or v.get("check", "") for v in doc.get("verifications")
                       or []])
    parts.append("</body></html>")
    return "\n".join(parts)


def _verdict(doc: Doc) -> str:
    """The headline, from the statuses the plan ends with (after its repair, if any)."""
    if doc.get("refusal"):
        return "Refused: no surveyed choice of approaches meets every constraint."
    repair = doc.get("repair") or {}
    repaired = bool(repair.get("feasible"))
    final = repair.get("rollup", []) if repaired else doc.get("rollup", [])
    lead = "Feasible after repair" if repaired else "Feasible as planned"
    tight = [r["constraint_id"] for r in final if r["status"] == "TIGHT"]
    if not final:
        return f"{lead}: no constraint is measured."
    if not tight:
        return f"{lead}: every measured constraint is SAT, even at its pessimistic estimate."
    if len(tight) == len(final):
        which = "every measured constraint is TIGHT"
    else:
        which = f"{', '.join(tight)} {'is' if len(tight) == 1 else 'are'} TIGHT"
    return (f"{lead}, but {which}: the mid estimates meet the limits, the pessimistic ones "
            "do not.")


def _time_unit(doc: Doc) -> tuple[str | None, str]:
    """The time constraint's metric and unit: durations are shown in the plan's own unit."""
    path = doc.get("critical_path") or {}
    constraint = next((c for c in doc.get("constraints", [])
                       if c["id"] == path.get("constraint_id")), None) or next(
        (c for c in doc.get("constraints", []) if c.get("aggregation") == "critical_path"), None)
    if constraint is None:
        return None, ""
    return constraint.get("metric"), constraint.get("unit") or constraint.get("metric", "")


def _wall_tasks(doc: Doc) -> dict[str, list[str]]:
    walls: dict[str, list[str]] = {}
    for wall in doc.get("walls", []):
        for task_id in wall.get("cluster", []):
            walls.setdefault(task_id, []).append(wall["constraint_id"])
    return walls


def _path_note(path: Mapping[str, Any] | None, unit: str) -> str:
    if not path:
        return " (no time constraint)"
    return f" ({quantity(path['totals']['mid'], unit)} at the mid estimate)"


def _critical_path(path: Mapping[str, Any] | None, doc: Doc, metric: str | None, unit: str,
                   heading: str = "Critical path") -> str:
    if not path:
        return ""
    tasks = {t["id"]: t for t in doc.get("tasks", [])}
    names = titles(doc)
    totals = path["totals"]
    items = "".join(f"<li>{named(t, names)}: {escape(duration(tasks[t], metric, unit))}</li>"
                    for t in path["tasks"] if t in tasks)
    return (f"<h3>{escape(heading)}: {escape(quantity(totals['mid'], unit))} "
            f"(low {totals['low']:g}, high {totals['high']:g})</h3><ol>{items}</ol>")


def _waterfall(waterfall: Mapping[str, Any] | None, doc: Doc, names: Mapping[str, str],
               when: str) -> str:
    if not waterfall:
        return "<p>No summed cost constraint, so no waterfall.</p>"
    constraint: Mapping[str, Any] = next((c for c in doc.get("constraints", [])
                                          if c["id"] == waterfall.get("constraint_id")), {})
    unit = constraint.get("unit", "")
    caption = (f"Cumulative {waterfall['metric']} at the mid estimate, {when}, against "
               f"{waterfall.get('constraint_id', '')}'s limit")
    return waterfall_svg(waterfall, unit, names, caption)


def _side_effects(repair: Mapping[str, Any]) -> str:
    effects = repair.get("side_effects") or []
    if not effects:
        return "<p>No side effects: no other constraint moves from SAT to TIGHT.</p>"
    return ("<p class='flag'>Side effects of this repair: " + escape(", ".join(
        f"{e['constraint_id']} moves from {e.get('before', 'SAT')} to {e.get('after', 'TIGHT')}"
        for e in effects)) + ".</p>")


def _listing(heading: str, items: list[str] | None, css: str = "") -> list[str]:
    if not items:
        return []
    return [f"<h2>{escape(heading)}</h2><ul>"] + [f"<li class='{css}'>{escape(x)}</li>"
                                                  for x in items] + ["</ul>"]
