"""``kernel status``: the store in use, its schema version and what the graph holds."""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any

import typer

from kernel.cli.common import (
    out,
    print_json,
    print_refusals,
    print_table,
    run_id_arg,
    run_refusals,
    store_of,
)
from kernel.core.lease import RESUMABLE, lease_state, run_state
from kernel.core.run import Run
from kernel.core.summary import summary_hash
from kernel.core.units import micros_to_usd, ms_to_seconds
from kernel.schema import LATEST_VERSION, schema_version


def status(
    ctx: typer.Context,
    run: Annotated[str | None, typer.Argument(help="a run id: show that run instead")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Backend, schema version and what the graph holds; or, given RUN, how that run stands."""
    if run is not None:
        _run_status(ctx, run_id_arg(run), as_json)
        return
    with store_of(ctx) as store:
        info = store.describe()
        version = schema_version(store)
        labels = store.run("admin/count_by_label")
        types = store.run("admin/count_by_type")
    info["schema"] = version
    info["schema_latest"] = LATEST_VERSION
    if as_json:
        print_json({"store": info, "nodes": {r["label"]: r["nodes"] for r in labels},
                    "relationships": {r["type"]: r["relationships"] for r in types}})
        return
    print_table("store", ["", ""], [[k, v] for k, v in info.items()])
    if version == 0:
        typer.echo("graph not initialised: run 'kernel db init'")
    print_table("nodes", ["label", "count"], [[r["label"], r["nodes"]] for r in labels])
    print_table("relationships", ["type", "count"],
                [[r["type"], r["relationships"]] for r in types])


def _run_status(ctx: typer.Context, run_id: str, as_json: bool) -> None:
    with store_of(ctx) as store:
        run = Run.load(store, run_id)
        root_id = store.run("run/get", {"run_id": run_id})[0]["root_id"]
        root = store.run("goal/get", {"goal_id": root_id})[0]["goal"] if root_id else {}
        goals = store.run("goal/tree", {"run_id": run_id})
        state = run_state(root.get("status"), lease_state(store, run_id))
        data: dict[str, Any] = {
            "run": run_id, "goal": root.get("summary"), "status": state,
            "root_status": root.get("status"),
            "sigma_system": root.get("sigma_system") if root.get("status") == "resolved"
            else None,
            "final_artifact": root.get("final_artifact_id"),
            "goals": _goal_counts(goals),
            "spent_usd": micros_to_usd(sum(g["cost_spent"] or 0 for g in goals)),
            "budget_usd": micros_to_usd(root.get("cost_allocated", 0)),
            "spent_seconds": ms_to_seconds(sum(g["time_spent"] or 0 for g in goals)),
            "commits": run.seq, "proposals": run.proposals,
            "refusals": run_refusals(store, run_id),
            "summary_hash": summary_hash(store, run_id),
        }
    if as_json:
        print_json(data)
        return
    out.print(f"[bold]{data['goal']}[/] — {data['status']}"
              + (f", σ_system={data['sigma_system']:.2f}" if data["sigma_system"] is not None
                 else ""))
    out.print(f"goals: {data['goals']}; spent ${data['spent_usd']:.4f} of "
              f"${data['budget_usd']:.2f}, {data['spent_seconds']:.1f}s; "
              f"{data['commits']} commits, {data['proposals']} proposals")
    print_refusals(data["refusals"])
    if state in RESUMABLE:
        out.print(f"continue with: kernel resume {run_id}")
    out.print(f"summary hash {data['summary_hash']}")


def _goal_counts(goals: list[dict]) -> dict[str, int]:
    """Live goals by status, and how many were superseded by a reopening (``stale``)."""
    counts = Counter(g["status"] for g in goals if not g["stale"])
    stale = sum(1 for g in goals if g["stale"])
    return dict(sorted(counts.items())) | ({"stale": stale} if stale else {})
