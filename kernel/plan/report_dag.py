"""The task DAG as an SVG that fits the page: layers run top to bottom and a wide layer
wraps onto several rows, so no task is ever off to the side. Each node carries its
title (wrapped, never cut), its type and its duration in the plan's own time unit; the
critical path is drawn in red and tasks in a wall are shaded."""

from __future__ import annotations

import itertools
import textwrap
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

PER_ROW = 3  # nodes per row: three 230-wide nodes fit an 800-pixel window at full size
NODE_W, GAP_X, GAP_Y, MARGIN = 230, 26, 44, 16
LINE_H, TITLE_CHARS = 16, 28

Task = Mapping[str, Any]


def layers(tasks: Sequence[Task]) -> dict[str, int]:
    """Depth of each task: one more than its deepest dependency."""
    deps = {t["id"]: list(t.get("depends_on", [])) for t in tasks}
    depth: dict[str, int] = {}

    def level(task_id: str) -> int:
        if task_id not in depth:
            depth[task_id] = 1 + max((level(d) for d in deps[task_id] if d in deps), default=-1)
        return depth[task_id]

    for t in tasks:
        level(t["id"])
    return depth


SINGULAR = {"seconds": "second", "minutes": "minute", "hours": "hour", "days": "day",
            "weeks": "week", "months": "month", "years": "year"}
PLURAL = {one: many for many, one in SINGULAR.items()}


def quantity(value: float, unit: str) -> str:
    """'1 week', '2 weeks', '0.5 weeks': a unit of time agrees with its number."""
    if not unit:
        return f"{value:g}"
    word = SINGULAR.get(unit, unit) if value == 1 else PLURAL.get(unit, unit)
    return f"{value:g} {word}"


def duration(task: Task, metric: str | None, unit: str) -> str:
    """'12 hours (8-20)': the mid estimate with its range, in the time constraint's unit."""
    if metric is None or metric not in task.get("estimates", {}):
        return ""
    r = task["estimates"][metric]
    return f"{quantity(r['mid'], unit)} ({r['low']:g}-{r['high']:g})"


def dag_svg(tasks: Sequence[Task], critical: Sequence[str], walls: Mapping[str, list[str]],
            metric: str | None, unit: str) -> str:
    """``walls`` maps a task id to the constraints whose wall it is in."""
    if not tasks:
        return "<p>The plan has no tasks.</p>"
    rows = _rows(tasks)
    titles = {t["id"]: textwrap.wrap(t.get("title") or t["id"], TITLE_CHARS) or [t["id"]]
              for t in tasks}
    node_h = LINE_H * (2 + max(len(lines) for lines in titles.values())) + 12
    columns = max(len(row) for row in rows)
    width = 2 * MARGIN + columns * NODE_W + (columns - 1) * GAP_X
    position: dict[str, tuple[float, float]] = {}
    for r, row in enumerate(rows):
        indent = (width - len(row) * NODE_W - (len(row) - 1) * GAP_X) / 2
        for c, task_id in enumerate(row):
            position[task_id] = (indent + c * (NODE_W + GAP_X), MARGIN + r * (node_h + GAP_Y))
    height = 2 * MARGIN + len(rows) * node_h + (len(rows) - 1) * GAP_Y
    on_path = set(critical)
    path_edges = set(itertools.pairwise(critical))
    parts = [f"<svg id='dag' role='img' aria-label='task dependency graph' "
             f"xmlns='http://www.w3.org/2000/svg' width='{width:g}' height='{height:g}' "
             f"viewBox='0 0 {width:g} {height:g}' style='max-width:100%;height:auto'>",
             "<defs><marker id='arrow' viewBox='0 0 10 10' refX='10' refY='5' "
             "markerWidth='7' markerHeight='7' orient='auto-start-reverse'>"
             "<path d='M 0 0 L 10 5 L 0 10 z' fill='#8592a6'/></marker></defs>"]
    row_of = {task_id: r for r, row in enumerate(rows) for task_id in row}
    for t in tasks:
        for d in t.get("depends_on", []):
            if d in position:
                between = rows[row_of[d] + 1:row_of[t["id"]]]
                lane = _lane(between, position, position[d], position[t["id"]], width)
                parts.append(_edge(position[d], position[t["id"]], node_h, d, t["id"],
                                   (d, t["id"]) in path_edges, lane))
    for t in tasks:
        parts.append(_node(t, position[t["id"]], node_h, titles[t["id"]], t["id"] in on_path,
                           walls.get(t["id"], []), duration(t, metric, unit)))
    parts.append("</svg>")
    return "\n".join(parts)


