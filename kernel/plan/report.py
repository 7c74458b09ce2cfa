"""A plan as one self-contained HTML page (inline SVG and CSS, no scripts, no server):
the task DAG with the critical path highlighted, the cost waterfall against its limit,
and the constraint table with SAT / TIGHT / UNSAT before and after repair."""

from __future__ import annotations

from html import escape
from typing import Any

NODE_W, NODE_H, GAP_X, GAP_Y = 190, 46, 70, 26

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem; color: #1d2330; }
h1 { font-size: 1.3rem; } h2 { font-size: 1.05rem; margin-top: 2rem; }
table { border-collapse: collapse; } td, th { border: 1px solid #d5d9e0; padding: .3rem .6rem; }
th { background: #f2f4f7; text-align: left; }
.SAT { background: #dff3e4; } .TIGHT { background: #fff4d6; } .UNSAT { background: #fbe0de; }
svg text { font: 12px system-ui, sans-serif; }
.node rect { fill: #eef2f8; stroke: #8592a6; }
.node.critical rect { fill: #fde2e1; stroke: #c0392b; stroke-width: 2.5; }
.edge { stroke: #8592a6; stroke-width: 1.4; fill: none; marker-end: url(#arrow); }
.edge.critical { stroke: #c0392b; stroke-width: 3.2; }
.bar { fill: #5b7db1; } .limit { stroke: #c0392b; stroke-dasharray: 6 4; stroke-width: 2; }
.flag { color: #8a5a00; } .scroll { overflow-x: auto; }
"""


def render_html(doc: dict[str, Any]) -> str:
    repair = doc.get("repair") or {}
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>Plan {escape(doc['run_id'])}</title><style>{CSS}</style></head><body>",
        f"<h1>{escape(doc['goal'])}</h1>",
        f"<p>Plan document {escape(doc['schema'])}, run {escape(doc['run_id'])}.</p>",
        "<h2>Constraints</h2>", _constraint_table(doc),
        "<h2>Task DAG</h2><p>The critical path (longest chain by time) is drawn in red.</p>",
        "<div class='scroll'>",
        _dag_svg(doc["tasks"], set((doc.get("critical_path") or {}).get("tasks", []))),
        "</div>",
        "<h2>Cost waterfall</h2>", _waterfall_svg(doc.get("waterfall")),
    ]
    if repair:
        parts += ["<h2>After repair</h2>",
                  "<p>" + escape("; ".join(f"{t}: {a}" for t, a in repair["chosen"].items())
                                 if repair.get("feasible") else "no feasible repair") + "</p>",
                  _waterfall_svg(repair.get("waterfall"))]
    if doc.get("refusal"):
        parts += ["<h2>Refused</h2><ul>"] + [f"<li>{escape(x)}</li>"
                                              for x in doc["refusal"]["to_proceed"]] + ["</ul>"]
    if doc.get("flags"):
        parts += ["<h2>Flags</h2><ul>"] + [f"<li class='flag'>{escape(x)}</li>"
                                            for x in doc["flags"]] + ["</ul>"]
    if doc.get("open_questions"):
        parts += ["<h2>Open questions</h2><ul>"] + [f"<li>{escape(q)}</li>"
                                                     for q in doc["open_questions"]] + ["</ul>"]
    parts.append("</body></html>")
    return "\n".join(parts)


def _constraint_table(doc: dict[str, Any]) -> str:
    rolled = {r["constraint_id"]: r for r in doc["rollup"]}
    after = {r["constraint_id"]: r for r in (doc.get("repair") or {}).get("rollup", [])}
    rows = ["<table><tr><th>id</th><th>constraint</th><th>kind</th><th>low / mid / high</th>"
            "<th>limit</th><th>status</th><th>after repair</th></tr>"]
    for c in doc["constraints"]:
        r, a = rolled.get(c["id"]), after.get(c["id"])
        totals = " / ".join(f"{r['totals'][e]:g}" for e in ("low", "mid", "high")) if r else ""
        limit = f"{r['op']} {r['limit']:g} {c.get('unit', '')}" if r else ""
        status = r["status"] if r else "not rolled up"
        rows.append(f"<tr><td>{escape(c['id'])}</td><td>{escape(c['title'])}</td>"
                    f"<td>{escape(c['kind'])}</td><td>{escape(totals)}</td>"
                    f"<td>{escape(limit)}</td><td class='{escape(status.split()[0])}'>"
                    f"{escape(status)}</td><td class='{escape(a['status']) if a else ''}'>"
                    f"{escape(a['status']) if a else ''}</td></tr>")
    rows.append("</table>")
    return "\n".join(rows)


def _layers(tasks: list[dict[str, Any]]) -> dict[str, int]:
    deps = {t["id"]: list(t.get("depends_on", [])) for t in tasks}
    depth: dict[str, int] = {}

    def level(task_id: str) -> int:
        if task_id not in depth:
            depth[task_id] = 1 + max((level(d) for d in deps[task_id] if d in deps), default=-1)
        return depth[task_id]

    for t in tasks:
        level(t["id"])
    return depth


def _dag_svg(tasks: list[dict[str, Any]], critical: set[str]) -> str:
    depth = _layers(tasks)
    columns: dict[int, list[str]] = {}
    for t in tasks:
        columns.setdefault(depth[t["id"]], []).append(t["id"])
    position = {task_id: (20 + col * (NODE_W + GAP_X), 20 + row * (NODE_H + GAP_Y))
                for col, ids in columns.items() for row, task_id in enumerate(ids)}
    width = 40 + len(columns) * (NODE_W + GAP_X)
    height = 40 + max(len(ids) for ids in columns.values()) * (NODE_H + GAP_Y)
    critical_edges = _critical_edges(tasks, critical)
    parts = [f"<svg id='dag' xmlns='http://www.w3.org/2000/svg' width='{width}' "
             f"height='{height}' viewBox='0 0 {width} {height}'>",
             "<defs><marker id='arrow' viewBox='0 0 10 10' refX='10' refY='5' "
             "markerWidth='7' markerHeight='7' orient='auto-start-reverse'>"
             "<path d='M 0 0 L 10 5 L 0 10 z' fill='#8592a6'/></marker></defs>"]
    for t in tasks:
        for d in t.get("depends_on", []):
            if d not in position:
                continue
            (x1, y1), (x2, y2) = position[d], position[t["id"]]
            css = "edge critical" if (d, t["id"]) in critical_edges else "edge"
            parts.append(f"<path class='{css}' data-from='{escape(d)}' "
                         f"data-to='{escape(t['id'])}' d='M {x1 + NODE_W} {y1 + NODE_H / 2} "
                         f"C {x1 + NODE_W + GAP_X / 2} {y1 + NODE_H / 2}, "
                         f"{x2 - GAP_X / 2} {y2 + NODE_H / 2}, {x2} {y2 + NODE_H / 2}'/>")
    for t in tasks:
        x, y = position[t["id"]]
        css = "node critical" if t["id"] in critical else "node"
        hours = next((f"{v['mid']:g} {m}" for m, v in t.get("estimates", {}).items()
                      if "hour" in m or "day" in m), "")
        parts.append(f"<g class='{css}' data-task='{escape(t['id'])}'>"
                     f"<rect x='{x}' y='{y}' width='{NODE_W}' height='{NODE_H}' rx='6'/>"
                     f"<text x='{x + 8}' y='{y + 18}'>{escape(t['id'])}</text>"
                     f"<text x='{x + 8}' y='{y + 36}'>{escape(t.get('type', ''))} "
                     f"{escape(hours)}</text></g>")
    parts.append("</svg>")
    return "\n".join(parts)


def _critical_edges(tasks: list[dict[str, Any]], critical: set[str]) -> set[tuple[str, str]]:
    return {(d, t["id"]) for t in tasks if t["id"] in critical
            for d in t.get("depends_on", []) if d in critical}


def _waterfall_svg(waterfall: dict[str, Any] | None) -> str:
    if not waterfall or not waterfall.get("rows"):
        return "<p>No cost constraint to draw.</p>"
    rows = waterfall["rows"]
    top = max([waterfall["limit"], *(r["cumulative"] for r in rows)]) or 1.0
    bar_w, chart_h, left = 46, 220, 60
    width = left + 20 + len(rows) * (bar_w + 12)
    scale = chart_h / top
    parts = [f"<svg class='waterfall' xmlns='http://www.w3.org/2000/svg' width='{width}' "
             f"height='{chart_h + 90}'>"]
    previous = 0.0
    for i, row in enumerate(rows):
        x = left + i * (bar_w + 12)
        y1, y2 = chart_h - row["cumulative"] * scale + 30, chart_h - previous * scale + 30
        parts.append(f"<rect class='bar' x='{x}' y='{y1:.1f}' width='{bar_w}' "
                     f"height='{max(y2 - y1, 1):.1f}'><title>{escape(row['task_id'])}: "
                     f"{row['cumulative']:g}</title></rect>"
                     f"<text x='{x}' y='{chart_h + 48}' transform='rotate(20 {x} "
                     f"{chart_h + 48})'>{escape(row['task_id'])}</text>")
        previous = row["cumulative"]
    limit_y = chart_h - waterfall["limit"] * scale + 30
    parts.append(f"<line class='limit' x1='{left - 10}' x2='{width}' y1='{limit_y:.1f}' "
                 f"y2='{limit_y:.1f}'/><text x='4' y='{limit_y - 4:.1f}'>limit "
                 f"{waterfall['limit']:g}</text></svg>")
    return "\n".join(parts)
