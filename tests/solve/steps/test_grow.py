"""Step 10, BUILD, driven without a store: the lookup before a build (a registered tool
is used instead), the gap's call when selection did not name the capability, the
self-model asked before the kernel builds, the build subgoal asked for (its id taken
when it is made) and the goal parked on it; then the built tool registered, or HIRE."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kernel.core.budget import Amount
from kernel.core.envelopes import Attempt
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.registry import Candidate
from kernel.core.state_machine import Status
from kernel.kg.history import BuildLookup
from kernel.protocol import ToolDefinition
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.protocol.resolver_ids import SELF_MODEL_ID
from kernel.runtime.gate import CLAUDE_ID
from kernel.solve import moves
from kernel.solve.effects import (
    AllocateChildren,
    Decision,
    Flow,
    ModelCall,
    NewChild,
    Observe,
    RegisterTool,
    StoreConstraints,
    Transition,
    UpdateGoal,
)
from kernel.solve.steps.grow import BUILD_SHARE, OUTLOOK, TOOL_CONTRACT, grow, on_build_done
from tests.solve.steps.fakes import FakeView, drive, goal, proposal

S = Status
TAG = "tabular_query"
NOTHING = BuildLookup(tools=[], builds=[], requests=[])
CODE = "def run(request):\n    return {'content': 'rows'}\n"


@dataclass
class GrowView(FakeView):
    """``FakeView`` with what BUILD reads: the lookup before a build, what a goal has
    left, the self-model's answers and what the static check says of a tool."""

    lookups: dict[str, BuildLookup] = field(default_factory=dict)
    budgets: dict[str, Amount] = field(default_factory=dict)
    outlooks: dict[str, dict[str, Any]] = field(default_factory=dict)  # by capability
    bad_code: dict[str, list[str]] = field(default_factory=dict)  # by code
    bad_tools: dict[str, list[str]] = field(default_factory=dict)  # by tool label

    def build_lookup(self, tag: str) -> BuildLookup:
        return self.lookups.get(tag, NOTHING)

    def budget_left(self, goal_id: str) -> Amount:
        return self.budgets[goal_id]

    def build_outlook(self, goal: GoalNode, tag: str, share: Amount) -> Observe:
        answer = {**self.outlooks[tag], "share_usd": share.cost / 1e6,
                  "share_seconds": share.time / 1e3}
        return Observe(OUTLOOK, goal.id, lambda: answer, source=SELF_MODEL_ID)

    def code_problems(self, code: str) -> list[str]:
        return self.bad_code.get(code, [])

    def tool_problems(self, tool: ToolDefinition) -> list[str]:
        return self.bad_tools.get(tool.label, [])


def _outlook(reason: str | None = None) -> dict[str, Any]:
    return {"capability": TAG, "modality": "code", "builders": [CLAUDE_ID],
            "builds_finished": 2, "builds_resolved": 1, "expected_cost_usd": 0.5,
            "expected_seconds": 60.0, "share_usd": 0.0, "share_seconds": 0.0, "reason": reason}


def _tool(resolver_id: str) -> Candidate:
    return Candidate(resolver_id, resolver_id, 1, 1.0, 1.0, 0.0)


def _view(g: GoalNode, **fields: Any) -> GrowView:
    return GrowView(**{"goals": {g.id: g}, "budgets": {g.id: Amount(4_000_000, 600_000)},
                       "left": {g.id: 4_000_000}, "outlooks": {TAG: _outlook()}, **fields})


def _tried(*resolvers: str) -> dict[str, list[Attempt]]:
    return {"goal:a": [Attempt(id=f"att:{n}", node_id="goal:a", attempt_index=n, resolver_id=r,
                               verdict="UNSAT") for n, r in enumerate(resolvers, start=1)]}


