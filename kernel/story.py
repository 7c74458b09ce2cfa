"""A run's story for people: what happened, step by step, and why each attempt failed.

Reads what the run committed (log lines, attempts with their verification traces and
feedback, spends, refusals) and decodes the JSON the graph stores, so nobody needs
Cypher over ``Attempt.verification`` to learn why attempt 1 failed. Money in USD,
time in seconds, as in every ``--json``.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from kernel._views import run_refusals, run_tree, spend_split
from kernel.core.envelopes import Check
from kernel.core.lease import lease_state, run_state
from kernel.core.ledger import LedgerEntry, load_entries
from kernel.core.state_machine import TERMINAL
from kernel.core.units import micros_to_usd, ms_to_seconds
from kernel.repositories import runs, views
from kernel.solve.causes import said
from kernel.store.base import GraphStore

# The calls an attempt is made of: its resolution (several when its tool plan has several
# steps) and what checked it and diagnosed it. Identification, selection, classification
# and decomposition belong to the goal.
ATTEMPT_OPERATIONS = frozenset({"resolve", "run_tests", "verify_semantic", "generate_feedback"})
_ID = r"constraint:[0-9a-f]{8,}"
_CONSTRAINT_ID = re.compile(_ID)
_NAMED = re.compile(rf"'({_ID})'|({_ID})")  # quoted in a list, or bare


def run_story(store: GraphStore, run_id: str, goal_id: str | None = None) -> dict[str, Any]:
    """The run's log, its goals' attempts (verdict, failed checks, feedback, and what each
    cost and who proposed it, from the ledger) and its refusals; with ``goal_id``, that
    goal's part only."""
    goals = [g for g in run_tree(store, run_id) if goal_id in (None, g["id"])]
    attempts = {g["id"]: views.attempts_of_goal(store, g["id"]) for g in goals}
    entries: dict[str | None, list[LedgerEntry]] = defaultdict(list)
    for entry in load_entries(store, run_id)[2]:
        entries[entry.goal_id].append(entry)
    rows = [row for row in views.log_of_run(store, run_id, max_tier=2)
            if goal_id in (None, row["goal_id"])]
    titles = _titles(store, attempts, [row["summary"] for row in rows])
    log = [{"seq": row["seq"], "goal_id": row["goal_id"], "category": row["category"],
            "summary": _with_titles(_said(row), titles)} for row in rows]
    return {
        "run": run_id, **_standing(store, run_id),
        "goals": [{"id": g["id"], "summary": g["summary"], "status": g["status"],
                   "spent_usd": micros_to_usd(g["cost_spent"] or 0),
                   "spent_seconds": ms_to_seconds(g["time_spent"] or 0),
                   "attempts": [_attempt(a, titles, facts) for a, facts in zip(
                       attempts[g["id"]], _padded(attempt_facts(entries[g["id"]], g["id"]),
                                                  len(attempts[g["id"]])), strict=True)]}
                  for g in goals],
        "log": log,
        "refusals": [r for r in run_refusals(store, run_id) if goal_id in (None, r["goal"])],
    }


def attempt_facts(entries: Iterable[LedgerEntry], goal_id: str) -> list[dict[str, Any]]:
    """Per attempt of ``goal_id``, in order, what the ledger says it cost (USD, seconds)
    and who proposed its output: an attempt starts at a resolution that follows anything
    else, and holds its resolution, test runs, judgment and feedback calls."""
    found: list[dict[str, Any]] = []
    previous = None
    for entry in entries:
        if entry.goal_id != goal_id or entry.kind not in ("proposal", "failure"):
            continue
        if entry.operation == "resolve" and previous != "resolve":
            found.append({"cost_usd": 0.0, "seconds": 0.0, "proposer": entry.source,
                          "calls": 0})
        previous = entry.operation
        if not found or entry.operation not in ATTEMPT_OPERATIONS:
            continue
        response = entry.data()["response"]
        current = found[-1]
        current["cost_usd"] = round(current["cost_usd"] + float(response["cost_usd"]), 6)
        current["seconds"] = round(current["seconds"] + float(response["seconds"]), 6)
        current["calls"] += 1
        if entry.operation == "resolve":
            current["proposer"] = entry.source  # the plan's last step made the output
    return found


