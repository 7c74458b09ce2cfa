"""``claude-code-0``: Claude through the ``anthropic`` SDK, one prompt type per kernel operation.

Structured output: each operation forces a call to one tool whose input schema is the
operation's pydantic model, so the answer arrives as JSON and is validated. When it does
not validate, the errors go back to the model once (an invisible repair retry) before
the call counts as a permanent failure. Token usage becomes cost through the price
table in the settings.
"""

from __future__ import annotations

import json
import string
import time
from dataclasses import dataclass
from importlib import resources
from typing import Any

import anthropic
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from resolvers.base import Estimate, PermanentError, Resolution, ResolveRequest, RetryableError
from resolvers.claude import models, plan_models

RESOLVER_ID = "resolver:claude-code-0"
# Tests switch this off; a real request then fails loudly instead of reaching a model.
ALLOW_MODEL_REQUESTS = True


class RealModelRequestError(RuntimeError):
    """A real model request was attempted while ALLOW_MODEL_REQUESTS is off."""


class Price(BaseModel):
    model_config = ConfigDict(frozen=True)

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)
    cache_write_factor: float = 1.25
    cache_read_factor: float = 0.1


DEFAULT_PRICES: dict[str, Price] = {
    "claude-fable-5": Price(input_per_mtok=10.0, output_per_mtok=50.0),
    "claude-opus-5": Price(input_per_mtok=5.0, output_per_mtok=25.0),
    "claude-sonnet-5": Price(input_per_mtok=2.0, output_per_mtok=10.0),
    "claude-haiku-4-5": Price(input_per_mtok=1.0, output_per_mtok=5.0),
}


class ClaudeSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str = "claude-opus-5"
    max_tokens: int = Field(default=8192, gt=0)
    timeout_seconds: float = Field(default=300.0, gt=0)
    max_retries: int = Field(default=2, ge=0, description="the SDK's own retries")
    seconds_per_call: float = Field(default=60.0, gt=0, description="time estimate")
    prices: dict[str, Price] = Field(default_factory=lambda: dict(DEFAULT_PRICES))

    def price(self) -> Price:
        try:
            return self.prices[self.model]
        except KeyError:
            raise PermanentError(f"no price for model {self.model!r}: add it to the price table",
                                 failure_mode="unpriced_model") from None


@dataclass(frozen=True)
class Operation:
    name: str
    tool: str
    output: type[BaseModel]
    description: str


OPERATIONS: dict[str, Operation] = {op.name: op for op in (
    Operation("identify_constraints", "record_constraints", models.IdentifiedConstraints,
              "Record the constraints that apply to the goal."),
    Operation("select_constraints", "record_selection", models.SelectedConstraints,
              "Record the minimal set of constraints."),
    Operation("rank_resolvers", "record_tool_plan", models.ResolverRanking,
              "Record the tool plan and the candidates' scores."),
    Operation("resolve", "record_output", models.ResolutionOutput, "Record the output."),
    Operation("verify_semantic", "record_judgments", models.SemanticVerification,
              "Record one judgment per semantic constraint."),
    Operation("decompose", "record_decomposition", models.Decomposition,
              "Record the children and their dependencies."),
    Operation("classify_leaf", "record_leaf", models.LeafClassification,
              "Record whether the goal is a leaf."),
    Operation("generate_feedback", "record_feedback", models.Feedback,
              "Record the diagnosis and fixes."),
    Operation("detect_capability_gap", "record_gap", models.CapabilityGap,
              "Record the missing capability."),
    Operation("check_global_consistency", "record_review", models.ConsistencyReview,
              "Record the consistency verdict and conflicts."),
    Operation("assemble", "record_assembly", models.Assembly, "Record the final deliverable."),
    Operation("plan_constraints", "record_plan_constraints", plan_models.ExtractedConstraints,
              "Record the goal's explicit and implicit constraints."),
    Operation("plan_tasks", "record_task_dag", plan_models.TaskDag,
              "Record the task DAG with estimates."),
    Operation("survey_approaches", "record_surveys", plan_models.ApproachSurvey,
              "Record the alternative approaches per task."),
)}


def _template(name: str) -> string.Template:
    text = resources.files("resolvers.claude").joinpath("prompts", f"{name}.md").read_text()
    return string.Template(text)


def render_prompt(request: ResolveRequest) -> str:
    """The user message for an operation; the knowledge-graph block is one of its inputs."""
    constraints = "\n".join(
        f"- {c.id} [{c.type.value}/{c.domain}] {c.title} {json.dumps(c.payload, sort_keys=True)}"
        for c in request.constraints) or "(none)"
    return _template(request.operation).substitute(
        goal=request.goal_description,
        constraints=constraints,
        context=request.context,
        feedback=json.dumps(request.feedback, sort_keys=True, indent=1) if request.feedback
        else "(none)",
        payload=json.dumps(request.payload, sort_keys=True, indent=1) if request.payload
        else "(none)",
    ).strip()


