"""``kernel tree RUN`` and ``kernel runs``: the goal tree as it stands in the graph."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.tree import Tree

from kernel import api
from kernel.cli.common import out, print_json, print_table, run_ref, store_of
from kernel.core.lease import RESUMABLE
from kernel.core.units import micros_to_usd, ms_to_seconds


def _sigma(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _label(goal: dict[str, Any]) -> str:
    spent = micros_to_usd(goal["cost_spent"] or 0)
    # what the goal was given (budget its own subgoals gave back is not more budget)
    allocated = micros_to_usd(goal["cost_allocated"] or 0)
    seconds = ms_to_seconds(goal["time_spent"] or 0)
    time_allocated = ms_to_seconds(goal["time_allocated"] or 0)
    stale = " [dim](stale)[/]" if goal["stale"] else ""
    return (f"[bold]{goal['summary']}[/] [cyan]{goal['status']}[/]{stale}  "
            f"σv={_sigma(goal['sigma_v'])} σpath={_sigma(goal['sigma_path'])}  "
            f"${spent:.4f}/${allocated:.4f}  {seconds:.1f}s/{time_allocated:.0f}s  "
            f"[dim]{goal['id']}[/]")


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
        print_json(goals)
        return
    out.print(render_tree(goals, run_id))


def render_tree(goals: list[dict[str, Any]], run_id: str) -> Tree:
    nodes: dict[str, Tree] = {}
    roots: list[Tree] = []
    for goal in goals:  # parents come first (ordered by depth)
        branch = Tree(_label(goal))
        parent = nodes.get(goal["parent_id"])
        (parent.children if parent else roots).append(branch)
        nodes[goal["id"]] = branch
    top = Tree(f"[bold]{run_id}[/]")
    top.children.extend(roots)
    return top


def runs(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Every run, newest first."""
    with store_of(ctx) as store:
        rows = api.list_runs(store)
    if as_json:
        print_json(rows)
        return
    print_table("runs", ["run", "started", "commits", "goal", "status"],
                [[r["id"], r["started_at"], r["commits"], r["goal"], r["status"]] for r in rows])
    if any(r["status"] in RESUMABLE for r in rows):
        out.print("a stopped run continues with: kernel resume RUN")
