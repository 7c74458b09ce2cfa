"""The report's tables: constraints before and after repair, walls, surveyed approaches,
the repair's revised totals and the refusal. Each takes the plan document and returns
HTML; nothing here recomputes, the report shows what the document states."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from kernel.plan.report_dag import quantity

Doc = Mapping[str, Any]


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], css: str = "") -> str:
    """Cells are HTML already escaped by the caller; headers are plain text."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table class='{css}'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def totals(r: Mapping[str, Any] | None) -> str:
    if not r:
        return ""
    return escape(" / ".join(f"{r['totals'][e]:g}" for e in ("low", "mid", "high")))


def badge(status: str | None, note: str = "") -> str:
    if not status:
        return ""
    return f"<span class='status {escape(status)}'>{escape(status)}</span>{escape(note)}"


def titles(doc: Doc) -> dict[str, str]:
    return {t["id"]: t.get("title", "") for t in doc.get("tasks", [])}


def named(task_id: str, names: Mapping[str, str]) -> str:
    title = names.get(task_id)
    return f"<b>{escape(task_id)}</b> {escape(title)}" if title else f"<b>{escape(task_id)}</b>"


def constraints_table(doc: Doc) -> str:
    rolled = {r["constraint_id"]: r for r in doc.get("rollup", [])}
    repair = doc.get("repair") or {}
    after = {r["constraint_id"]: r for r in repair.get("rollup", [])} \
        if repair.get("feasible") else {}
    effects = {e["constraint_id"] for e in repair.get("side_effects") or []}
    rows = []
    for c in doc.get("constraints", []):
        r, a = rolled.get(c["id"]), after.get(c["id"])
        limit = f"{r['op']} {quantity(r['limit'], c.get('unit', ''))}" if r else ""
        kind = f"{c['kind']}, {c.get('type', '')}"
        if c.get("removal_consequence"):
            kind += f"; without it: {c['removal_consequence']}"
        rows.append([escape(c["id"]), escape(c.get("title", "")), escape(kind), totals(r),
                     escape(limit), badge(r["status"]) if r else "not measurable",
                     (totals(a) + " " + badge(a["status"], " side effect" if c["id"] in effects
                                              else "")) if a else ""])
    return table(["id", "constraint", "kind", "low / mid / high", "limit", "status",
                  "after repair"], rows, "constraints")


def walls_section(doc: Doc) -> str:
    if not doc.get("walls"):
        return "<p>No wall: every measurable constraint is met at the mid estimate.</p>"
    names = titles(doc)
    triggers = (doc.get("survey") or {}).get("triggers", {})
    rows = []
    for wall in doc["walls"]:
        tasks = wall.get("tasks", [])
        share = "<br>".join(f"{named(t['task_id'], names)}: {t['contribution']:g}"
                            for t in tasks[:5])
        if len(tasks) > 5:
            share += f"<br>and {len(tasks) - 5} more"
        rows.append([escape(wall["constraint_id"]), f"{wall.get('excess', 0):g}", share,
                     escape(", ".join(wall.get("cluster", [])) or "-")])
    surveyed = "".join(f"<li>{named(t, names)}: "
                       f"{escape('; '.join(why))}</li>" for t, why in sorted(triggers.items()))
    return (table(["constraint", "excess", "largest contributions", "cluster"], rows, "walls")
            + (f"<p>Survey triggers:</p><ul>{surveyed}</ul>" if surveyed else ""))