class ClaudeCode:
    id = RESOLVER_ID

    def __init__(self, settings: ClaudeSettings | None = None,
                 client: anthropic.Anthropic | None = None) -> None:
        self.settings = settings or ClaudeSettings()
        if client is None:
            if not ALLOW_MODEL_REQUESTS:
                raise RealModelRequestError(
                    "a real Claude client was requested while model requests are disabled")
            client = anthropic.Anthropic(timeout=self.settings.timeout_seconds,
                                         max_retries=self.settings.max_retries)
        self.client = client
        self.system = _template("system").template.strip()

    def estimate_cost_time(self, request: ResolveRequest) -> Estimate:
        """An upper bound: prompt tokens by length, and the whole output allowance."""
        prompt_tokens = (len(self.system) + len(render_prompt(request))) // 3 + 500
        price = self.settings.price()
        cost = (prompt_tokens * price.input_per_mtok
                + self.settings.max_tokens * price.output_per_mtok) / 1_000_000
        return Estimate(cost_usd=round(cost, 6), seconds=self.settings.seconds_per_call)

    def resolve(self, request: ResolveRequest) -> Resolution:
        operation = OPERATIONS.get(request.operation)
        if operation is None:
            raise PermanentError(f"claude-code-0 has no operation {request.operation!r}",
                                 failure_mode="capability_mismatch")
        tool = {"name": operation.tool, "description": operation.description,
                "input_schema": operation.output.model_json_schema()}
        messages: list[dict[str, Any]] = [{"role": "user", "content": render_prompt(request)}]
        start = time.perf_counter()
        usage: list[Any] = []
        response = self._call(messages, tool)
        usage.append(response.usage)
        block, output, errors = self._parse(response, operation)
        repaired = False
        if errors:
            repaired = True
            messages += self._repair_turn(response, block, errors)
            response = self._call(messages, tool)
            usage.append(response.usage)
            block, output, errors = self._parse(response, operation)
        cost = self._cost(usage)
        if errors or output is None:
            raise PermanentError(
                f"{request.operation}: output did not validate after a repair: {errors}",
                failure_mode="invalid_output", output_produced=True)
        return Resolution(
            output=output.model_dump(mode="json"), cost_usd=cost,
            seconds=time.perf_counter() - start,
            metadata={"model": response.model, "repaired": repaired,
                      "input_tokens": sum(u.input_tokens for u in usage),
                      "output_tokens": sum(u.output_tokens for u in usage),
                      "stop_reason": response.stop_reason})

    # -- internals -------------------------------------------------------------
    def _call(self, messages: list[dict[str, Any]], tool: dict[str, Any]) -> Any:
        try:
            return self.client.messages.create(
                model=self.settings.model, max_tokens=self.settings.max_tokens,
                system=self.system, messages=messages, tools=[tool],
                tool_choice={"type": "tool", "name": tool["name"]})
        except (anthropic.APIConnectionError, anthropic.APITimeoutError) as exc:
            raise RetryableError(f"Claude unreachable: {exc}", failure_mode="network") from exc
        except anthropic.APIStatusError as exc:
            status = exc.status_code
            message = _error_message(exc)
            if status in (408, 409, 429) or status >= 500:
                raise RetryableError(f"Claude answered {status}: {message}",
                                     failure_mode="rate_limited" if status == 429
                                     else "model_unavailable") from exc
            raise PermanentError(f"Claude refused the request ({status}): {message}",
                                 failure_mode="invalid_request") from exc

    @staticmethod
    def _parse(response: Any, operation: Operation) -> tuple[Any, BaseModel | None, str]:
        block = next((b for b in response.content
                      if b.type == "tool_use" and b.name == operation.tool), None)
        if block is None:
            return None, None, f"no call to the {operation.tool} tool"
        try:
            return block, operation.output.model_validate(block.input), ""
        except ValidationError as exc:
            return block, None, "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())

    @staticmethod
    def _repair_turn(response: Any, block: Any, errors: str) -> list[dict[str, Any]]:
        assistant = {"role": "assistant",
                     "content": [b.model_dump(exclude_none=True) for b in response.content]}
        if block is None:
            return [assistant, {"role": "user",
                                "content": f"Answer by calling the tool. Problem: {errors}"}]
        return [assistant, {"role": "user", "content": [{
            "type": "tool_result", "tool_use_id": block.id, "is_error": True,
            "content": f"The arguments did not match the schema: {errors}. Call the tool "
                       "again with corrected arguments."}]}]

    def _cost(self, usage: list[Any]) -> float:
        price = self.settings.price()
        total = 0.0
        for u in usage:
            written = getattr(u, "cache_creation_input_tokens", 0) or 0
            read = getattr(u, "cache_read_input_tokens", 0) or 0
            total += (u.input_tokens * price.input_per_mtok
                      + written * price.input_per_mtok * price.cache_write_factor
                      + read * price.input_per_mtok * price.cache_read_factor
                      + u.output_tokens * price.output_per_mtok)
        return round(total / 1_000_000, 9)


def _error_message(exc: anthropic.APIStatusError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else {}
    return str(error.get("message") or exc.message)
