"""Step 4 driven without a store: the candidates, the record that may single one out,
the ranking call, and the tool plan handed back as an artifact the goal resolves with."""

from __future__ import annotations

import json

from kernel.core.envelopes import Attempt
from kernel.core.goal_node import GoalChanges
from kernel.core.registry import Candidate
from kernel.core.state_machine import Status
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.solve import moves
from kernel.solve.effects import Decision, ModelCall, NewArtifact, Observe, Transition, Wake
from kernel.solve.steps.select_resolver import select_resolver
from tests.solve.steps.fakes import FakeView, constraint, drive, goal, proposal

S = Status


def _candidate(cid: str, matched: int = 1) -> Candidate:
    return Candidate(id=cid, label=cid, matched=matched, success_rate=0.5, quality=1.0,
                     cost=0.0)


def _view(*providers: str, **fields: object) -> FakeView:
    g = goal(status=S.SELECTING_RESOLVER, required_capabilities=["generate_code"],
             pattern_id="pattern:add", **fields)
    return FakeView(goals={g.id: g}, role_ids={g.id: {"selected": ["c:1"]}},
                    known={"c:1": constraint("c:1", "adds")},
                    providers={"generate_code": [_candidate(p) for p in providers]},
                    registry=[{"id": p, "description": f"{p} writes code",
                               "capabilities": ["generate_code"]} for p in providers])


def _outcome(resolver: str, successes: int, failures: int = 0) -> dict[str, object]:
    return {"resolver_id": resolver, "successes": successes, "failures": failures,
            "successes_here": successes, "failures_here": failures}


def _plan(transition: object) -> dict[str, object]:
    assert isinstance(transition, Transition)
    [(name, artifact)] = transition.made
    assert name == "plan_artifact_id" and isinstance(artifact, NewArtifact)
    assert artifact.lineage.constraint_ids == ["c:1"] and artifact.type == "tool_plan"
    return json.loads(artifact.content)  # type: ignore[no-any-return]


def test_one_candidate_is_planned_without_a_call_and_the_goal_moves_on_to_resolve() -> None:
    view = _view("claude-1")
    asked, done = drive(select_resolver(view, moves.SelectResolver(view.goal("goal:a"))), [{}])
    assert asked == [Observe("history/route", "goal:a", lambda: None)]
    wake, transition, decision = done.changes.changes
    assert wake == Wake(("goal:a",)) and done.then == ["goal:a"]
    assert _plan(transition)["steps"][0]["resolver_id"] == "claude-1"  # type: ignore[index]
    assert transition.to == S.RESOLVING  # type: ignore[attr-defined]
    assert transition.changes == GoalChanges(resolver_id="claude-1")  # type: ignore[attr-defined]
    [(_, artifact)] = transition.made  # type: ignore[attr-defined]
    assert artifact.unseen and artifact.key.startswith("plan:goal:a:1:")
    assert decision == Decision("goal:a", "resolver_selection", ("claude-1",), "claude-1",
                                "the only candidate")


def test_several_candidates_are_ranked_by_the_model_and_a_plan_naming_none_falls_back() -> None:
    view = _view("tool-a", "tool-b")
    ranked = models.ResolverRanking(steps=[{"resolver_id": "elsewhere",
                                            "capability": "generate_code"}], rationale="r")
    asked, done = drive(select_resolver(view, moves.SelectResolver(view.goal("goal:a"))),
                        [{}, proposal(ranked)])
    call = asked[1]
    assert isinstance(call, ModelCall) and call.operation is ops.RANK_RESOLVERS
    listing = call.request.payload["candidates"]
    assert [c["resolver_id"] for c in listing] == ["tool-a", "tool-b"]
    assert listing[0]["description"] == "tool-a writes code"
    assert [c.id for c in call.request.constraints] == ["c:1"]
    transition, decision = done.changes.changes[1:]
    assert _plan(transition)["steps"][0]["resolver_id"] == "tool-a"  # type: ignore[index]
    assert decision.rationale == "proposal named no candidate; kernel rank 1"  # type: ignore[attr-defined]


def test_a_record_of_successes_on_goals_like_it_routes_without_a_call_unless_it_failed_here() -> None:
    view = _view("tool-a", "tool-b")
    history = {"resolver_outcomes": [_outcome("tool-b", 3)]}
    asked, done = drive(select_resolver(view, moves.SelectResolver(view.goal("goal:a"))),
                        [history])
    assert len(asked) == 1
    assert done.changes.changes[2].chosen == "tool-b"  # type: ignore[union-attr]
    assert done.changes.changes[2].rationale.startswith("learned route: 3 successes")  # type: ignore[union-attr]
    # a proven tool outside the capability is offered, unless it failed on this goal
    view = _view("tool-a", attempt_count=1)
    view.providers["other"] = [_candidate("tool-c", 0)]
    history = {"resolver_outcomes": [_outcome("tool-c", 2)]}
    _, done = drive(select_resolver(view, moves.SelectResolver(view.goal("goal:a"))), [history])
    assert done.changes.changes[2].chosen == "tool-c"  # type: ignore[union-attr]
    view.attempts["goal:a"] = [Attempt(id="att:1", node_id="goal:a", attempt_index=1,
                                       resolver_id="tool-c", verdict="UNSAT")]
    _, done = drive(select_resolver(view, moves.SelectResolver(view.goal("goal:a"))), [history])
    assert done.changes.changes[2].chosen == "tool-a"  # type: ignore[union-attr]


def test_no_candidate_at_all_goes_to_build_for_the_missing_capability_with_no_change() -> None:
    view = _view()
    _, done = drive(select_resolver(view, moves.SelectResolver(view.goal("goal:a"))), [{}])
    assert done.then == moves.Grow(view.goal("goal:a"), missing="generate_code")
    assert not done.changes
