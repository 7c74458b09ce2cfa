"""The kernel as a library: what ``kernel`` the command does, callable from Python.

The CLI parses arguments into these requests and renders what comes back; anything a
person can do from the command line goes through here. Importing this module loads
neither the anthropic SDK nor the embedding model: they load when a run needs them.

    from kernel import api
    with api.open_store() as store:
        outcome = api.solve(store, api.SolveRequest(goal="...", proposer="scripted",
                                                    script=Path("script.yaml")))
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kernel._views import (
    list_runs,
    outcome_report,
    plan_document,
    root_goal,
    run_refusals,
    run_status,
    run_tree,
    store_status,
)
from kernel.repositories.analytics import analytics_queries, analytics_rows
from kernel.runtime import progress
from kernel.settings import KernelSettings
from kernel.store import open_store
from kernel.store.base import GraphStore

if TYPE_CHECKING:
    from kernel._solve_request import SolveRequest
    from kernel.core.summary import summary_hash
    from kernel.graph_io import export_graph, import_graph
    from kernel.plan.session import plan_goal, resume_plan
    from kernel.protocol import HireAnswer
    from kernel.protocol.intake_models import IntakeAnswer
    from kernel.repositories.requests import Listed
    from kernel.solve.dispatch import Outcome
    from kernel.solve.session import replay, resume

# What a command that only reads the store never needs is imported on first use, so
# `kernel status` does not load the SOLVE loop, the planner or the model clients.
_LAZY = {
    "summary_hash": "kernel.core.summary", "export_graph": "kernel.graph_io",
    "import_graph": "kernel.graph_io", "plan_goal": "kernel.plan.session",
    "resume_plan": "kernel.plan.session", "HireAnswer": "kernel.protocol",
    "Outcome": "kernel.solve.dispatch", "replay": "kernel.solve.session",
    "resume": "kernel.solve.session", "SolveRequest": "kernel._solve_request",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'kernel.api' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


__all__ = [
    "HireAnswer", "KernelSettings", "Outcome", "SolveRequest", "analytics_queries",
    "analytics_rows", "answer_hire", "export_graph",
    "hire_requests", "import_graph", "list_runs", "open_store", "outcome_report",
    "plan_document", "plan_goal", "replay", "resume", "resume_plan", "root_goal", "run_refusals",
    "run_status", "run_summary", "run_tree", "solve", "store_status", "summary_hash",
]


def solve(store: GraphStore, request: SolveRequest, settings: KernelSettings | None = None, *,
          on_start: Callable[[Any, str], None] | None = None,
          on_step: Callable[[str], None] | None = None,
          human_prompt: Callable[[dict[str, Any]], Any] | None = None,
          stop_after_intake: bool = False) -> Outcome:
    """Start a run for the request and drive it until it resolves, is refused or stops
    (with ``stop_after_intake``, once the person has confirmed the goal)."""
    from kernel.runtime.inputs import RunInputs
    from kernel.runtime.kernel import SolveConfig
    from kernel.runtime.proposers import make_proposer
    from kernel.solve.session import start_and_solve

    settings = settings or KernelSettings.load()
    progress.report("phase", "loading the proposer")
    core = list(request.constraints)
    repo: dict[str, Any] = {}
    if request.repo is not None:
        from kernel.solve.repo_goal import repo_input, with_repo_tests

        # refused before anything is stored
        repo["repo"] = repo_input(request.repo, settings, request.test_cmd)
        core = with_repo_tests(core)
    proposer, recorded = make_proposer(request.proposer, request.script, settings,
                                       core_titles={c.title for c in core})
    progress.report("phase", "recording the goal and its constraints")
    given: dict[str, Any] = dict(recorded)  # only what was asked for is recorded
    if request.intake:
        given["intake"] = True
    if stop_after_intake:  # however the confirmation arrives (a resume after `hire answer`)
        given["stop_after_intake"] = True
    if request.suggestions:
        given["suggestions"] = request.suggestions
    if request.fresh:
        given["fresh"] = True
    given.update(repo)
    inputs = RunInputs(
        goal=request.goal, budget_usd=request.budget_usd, time_seconds=request.time_seconds,
        max_attempts=request.max_attempts, core=core,
        solve=SolveConfig(tau_local=settings.tau_local, tau_global=settings.tau_global,
                          max_wall_seconds=request.max_wall_seconds,
                          sandbox_run_usd=settings.sandbox_run_usd), **given)
    return start_and_solve(settings, store, inputs, proposer, on_start=on_start,
                           on_step=on_step, human_prompt=human_prompt)


def run_summary(store: GraphStore, run_id: str) -> dict[str, Any]:
    """What a run committed: goals, attempts, budget events, the ledger's head."""
    from kernel.core.summary import summary

    return summary(store, run_id)


def hire_requests(store: GraphStore, statuses: list[str] | None = None) -> list[Listed]:
    """Capability requests the kernel asked a person for."""
    from kernel.repositories.requests import list_requests

    return list_requests(store, statuses)


def answer_hire(store: GraphStore, request_id: str, answer: HireAnswer | IntakeAnswer,
                ) -> list[str]:
    """Store a person's answer; returns the runs waiting on it (resume them to use it)."""
    from kernel.repositories.requests import record_answer, runs_waiting_on

    record_answer(store, request_id, answer)
    return runs_waiting_on(store, request_id)


