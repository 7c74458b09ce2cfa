"""``kernel hire list|show|answer``: the human side of step 11 (HIRE)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kernel import api
from kernel.cli.answers import hire_answer
from kernel.cli.common import as_shown, id_table, node_ref, out, print_json, settings_of, store_of
from kernel.cli.progress import check_mode, make_view, showing
from kernel.cli.shown import escape
from kernel.cli.solve import Progress, report

app = typer.Typer(help="Capability requests the kernel asked a human for.",
                  no_args_is_help=True)


@app.command("list")
def list_command(
    ctx: typer.Context,
    all_: Annotated[bool, typer.Option("--all", help="answered and declined ones too")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Requests waiting for an answer (all of them with --all); --json gives each one as
    `kernel hire show` does."""
    from kernel.lookup import unique_prefixes

    with store_of(ctx) as store:
        rows = api.hire_requests(store, None if all_ else ["requested"])
        if as_json:
            from kernel.hire_view import request_view

            every = api.hire_requests(store)
            print_json([request_view(store, row["id"], every) for row in rows])
            return
        short = as_shown(unique_prefixes(store, "CapabilityRequest", [row["id"] for row in rows]))
        runs = as_shown(unique_prefixes(store, "Run", sorted({g["run_id"] for row in rows
                                                     for g in row["goals"]})))
    if not rows:
        out.print("no capability requests" + ("" if all_ else " waiting for an answer"))
        return
    table = id_table("request", "status", "capability", "reason", "waiting goals (run)", "why")
    for row in rows:
        goals = "\n".join(f"{g['summary']} ({runs[g['run_id']]})" for g in row["goals"])
        table.add_row(*map(escape, (short[row["id"]], row["status"], row["capability_tag"],
                                    row["reason"], goals, row.get("rationale", ""))))
    out.print(table)
    out.print("answer with: kernel hire answer ID --resolver FILE | --add-budget USD "
              "[--add-time SECONDS] | --decline; a goal_intake question with --intake FILE")


@app.command("show")
def show_command(
    ctx: typer.Context,
    request_id: Annotated[str, typer.Argument(help="the request id (capreq:...) or a unique prefix of it")],
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """One request, all a person needs to answer it: the goal and its constraints, each
    attempt and how it ended, the causes, the budget left, similar requests, the commands."""
    from kernel.hire_view import request_view

    request_id = node_ref(ctx, request_id, "CapabilityRequest")
    with store_of(ctx) as store:
        view = request_view(store, request_id)
    if as_json:
        print_json(view)
        return
    out.rule(escape(f"{view['id']} — {view['capability_tag']} ({view['status']})"))
    out.print(f"[bold]why[/]: {escape(view['reason'])}: {escape(view.get('rationale') or '')}",
              highlight=False)
    goal = view["goal"]
    if goal is not None:
        out.print(f"[bold]goal[/]: {escape(str(goal['summary']))} ({goal['id']}, "
                  f"{goal['status']}, run {goal['run_id']})", highlight=False)
        for c in goal["constraints"]:
            out.print(f"  {'core ' if c['core'] else ''}{c['type']}: {escape(c['title'])}",
                      highlight=False)
        for a in goal["attempts"]:
            out.print(f"[bold]attempt {a['index']}[/] by {escape(str(a['proposer'] or a['resolver']))}: "
                      f"{a['verdict'] or 'open'}  ${a['cost_usd']:.4f}", highlight=False)
            for failed in a["failed"]:
                out.print(f"  [red]failed[/] {escape(failed)}", highlight=False)
        if goal["causes"]:
            out.print(f"[bold]causes[/]: {escape(', '.join(goal['causes']))}", highlight=False)
        out.print(f"[bold]left[/]: ${goal['remaining_usd']:.4f} and "
                  f"{goal['remaining_seconds']:.0f}s", highlight=False)
    for other in view["similar"]:
        out.print(f"[bold]similar[/]: {other['id']} {other['status']}"
                  + (f", answered {other['answered']}" if other["answered"] else "")
                  + (f" with {other['resolver_id']}" if other["resolver_id"] else ""),
                  highlight=False)
    for command in view["answer_with"]:
        out.print(f"answer: {escape(command)}", highlight=False)


@app.command("answer")
def answer_command(
    ctx: typer.Context,
    request_id: Annotated[str, typer.Argument(help="the request id (capreq:...) or a unique prefix of it")],
    resolver: Annotated[Path | None, typer.Option(
        "--resolver", help="a tool file (YAML/JSON) the kernel registers as reusable")] = None,
    add_budget: Annotated[float | None, typer.Option(
        "--add-budget", help="dollars to add to the waiting goal")] = None,
    add_time: Annotated[float, typer.Option("--add-time", help="seconds to add")] = 0.0,
    decline: Annotated[bool, typer.Option("--decline", help="refuse the request")] = False,
    intake: Annotated[Path | None, typer.Option(
        "--intake", help="an intake question's answer (YAML: answers, verdict, description, "
                         "drop, edit, add, note)")] = None,
    note: Annotated[str, typer.Option(help="a note kept with the answer")] = "",
    resume_run: Annotated[bool, typer.Option(
        "--resume/--no-resume", help="resume the waiting runs now")] = True,
    progress: Progress = "auto",
) -> None:
    """Answer a request; the waiting runs pick the answer up when they resume (showing
    their progress as ``kernel resume`` does)."""
    check_mode(progress)
    request_id = node_ref(ctx, request_id, "CapabilityRequest")
    answer = hire_answer(resolver, add_budget, add_time, decline, note, intake)
    settings = settings_of(ctx)
    with store_of(ctx) as store:
        runs = api.answer_hire(store, request_id, answer)
        out.print(f"{request_id}: answered ({getattr(answer, 'kind', 'intake')})")
        if not resume_run:
            for run_id in runs:
                out.print(f"resume with: kernel resume {run_id}")
            return
        for run_id in runs:
            with showing(make_view(progress, store, False, run_id)) as view:
                outcome = api.resume(store, run_id, settings.data_dir,
                                     on_step=view.step if view else None,
                                     concurrency=settings.concurrency)
            report(store, outcome, as_json=False)
