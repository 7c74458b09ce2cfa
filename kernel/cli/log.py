"""``kernel log RUN``: the run's story, and ``kernel show ID``: any node by id or prefix."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from kernel.cli.common import out, print_json, print_refusals, run_ref, split_words, store_of
from kernel.cli.shown import escape, shown


def log_command(
    ctx: typer.Context,
    run: Annotated[str, typer.Argument(help="run id, a unique prefix, or latest")],
    goal: Annotated[str | None, typer.Option(
        "--goal", help="only this goal (id or unique prefix)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the story as JSON")] = False,
) -> None:
    """What a run did, step by step: its log, each attempt with its verdict, the checks
    that failed and why, the feedback for the next attempt, costs and refusals."""
    from kernel.lookup import resolve_id
    from kernel.story import run_story

    run_id = run_ref(ctx, run)
    with store_of(ctx) as store:
        goal_id = resolve_id(store, goal, "Goal") if goal is not None else None
        story = run_story(store, run_id, goal_id)
    if as_json:
        print_json(story)
        return
    summaries = {g["id"]: g["summary"] for g in story["goals"]}
    out.rule(_safe(run_id))
    for line in story["log"]:
        where = (summaries.get(line["goal_id"]) or "")[:40]
        out.print(f"[dim]{line['seq']:>4}[/] {_safe(where):<40} {_safe(line['summary'])}",
                  highlight=False)
    for goal_row in story["goals"]:
        if goal_row["attempts"]:
            out.rule(_safe(f"{goal_row['summary'][:60]} — {goal_row['status']}, "
                            f"${goal_row['spent_usd']:.4f}, {goal_row['spent_seconds']:.1f}s"))
        for attempt in goal_row["attempts"]:
            _print_attempt(attempt)
    print_refusals(story["refusals"])
    spent = sum(story["spent_by_usd"].values())
    out.print(f"spent ${spent:.4f}: {split_words(story['spent_by_usd'])}", highlight=False)
    if story["stopped"] is not None:
        out.print(f"[yellow]stopped[/]: {escape(_why_stopped(story['stopped']))}; "
                  f"continue with: kernel resume {run_id}", highlight=False)


def _why_stopped(state: str) -> str:
    """Why the run stopped, and for a machine fault whether it is still there."""
    if "sandbox" not in state:
        return state
    from kernel._views import sandbox_status

    now = sandbox_status()
    return f"{state} (now: {now['problem'] or 'the sandbox works again'})"


def _print_attempt(a: dict[str, Any]) -> None:
    """An attempt as the ledger paid for it: who proposed its output (through which
    registered resolver), its verdict, σ_v where it passed, and what its calls cost."""
    who = a["proposer"] or a["resolver"]
    through = f" as {a['resolver']}" if a["proposer"] and a["resolver"] else ""
    sigma = f" σv={a['sigma_v']:.2f}" if a["verdict"] == "SAT" and a["sigma_v"] is not None \
        else ""
    out.print(f"[bold]attempt {a['index']}[/] by {_safe(str(who))}{_safe(through)}: "
              f"{a['verdict'] or 'open'}{sigma}  ${a['cost_usd']:.4f} {a['seconds']:.1f}s",
              highlight=False)
    for check in a["failed_checks"]:
        detail = dict(check["detail"])
        tail = str(detail.pop("output_tail", "") or "")
        out.print(f"  [red]failed[/] {_safe(check['constraint'])}: {_safe(check['found'])}",
                  highlight=False)
        for line in [ln for ln in tail.splitlines() if ln.strip()][-8:]:
            out.print(f"    [dim]{_safe(line)}[/]", highlight=False)
        if check["repair"]:
            out.print(f"    repair: {_safe(_brief(check['repair']))}", highlight=False)
    if a["feedback_text"]:
        out.print(f"  given feedback: {_safe(a['feedback_text'])}", highlight=False)


def _brief(value: Any, limit: int = 400) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + "…"


def show_command(
    ctx: typer.Context,
    node: Annotated[str, typer.Argument(help="any node's id (attempt:01M…, node:…, "
                                             "artifact:…) or a unique prefix of one")],
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Any node by id or unique prefix: its label, properties (stored JSON decoded) and
    neighbours."""
    from kernel.lookup import find_node

    with store_of(ctx) as store:
        found = find_node(store, node)
    if as_json:
        print_json(found)
        return
    out.rule(_safe(f"{found['label']} {found['id']}"))
    for key, value in sorted(found["properties"].items()):
        out.print(f"[bold]{key}[/]: {_safe(_brief(value, 600))}", highlight=False)
    for edge in found["neighbours"]:
        arrow = "->" if edge["outgoing"] else "<-"
        out.print(_safe(f"  {arrow} {edge['type']} {edge['label']} {edge['id']}"
                         + (f" ({edge['caption']})" if edge["caption"] else "")),
                  highlight=False)


def _safe(value: object) -> str:
    """Model- or import-derived text for the console: nothing hidden, no markup."""
    return shown(value, markup=True)
