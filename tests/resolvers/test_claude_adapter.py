"""claude-code-0 at the HTTP layer, with recorded Messages API bodies (respx)."""

from __future__ import annotations

import json

import httpx
import pytest

from kernel.core.envelopes import ConstraintSpec, Provenance
from kernel.protocol import MODEL_OPERATIONS, PermanentError, ResolveRequest, RetryableError
from resolvers.claude import adapter
from resolvers.claude.adapter import (
    ClaudeCode,
    ClaudeSettings,
    RealModelRequestError,
    render_prompt,
)
from tests.resolvers.anthropic_http import MESSAGES_URL, mocked_claude, recorded

REQUEST = ResolveRequest(
    operation="identify_constraints", goal_id="node:1",
    goal_description="Build a Python CLI that prints the top 10 rows of a CSV sorted by a column",
    constraints=[ConstraintSpec(type="logic", domain="software", title="Python 3.10+",
                                provenance=Provenance(source="human")).with_id()],
    context="[RESOLUTION HISTORY]\nSimilar goals attempted: 0\n[END RESOLUTION HISTORY]")


def test_request_shape_and_tool_use_parsing() -> None:
    with mocked_claude() as (router, client):
        route = router.post(MESSAGES_URL).mock(return_value=recorded("identify_constraints"))
        result = ClaudeCode(ClaudeSettings(max_tokens=2048), client).resolve(REQUEST)
    sent = route.calls.last.request
    body = json.loads(sent.content)
    key = "sk-ant-test-not-a-real-key"
    assert sent.headers.get("x-api-key") == key or sent.headers["authorization"] == f"Bearer {key}"
    assert sent.headers["anthropic-version"]
    assert body["model"] == "claude-opus-5" and body["max_tokens"] == 2048
    assert body["tool_choice"] == {"type": "tool", "name": "record_constraints"}
    assert body["tools"][0]["input_schema"]["title"] == "IdentifiedConstraints"
    assert "proposal" in body["system"]
    prompt = body["messages"][0]["content"]
    assert "top 10 rows" in prompt and "[RESOLUTION HISTORY]" in prompt and "Python 3.10+" in prompt
    assert [c["title"] for c in result.output["constraints"]][1] == \
        "exit code 1 when the column is missing"
    assert result.output["required_capabilities"] == ["generate_code", "test_execution"]
    assert result.metadata["repaired"] is False


def test_cost_comes_from_usage_and_the_price_table() -> None:
    with mocked_claude() as (router, client):
        router.post(MESSAGES_URL).mock(return_value=recorded("identify_constraints"))
        result = ClaudeCode(ClaudeSettings(), client).resolve(REQUEST)
    # 1200 input at $5/M, 400 cache reads at 10%, 300 output at $25/M
    assert result.cost_usd == pytest.approx((1200 * 5 + 400 * 5 * 0.1 + 300 * 25) / 1e6)
    assert (result.metadata["input_tokens"], result.metadata["output_tokens"]) == (1200, 300)
    cheap = ClaudeSettings(model="claude-haiku-4-5")
    with mocked_claude() as (router, client):
        router.post(MESSAGES_URL).mock(return_value=recorded("identify_constraints"))
        assert ClaudeCode(cheap, client).resolve(REQUEST).cost_usd == pytest.approx(
            (1200 * 1 + 400 * 0.1 + 300 * 5) / 1e6)


def test_a_malformed_output_is_repaired_invisibly() -> None:
    with mocked_claude() as (router, client):
        route = router.post(MESSAGES_URL).mock(side_effect=[
            recorded("identify_constraints_malformed"), recorded("identify_constraints")])
        result = ClaudeCode(ClaudeSettings(), client).resolve(REQUEST)
    assert route.call_count == 2
    repair = json.loads(route.calls[1].request.content)["messages"]
    assert repair[1]["role"] == "assistant"
    feedback = repair[2]["content"][0]
    assert feedback["type"] == "tool_result" and feedback["is_error"] is True
    assert feedback["tool_use_id"] == "toolu_01KrnelIdentifyBad0000001"
    assert "constraints.0.type" in feedback["content"]
    assert result.metadata["repaired"] is True and len(result.output["constraints"]) == 3
    assert result.cost_usd == pytest.approx(
        (1000 * 5 + 80 * 25 + 1200 * 5 + 400 * 0.5 + 300 * 25) / 1e6)


def test_output_that_stays_malformed_is_a_permanent_failure() -> None:
    with mocked_claude() as (router, client):
        router.post(MESSAGES_URL).mock(return_value=recorded("identify_constraints_malformed"))
        with pytest.raises(PermanentError) as info:
            ClaudeCode(ClaudeSettings(), client).resolve(REQUEST)
    assert info.value.failure_mode == "invalid_output" and info.value.output_produced


