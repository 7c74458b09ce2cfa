"""``kernel tree RUN`` and ``kernel runs``: the goal tree as it stands in the graph."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from kernel import api
from kernel.cli.common import out, print_json, run_ref, store_of
from kernel.cli.shown import shown
from kernel.core.lease import RESUMABLE
from kernel.core.units import micros_to_usd, ms_to_seconds


def _sigma(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _confidence(goal: Mapping[str, Any]) -> str:
    """σ of a verification that passed; a failed one says so (its checks' certainty is
    about the failure, not a confidence in the goal), and σpath only once it holds."""
    if goal.get("verdict") == "UNSAT":
        return "σv=failed σpath=-"
    sigma_path = goal["sigma_path"] if goal["status"] == "resolved" or goal.get("verdict") \
        else None
    return f"σv={_sigma(goal['sigma_v'])} σpath={_sigma(sigma_path)}"


def _label(goal: Mapping[str, Any]) -> str:
    spent = micros_to_usd(goal["cost_spent"] or 0)
    # what the goal was given (budget its own subgoals gave back is not more budget)
    allocated = micros_to_usd(goal["cost_allocated"] or 0)
    seconds = ms_to_seconds(goal["time_spent"] or 0)
    time_allocated = ms_to_seconds(goal["time_allocated"] or 0)
    stale = " [dim](stale)[/]" if goal["stale"] else ""
    return (f"[bold]{shown(goal['summary'], markup=True)}[/] [cyan]{goal['status']}[/]{stale}  "
            f"{_confidence(goal)}  "
            f"${spent:.4f}/${allocated:.4f}  {seconds:.1f}s/{time_allocated:.0f}s  "
            f"[dim]{shown(goal['id'], markup=True)}[/]")


def tree(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(help="run id, a unique prefix, or latest")],
    as_json: Annotated[bool, typer.Option("--json", help="print goals as JSON")] = False,
) -> None:
    """The goal tree of a run: status, σ_v, σ_path, budget spent/allocated per goal."""
    run_id = run_ref(ctx, run_id)
    with store_of(ctx) as store:
        goals = api.run_tree(store, run_id)
    if as_json:
        print_json([in_user_units(g) for g in goals])
        return
    out.print(render_tree(goals, run_id))


def in_user_units(goal: Mapping[str, Any]) -> dict[str, Any]:
    """A goal as every ``--json`` shows money and time: USD and seconds, as floats
    (``cost_spent`` micro-dollars becomes ``cost_spent_usd``; ``time_spent`` milliseconds
    ``time_spent_seconds``)."""
    shown: dict[str, Any] = {}
    for key, value in goal.items():
        if key.startswith(("cost_", "subtree_cost_")) and isinstance(value, int):
            shown[f"{key}_usd"] = micros_to_usd(value)
        elif key.startswith("time_") and isinstance(value, int):
            shown[f"{key}_seconds"] = ms_to_seconds(value)
        else:
            shown[key] = value
    return shown


def render_tree(goals: Sequence[Mapping[str, Any]], run_id: str) -> Tree:
    nodes: dict[str, Tree] = {}
    roots: list[Tree] = []
    for goal in goals:  # parents come first (ordered by depth)
        branch = Tree(_label(goal))
        parent = nodes.get(goal["parent_id"])
        (parent.children if parent else roots).append(branch)
        nodes[goal["id"]] = branch
    spent = micros_to_usd(sum(g["cost_spent"] or 0 for g in goals))
    # The run's spend, as `kernel status RUN` counts it (each goal shows its own).
    top = Tree(f"[bold]{shown(run_id, markup=True)}[/]  spent ${spent:.4f}")
    top.children.extend(roots)
    return top


_GOAL_ROOM = 12  # the goal's text gets at least this much before other columns give way
_GAP = 2  # between two columns of the runs table


def _fitted(names: list[str], cells: list[list[str]],
            short: Mapping[str, str]) -> tuple[list[str], list[list[str]]]:
    """The columns that fit the terminal, the goal last: whole run ids where they fit,
    else their shortest unique prefix (``kernel status`` takes either); then the start
    time gives way."""
    def width(names: list[str], cells: list[list[str]]) -> int:
        return sum(max([len(n), *(len(c[i]) for c in cells)])
                   for i, n in enumerate(names[:-1])) + _GAP * (len(names) - 1) + _GOAL_ROOM

    if width(names, cells) > out.width:
        cells = [[short[c[0]], *c[1:]] for c in cells]
    if width(names, cells) > out.width:
        gone = names.index("started")
        names = names[:gone] + names[gone + 1:]
        cells = [c[:gone] + c[gone + 1:] for c in cells]
    return names, cells


def runs(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Every run, newest first."""
    from kernel.lookup import unique_prefixes

    with store_of(ctx) as store:
        rows = api.list_runs(store)
        if as_json:
            print_json(rows)
            return
        short = unique_prefixes(store, "Run", [r["id"] for r in rows])
    names = ["run", "kind", "status", "spent", "model", "sandbox", "tool", "started", "goal"]
    cells = [[r["id"], r["kind"], r["status"], f"${r['spent_usd']:.4f}",
              *(f"${r['spent_by_usd'][part]:.4f}" for part in ("model", "sandbox", "tool")),
              str(r["started_at"] or "")[:16].replace("T", " "), r["goal"] or ""] for r in rows]
    names, cells = _fitted(names, cells, short)
    cells = [[shown(c) for c in row] for row in cells]  # ids and goals may come from an import
    widths = [max([len(name), *(len(c[i]) for c in cells)]) for i, name in enumerate(names)]
    room = max(_GOAL_ROOM, out.width - sum(widths[:-1]) - _GAP * (len(names) - 1))
    table = Table(title="runs", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                  collapse_padding=True)
    for name, width in zip(names[:-1], widths[:-1], strict=True):
        # Never squeezed: ids are what people copy; the goal gives way instead.
        table.add_column(name, no_wrap=True, min_width=width,
                         justify="left" if name in ("run", "kind", "status", "started")
                         else "right")
    table.add_column("goal", no_wrap=True, max_width=room)
    for row in cells:
        goal = row[-1] if len(row[-1]) <= room else row[-1][:room - 1] + "…"
        table.add_row(*(Text(cell) for cell in (*row[:-1], goal)))  # no markup in a goal
    out.print(table)
    if any(r["status"] in RESUMABLE for r in rows):
        out.print("a stopped run continues with: kernel resume RUN")