def test_a_registered_tool_found_before_a_build_is_used_and_nothing_is_built() -> None:
    g = goal(status=S.SELECTING_RESOLVER, attempt_count=0)
    view = _view(g, providers={TAG: [_tool("resolver:sql-1")]}, lookups={TAG: BuildLookup(
        tools=[{"id": "resolver:sql-1"}], builds=[], requests=[{"id": "capreq:1"}])})
    asked, done = drive(grow(view, moves.Grow(g, missing=TAG)), [])
    assert asked == []  # no call, no self-model, no subgoal
    assert done.then == ["goal:a"]
    looked, retried, said = done.changes.changes
    assert looked == Decision("goal:a", "lookup_before_build", ("resolver:sql-1",),
                              "resolver:sql-1", "registry capability match, then history",
                              (("capability", TAG), ("tried", []), ("failed_builds", []),
                               ("requests", ["capreq:1"])))
    assert isinstance(retried, UpdateGoal) and retried.status == S.SELECTING_RESOLVER
    assert retried.changes.required_capabilities == [TAG] and retried.changes.awaiting is None
    assert said == Flow("goal:a", f"lookup before build: resolver:sql-1 provides '{TAG}'; "
                                  "no build needed")


def test_a_tool_that_failed_this_goal_is_not_found_again_and_a_verifying_goal_moves() -> None:
    g = goal(status=S.VERIFYING, attempt_count=2, max_attempts=2)
    view = _view(g, attempts=_tried("resolver:sql-1", "resolver:claude-code-0"),
                 providers={TAG: [_tool("resolver:sql-1"), _tool("resolver:sql-2")]})
    _, done = drive(grow(view, moves.Grow(g, missing=TAG)), [])
    looked, retried, _ = done.changes.changes
    assert looked.chosen == "resolver:sql-2"
    assert ("tried", ["resolver:claude-code-0", "resolver:sql-1"]) in looked.extra
    assert isinstance(retried, Transition) and retried.to == S.SELECTING_RESOLVER
    assert retried.changes is not None and retried.changes.max_attempts == 2 + 2


def test_with_nothing_found_the_gap_is_asked_for_and_a_build_subgoal_is_made() -> None:
    g = goal(status=S.VERIFYING, attempt_count=3, max_attempts=3)
    view = _view(g, attempts=_tried("resolver:claude-code-0"),
                 registry=[{"id": "resolver:csv-1", "capabilities": ["csv_parse", "csv_read"]},
                           {"id": "resolver:csv-0", "capabilities": ["csv_parse"]}])
    gap = models.CapabilityGap(capability_tag=TAG, buildable=True, rationale="SQL over rows",
                               build_constraints=[models.ProposedConstraint(
                                   type="semantic", domain="code", title="reads CSV", explicit=True),
                                   models.ProposedConstraint(
                                       type="logic", domain="code", title="fast", explicit=False)])
    feedback = GoalChanges(feedback={"summary": "wrong rows"})
    body = grow(view, moves.Grow(g, feedback))
    asked, done = drive(body, [{}, {"csv_parse": ["resolver:csv-0"]}, proposal(gap),
                               _outlook(), "goal:build"])
    history, capabilities, call, outlook, child = asked
    assert history == Observe("history/gap", "goal:a", lambda: None)
    # the capabilities are read when the loop records them, as the registry has them
    assert isinstance(capabilities, Observe) and capabilities.name == "capabilities"
    assert capabilities.read() == {"csv_parse": ["resolver:csv-0", "resolver:csv-1"],
                                   "csv_read": ["resolver:csv-1"]}
    assert isinstance(call, ModelCall) and call.operation is ops.DETECT_CAPABILITY_GAP
    assert call.request.payload["tried_resolvers"] == ["resolver:claude-code-0"]
    assert call.request.payload["capabilities"] == {"csv_parse": ["resolver:csv-0"]}
    assert call.request.feedback is None and call.request.payload["failures"] == {
        "summary": "wrong rows"}
    # the self-model is asked with half of what the goal has left, and recorded as its own
    assert isinstance(outlook, Observe) and outlook.name == OUTLOOK
    assert outlook.source == SELF_MODEL_ID
    assert outlook.read()["share_usd"] == 2.0 and outlook.read()["share_seconds"] == 300.0
    # the subgoal is made when its id is needed, after the decisions that led to it
    assert isinstance(child, NewChild) and child.parent_id == "goal:a"
    assert child.key == f"build:{TAG}:3" and child.spec.purpose == "build"
    assert child.spec.builds_capability == TAG and child.core[0] == TOOL_CONTRACT
    assert [(c.title, c.type.value) for c in child.core[1:]] == [("reads CSV", "semantic"),
                                                                 ("fast", "semantic")]
    # logged before the subgoal is made: the decisions, then what was re-typed
    looked, decided, retyped = child.told
    assert isinstance(looked, Decision) and (looked.decision, looked.chosen) == (
        "lookup_before_build", None)
    assert isinstance(decided, Decision) and (decided.decision, decided.chosen) == (
        "self_model", "build")
    assert ("resolver_id", SELF_MODEL_ID) in decided.extra
    assert isinstance(retyped, Flow) and retyped.text.startswith("'fast' was proposed as logic")
    assert done.then == ["goal:build"]
    allocated, parked, said = done.changes.changes
    assert allocated == AllocateChildren("goal:a", (("goal:build", 1.0),), share=BUILD_SHARE)
    assert isinstance(parked, Transition) and parked.to == S.PENDING
    assert parked.changes is not None and parked.changes.awaiting == "goal:build"
    assert parked.changes.feedback == {"summary": "wrong rows"}
    record = parked.changes.capability_gap
    assert record is not None and record["capability_tag"] == TAG
    assert record["budget_class"] == "under_10_usd" and len(record["fingerprint"]) == 64
    assert said == Flow("goal:a", f"BUILD: no tool provides '{TAG}'; build subgoal goal:build")


