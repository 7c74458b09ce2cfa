"""The cost waterfall as an SVG chart with a title, a labelled value axis with gridlines,
a task axis, each task's increment as a floating bar and the limit as a dashed line.
Bars that take the running total past the limit are drawn in red."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

WIDTH, PLOT_H, LEFT, RIGHT, TOP, BOTTOM = 900, 260, 78, 20, 40, 96


def nice_ticks(top: float, count: int = 5) -> list[float]:
    """Axis ticks at 1, 2 or 5 times a power of ten, from 0 to at least ``top``."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [i * step for i in range(math.ceil(top / step - 1e-9) + 1)]


LABEL_H = 12  # a value label's height above its baseline


def _clear_of(baseline: float, line: float) -> float:
    """A label's baseline moved off the limit line it would sit on: above the line when
    the line would strike through it, keeping it next to its bar."""
    if baseline - LABEL_H - 2 < line < baseline + 3:
        return line - 4
    return baseline


def waterfall_svg(waterfall: Mapping[str, Any] | None, unit: str,
                  titles: Mapping[str, str], caption: str) -> str:
    if not waterfall or not waterfall.get("rows"):
        return "<p>No summed cost constraint, so no waterfall.</p>"
    rows: Sequence[Mapping[str, Any]] = waterfall["rows"]
    limit = float(waterfall["limit"])
    ticks = nice_ticks(max([limit, *(float(r["cumulative"]) for r in rows)]))
    scale = PLOT_H / ticks[-1]
    slot = (WIDTH - LEFT - RIGHT) / len(rows)
    bar_w = min(slot * 0.7, 60)
    height = TOP + PLOT_H + BOTTOM

    def y(value: float) -> float:
        return TOP + PLOT_H - value * scale

    metric = escape(f"{waterfall['metric']} ({unit})" if unit else waterfall["metric"])
    parts = [f"<figure><svg class='waterfall' role='img' xmlns='http://www.w3.org/2000/svg' "
             f"width='{WIDTH}' height='{height}' viewBox='0 0 {WIDTH} {height}' "
             f"style='max-width:100%;height:auto'>",
             f"<text class='chart-title' x='{LEFT}' y='22'>{escape(caption)}</text>"]
    for tick in ticks:
        parts.append(f"<line class='grid' x1='{LEFT}' x2='{WIDTH - RIGHT}' y1='{y(tick):.1f}' "
                     f"y2='{y(tick):.1f}'/><text class='tick' x='{LEFT - 8}' "
                     f"y='{y(tick) + 4:.1f}' text-anchor='end'>{tick:g}</text>")
    parts.append(f"<text class='axis-label' transform='translate(16 {TOP + PLOT_H / 2}) "
                 f"rotate(-90)' text-anchor='middle'>cumulative {metric}</text>")
    previous = 0.0
    for i, row in enumerate(rows):
        cumulative = float(row["cumulative"])
        x = LEFT + i * slot + (slot - bar_w) / 2
        top, bottom = y(max(cumulative, previous)), y(min(cumulative, previous))
        css = "bar over" if cumulative > limit else "bar"
        name = escape(f"{row['task_id']}: {titles.get(row['task_id'], '')}")
        parts.append(f"<rect class='{css}' x='{x:.1f}' y='{top:.1f}' width='{bar_w:.1f}' "
                     f"height='{max(bottom - top, 1):.1f}'><title>{name}: +"
                     f"{cumulative - previous:g}, total {cumulative:g}</title></rect>")
        if len(rows) <= 16:
            parts.append(f"<text class='value' x='{x + bar_w / 2:.1f}' "
                         f"y='{_clear_of(top - 4, y(limit)):.1f}' "
                         f"text-anchor='middle'>{cumulative:g}</text>")
        label_x, label_y = x + bar_w / 2, TOP + PLOT_H + 14
        parts.append(f"<text class='tick' x='{label_x:.1f}' y='{label_y}' text-anchor='end' "
                     f"transform='rotate(-35 {label_x:.1f} {label_y})'>"
                     f"{escape(row['task_id'])}</text>")
        previous = cumulative
    parts += [f"<line class='axis' x1='{LEFT}' x2='{WIDTH - RIGHT}' y1='{y(0):.1f}' "
              f"y2='{y(0):.1f}'/><line class='axis' x1='{LEFT}' x2='{LEFT}' y1='{TOP}' "
              f"y2='{y(0):.1f}'/>",
              f"<line class='limit' x1='{LEFT}' x2='{WIDTH - RIGHT}' y1='{y(limit):.1f}' "
              f"y2='{y(limit):.1f}'/><text class='limit-label' x='{WIDTH - RIGHT}' "
              f"y='{y(limit) - 6:.1f}' text-anchor='end'>limit {limit:g} {escape(unit)}</text>",
              f"<text class='axis-label' x='{LEFT + (WIDTH - LEFT - RIGHT) / 2}' "
              f"y='{height - 8}' text-anchor='middle'>tasks in dependency order</text>",
              "</svg></figure>"]
    return "\n".join(parts)
