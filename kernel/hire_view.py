"""A HIRE request as a person needs it to act: the goal and its constraints, what was
tried and how each attempt ended, the diagnosed causes, the budget and time the goal has
left, similar requests and how they were answered, and the exact commands that answer
this one. Read by ``kernel hire show`` and ``kernel hire list --json``."""

from __future__ import annotations

import json
from typing import Any

from kernel.core.budget import BudgetEnforcer
from kernel.core.constraints import ConstraintEngine
from kernel.core.run import Run
from kernel.core.units import micros_to_usd, ms_to_seconds
from kernel.errors import ConfigError
from kernel.repositories import goals, requests
from kernel.repositories.requests import INTAKE_TAG
from kernel.store.base import GraphStore
from kernel.story import run_story


def request_view(store: GraphStore, request_id: str,
                 listed: list[requests.Listed] | None = None) -> dict[str, Any]:
    """Everything ``request_id`` needs to be answered (``listed``: every request, read
    once when several are shown)."""
    every = listed if listed is not None else requests.list_requests(store)
    request = next((r for r in every if r["id"] == request_id), None)
    if request is None:
        raise ConfigError(f"no capability request {request_id!r}; 'kernel hire list --all' "
                          "shows them")
    view: dict[str, Any] = dict(request)
    view["build_constraints"] = json.loads(request.get("build_constraints") or "[]")
    goal_id, run_id = request.get("goal_id"), request.get("run_id")
    view["goal"] = _goal(store, goal_id, run_id) if goal_id and run_id else None
    view["similar"] = [_answered(r) for r in every
                       if r["id"] != request_id and r["capability_tag"] == request["capability_tag"]]
    view["answer_with"] = _commands(request)
    return view


def _goal(store: GraphStore, goal_id: str, run_id: str) -> dict[str, Any] | None:
    stored = goals.view(store, goal_id)
    if stored is None:
        return None
    goal = stored["goal"]
    engine = ConstraintEngine(store)
    roles = engine.roles(goal_id)
    selected = roles["selected"] or roles["eligible"] or roles["core"]
    left = BudgetEnforcer(Run.load(store, run_id)).remaining(goal_id)
    story = run_story(store, run_id, goal_id)
    attempts = story["goals"][0]["attempts"] if story["goals"] else []
    return {
        "id": goal_id, "run_id": run_id, "summary": goal.get("summary"),
        "description": goal.get("description"), "status": goal.get("status"),
        "constraints": [{"title": c.title, "type": c.type.value,
                         "core": c.id in roles["core"]} for c in engine.get_many(selected)],
        "attempts": [{"index": a["index"], "resolver": a["resolver"],
                      "proposer": a["proposer"], "verdict": a["verdict"],
                      "cost_usd": a["cost_usd"], "seconds": a["seconds"],
                      "failed": [f"{c['constraint']}: {c['found']}" for c in a["failed_checks"]],
                      "failure_mode": a["failure_mode"]} for a in attempts],
        "causes": sorted({a["failure_mode"] for a in attempts if a["failure_mode"]}),
        "remaining_usd": micros_to_usd(left.cost), "remaining_seconds": ms_to_seconds(left.time),
    }


def _answered(request: requests.Listed) -> dict[str, Any]:
    """A similar request and how it was answered."""
    answer = json.loads(request.get("answer") or "null")
    kind = answer.get("kind") if isinstance(answer, dict) else None
    return {"id": request["id"], "status": request["status"], "reason": request["reason"],
            "answered": kind or ("intake answer" if answer else None),
            "resolver_id": request.get("resolver_id"),
            "goals": [g["summary"] for g in request.get("goals", [])]}


def _commands(request: requests.Listed) -> list[str]:
    """The exact commands that answer the request (none once it is answered)."""
    if request["status"] != "requested":
        return []
    rid = request["id"]
    if request["capability_tag"] == INTAKE_TAG:
        return [f"kernel hire answer {rid} --intake FILE", f"kernel hire answer {rid} --decline"]
    if request["capability_tag"] == "budget":
        return [f"kernel hire answer {rid} --add-budget USD [--add-time SECONDS]",
                f"kernel hire answer {rid} --decline"]
    return [f"kernel hire answer {rid} --resolver TOOL.yaml",
            f"kernel hire answer {rid} --add-budget USD [--add-time SECONDS]",
            f"kernel hire answer {rid} --decline"]
