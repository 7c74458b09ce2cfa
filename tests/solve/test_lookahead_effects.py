"""A step, taken ahead of its turn, is advanced to its first call and that call is
started: nothing is written while it is, so there is nothing to refuse or rewind."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from kernel.bench.concurrency import TREES, run_tree
from kernel.protocol import Proposer, ResolveRequest
from kernel.runtime.calls import Calls
from kernel.solve import dispatch, moves
from kernel.solve.dispatch import FIRST_MOVE
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



def _starts_recorded(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[str]]:
    """Each call started, by operation, and every statement other than a read sent while
    the loop took steps ahead of their turn."""
    started: list[str] = []
    written: list[str] = []
    ahead = [False]
    start, run, look_ahead = Calls.start, GraphStore.run, dispatch.look_ahead

    def recording(calls: Calls, source: Proposer, request: ResolveRequest,
                  *args: Any) -> None:
        started.append(request.operation)
        start(calls, source, request, *args)

    def watched(store: GraphStore, name: str, *args: Any, **kwargs: Any) -> Any:
        if ahead[0] and store.catalog.get(name).mode != "read":
            written.append(name)
        return run(store, name, *args, **kwargs)

    def looking(*args: Any) -> None:
        ahead[0] = True
        try:
            look_ahead(*args)
        finally:
            ahead[0] = False

    monkeypatch.setattr(Calls, "start", recording)
    monkeypatch.setattr(GraphStore, "run", watched)
    monkeypatch.setattr(dispatch, "look_ahead", looking)
    return started, written

@pytest.mark.slow
def test_a_call_of_a_step_is_started_ahead_with_nothing_written(
        initialised: GraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
    assert moves.SelectConstraints in FIRST_MOVE.values()
    started, written = _starts_recorded(monkeypatch)
    tree = _parts_with_two_constraints()
    alone = run_tree(initialised, tree, 1, 0.0)
    assert alone.status == "resolved" and started == []
    ahead = run_tree(initialised, tree, 4, 0.01)
    assert ahead.summary_hash == alone.summary_hash and ahead.unused == 0
    assert "select_constraints" in started and written == []


@pytest.mark.slow
def test_resolve_and_verify_taken_ahead_start_their_calls_and_the_leaf_step_s_after_them(
        initialised: GraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Resolve opens its attempt ahead of its turn as it would be opened (nothing
    buffered) and starts its call; a verification that asks nothing and rides the goal's
    move goes on into the leaf step, whose call is started and used: all with nothing
    written."""
    started, written = _starts_recorded(monkeypatch)
    alone = run_tree(initialised, TREES[0], 1, 0.0)
    ahead = run_tree(initialised, TREES[0], 4, 0.01)
    assert ahead.summary_hash == alone.summary_hash and ahead.unused == 0
    assert {"resolve", "classify_leaf"} <= set(started) and written == []
