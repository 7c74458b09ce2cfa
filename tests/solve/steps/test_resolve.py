"""Step 5 driven without a store: the attempt it opens, the calls of its plan (each answered
by the tool it names), and the output and spend it hands back to write together."""

from __future__ import annotations

from typing import Any

from kernel.core.envelopes import Attempt, Lineage, ToolPlan, ToolStep
from kernel.core.state_machine import Status
from kernel.proposals import Proposal
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.solve import moves
from kernel.solve.effects import (
    Flow,
    ModelCall,
    NewArtifact,
    Observe,
    OpenAttempt,
    Pay,
    Tool,
    Transition,
    Wake,
)
from kernel.solve.steps.resolve import resolve
from tests.solve.steps.fakes import FakeView, constraint, drive, goal

MODEL = "resolver:claude-code-0"
SCRIPT = "resolver:tool-upper"
OUTPUT = models.ResolutionOutput(artifact_type="code", format="python", content="a + b")


def _plan(*resolvers: str) -> ToolPlan:
    return ToolPlan(steps=[ToolStep(resolver_id=r, capability="generate_code") for r in resolvers])


def _view(plan: ToolPlan, tried: list[Attempt] | None = None, **fields: Any) -> FakeView:
    g = goal(status=Status.RESOLVING, plan_artifact_id="art:plan", attempt_count=len(tried or []),
             input_artifact_ids=["art:in"], **fields)
    return FakeView(goals={g.id: g}, role_ids={g.id: {"selected": ["c:1"]}},
                    known={"c:1": constraint("c:1", "adds")}, plans={"art:plan": plan},
                    attempts={g.id: tried or []},
                    histories={(g.id, "resolve"): {"similar": []}})


def _opened(index: int = 1, **fields: Any) -> Attempt:
    return Attempt(id=f"attempt:{index}", node_id="goal:a", attempt_index=index,
                   resolver_id=MODEL, **fields)


def _answer(output: Any = OUTPUT, replayed: bool = False) -> Proposal[Any]:
    return Proposal(output=output, cost_usd=0.02, seconds=3.0, metadata={}, ledger_index=7,
                    ledger_hash="f" * 64, replayed=replayed)


def test_an_attempt_is_opened_then_one_call_whose_output_and_spend_are_written_together() -> None:
    view = _view(_plan(MODEL), feedback={"fix": "add"})
    g = view.goal("goal:a")
    asked, done = drive(resolve(view, moves.Resolve(g)), [_opened(), {}, _answer()])
    opened, history, call = asked
    assert opened == OpenAttempt("goal:a", MODEL, "art:plan", ("art:in",), {"fix": "add"})
    assert isinstance(history, Observe) and history.name == "history/resolve"
    assert isinstance(call, ModelCall) and call.operation is ops.RESOLVE
    assert not call.pay and call.answerer == Tool(MODEL) and call.resolver_id == MODEL
    assert call.request.feedback == {"fix": "add"} and call.request.input_artifact_ids == ["art:in"]
    assert "sandbox" in call.request.payload and call.request.payload["inputs"] == []
    assert done.then == ["goal:a"]
    pay, wake, transition, said = done.changes.changes
    assert pay == Pay("goal:a", 0.02, 3.0, MODEL, "resolve", "f" * 64, False, "attempt:1",
                      NewArtifact("goal:a", OUTPUT.model_dump_json(), "code", "json",
                                  Lineage(node_id="goal:a", resolver_id=MODEL,
                                          constraint_ids=["c:1"], input_artifact_ids=["art:in"]),
                                  key=f"proposal:{'f' * 64}", unseen=True,
                                  metadata=(("content_format", "python"), ("ledger_index", 7))))
    assert (wake, transition) == (Wake(("goal:a",)), Transition("goal:a", Status.VERIFYING))
    assert said == Flow("goal:a", f"RESOLVE using {MODEL} (attempt 1)")


def test_a_plan_of_two_tools_runs_the_first_paid_as_it_runs_and_hands_its_output_on() -> None:
    view = _view(_plan(SCRIPT, MODEL))
    first = models.ResolutionOutput(artifact_type="text", format="text", content="A + B")
    asked, done = drive(resolve(view, moves.Resolve(view.goal("goal:a"))),
                        [_opened(), {}, _answer(first), _answer(replayed=True)])
    _, _, tool, last = asked
    assert isinstance(tool, ModelCall) and tool.pay and tool.answerer == Tool(SCRIPT)
    assert tool.resolver_id == SCRIPT and tool.request.payload["inputs"] == []
    assert isinstance(last, ModelCall) and not last.pay and last.answerer == Tool(MODEL)
    [handed] = last.request.payload["inputs"]
    assert handed["from_step"] == 1 and handed["resolver_id"] == SCRIPT
    pay = done.changes.changes[0]
    assert isinstance(pay, Pay) and pay.resolver_id == MODEL and pay.replayed
    assert pay.output is not None and not pay.output.unseen  # served again: looked up by key


def test_an_attempt_a_crash_left_open_is_continued_and_one_already_paid_goes_to_verify() -> None:
    open_one = _opened(2)
    view = _view(_plan(MODEL), tried=[_opened(1, verdict="UNSAT"), open_one])
    view.verified_output = {"content": "a - b", "verdict": "UNSAT"}
    asked, done = drive(resolve(view, moves.Resolve(view.goal("goal:a"))), [{}, _answer()])
    assert [type(r) for r in asked] == [Observe, ModelCall]
    call = asked[1]
    assert isinstance(call, ModelCall)
    assert call.request.payload["last_output"] == {"content": "a - b", "verdict": "UNSAT"}
    pay = done.changes.changes[0]
    assert isinstance(pay, Pay) and pay.attempt_id == "attempt:2"
    assert done.changes.changes[-1] == Flow("goal:a", f"RESOLVE using {MODEL} (attempt 2)")
    paid = _opened(2, output_artifact_id="art:out")
    view = _view(_plan(MODEL), tried=[paid])
    asked, done = drive(resolve(view, moves.Resolve(view.goal("goal:a"))), [])
    assert asked == [] and done.then == ["goal:a"]
    assert done.changes.changes == (Wake(("goal:a",)), Transition("goal:a", Status.VERIFYING))


def test_with_no_tries_left_nothing_is_asked_and_the_goal_goes_to_build() -> None:
    view = _view(_plan(MODEL), tried=[_opened(1, verdict="UNSAT")], max_attempts=1)
    asked, done = drive(resolve(view, moves.Resolve(view.goal("goal:a"))), [])
    assert asked == [] and done.then == moves.Grow(view.goal("goal:a")) and not done.changes


def test_a_repository_goal_is_shown_its_repository() -> None:
    view = _view(_plan(MODEL))
    view.in_repository = True
    view.repo_views["goal:a"] = {"files": ["calc.py"]}
    asked, _ = drive(resolve(view, moves.Resolve(view.goal("goal:a"))), [_opened(), {}, _answer()])
    call = asked[2]
    assert isinstance(call, ModelCall)
    assert call.request.payload["repository"] == {"files": ["calc.py"]}