def _rows(tasks: Sequence[Task]) -> list[list[str]]:
    depth = layers(tasks)
    by_layer: dict[int, list[str]] = {}
    for t in tasks:
        by_layer.setdefault(depth[t["id"]], []).append(t["id"])
    rows: list[list[str]] = []
    for level in sorted(by_layer):
        ids = by_layer[level]
        rows += [ids[i:i + PER_ROW] for i in range(0, len(ids), PER_ROW)]
    return rows


CLEARANCE = 8  # how far a routed edge keeps from a node it passes


def _lane(between: list[list[str]], position: Mapping[str, tuple[float, float]],
          start: tuple[float, float], end: tuple[float, float], width: float) -> float | None:
    """Where an edge that skips rows runs down, clear of every node of the rows it
    passes (None: it skips none, and curves straight from one row to the next): the
    free x nearest the middle of its two ends."""
    if not between:
        return None
    blocked = [(position[n][0] - CLEARANCE, position[n][0] + NODE_W + CLEARANCE)
               for row in between for n in row]
    middle = (start[0] + end[0] + NODE_W) / 2

    def free(x: float) -> bool:
        return MARGIN / 2 <= x <= width - MARGIN / 2 and \
            not any(low < x < high for low, high in blocked)

    candidates = [middle, *(edge for span in blocked for edge in span), MARGIN / 2]
    return min((x for x in candidates if free(x)), key=lambda x: (abs(x - middle), x))


def _edge(start: tuple[float, float], end: tuple[float, float], node_h: float, source: str,
          target: str, critical: bool, lane: float | None = None) -> str:
    (x1, y1), (x2, y2) = start, end
    x1, y1, x2 = x1 + NODE_W / 2, y1 + node_h, x2 + NODE_W / 2
    css = "edge critical" if critical else "edge"
    if lane is None:
        bend = max((y2 - y1) / 2, GAP_Y / 2)
        d = f"M {x1:g} {y1:g} C {x1:g} {y1 + bend:g}, {x2:g} {y2 - bend:g}, {x2:g} {y2:g}"
    else:  # down into the gap below its row, along the lane, then into the target's gap
        below, above = y1 + GAP_Y / 2, y2 - GAP_Y / 2
        d = (f"M {x1:g} {y1:g} V {below:g} H {lane:g} V {above:g} H {x2:g} V {y2:g}")
        css += " routed"
    return (f"<path class='{css}' data-from='{escape(source)}' data-to='{escape(target)}' "
            f"d='{d}'/>")


def _node(task: Task, at: tuple[float, float], node_h: float, title: list[str], critical: bool,
          walls: list[str], length: str) -> str:
    x, y = at
    css = " ".join(["node", *(["critical"] if critical else []), *(["wall"] if walls else [])])
    head = escape(task["id"]) + (f" · {escape(task['type'])}" if task.get("type") else "")
    if walls:
        head += escape(" · wall on " + ", ".join(walls))
    lines = "".join(f"<tspan x='{x + 10:g}' dy='{0 if i == 0 else LINE_H}'>{escape(line)}"
                    "</tspan>" for i, line in enumerate(title))
    return (f"<g class='{css}' data-task='{escape(task['id'])}'>"
            f"<title>{escape(task.get('title', ''))}</title>"
            f"<rect x='{x:g}' y='{y:g}' width='{NODE_W}' height='{node_h:g}' rx='6'/>"
            f"<text class='head' x='{x + 10:g}' y='{y + LINE_H + 2:g}'>{head}</text>"
            f"<text class='task-title' x='{x + 10:g}' y='{y + 2 * LINE_H + 4:g}'>{lines}</text>"
            f"<text class='length' x='{x + 10:g}' y='{y + node_h - 9:g}'>{escape(length)}</text>"
            "</g>")