def test_a_build_subgoal_made_before_a_crash_is_found_by_its_key_not_made_again() -> None:
    g = goal(status=S.SELECTING_RESOLVER, attempt_count=0)
    view = _view(g, kept={"goal:a": {f"build:{TAG}:0": "goal:build"}})
    view.left["goal:build"] = 2_000_000  # it holds its share already
    asked, done = drive(grow(view, moves.Grow(g, missing=TAG)), [_outlook()])
    assert [type(r) for r in asked] == [Observe]
    assert done.then == ["goal:build"]
    looked, self_model, stored, parked, _ = done.changes.changes
    assert (looked.decision, self_model.decision) == ("lookup_before_build", "self_model")
    assert stored == StoreConstraints((TOOL_CONTRACT,), ride=False)
    assert isinstance(parked, Transition) and parked.changes.awaiting == "goal:build"  # type: ignore[union-attr]


def test_the_self_model_saying_it_cannot_build_sends_the_goal_to_hire() -> None:
    g = goal(status=S.SELECTING_RESOLVER, attempt_count=0)
    view = _view(g, outlooks={TAG: _outlook("build_unaffordable")})
    asked, done = drive(grow(view, moves.Grow(g, missing=TAG)), [_outlook("build_unaffordable")])
    assert [r.name for r in asked] == [OUTLOOK]  # type: ignore[union-attr]
    assert isinstance(done.then, moves.Hire) and done.then.reason == "build_unaffordable"
    assert done.then.to == S.PENDING and done.then.gap["capability_tag"] == TAG
    decided = done.changes.changes[-1]
    assert decided.decision == "self_model" and decided.chosen == "hire"
    assert decided.rationale == "build_unaffordable"


def test_a_capability_whose_build_failed_before_goes_to_hire_without_the_self_model() -> None:
    g = goal(status=S.SELECTING_RESOLVER, attempt_count=0)
    view = _view(g, lookups={TAG: BuildLookup(
        tools=[], builds=[{"id": "goal:old", "status": "infeasible"}], requests=[])})
    asked, done = drive(grow(view, moves.Grow(g, missing=TAG)), [])
    assert asked == []
    assert isinstance(done.then, moves.Hire) and done.then.reason == "build_failed_before"
    assert [c.decision for c in done.changes.changes] == ["lookup_before_build"]  # type: ignore[union-attr]
    build = goal(purpose="build", status=S.SELECTING_RESOLVER, attempt_count=0)
    _, done = drive(grow(_view(build), moves.Grow(build, missing=TAG)), [])
    assert isinstance(done.then, moves.Hire) and done.then.reason == "build_needs_a_tool"


GAP = {"capability_tag": TAG, "build_constraints": [], "buildable": True, "rationale": "",
       "budget_class": "under_10_usd", "fingerprint": "f" * 64}


