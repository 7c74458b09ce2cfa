"""The summary hash of a run: one sha256 over its committed state.

It covers every goal (status, confidence, constraint roles, dependencies, budget), every
attempt (outcome and the content hash of its output), the budget ledger, and the head of
the proposal ledger; wall-clock values are not part of it. Same inputs and the same
recorded proposals give the same hash: that is what replay and resume are checked by.
"""

from __future__ import annotations

import hashlib
from typing import Any

from kernel.core.envelopes import canonical_json
from kernel.core.ledger import load_entries
from kernel.store.base import GraphStore


def summary(store: GraphStore, run_id: str) -> dict[str, Any]:
    head, size, _ = load_entries(store, run_id)
    return {
        "run_id": run_id,
        "goals": store.run("summary/goals", {"run_id": run_id}),
        "attempts": store.run("summary/attempts", {"run_id": run_id}),
        "budget": store.run("summary/budget", {"run_id": run_id}),
        "ledger": {"head": head, "size": size},
    }


def summary_hash(store: GraphStore, run_id: str) -> str:
    return hashlib.sha256(canonical_json(summary(store, run_id)).encode()).hexdigest()
