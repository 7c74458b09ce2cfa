"""What the kernel shows about a store and its runs, as data: the CLI renders these, a
program reads them through ``kernel.api``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernel.core.lease import LeaseState, lease_state, run_state
from kernel.core.run import Run
from kernel.core.units import micros_to_usd, ms_to_seconds
from kernel.errors import ConfigError
from kernel.repositories import candidates, runs, views
from kernel.repositories import goals as goal_rows
from kernel.repositories.goals import TreeRow
from kernel.schema import LATEST_VERSION, schema_version
from kernel.store.base import GraphStore

if TYPE_CHECKING:
    from kernel.solve.dispatch import Outcome


def store_status(store: GraphStore) -> dict[str, Any]:
    """The backend, its schema version and how many nodes and relationships of each kind."""
    info = store.describe()
    info["schema"] = schema_version(store)
    info["schema_latest"] = LATEST_VERSION
    return {"store": info, "sandbox": sandbox_status(),
            "nodes": views.counts_by_label(store),
            "relationships": views.counts_by_type(store)}


def sandbox_status() -> dict[str, Any]:
    """Whether sandboxed tests can run here, and if not, why and how to fix it."""
    from kernel.runtime.installed import resolvers  # its sandbox probes bubblewrap once

    problem = resolvers().sandbox.isolation_problem()
    return {"available": problem is None, "problem": problem}


def root_goal(store: GraphStore, run_id: str) -> dict[str, Any]:
    """A run's root goal ({} before it has one)."""
    record = runs.get(store, run_id)
    root_id = record["root_id"] if record else None
    view = goal_rows.view(store, root_id) if root_id else None
    return dict(view["goal"]) if view else {}


def run_status(store: GraphStore, run_id: str) -> dict[str, Any]:
    """How a run stands: its state, spend against budget, commits, refusals, summary hash."""
    from kernel.core.summary import summary_hash  # its models: not for `kernel status`

    run = Run.load(store, run_id)
    root = root_goal(store, run_id)
    goals = run_tree(store, run_id)
    return {
        "run": run_id, "goal": root.get("summary"),
        "status": run_state(root.get("status"), lease_state(store, run_id)),
        "root_status": root.get("status"),
        "sigma_system": root.get("sigma_system") if root.get("status") == "resolved" else None,
        "final_artifact": root.get("final_artifact_id"),
        "goals": _goal_counts(goals),
        "spent_usd": micros_to_usd(sum(g["cost_spent"] or 0 for g in goals)),
        "spent_by_usd": spend_split(runs.get(store, run_id)),
        "budget_usd": micros_to_usd(root.get("cost_allocated", 0)),
        "spent_seconds": ms_to_seconds(sum(g["time_spent"] or 0 for g in goals)),
        "commits": run.seq, "proposals": run.proposals,
        "refusals": run_refusals(store, run_id),
        "summary_hash": summary_hash(store, run_id),
    }


def _goal_counts(goals: list[TreeRow]) -> dict[str, int]:
    """Live goals by status, and how many were superseded by a reopening (``stale``)."""
    counts = Counter(g["status"] for g in goals if not g["stale"])
    stale = sum(1 for g in goals if g["stale"])
    return dict(sorted(counts.items())) | ({"stale": stale} if stale else {})


def run_tree(store: GraphStore, run_id: str) -> list[TreeRow]:
    """Every goal of a run, parents first, with its status, sigmas and budget."""
    rows = goal_rows.tree(store, run_id)
    if not rows:
        Run.load(store, run_id)  # a clear error for an unknown run
    return rows


def list_runs(store: GraphStore) -> list[dict[str, Any]]:
    """Every run, newest first: its kind (solve or plan), state and spend in USD."""
    return [{"id": r["id"], "started_at": r["started_at"], "commits": r["commits"],
             "kind": "plan" if json.loads(r["config"] or "{}").get("mode") == "plan"
             else "solve",
             "goal": r["goal"], "status": run_state(r["status"], LeaseState(
                 r["holder"], r["expires"], r["stopped"])),
             "spent_usd": micros_to_usd(int(r["spent"] or 0)), "spent_by_usd": spend_split(r)}
            for r in runs.listing(store)]


def spend_split(row: runs.RunRecord | runs.Listed | None) -> dict[str, float]:
    """What a run paid, by who was paid: the model (and the other boot resolvers), the
    sandbox that runs tests (a charge per command, ``KERNEL_SANDBOX_RUN_USD``), and the
    tools BUILD and HIRE added."""
    if row is None:
        return {"model": 0.0, "sandbox": 0.0, "tool": 0.0}
    return {"model": micros_to_usd(int(row["spent_model"])),
            "sandbox": micros_to_usd(int(row["spent_sandbox"])),
            "tool": micros_to_usd(int(row["spent_tool"]))}