def test_a_rate_limit_is_retried() -> None:
    limited = recorded("rate_limit_error", 429, {"retry-after-ms": "1"})
    with mocked_claude(max_retries=2) as (router, client):
        route = router.post(MESSAGES_URL).mock(side_effect=[limited,
                                                            recorded("identify_constraints")])
        result = ClaudeCode(ClaudeSettings(), client).resolve(REQUEST)
    assert route.call_count == 2 and result.output["constraints"]
    with mocked_claude(max_retries=1) as (router, client):
        route = router.post(MESSAGES_URL).mock(return_value=limited)
        with pytest.raises(RetryableError, match="429") as info:
            ClaudeCode(ClaudeSettings(max_retries=1), client).resolve(REQUEST)
    assert route.call_count == 2 and info.value.failure_mode == "rate_limited"


def test_a_400_is_permanent_and_not_retried() -> None:
    with mocked_claude() as (router, client):
        route = router.post(MESSAGES_URL).mock(return_value=recorded("invalid_request_error", 400))
        with pytest.raises(PermanentError, match="JSON schema is invalid") as info:
            ClaudeCode(ClaudeSettings(), client).resolve(REQUEST)
    assert route.call_count == 1 and info.value.failure_mode == "invalid_request"


def test_unknown_operations_and_models_are_refused() -> None:
    with mocked_claude() as (_, client):
        claude = ClaudeCode(ClaudeSettings(), client)
        with pytest.raises(PermanentError, match="no operation"):
            claude.resolve(REQUEST.model_copy(update={"operation": "dance"}))
        with pytest.raises(PermanentError, match="no price"):
            ClaudeCode(ClaudeSettings(model="claude-unknown"), client).estimate_cost_time(REQUEST)


def test_estimates_bound_the_cost() -> None:
    with mocked_claude() as (router, client):
        router.post(MESSAGES_URL).mock(return_value=recorded("identify_constraints"))
        claude = ClaudeCode(ClaudeSettings(), client)
        estimate = claude.estimate_cost_time(REQUEST)
        assert estimate.cost_usd >= claude.resolve(REQUEST).cost_usd


def test_every_operation_has_a_prompt_that_renders() -> None:
    for name in MODEL_OPERATIONS:
        text = render_prompt(REQUEST.model_copy(update={"operation": name,
                                                        "payload": {"x": 1}}))
        assert "Build a Python CLI" in text and "$" not in text.replace("$5", "")


def test_real_model_requests_fail_loudly_in_tests() -> None:
    assert adapter.ALLOW_MODEL_REQUESTS is False
    with pytest.raises(RealModelRequestError):
        ClaudeCode(ClaudeSettings())


BUDGET = ConstraintSpec(type="logic", domain="cost", title="costs at most $5",
                        payload={"check": "arith", "expr": "cost_usd <= 5"},
                        provenance=Provenance(source="human")).with_id()
DECOMPOSE = ResolveRequest(operation="decompose", goal_id="node:1",
                           goal_description="Write the field guide", constraints=[BUDGET],
                           payload={"goal_summary": "field guide", "output": None,
                                    "inherited": None})


def _decomposition(answers_for: list[str]) -> httpx.Response:
    plan = {"children": [{"key": "a", "goal_description": "part a", "goal_summary": "a",
                          "relative_complexity": 1, "answers_for": answers_for}],
            "rationale": "one part"}
    return httpx.Response(200, json={
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-5",
        "stop_reason": "tool_use", "usage": {"input_tokens": 100, "output_tokens": 50},
        "content": [{"type": "tool_use", "id": "toolu_dec", "name": "record_decomposition",
                     "input": plan}]})


def test_a_decomposition_leaving_a_constraint_unanswered_gets_a_repair_turn_naming_it() -> None:
    with mocked_claude() as (router, client):
        route = router.post(MESSAGES_URL).mock(side_effect=[
            _decomposition([]), _decomposition([BUDGET.title])])
        result = ClaudeCode(ClaudeSettings(), client).resolve(DECOMPOSE)
    assert route.call_count == 2 and result.metadata["repaired"] is True
    feedback = json.loads(route.calls[1].request.content)["messages"][2]["content"][0]
    assert feedback["is_error"] is True and feedback["tool_use_id"] == "toolu_dec"
    assert feedback["content"].startswith("The answer was refused: nothing answers for "
                                          f"{BUDGET.id} ('costs at most $5')")
    assert result.output["children"][0]["answers_for"] == [BUDGET.title]


def test_a_decomposition_that_stays_unanswered_is_refused_with_the_names() -> None:
    with mocked_claude() as (router, client):
        router.post(MESSAGES_URL).mock(return_value=_decomposition(["cheap"]))
        with pytest.raises(PermanentError, match=f"nothing answers for {BUDGET.id}") as info:
            ClaudeCode(ClaudeSettings(), client).resolve(DECOMPOSE)
    assert "'cheap', which is none of the goal's constraints" in str(info.value)
    assert info.value.failure_mode == "invalid_output"
