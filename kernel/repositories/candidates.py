"""The candidates an attempt weighed: its own output and a person's suggestions."""

from __future__ import annotations

from typing import Any, TypedDict, cast

from kernel.core.run import Run
from kernel.store.base import GraphStore

# The ledger's name for the observation of ``history`` (it reads other runs' verdicts).
HISTORY_OBSERVATION = "suggestion/history"


class SeenBefore(TypedDict):
    """How a candidate's content fared wherever it was verified before."""

    sha256: str
    total: int
    passed: int


class Weighed(TypedDict):
    """A weighed candidate as the outcome report shows it."""

    artifact_id: str
    status: str
    rank: int
    verdict: str
    sigma_v: float
    verification: str  # a Verification, as JSON
    author_kind: str | None
    author: str | None
    metadata: str | None


def verification(store: GraphStore, artifact_id: str) -> str | None:
    """The recorded verification (JSON) of a weighed candidate, if any."""
    rows = store.run("suggestion/verification", {"artifact_id": artifact_id})
    return str(rows[0]["verification"]) if rows and rows[0]["verification"] else None


def weigh(run: Run, params: dict[str, Any], *, what: str) -> None:
    """Every candidate's place and verdict, and the chosen one as the output, in one commit."""
    run.commit("suggestion/weigh", params, what=what)


def history(store: GraphStore, hashes: list[str], goal_id: str) -> list[SeenBefore]:
    return cast(list[SeenBefore], store.run("suggestion/history",
                                            {"hashes": hashes, "goal_id": goal_id}))


def of_goal(store: GraphStore, goal_id: str) -> list[Weighed]:
    """The candidates a goal's attempt weighed, best first."""
    return cast(list[Weighed], store.run("suggestion/of_goal", {"goal_id": goal_id}))
