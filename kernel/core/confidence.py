"""Confidence composition (formalization §5-6, axiom B7).

sigma_v of a node is the minimum over its checks (see ``Verification``); sigma_path is
the product of sigma_v along root -> node (unverified nodes count as 1); sigma_system is
the minimum sigma_path over the live leaves. Values are kept at 15 significant digits,
which both backends store and return identically.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kernel.core.run import Run
from kernel.core.units import canonical_float


@dataclass(frozen=True)
class PathNode:
    id: str
    sigma_v: float | None
    depth: int


def path_sigma(sigmas: Sequence[float | None]) -> float:
    product = 1.0
    for sigma in sigmas:
        if sigma is not None:
            product = canonical_float(product * sigma)
    return product


def weakest_ancestor(path: Sequence[PathNode]) -> str | None:
    """The node with the lowest sigma_v on the path; the deepest one on ties (least to redo)."""
    judged = [n for n in path if n.sigma_v is not None]
    if not judged:
        return None
    return min(judged, key=lambda n: (n.sigma_v, -n.depth)).id


class Confidence:
    def __init__(self, run: Run) -> None:
        self.run = run
        self.store = run.store

    def path(self, goal_id: str) -> list[PathNode]:
        rows = self.store.run("goal/path", {"goal_id": goal_id})
        return [PathNode(p["id"], p["sigma_v"], int(p["depth"])) for p in rows[0]["path"]] \
            if rows else []

    def recompute_subtree(self, goal_id: str) -> dict[str, float]:
        """Recompute sigma_path for a goal and its live descendants, in one commit."""
        values, rows = self.subtree_sigmas(goal_id)
        self.store_sigma_paths(goal_id, rows)
        return values

    def store_sigma_paths(self, goal_id: str, rows: Sequence[Mapping[str, object]]) -> None:
        """Store the sigma_path values ``subtree_sigmas`` found changed, in one commit."""
        if rows:  # nothing to write when nothing changed
            self.run.commit("goal/set_sigma_paths",
                            {"goal_id": goal_id, "rows": [dict(r) for r in rows]},
                            what=f"recompute sigma_path under {goal_id}")

    def subtree_sigmas(self, goal_id: str, sigma_v: float | None = None,
                       ) -> tuple[dict[str, float], list[dict[str, object]]]:
        """sigma_path of a goal and its live descendants, and the rows to store when they
        differ from what is stored; ``sigma_v`` is the goal's own, when a verification
        about to be recorded with those rows sets it."""
        found = self.store.run("goal/sigma_inputs", {"goal_id": goal_id})
        if not found:
            return {}, []
        base = path_sigma([p["sigma_v"] for p in found[0]["path"][:-1]])
        values: dict[str, float] = {}
        stored: dict[str, float | None] = {}
        subtree = sorted(found[0]["subtree"],  # parents first
                         key=lambda r: (r["depth"], r["seq"] is None, r["seq"] or 0, r["id"]))
        for row in subtree:
            own = sigma_v if row["id"] == goal_id and sigma_v is not None else row["sigma_v"]
            parent = base if row["id"] == goal_id else values[row["parent_id"]]
            values[row["id"]] = path_sigma([parent, own])
            stored[row["id"]] = row["sigma_path"]
        if not values or values == stored:
            return values, []
        return values, [{"id": k, "sigma_path": v} for k, v in sorted(values.items())]

    def system_sigma(self) -> float | None:
        leaves = self.store.run("goal/leaves", {"run_id": self.run.run_id})
        sigmas = [r["sigma_path"] for r in leaves]
        if not sigmas or any(s is None for s in sigmas):
            return None
        return float(min(sigmas))