def _padded(facts: list[dict[str, Any]], count: int) -> list[dict[str, Any] | None]:
    """One entry per attempt (None: an attempt opened before a crash, not yet resolved)."""
    return [*facts[:count], *[None] * (count - len(facts))]


def _standing(store: GraphStore, run_id: str) -> dict[str, Any]:
    """How the run stands (``state``), why it stopped if it stopped unfinished
    (``stopped``), and what it paid, by who was paid (``spent_by_usd``)."""
    root = next((g for g in run_tree(store, run_id) if g["parent_id"] is None), None)
    state = run_state(root["status"] if root else None, lease_state(store, run_id))
    unfinished = root is not None and root["status"] not in TERMINAL and state != "running"
    return {"state": state, "stopped": state if unfinished else None,
            "spent_by_usd": spend_split(runs.get(store, run_id))}


def _said(row: views.LogLine) -> str:
    """A log line in words: a decision that chose nothing says what it found instead of
    ``None`` (a lookup before a build names the capability and the tools on record)."""
    summary = row["summary"]
    if row["category"] != "decision" or not summary.endswith(": None"):
        return summary
    detail = json.loads(row["detail"] or "{}")
    decision = summary.removesuffix(": None")
    if decision == "lookup_before_build":
        tools = ", ".join(detail.get("candidates") or []) or "none on record"
        return (f"lookup before build for {detail.get('capability', '?')}: no tool it may use "
                f"(tools on record: {tools})")
    return f"{decision}: nothing chosen"


def _titles(store: GraphStore, attempts: dict[str, list[dict[str, Any]]],
            lines: Iterable[str]) -> dict[str, str]:
    """Titles of the constraints the attempts' checks and the log lines name."""
    ids = {check["constraint_id"] for rows in attempts.values() for a in rows
           for check in json.loads(a.get("verification") or "{}").get("checks", [])}
    ids |= {found for line in lines for found in _CONSTRAINT_ID.findall(line)}
    return views.constraint_titles(store, ids)


def _with_titles(line: str, titles: dict[str, str]) -> str:
    """A log line with each constraint id it names replaced by the constraint's title."""
    def title(match: re.Match[str]) -> str:
        ident = match.group(1) or match.group(2)
        return repr(titles[ident]) if ident in titles else match.group(0)

    return _NAMED.sub(title, line)


def _attempt(a: dict[str, Any], titles: dict[str, str],
             facts: dict[str, Any] | None) -> dict[str, Any]:
    verification = json.loads(a.get("verification") or "{}")
    failed = [{"constraint": titles.get(c["constraint_id"], c["constraint_id"]),
               "constraint_id": c["constraint_id"], "sigma": c.get("sigma_i"),
               "found": _found(c),
               "detail": c.get("detail") or {}, "repair": c.get("repair_suggestion")}
              for c in verification.get("checks", []) if not c.get("passed")]
    feedback = json.loads(a["feedback"]) if a.get("feedback") else None
    return {"id": a["id"], "index": a.get("attempt_index"), "resolver": a.get("resolver_id"),
            "proposer": facts["proposer"] if facts else None,
            "verdict": a.get("verdict"), "sigma_v": a.get("sigma_v"),
            "cost_usd": facts["cost_usd"] if facts else micros_to_usd(int(a.get("cost") or 0)),
            "seconds": facts["seconds"] if facts else ms_to_seconds(int(a.get("time") or 0)),
            "failure_mode": a.get("failure_mode"), "failed_checks": failed,
            "trace": verification.get("trace_summary", ""),
            "feedback": feedback, "feedback_text": _feedback_text(feedback),
            "output_artifact": a.get("output_artifact_id")}


def _found(check: dict[str, Any]) -> str:
    """What a failed check found, in words (its detail as JSON if it cannot be read)."""
    try:
        return said(Check.model_validate(check))
    except ValidationError:
        return json.dumps(check.get("detail"), sort_keys=True, default=str)


def _feedback_text(feedback: dict[str, Any] | None) -> str | None:
    """The feedback an attempt was given, as the diagnosis says it in words."""
    if not feedback:
        return None
    diagnosis = feedback.get("diagnosis") or {}
    summary = diagnosis.get("summary") or feedback.get("summary")
    if summary:
        return str(summary)
    return json.dumps(feedback, sort_keys=True)
