"""``kernel plan``, ``kernel plan-report``, ``kernel check-plan``: planning mode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from kernel import api
from kernel.cli.common import (
    amount,
    input_file,
    out,
    output_file,
    print_json,
    run_ref,
    settings_of,
    store_of,
    to_stdout,
    write_output,
)
from kernel.cli.progress import PROGRESS_HELP, check_mode, make_view, showing
from kernel.errors import ConfigError
from kernel.plan.examples import example_names


def plan_command(
    ctx: typer.Context,
    goal: Annotated[str | None, typer.Argument(help="the goal, in words")] = None,
    example: Annotated[str | None, typer.Option(
        help="a shipped example: " + ", ".join(example_names()))] = None,
    proposer: Annotated[str, typer.Option(help="auto | anthropic | scripted")] = "auto",
    script: Annotated[Path | None, typer.Option(help="scripted proposals (YAML)")] = None,
    budget: Annotated[float, typer.Option(help="what planning may spend, USD")] = 5.0,
    time_limit: Annotated[float, typer.Option("--time", help="planning time, seconds")] = 600,
    output: Annotated[Path | None, typer.Option(
        "--out", help="write the plan JSON here ('-' for standard output)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the plan as JSON")] = False,
    progress: Annotated[str, typer.Option(help=PROGRESS_HELP)] = "auto",
) -> None:
    """Plan GOAL against its constraints before anything runs (offline: --example NAME)."""
    amount(budget, "--budget")
    amount(time_limit, "--time")
    check_mode(progress)
    if output is not None:
        output_file(output, "--out")  # before anything is paid for
    if goal is not None and not goal.strip():
        raise ConfigError("the goal is empty: say in words what should be planned")
    verifications: list[dict[str, Any]] = []
    if example is not None:
        from kernel.plan.session import example_goal, example_script

        script = example_script(example)
        example_text, verifications = example_goal(script)
        goal = goal or example_text
        if proposer == "auto":
            proposer = "scripted"
    elif script is not None:  # a user's own planning script may carry a goal and checks
        from kernel.plan.session import script_goal

        script_text, verifications = script_goal(script)
        goal = goal or script_text
    if not goal:
        raise ConfigError("give a GOAL, or --example NAME (" + ", ".join(example_names()) + ")")
    from kernel.plan.session import plan_goal
    from kernel.runtime.proposers import make_proposer

    chosen, recorded = make_proposer(proposer, script)
    with store_of(ctx) as store, showing(make_view(
            progress, store, as_json or (output is not None and to_stdout(output)))):
        document = plan_goal(store, settings_of(ctx).data_dir, goal, chosen, recorded, budget,
                             time_limit, verifications)
    if output is not None:
        write_output(output, json.dumps(document, indent=2, sort_keys=True) + "\n")
    if output is not None and to_stdout(output):
        pass  # standard output holds the plan itself
    elif as_json:
        print_json(document)
    else:
        summarize(document)
        if output is not None:
            out.print(f"plan written to {output}; check it with: kernel check-plan {output}")
    if document.get("refusal"):  # exit codes as in solve: a refused plan is exit 1
        raise typer.Exit(1)


def summarize(doc: dict[str, Any]) -> None:
    out.rule(f"plan {doc['run_id']}")
    out.print(doc["goal"])
    out.print(_constraint_table(doc))
    if doc.get("critical_path"):
        cp = doc["critical_path"]
        out.print(f"critical path ({cp['metric']}, mid {cp['totals']['mid']:g}): "
                  + " -> ".join(cp["tasks"]))
    for wall in doc["walls"]:
        out.print(f"wall on {wall['constraint_id']}: {', '.join(wall['cluster']) or '-'}")
    _repair_lines(doc)
    for flag in doc["flags"]:
        out.print(f"[yellow]flag[/]: {flag}")
    for question in doc["open_questions"]:
        out.print(f"open question: {question}")


def _constraint_table(doc: dict[str, Any]) -> Table:
    table = Table("constraint", "kind", "rollup (low / mid / high)", "limit", "status",
                  "after repair")
    repair = doc.get("repair") or {}
    closest = (doc.get("refusal") or {}).get("closest") or {}
    after = {r["constraint_id"]: r["status"] for r in repair.get("rollup", [])} \
        if repair.get("feasible") else \
        {r["constraint_id"]: f"{r['status']} (closest)" for r in closest.get("rollup", [])}
    rolled = {r["constraint_id"]: r for r in doc["rollup"]}
    for c in doc["constraints"]:
        r = rolled.get(c["id"])
        if r is None:
            table.add_row(f"{c['id']}: {c['title']}", c["kind"], "-", "-", "-",
                          after.get(c["id"], ""))
            continue
        table.add_row(f"{c['id']}: {c['title']}", c["kind"],
                      " / ".join(f"{r['totals'][e]:g}" for e in ("low", "mid", "high")),
                      f"{r['op']} {r['limit']:g} {c.get('unit', '')}", r["status"],
                      after.get(c["id"], ""))
    return table


def _repair_lines(doc: dict[str, Any]) -> None:
    repair = doc.get("repair") or {}
    closest = (doc.get("refusal") or {}).get("closest") or {}
    if repair:
        out.print("repair: " + ("; ".join(f"{t} -> {a}" for t, a in repair["chosen"].items())
                                if repair["feasible"] else "none feasible"))
    if closest:
        out.print("closest choice: " + "; ".join(f"{t} -> {a}" for t, a in
                                                 closest["chosen"].items())
                  + f" (still UNSAT: {', '.join(closest['unmet'])})")
    for line in (doc.get("refusal") or {}).get("to_proceed", []):
        out.print(f"[red]refused[/]: {line}")


def plan_report_command(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(
        help="the planning run, or a plan JSON file written by kernel plan --out")],
    html: Annotated[Path, typer.Option(
        "--html", help="where to write the report ('-' for standard output)")],
) -> None:
    """Write a self-contained HTML report of a plan (DAG, waterfall, surveys, repair)."""
    output_file(html, "--html")
    if run_id.endswith(".json") or Path(run_id).is_file():
        document = _plan_file(Path(run_id))
    else:
        run_id = run_ref(ctx, run_id)
        with store_of(ctx) as store:
            document = api.plan_document(store, settings_of(ctx).data_dir, run_id)
    from kernel.plan.report import render_html

    try:
        page = render_html(document)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
        raise ConfigError(f"{run_id}: not a well-formed plan document ({type(exc).__name__}: "
                          f"{exc}); kernel check-plan says what is wrong") from exc
    write_output(html, page)
    if not to_stdout(html):
        out.print(f"report written to {html}")


def _plan_file(file: Path) -> dict[str, Any]:
    """A plan document read from a file; anything else is bad input (exit 2)."""
    input_file(file, "plan file")
    try:
        document = json.loads(file.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{file}: not a readable JSON plan ({exc}); write one with "
                          "kernel plan --out FILE") from exc
    if not isinstance(document, dict) or not str(document.get("schema", "")).startswith(
            "kernel-plan/"):
        raise ConfigError(f"{file}: not a plan document (no kernel-plan schema); write one "
                          "with kernel plan --out FILE")
    return document


def check_plan_command(
    file: Annotated[Path, typer.Argument(help="a plan JSON document")],
    as_json: Annotated[bool, typer.Option("--json", help="print the results as JSON")] = False,
) -> None:
    """Run the assertion framework on a plan document; exit 1 if any assertion fails."""
    input_file(file, "plan file")
    from kernel.plan.checks import check_text

    try:  # bytes that are not UTF-8 are a broken plan (assertion 0), not a missing file
        text = file.read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"{file}: cannot be read: {exc}") from exc
    results = check_text(text)
    if as_json:
        print_json([r.as_dict() for r in results])
    else:
        for r in results:
            mark = "[green]pass[/]" if r.passed else "[red]FAIL[/]"
            out.print(f"{mark} {r.id} {r.name}" + (f" — {r.detail}" if r.detail else ""))
    failed = [r for r in results if not r.passed]
    if not as_json:
        out.print(f"{len(results) - len(failed)}/{len(results)} assertions passed")
    if failed:
        raise typer.Exit(1)
