"""A run's story for people: what happened, step by step, and why each attempt failed.

Reads what the run committed (log lines, attempts with their verification traces and
feedback, spends, refusals) and decodes the JSON the graph stores, so nobody needs
Cypher over ``Attempt.verification`` to learn why attempt 1 failed. Money in USD,
time in seconds, as in every ``--json``.
"""

from __future__ import annotations

import json
from typing import Any

from kernel._views import run_refusals, run_tree
from kernel.core.units import micros_to_usd, ms_to_seconds
from kernel.repositories import views
from kernel.store.base import GraphStore


def run_story(store: GraphStore, run_id: str, goal_id: str | None = None) -> dict[str, Any]:
    """The run's log, its goals' attempts (verdict, failed checks, feedback, cost) and its
    refusals; with ``goal_id``, that goal's part only."""
    goals = [g for g in run_tree(store, run_id) if goal_id in (None, g["id"])]
    attempts = {g["id"]: views.attempts_of_goal(store, g["id"]) for g in goals}
    titles = _titles(store, attempts)
    log = [{"seq": row["seq"], "goal_id": row["goal_id"], "category": row["category"],
            "summary": row["summary"]}
           for row in views.log_of_run(store, run_id, max_tier=2)
           if goal_id in (None, row["goal_id"])]
    return {
        "run": run_id,
        "goals": [{"id": g["id"], "summary": g["summary"], "status": g["status"],
                   "spent_usd": micros_to_usd(g["cost_spent"] or 0),
                   "attempts": [_attempt(a, titles) for a in attempts[g["id"]]]}
                  for g in goals],
        "log": log,
        "refusals": [r for r in run_refusals(store, run_id) if goal_id in (None, r["goal"])],
    }


def _titles(store: GraphStore, attempts: dict[str, list[dict[str, Any]]]) -> dict[str, str]:
    ids = sorted({check["constraint_id"] for rows in attempts.values() for a in rows
                  for check in json.loads(a.get("verification") or "{}").get("checks", [])})
    return views.constraint_titles(store, ids)


def _attempt(a: dict[str, Any], titles: dict[str, str]) -> dict[str, Any]:
    verification = json.loads(a.get("verification") or "{}")
    failed = [{"constraint": titles.get(c["constraint_id"], c["constraint_id"]),
               "constraint_id": c["constraint_id"], "sigma": c.get("sigma_i"),
               "detail": c.get("detail") or {}, "repair": c.get("repair_suggestion")}
              for c in verification.get("checks", []) if not c.get("passed")]
    return {"id": a["id"], "index": a.get("attempt_index"), "resolver": a.get("resolver_id"),
            "verdict": a.get("verdict"), "sigma_v": a.get("sigma_v"),
            "cost_usd": micros_to_usd(int(a.get("cost") or 0)),
            "seconds": ms_to_seconds(int(a.get("time") or 0)),
            "failure_mode": a.get("failure_mode"), "failed_checks": failed,
            "trace": verification.get("trace_summary", ""),
            "feedback": json.loads(a["feedback"]) if a.get("feedback") else None,
            "output_artifact": a.get("output_artifact_id")}