def run_refusals(store: GraphStore, run_id: str) -> list[dict[str, Any]]:
    """A run's refusals, newest first: which goal stopped, why, and what would unblock it."""
    refusals = [json.loads(r["content"]) for r in runs.refusals(store, run_id)]
    return [{"goal": r["goal_id"], "reasons": r["reasons"], "detail": r["detail"],
             "to_proceed": r["to_proceed"]} for r in refusals]


def outcome_report(store: GraphStore, outcome: Outcome) -> dict[str, Any]:
    """What ``kernel solve`` reports at the end of a run (refusals only when it ended
    refused, not when it waits on a person or stopped)."""
    from kernel.core.ledger import load_entries
    from kernel.core.summary import summary_hash
    from kernel.proposals import reused_in

    root = root_goal(store, outcome.run_id)
    resolved = outcome.status == "resolved"
    unfinished = not resolved and bool(outcome.waiting_on or outcome.stopped)
    return {"run": outcome.run_id, "root": outcome.root_id, "status": outcome.status,
            "sigma_system": outcome.sigma_system, "steps": outcome.steps,
            "stopped": outcome.stopped, "summary_hash": summary_hash(store, outcome.run_id),
            "final_artifact": root.get("final_artifact_id"),
            "waiting_on": list(outcome.waiting_on),
            "refusals": [] if resolved or unfinished else run_refusals(store, outcome.run_id),
            "weighed": weighed_candidates(store, outcome.root_id) if outcome.root_id else [],
            "reused": reused_in(load_entries(store, outcome.run_id)[2]),
            "calls_ahead": {"started": outcome.calls_ahead, "unused": outcome.calls_unused,
                            "unused_cost_usd": outcome.unused_cost_usd}}


def weighed_candidates(store: GraphStore, goal_id: str) -> list[dict[str, Any]]:
    """The candidates a goal's attempt weighed (its output and the person's suggestions),
    best first: who offered each, its status, and for a failing one which constraints
    failed and why ([] when the run was given no suggestions)."""
    from kernel.core.envelopes import Verification  # pydantic models: not for `kernel status`

    rows = candidates.of_goal(store, goal_id)
    if not rows:
        return []
    checked_by = {r["artifact_id"]: Verification.model_validate_json(r["verification"])
                  for r in rows}
    ids = sorted({c.constraint_id for v in checked_by.values() for c in v.checks})
    titles = views.constraint_titles(store, ids)
    shown = []
    for row in rows:
        checked = checked_by[row["artifact_id"]]
        human = row["author_kind"] == "human"
        shown.append({
            "rank": row["rank"], "status": row["status"], "verdict": row["verdict"],
            "sigma_v": row["sigma_v"], "artifact": row["artifact_id"],
            "suggestion": json.loads(row["metadata"] or "{}").get("suggestion") if human else None,
            "author": row["author"] if human else f"model ({row['author'] or 'proposer'})",
            "violations": [{"constraint": titles.get(c.constraint_id, c.constraint_id),
                            "why": _failure_reason(c.detail)} for c in checked.failed()]})
    return shown


def _failure_reason(detail: Any) -> str:
    """A failed check's reason in one line."""
    if not isinstance(detail, dict):
        return str(detail)
    for key in ("error", "rubric_trace", "report_problem", "judge"):
        if detail.get(key):
            return str(detail[key])
    if detail.get("violated_by"):
        return f"violated by {json.dumps(detail['violated_by'], sort_keys=True)}"
    if detail.get("tests"):
        return "tests not passing: " + ", ".join(
            sorted(t for t, s in detail["tests"].items() if s != "PASSED"))
    if detail.get("problems"):
        return "; ".join(str(p) for p in detail["problems"])
    return json.dumps(detail, sort_keys=True)[:200]


def plan_document(store: GraphStore, data_dir: Path, run_id: str) -> dict[str, Any]:
    """The plan a planning run wrote (its root's plan document)."""
    from kernel.core.artifacts import Artifacts, BlobStore

    run = Run.load(store, run_id)
    goal = root_goal(store, run_id)
    if not goal.get("plan_document_id"):
        raise ConfigError(f"{run_id} is not a planning run (no plan document)")
    document: dict[str, Any] = json.loads(
        Artifacts(run, BlobStore.of_data_dir(data_dir)).read(goal["plan_document_id"]))
    return document