def surveys_section(doc: Doc) -> str:
    surveys = (doc.get("survey") or {}).get("surveys", [])
    if not surveys:
        return "<p>No task needed a survey of alternative approaches.</p>"
    names = titles(doc)
    chosen = (doc.get("repair") or {}).get("chosen", {}) \
        if (doc.get("repair") or {}).get("feasible") else {}
    closest = ((doc.get("refusal") or {}).get("closest") or {}).get("chosen", {})
    html = []
    for survey in surveys:
        task = survey["task_id"]
        rows = []
        for a in survey.get("approaches", []):
            estimates = _ranges(a.get("estimates") or {})
            projections = _ranges(a.get("projections") or {})
            method = "; ".join(p for p in (
                "known: " + ", ".join(a["known_method"]) if a.get("known_method") else "",
                "judgment: " + ", ".join(a["judgment_required"])
                if a.get("judgment_required") else "") if p)
            mark = "chosen" if chosen.get(task) == a["id"] else \
                "closest" if closest.get(task) == a["id"] else ""
            rows.append([f"<b>{escape(a['id'])}</b> {escape(a.get('title', ''))}", estimates,
                         projections, f"{a.get('confidence', 0):g}", escape(method),
                         f"<span class='mark'>{mark}</span>" if mark else ""])
        html.append(f"<h3>{named(task, names)}</h3>"
                    + table(["approach", "estimates (low / mid / high)", "projections",
                             "confidence", "method", ""], rows, "survey"))
    return "\n".join(html)


def _ranges(ranges: Mapping[str, Mapping[str, float]]) -> str:
    return "<br>".join(f"<span class='nowrap'>{escape(m)}: {v['low']:g} / {v['mid']:g} / "
                       f"{v['high']:g}</span>" for m, v in sorted(ranges.items()))


def repair_table(doc: Doc) -> str:
    repair = doc.get("repair") or {}
    before = {r["constraint_id"]: r for r in doc.get("rollup", [])}
    effects = {e["constraint_id"] for e in repair.get("side_effects") or []}
    rows = [[escape(r["constraint_id"]), totals(before.get(r["constraint_id"])),
             badge((before.get(r["constraint_id"]) or {}).get("status")), totals(r),
             badge(r["status"], " side effect: was SAT" if r["constraint_id"] in effects
                   else "")] for r in repair.get("rollup", [])]
    return table(["constraint", "before", "status", "after repair", "status"], rows, "revised")


def chosen_list(chosen: Mapping[str, str], doc: Doc) -> str:
    names = titles(doc)
    approaches = {a["id"]: a.get("title", "") for s in (doc.get("survey") or {}).get(
        "surveys", []) for a in s.get("approaches", [])}
    items = [f"<li>{named(t, names)}: "
             + ("kept as planned" if a == "keep" else
                f"<b>{escape(a)}</b> {escape(approaches.get(a, ''))}") + "</li>"
             for t, a in sorted(chosen.items())]
    return "<ul>" + "".join(items) + "</ul>"


def refusal_section(doc: Doc) -> str:
    refusal = doc["refusal"]
    titles_of = {c["id"]: c.get("title", "") for c in doc.get("constraints", [])}
    conflict = ", ".join(f"{c} ({titles_of.get(c, '')})" for c in refusal.get("conflict", []))
    parts = [f"<p class='refused'>Refused ({escape(refusal.get('reason', ''))}).</p>"]
    if conflict:
        parts.append(f"<p>These constraints cannot be met together by any surveyed choice of "
                     f"approaches: <b>{escape(conflict)}</b>.</p>")
    reach = [[escape(r["constraint_id"]), f"{escape(r['op'])} {r['limit']:g}",
              f"{r['before_mid']:g}", f"{r['best_mid']:g}"]
             for r in refusal.get("constraints", [])]
    if reach:
        parts.append(table(["constraint", "limit", "mid as planned",
                            "best mid while the others are met"], reach, "reach"))
    closest = refusal.get("closest")
    if closest:
        parts.append("<p>Closest choice (fewest constraints unmet, then cheapest), still "
                     f"unmet: {escape(', '.join(closest.get('unmet', [])))}</p>"
                     + chosen_list(closest.get("chosen", {}), doc))
    if "searched" in refusal:
        parts.append(f"<p>Searched {refusal['searched']} of {refusal.get('combinations')} "
                     "combinations of surveyed approaches.</p>")
    parts.append("<ul>" + "".join(f"<li>{escape(x)}</li>" for x in refusal.get("to_proceed", []))
                 + "</ul>")
    return "\n".join(parts)
