"""Runs as people list and inspect them (``kernel.core.run.Run`` owns a run's own
commits)."""

from __future__ import annotations

from typing import TypedDict, cast

from kernel.store.base import GraphStore


class RunRecord(TypedDict):
    id: str
    seq: int
    proposals: int | None
    base_ms: int
    started_at: str
    config: str | None  # the run's inputs, as JSON
    queue: list[str] | None
    root_id: str | None
    spent_model: int  # micro-dollars paid to the model (and the other boot resolvers)
    spent_sandbox: int  # to the sandbox that runs the tests
    spent_tool: int  # to the tools BUILD and HIRE added


class Listed(TypedDict):
    id: str
    started_at: str
    commits: int
    goal: str | None
    status: str | None
    holder: str | None
    expires: int | None
    stopped: str | None
    config: str | None
    spent: int | None  # micro-dollars
    spent_model: int
    spent_sandbox: int
    spent_tool: int


class Refusal(TypedDict):
    index: int
    goal_id: str
    reason: str
    content: str  # the refusal report, as JSON


def get(store: GraphStore, run_id: str) -> RunRecord | None:
    rows = store.run("run/get", {"run_id": run_id})
    return cast(RunRecord, rows[0]) if rows else None


def listing(store: GraphStore) -> list[Listed]:
    """Every run, newest first, with its root goal, lease and spend."""
    return cast(list[Listed], store.run("run/list"))


def refusals(store: GraphStore, run_id: str) -> list[Refusal]:
    """The run's refusal entries in the ledger, newest first."""
    return cast(list[Refusal], store.run("run/refusals", {"run_id": run_id}))
