"""``kernel status``: the store in use, its schema version and what the graph holds."""

from __future__ import annotations

from typing import Annotated

import typer

from kernel import api
from kernel.cli.common import (
    out,
    print_json,
    print_refusals,
    print_table,
    run_ref,
    split_words,
    store_of,
)
from kernel.cli.shown import shown
from kernel.core.lease import RESUMABLE


def status(
    ctx: typer.Context,
    run: Annotated[str | None, typer.Argument(
        help="a run (id, unique prefix, or latest): show that run instead")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Backend, schema version and what the graph holds; or, given RUN, how that run stands."""
    if run is not None:
        _run_status(ctx, run_ref(ctx, run), as_json)
        return
    with store_of(ctx) as store:
        data = api.store_status(store)
    if as_json:
        print_json(data)
        return
    print_table("store", ["", ""], [[k, v] for k, v in data["store"].items()])
    if data["store"]["schema"] == 0:
        typer.echo("graph not initialised: run 'kernel db init'")
    sandbox = data["sandbox"]
    typer.echo("sandbox: bubblewrap isolates test runs" if sandbox["available"]
               else f"sandbox: unavailable, so test constraints cannot be checked: "
                    f"{sandbox['problem']}")
    print_table("nodes", ["label", "count"], [[k, v] for k, v in data["nodes"].items()])
    print_table("relationships", ["type", "count"],
                [[k, v] for k, v in data["relationships"].items()])


def _run_status(ctx: typer.Context, run_id: str, as_json: bool) -> None:
    with store_of(ctx) as store:
        data = api.run_status(store, run_id)
    if as_json:
        print_json(data)
        return
    out.print(f"[bold]{shown(data['goal'], markup=True)}[/] — {shown(data['status'], markup=True)}"
              + (f", σ_system={data['sigma_system']:.2f}" if data["sigma_system"] is not None
                 else ""))
    out.print(f"goals: {data['goals']}; spent ${data['spent_usd']:.4f} of "
              f"${data['budget_usd']:.2f} ({split_words(data['spent_by_usd'])}), "
              f"{data['spent_seconds']:.1f}s; "
              f"{data['commits']} commits, {data['proposals']} proposals", highlight=False)
    print_refusals(data["refusals"])
    if data["status"] in RESUMABLE:
        out.print(f"continue with: kernel resume {shown(run_id, markup=True)}")
    out.print(f"summary hash {shown(data['summary_hash'], markup=True)}")