def _waiting(child_status: Status, output: models.ResolutionOutput | None = None,
             ) -> tuple[GrowView, GoalNode]:
    g = goal(status=S.PENDING, awaiting="goal:build", capability_gap=GAP, attempt_count=3,
             max_attempts=3)
    child = goal("goal:build", parent_id="goal:a", purpose="build", status=child_status,
                 output_artifact_id="art:tool" if output else None,
                 resolver_id="resolver:claude-code-0")
    view = _view(g, attempts=_tried("resolver:claude-code-0"),
                 resolutions={"art:tool": output} if output else {})
    view.goals[child.id] = child
    return view, g


def _code(content: str = CODE) -> models.ResolutionOutput:
    return models.ResolutionOutput(artifact_type="code", format="python", content=content,
                                   notes="queries rows")


def test_a_finished_build_registers_its_tool_and_the_goal_tries_again() -> None:
    view, g = _waiting(S.RESOLVED, _code())
    asked, done = drive(on_build_done(view, moves.BuildDone(g)), [])
    assert asked == [] and done.then == ["goal:a"]
    registered, said = done.changes.changes
    assert isinstance(registered, RegisterTool)
    assert registered.resolver_id == "resolver:tabular-query-al:build"
    assert registered.tool == ToolDefinition(label="tabular query (built)", description="queries rows",
                                             capabilities=[TAG], code=CODE)
    assert (registered.builder_id, registered.lineage_inputs, registered.key) == (
        "resolver:claude-code-0", ("art:tool",), "goal:build")
    assert registered.replaces == ("resolver:claude-code-0",)
    assert registered.goal_changes.awaiting is None
    assert registered.goal_changes.required_capabilities == [TAG]
    assert registered.goal_changes.max_attempts == 6
    assert said == Flow("goal:a", "BUILD done: registered resolver:tabular-query-al:build")


def test_a_composite_build_is_registered_as_its_steps() -> None:
    plan = models.ResolutionOutput(artifact_type="code", format="tool_plan",
                                   content='{"steps": ["resolver:csv-0", "resolver:sql-0"]}')
    view, g = _waiting(S.RESOLVED, plan)
    _, done = drive(on_build_done(view, moves.BuildDone(g)), [])
    registered = done.changes.changes[0]
    assert isinstance(registered, RegisterTool)
    assert registered.tool.steps == ["resolver:csv-0", "resolver:sql-0"]
    assert registered.tool.code is None


def test_a_failed_build_goes_to_hire() -> None:
    view, g = _waiting(S.INFEASIBLE)
    _, done = drive(on_build_done(view, moves.BuildDone(g)), [])
    assert isinstance(done.then, moves.Hire) and done.then.reason == "build_failed"
    assert done.then.gap == GAP and done.then.to == S.PENDING and not done.changes


def test_a_built_tool_the_kernel_cannot_register_goes_to_hire_saying_why() -> None:
    view, g = _waiting(S.RESOLVED, _code("import socket\n"))
    view.bad_code["import socket\n"] = ["imports socket", "defines no run()"]
    _, done = drive(on_build_done(view, moves.BuildDone(g)), [])
    assert isinstance(done.then, moves.Hire) and done.then.reason == "build_failed"
    assert done.changes.changes == (Flow(
        "goal:a", "the built tool cannot be registered: imports socket; defines no run()"),)
    plan = models.ResolutionOutput(artifact_type="code", format="tool_plan",
                                   content='{"steps": ["resolver:model"]}')
    view, g = _waiting(S.RESOLVED, plan)
    view.bad_tools["tabular query (built)"] = ["step resolver:model is not a script tool"]
    _, done = drive(on_build_done(view, moves.BuildDone(g)), [])
    assert isinstance(done.then, moves.Hire)
    assert "step resolver:model is not a script tool" in done.changes.changes[0].text  # type: ignore[union-attr]
    malformed = models.ResolutionOutput(artifact_type="code", format="tool_plan", content="{")
    view, g = _waiting(S.RESOLVED, malformed)
    _, done = drive(on_build_done(view, moves.BuildDone(g)), [])
    assert isinstance(done.then, moves.Hire)


def test_a_build_still_under_way_leaves_the_goal_waiting() -> None:
    view, g = _waiting(S.RESOLVING)
    asked, done = drive(on_build_done(view, moves.BuildDone(g)), [])
    assert asked == [] and done.then == [] and not done.changes
