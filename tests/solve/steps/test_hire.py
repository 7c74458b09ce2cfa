"""Step 11 driven without a store: a request raised (or joined) and the goal parked, the
person asked and their answer applied (a tool, more budget, a refusal), a request
answered before, and a budget denial escalated to a request for more."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kernel.core.budget import Amount
from kernel.core.envelopes import Attempt
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.state_machine import Status
from kernel.protocol import HireAnswer, ToolDefinition
from kernel.protocol import operations as ops
from kernel.protocol.resolver_ids import HUMAN_ID
from kernel.refusal import RefusalReason
from kernel.repositories.requests import Request
from kernel.solve import moves
from kernel.solve.capability_requests import BUDGET_TAG, budget_gap
from kernel.solve.effects import (
    DeclineRequest,
    Flow,
    GrantBudget,
    HireQuestion,
    NewId,
    OpenRequest,
    Refusal,
    RefuseGoal,
    RegisterTool,
    Transition,
    UpdateGoal,
)
from kernel.solve.steps.hire import hire, on_answer
from tests.solve.steps.fakes import FakeView, drive, goal, proposal

S = Status
GAP = {"capability_tag": "parse_pdf", "build_constraints": [{"title": "reads PDF 1.7"}],
       "budget_class": "under_1_usd", "rationale": "no tool reads PDFs", "fingerprint": "f1"}
CODE = "def run(request):\n    return {}\n"


@dataclass
class HireView(FakeView):
    """A fake view that also holds capability requests and what goals have left."""

    raised: dict[str, Request] = field(default_factory=dict)  # by id
    budgets: dict[str, Amount] = field(default_factory=dict)

    def capability_request(self, request_id: str) -> Request | None:
        return self.raised.get(request_id)

    def request_raised(self, fingerprint: str) -> Request | None:
        return next((r for r in self.raised.values() if r["fingerprint"] == fingerprint), None)

    def budget_left(self, goal_id: str) -> Amount:
        return self.budgets[goal_id]


def _request(status: str = "requested", reason: str = "not_buildable", **fields: Any) -> Request:
    return Request(**{"id": "capreq:01ABCDEFGH", "fingerprint": "f1",  # type: ignore[typeddict-item]
                      "capability_tag": "parse_pdf", "reason": reason, "status": status,
                      "rationale": "no tool reads PDFs", **fields})


def _view(*raised: Request, tried: tuple[str, ...] = (), **fields: Any) -> HireView:
    g = goal(**fields)
    attempts = [Attempt(id=f"att:{n}", node_id=g.id, attempt_index=n, resolver_id=r)
                for n, r in enumerate(tried, start=1)]
    return HireView(goals={g.id: g}, raised={r["id"]: r for r in raised},
                    attempts={g.id: attempts},
                    budgets={g.id: Amount(250_000, 90_000)})


def _parked(view: HireView, gap: dict[str, Any] | None = None) -> GoalNode:
    """The view's goal as it waits on the request it raised."""
    return view.goal("goal:a").model_copy(update={
        "awaiting": "capreq:01ABCDEFGH", "capability_gap": gap or GAP, "status": S.PENDING})


def test_a_new_request_is_raised_with_the_id_taken_and_the_goal_parked_on_it() -> None:
    view = _view(status=S.SELECTING_RESOLVER)
    move = moves.Hire(view.goal("goal:a"), GAP, "not_buildable", S.PENDING,
                      GoalChanges(feedback={"why": "no tool"}))
    asked, done = drive(hire(view, move), [("capreq:NEW", 12)])
    assert asked == [NewId("capreq")]
    assert done.then == ["goal:a"]
    opened, told = done.changes.changes
    assert isinstance(opened, OpenRequest)
    assert (opened.goal_id, opened.from_status, opened.to) == ("goal:a", S.SELECTING_RESOLVER,
                                                               S.PENDING)
    assert opened.changes == GoalChanges(feedback={"why": "no tool"}, awaiting="capreq:NEW",
                                         capability_gap=GAP)
    props = dict(opened.props)
    assert [name for name, _ in opened.props][:2] == ["id", "fingerprint"]
    assert (props["id"], props["seq"], props["run_id"], props["goal_id"]) == (
        "capreq:NEW", 12, "run:1", "goal:a")
    assert props["build_constraints"] == '[{"title":"reads PDF 1.7"}]'
    assert (props["status"], props["caption"]) == ("requested", "requested: parse_pdf")
    assert not opened.supersede
    assert told == Flow("goal:a", "HIRE (not_buildable): a human is asked for 'parse_pdf' "
                                  "(capreq:NEW)")


