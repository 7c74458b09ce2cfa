"""A step written as an effect producer, taken ahead of its turn, is advanced to its
first call and that call is started: no flag on the store, nothing to rewind."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from kernel.bench.concurrency import TREES, run_tree
from kernel.protocol import Proposer, ResolveRequest
from kernel.runtime.calls import Calls
from kernel.solve import moves
from kernel.solve.dispatch import FIRST_MOVE
from kernel.solve.steps import BY_MOVE
from kernel.store import GraphStore


def _parts_with_two_constraints() -> Any:
    """The fan-out tree whose parts each identify two constraints of their own: step 3
    asks which of them to verify, for every part."""
    script = json.loads(json.dumps(TREES[0].script))
    judged = script["fallback"]["verify_semantic"]["output"]["checks"]
    own = [{"type": "semantic", "domain": "style", "title": title, "explicit": True}
           for title in ("reads well", "is short")]
    judged += [{**judged[0], "constraint_id": c["title"]} for c in own]
    script["proposals"].append({"operation": "identify_constraints", "goal": "bench part*",
                                "repeat": True, "output": {
                                    "required_capabilities": ["generate_code"],
                                    "constraints": own}})
    script["fallback"]["select_constraints"] = {"output": {
        "constraint_ids": ["reads well"], "rationale": "the one that matters"}}
    return replace(TREES[0], script=script)



def _starts_recorded(store: GraphStore, monkeypatch: pytest.MonkeyPatch
                     ) -> list[tuple[str, bool]]:
    """Each call started, by operation, with whether the store was in look-ahead then."""
    started: list[tuple[str, bool]] = []
    start = Calls.start

    def recording(calls: Calls, source: Proposer, request: ResolveRequest,
                  *args: Any) -> None:
        started.append((request.operation, store.lookahead))
        start(calls, source, request, *args)

    monkeypatch.setattr(Calls, "start", recording)
    return started

@pytest.mark.slow
def test_a_call_of_an_effect_producing_step_is_started_ahead_without_the_store_in_look_ahead(
        initialised: GraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
    assert BY_MOVE[moves.SelectConstraints].produces_effects
    assert moves.SelectConstraints in FIRST_MOVE.values()
    started = _starts_recorded(initialised, monkeypatch)
    tree = _parts_with_two_constraints()
    alone = run_tree(initialised, tree, 1, 0.0)
    assert alone.status == "resolved" and started == []
    ahead = run_tree(initialised, tree, 4, 0.01)
    assert ahead.summary_hash == alone.summary_hash and ahead.unused == 0
    assert ("select_constraints", False) in started
    assert all(not flagged for operation, flagged in started
               if operation == "select_constraints")


@pytest.mark.slow
def test_resolve_and_verify_taken_ahead_start_their_calls_and_the_leaf_step_s_after_them(
        initialised: GraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Resolve opens its attempt ahead of its turn as it would be opened (nothing
    buffered) and starts its call; a verification that asks nothing and rides the goal's
    move goes on into the leaf step, whose call is started and used: all without the
    store in look-ahead."""
    assert BY_MOVE[moves.Resolve].produces_effects and BY_MOVE[moves.Verify].produces_effects
    started = _starts_recorded(initialised, monkeypatch)
    alone = run_tree(initialised, TREES[0], 1, 0.0)
    ahead = run_tree(initialised, TREES[0], 4, 0.01)
    assert ahead.summary_hash == alone.summary_hash and ahead.unused == 0
    assert {"resolve", "classify_leaf"} <= {operation for operation, _ in started}
    assert all(not flagged for operation, flagged in started
               if operation in ("resolve", "classify_leaf"))
