"""``kernel hire list|answer``: the human side of step 11 (HIRE)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from kernel import api
from kernel.cli.answers import hire_answer
from kernel.cli.common import node_ref, out, print_json, settings_of, store_of
from kernel.cli.solve import report

app = typer.Typer(help="Capability requests the kernel asked a human for.",
                  no_args_is_help=True)


@app.command("list")
def list_command(
    ctx: typer.Context,
    all_: Annotated[bool, typer.Option("--all", help="answered and declined ones too")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Requests waiting for an answer (all of them with --all)."""
    with store_of(ctx) as store:
        rows = api.hire_requests(store, None if all_ else ["requested"])
    if as_json:
        print_json(rows)
        return
    if not rows:
        out.print("no capability requests" + ("" if all_ else " waiting for an answer"))
        return
    table = Table("request", "status", "capability", "reason", "waiting goals", "why")
    for row in rows:
        goals = "\n".join(f"{g['summary']} ({g['run_id']})" for g in row["goals"])
        table.add_row(row["id"], row["status"], row["capability_tag"], row["reason"], goals,
                      row.get("rationale", ""))
    out.print(table)
    out.print("answer with: kernel hire answer ID --resolver FILE | --add-budget USD "
              "[--add-time SECONDS] | --decline; a goal_intake question with --intake FILE")


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
) -> None:
    """Answer a request; the waiting runs pick the answer up when they resume."""
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
            report(store, api.resume(store, run_id, settings.data_dir), as_json=False)