def test_an_open_request_with_the_same_fingerprint_is_joined_not_asked_again() -> None:
    view = _view(_request(), status=S.PENDING)
    move = moves.Hire(view.goal("goal:a"), GAP, "not_buildable", S.PENDING)
    asked, done = drive(hire(view, move), [("capreq:NEW", 3)])
    assert asked == [NewId("capreq")]  # taken all the same, as every run always has
    opened, told = done.changes.changes
    assert isinstance(opened, OpenRequest) and opened.changes.awaiting == "capreq:01ABCDEFGH"
    assert told.text.endswith("(capreq:01ABCDEFGH)")  # type: ignore[union-attr]


def test_a_request_declined_before_refuses_the_goal_without_asking() -> None:
    view = _view(_request("declined"))
    asked, done = drive(hire(view, moves.Hire(view.goal("goal:a"), GAP, "x", S.PENDING)), [])
    assert asked == [] and done.then == ["goal:root"]
    [refused] = done.changes.changes
    assert isinstance(refused, RefuseGoal) and refused.reason is RefusalReason.HIRE_DECLINED
    assert refused.facts == (("capability", "parse_pdf"),)


def test_a_request_delivered_before_hands_its_tool_over_unless_it_failed_here() -> None:
    delivered = _request("delivered", resolver_id="resolver:pdf-1")
    view = _view(delivered, tried=("resolver:claude",), attempt_count=1)
    asked, done = drive(hire(view, moves.Hire(view.goal("goal:a"), GAP, "x", S.PENDING)), [])
    assert asked == [] and done.then == ["goal:a"]
    moved, told = done.changes.changes
    assert isinstance(moved, Transition)  # verifying: back to resolver selection
    assert (moved.to, moved.changes) == (S.SELECTING_RESOLVER, GoalChanges(
        awaiting=None, plan_artifact_id=None, output_artifact_id=None, max_attempts=4,
        required_capabilities=["parse_pdf"]))
    assert told == Flow("goal:a", "uses resolver:pdf-1, delivered for the same request before")

    view = _view(delivered, tried=("resolver:pdf-1",))
    _, done = drive(hire(view, moves.Hire(view.goal("goal:a"), GAP, "x", S.PENDING)), [])
    [refused] = done.changes.changes
    assert isinstance(refused, RefuseGoal)
    assert refused.reason is RefusalReason.ATTEMPTS_EXHAUSTED


def test_a_parked_goal_asks_the_person_and_waits_when_nobody_answers() -> None:
    view = _view(_request())
    asked, done = drive(on_answer(view, moves.HireAnswered(_parked(view))), [None])
    [question] = asked
    assert isinstance(question, HireQuestion)
    assert question.request.operation == ops.HIRE.name
    assert question.request.payload == {
        "request_id": "capreq:01ABCDEFGH", "capability_tag": "parse_pdf",
        "reason": "not_buildable", "rationale": "no tool reads PDFs", "goal_summary": "add",
        "remaining_usd": 0.25, "remaining_seconds": 90.0, "attempts": 1}
    assert done.then == [] and not done.changes


def test_an_answer_with_a_tool_registers_it_for_reuse_and_the_goal_tries_it() -> None:
    view = _view(_request(), tried=("resolver:claude",))
    tool = ToolDefinition(label="PDF reader", capabilities=["parse_pdf"], code=CODE)
    answer = HireAnswer(kind="resolver", tool=tool)
    asked, done = drive(on_answer(view, moves.HireAnswered(_parked(view))), [proposal(answer)])
    assert [type(a) for a in asked] == [HireQuestion]
    assert done.then == ["goal:a"]
    registered, told = done.changes.changes
    assert isinstance(registered, RegisterTool)
    assert (registered.tool, registered.resolver_id, registered.builder_id) == (
        tool, "resolver:parse-pdf-abcdefgh", HUMAN_ID)
    assert (registered.key, registered.request_id) == ("capreq:01ABCDEFGH", "capreq:01ABCDEFGH")
    assert registered.replaces == ("resolver:claude",)
    assert registered.goal_changes.required_capabilities == ["parse_pdf"]
    assert registered.goal_changes.max_attempts == 4  # a fresh allowance of tries
    assert told == Flow("goal:a", "HIRE answered: a human registered "
                                  "resolver:parse-pdf-abcdefgh")


def test_an_answer_with_budget_grants_it_and_an_over_budget_goal_goes_on_where_it_was() -> None:
    for reason, retry in (("over_budget", False), ("not_buildable", True)):
        view = _view(_request(reason=reason))
        answer = HireAnswer(kind="add_budget", add_usd=1.5, add_seconds=60)
        asked, done = drive(on_answer(view, moves.HireAnswered(_parked(view))),
                            [proposal(answer), ("budget:E1", 9)])
        assert [type(a) for a in asked] == [HireQuestion, NewId]
        assert asked[1] == NewId("budget")
        granted, told = done.changes.changes
        assert isinstance(granted, GrantBudget)
        assert (granted.cost, granted.time, granted.event_id) == (1_500_000, 60_000, "budget:E1")
        assert (granted.status, granted.request_id) == (S.PENDING, "capreq:01ABCDEFGH")
        assert granted.answer == answer.model_dump_json()
        assert (granted.changes == GoalChanges(awaiting=None)) is not retry
        assert told == Flow("goal:a", "HIRE answered: +$1.5 and +60.0s")
        assert done.then == ["goal:a"]


def test_a_declined_answer_refuses_the_goal_for_what_it_asked_and_wakes_its_parent() -> None:
    view = _view(_request())
    answer = HireAnswer(kind="decline", note="not worth it")
    asked, done = drive(on_answer(view, moves.HireAnswered(_parked(view))), [proposal(answer)])
    assert len(asked) == 1 and done.then == ["goal:root"]
    refusal, declined, told = done.changes.changes
    assert refusal == Refusal("goal:a", RefusalReason.HIRE_DECLINED,
                              "capreq:01ABCDEFGH: not worth it", (("capability", "parse_pdf"),))
    assert declined == DeclineRequest("goal:a", S.PENDING, "capreq:01ABCDEFGH",
                                      answer.model_dump_json())
    assert told == Flow("goal:a", "infeasible: the human declined 'parse_pdf'")


def test_a_budget_denial_escalates_to_a_request_for_more_and_a_refusal_names_the_figures() -> None:
    view = _view(status=S.RESOLVING)
    g = view.goal("goal:a")
    gap = budget_gap(g, "resolve", Amount(900_000, 30_000), Amount(250_000, 90_000))
    asked, done = drive(hire(view, moves.Hire(g, gap, "over_budget", g.status)),
                        [("capreq:B", 5)])
    assert asked == [NewId("capreq")]
    opened, told = done.changes.changes
    assert isinstance(opened, OpenRequest)
    assert (opened.from_status, opened.to, opened.capability_tag) == (S.RESOLVING, S.RESOLVING,
                                                                      BUDGET_TAG)
    assert dict(opened.props)["reason"] == "over_budget"
    assert opened.changes == GoalChanges(awaiting="capreq:B", capability_gap=gap)
    assert told == Flow("goal:a", "HIRE (over_budget): a human is asked for 'budget' (capreq:B)")

    request = _request(reason="over_budget", capability_tag=BUDGET_TAG)
    view = _view(request, status=S.RESOLVING)
    answer = HireAnswer(kind="decline")
    _, done = drive(on_answer(view, moves.HireAnswered(_parked(view, gap))), [proposal(answer)])
    refusal = done.changes.changes[0]
    assert isinstance(refusal, Refusal) and refusal.reason is RefusalReason.BUDGET_EXHAUSTED
    assert refusal.facts == (("needed_usd", 0.65), ("needed_seconds", 0.0))


def test_a_request_answered_meanwhile_goes_back_through_hire_or_hands_its_tool_over() -> None:
    view = _view(_request("declined"))
    parked = _parked(view)
    asked, done = drive(on_answer(view, moves.HireAnswered(parked)), [])
    assert asked == [] and not done.changes
    assert done.then == moves.Hire(parked, GAP, "not_buildable", S.PENDING)

    view = _view(_request("delivered", resolver_id="resolver:pdf-1"))
    asked, done = drive(on_answer(view, moves.HireAnswered(_parked(view))), [])
    assert asked == [] and done.then == ["goal:a"]
    moved, _ = done.changes.changes
    assert isinstance(moved, UpdateGoal) and moved.status == S.PENDING  # parked: stays
    assert moved.changes.required_capabilities == ["parse_pdf"]
