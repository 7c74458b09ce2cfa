"""``claude-code-0``: Claude through the ``anthropic`` SDK, one prompt type per kernel operation.

Structured output: each operation forces a call to one tool whose input schema is the
operation's pydantic model, so the answer arrives as JSON and is validated. When it does
not validate, the errors go back to the model once (an invisible repair retry) before
the call counts as a permanent failure. Token usage becomes cost through the price
table in the settings.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import string
import time
from importlib import resources
from typing import Any

import anthropic
import httpx2
import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from kernel.protocol import (
    AccessRefused,
    DeadlineReached,
    Estimate,
    PermanentError,
    Resolution,
    ResolveRequest,
    RetryableError,
)
from kernel.protocol.deadline import seconds_left
from kernel.protocol.operations import MODEL_OPERATIONS, Operation
from resolvers.claude.reply import (
    Block,
    LateReply,
    MalformedReply,
    Reply,
    Usage,
    parse_reply,
    read_capped,
)

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
    timeout_seconds: float = Field(default=300.0, gt=0,
                                   description="per request, the whole answer, not each read")
    max_retries: int = Field(default=2, ge=0, description="the SDK's own retries")
    max_calls: int = Field(default=3, ge=1, description="requests per operation, repairs included")
    max_response_bytes: int = Field(default=4 * 1024 * 1024, gt=0,
                                    description="a larger answer is refused unread")
    expected_output_tokens: int = Field(
        default=1024, gt=0, description="an operation's answer size before any is seen")
    expected_code_tokens: int = Field(
        default=4096, gt=0, description="the same for resolve, which writes code and tests")
    estimate_margin: float = Field(default=1.5, ge=1,
                                   description="over the largest answer of the operation seen")
    tokens_per_second: float = Field(default=50.0, gt=0, description="output speed, for time")
    seconds_overhead: float = Field(default=3.0, ge=0, description="per call, for time")
    prices: dict[str, Price] = Field(default_factory=lambda: dict(DEFAULT_PRICES))
    api_key: SecretStr | None = Field(default=None, description="None: the SDK's own lookup")

    def price(self) -> Price:
        try:
            return self.prices[self.model]
        except KeyError:
            raise PermanentError(f"no price for model {self.model!r}: add it to the price table",
                                 failure_mode="unpriced_model") from None


# The heading of an optional input, shown above it when a request gives it.
OPTIONAL_HEADINGS = {
    "repository": "The repository this goal changes (its tree hash; a map of its files and "
                  "symbols; the files the goal points at, by the names it mentions and by "
                  "meaning, and those the failing tests point at, whole, with "
                  "the sha256 an edit names; what the size caps left out; the contract for "
                  "edits):"}


def _template(name: str) -> string.Template:
    text = resources.files("resolvers.claude").joinpath("prompts", f"{name}.md").read_text()
    return string.Template(text)


@functools.cache
def forced_tool(operation: Operation[Any]) -> dict[str, Any]:
    """The one tool an operation's answer must call, its input schema the output model
    (built once per operation: every estimate and every request send it)."""
    return {"name": operation.tool, "description": operation.description,
            "input_schema": operation.output.model_json_schema()}


def template_inputs(name: str) -> set[str]:
    """The names a prompt template shows ($name)."""
    return set(_template(name).get_identifiers())


def render_prompt(request: ResolveRequest) -> str:
    """The user message for an operation: the request's own fields and each input of the
    operation's prompt contract under its name (see ``Operation.inputs``)."""
    constraints = "\n".join(
        f"- {c.id} [{c.type.value}/{c.domain}] {c.title} {json.dumps(c.payload, sort_keys=True)}"
        for c in request.constraints) or "(none)"
    operation = MODEL_OPERATIONS.get(request.operation)
    inputs = operation.inputs if operation is not None and operation.inputs else ()
    values = {name: render_value(request.payload.get(name)) for name in inputs}
    for name in operation.optional if operation is not None else ():
        given = request.payload.get(name)
        values[name] = "" if given is None else \
            f"{OPTIONAL_HEADINGS[name]}\n{render_value(given)}\n\n"
    return _template(request.operation).substitute(
        values, goal=request.goal_description,
        summary=str(request.payload.get("goal_summary") or ""),
        constraints=constraints, context=request.context,
        feedback=render_value(request.feedback),
    ).strip()


def render_value(value: Any) -> str:
    """An input as the model reads it: text as it is; anything else as YAML, multi-line
    text in literal blocks (code stays code, not an escaped JSON string)."""
    if value is None or value == "" or value == [] or value == {}:
        return "(none)"
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return yaml.dump(value, Dumper=_Dumper, sort_keys=True, allow_unicode=True,
                     width=100, default_flow_style=False).rstrip()


class _Dumper(yaml.SafeDumper):
    """Safe YAML with multi-line strings as literal blocks."""


def _string(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    if "\n" not in data and "\r" not in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data)
    # a view for reading: line ends made plain and trailing blanks dropped, which a
    # literal block cannot hold (YAML would fall back to an escaped string)
    lines = data.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    text = "\n".join(line.rstrip() for line in lines)
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|")


_Dumper.add_representer(str, _string)


class ClaudeCode:
    id = RESOLVER_ID

    def __init__(self, settings: ClaudeSettings | None = None,
                 client: anthropic.Anthropic | None = None) -> None:
        self.settings = settings or ClaudeSettings()
        if client is None:
            if not ALLOW_MODEL_REQUESTS:
                raise RealModelRequestError(
                    "a real Claude client was requested while model requests are disabled")
            key = self.settings.api_key
            client = anthropic.Anthropic(
                api_key=key.get_secret_value() if key is not None else None,
                timeout=self.settings.timeout_seconds, max_retries=self.settings.max_retries)
        self.client = client
        self.system = _template("system").template.strip()
        self.largest_answer: dict[str, int] = {}  # output tokens, per operation, seen here

    def request_key(self, request: ResolveRequest) -> str:
        """What this adapter would send for ``request``, as one digest: the model, the
        output allowance, the system prompt, the forced tool and the rendered prompt. Two
        requests with the same digest are the same question put to the same model."""
        operation = MODEL_OPERATIONS.get(request.operation)
        tool = forced_tool(operation) if operation is not None else None
        sent = [self.settings.model, self.settings.max_tokens, self.system, tool,
                render_prompt(request)]
        return hashlib.sha256(json.dumps(sent, sort_keys=True).encode()).hexdigest()

    def estimate_cost_time(self, request: ResolveRequest) -> Estimate:
        """What the call will likely cost: the prompt by length (with the tool's schema),
        and the largest answer this operation has given so far with a margin (before any,
        a typical size), never more than the output allowance. The kernel records the
        estimate with the proposal, so a resumed or replayed run decides the same way."""
        operation = MODEL_OPERATIONS.get(request.operation)
        schema = json.dumps(forced_tool(operation)["input_schema"]) if operation else ""
        prompt_tokens = (len(self.system) + len(render_prompt(request)) + len(schema)) // 3
        settings = self.settings
        seen = self.largest_answer.get(request.operation)
        typical = settings.expected_code_tokens if request.operation == "resolve" \
            else settings.expected_output_tokens
        output_tokens = min(settings.max_tokens, math.ceil(
            (seen if seen is not None else typical) * settings.estimate_margin))
        price = settings.price()
        cost = (prompt_tokens * price.input_per_mtok
                + output_tokens * price.output_per_mtok) / 1_000_000
        seconds = settings.seconds_overhead + output_tokens / settings.tokens_per_second
        return Estimate(cost_usd=round(cost, 6), seconds=round(seconds, 3))

    def resolve(self, request: ResolveRequest) -> Resolution:
        """One operation: at most ``max_calls`` requests (a repair turn for an answer that
        does not validate or was cut off at max_tokens, another request for a malformed
        body). Every request's tokens count, usable or not: a failure carries its cost."""
        operation = MODEL_OPERATIONS.get(request.operation)
        if operation is None:
            raise PermanentError(f"claude-code-0 has no operation {request.operation!r}",
                                 failure_mode="capability_mismatch")
        tool = forced_tool(operation)
        messages: list[dict[str, Any]] = [{"role": "user", "content": render_prompt(request)}]
        start = time.perf_counter()
        bill = _Bill(self.settings)
        repaired, problem, mode = False, "", "invalid_output"
        for _ in range(self.settings.max_calls):
            try:
                reply = self._call(messages, tool)
            except MalformedReply as exc:
                bill.add(exc.usage, self._upper_bound(messages))
                problem, mode = str(exc), "malformed_response"
                continue  # the model never saw this: the same request again
            except RetryableError as exc:
                exc.cost_usd, exc.seconds = bill.cost(), time.perf_counter() - start
                raise
            bill.add(reply.usage, 0)
            if reply.usage is not None:
                self.largest_answer[request.operation] = max(
                    self.largest_answer.get(request.operation, 0), reply.usage.output_tokens)
            block, output, errors = self._parse(reply, operation, request)
            if not errors and output is not None:
                return Resolution(
                    output=output.model_dump(mode="json"), cost_usd=bill.cost(),
                    seconds=time.perf_counter() - start,
                    metadata={"model": reply.model, "repaired": repaired,
                              "input_tokens": bill.input_tokens,
                              "output_tokens": bill.output_tokens,
                              "stop_reason": reply.stop_reason})
            problem, mode = errors, "invalid_output"
            if repaired:
                break
            repaired = True
            messages += self._repair_turn(reply, block, errors)
        raise PermanentError(f"{request.operation}: {problem}"
                             + (" (after a repair)" if repaired else ""), failure_mode=mode,
                             output_produced=True, cost_usd=bill.cost(),
                             seconds=time.perf_counter() - start)

    # -- internals -------------------------------------------------------------
    def _call(self, messages: list[dict[str, Any]], tool: dict[str, Any]) -> Reply:
        """One request, its whole answer read by a deadline: the settings' timeout, or
        the run's wall-time cap when that comes first (a server that sends a byte at a
        time would hold a per-read timeout for ever)."""
        left = seconds_left()
        if left is not None and left <= 0:
            raise DeadlineReached("the run's wall-time cap came before the model was asked")
        allowed = self.settings.timeout_seconds if left is None \
            else min(left, self.settings.timeout_seconds)
        deadline = time.monotonic() + allowed
        try:
            # The SDK's TypedDicts describe these same shapes; the dicts are built here.
            params: dict[str, Any] = {
                "model": self.settings.model, "max_tokens": self.settings.max_tokens,
                "system": self.system, "messages": messages, "tools": [tool],
                "tool_choice": {"type": "tool", "name": tool["name"]}}
            with self.client.messages.with_streaming_response.create(
                    **params, timeout=allowed) as raw:
                body = read_capped(raw.iter_bytes(), self.settings.max_response_bytes,
                                   deadline)
        except LateReply as exc:
            raise self._late(allowed) from exc
        except (anthropic.APIConnectionError, anthropic.APITimeoutError) as exc:
            if _past(deadline):
                raise self._late(allowed) from exc
            raise RetryableError(f"Claude unreachable: {exc}", failure_mode="network") from exc
        except anthropic.APIStatusError as exc:
            status = exc.status_code
            message = _error_message(exc)
            if status in (401, 403):
                raise AccessRefused(f"Claude refused the credentials ({status}): {message}; "
                                    "set a valid ANTHROPIC_API_KEY",
                                    failure_mode="access_refused") from exc
            if status in (408, 409, 429) or status >= 500:
                raise RetryableError(f"Claude answered {status}: {message}",
                                     failure_mode="rate_limited" if status == 429
                                     else "model_unavailable",
                                     retry_after=_retry_after(exc)) from exc
            raise PermanentError(f"Claude refused the request ({status}): {message}",
                                 failure_mode="invalid_request") from exc
        except (httpx2.HTTPError, OSError) as exc:  # a body cut off while it streamed
            if _past(deadline):
                raise self._late(allowed) from exc
            raise MalformedReply(f"the answer broke off: {type(exc).__name__}") from exc
        return parse_reply(body)

    def _late(self, allowed: float) -> DeadlineReached | RetryableError:
        """The run's cap reached mid-answer stops the run (the call is asked again on
        resume); the settings' own timeout is a call that may be tried again."""
        left = seconds_left()
        if left is not None and left <= 0:
            return DeadlineReached(f"the run's wall-time cap came while the model answered "
                                   f"({allowed:.0f}s into the call)")
        return RetryableError(f"Claude's answer took longer than {allowed:.0f}s",
                              failure_mode="network")

    def _upper_bound(self, messages: list[dict[str, Any]]) -> int:
        """Tokens to charge for a request whose answer did not say what it billed: the
        prompt by length and the whole output allowance."""
        return (len(self.system) + len(json.dumps(messages))) // 3 + self.settings.max_tokens

    @staticmethod
    def _parse(reply: Reply, operation: Operation[Any], request: ResolveRequest,
               ) -> tuple[Block | None, BaseModel | None, str]:
        """The tool call, its validated answer, and what is wrong with it ('' if nothing):
        a schema error, or a problem the operation refuses the answer for (a
        decomposition's coverage of the goal's constraints)."""
        block = next((b for b in reply.content
                      if b.type == "tool_use" and b.name == operation.tool), None)
        if reply.stop_reason == "max_tokens":
            return block, None, "the answer was cut off at max_tokens; give a shorter one"
        if block is None:
            return None, None, f"no call to the {operation.tool} tool"
        try:
            output = operation.output.model_validate(block.input)
        except ValidationError as exc:
            return block, None, "the arguments did not match the schema: " + "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5])
        refused = operation.problems(request, output)
        if refused:
            return block, None, "the answer was refused: " + "; ".join(refused)
        return block, output, ""

    @staticmethod
    def _repair_turn(reply: Reply, block: Block | None, errors: str) -> list[dict[str, Any]]:
        assistant = {"role": "assistant",
                     "content": [b.model_dump(exclude_none=True) for b in reply.content]}
        if block is None or block.id is None:
            return [assistant, {"role": "user",
                                "content": f"Answer by calling the tool. Problem: {errors}"}]
        return [assistant, {"role": "user", "content": [{
            "type": "tool_result", "tool_use_id": block.id, "is_error": True,
            "content": f"{errors[:1].upper()}{errors[1:]}. Call the tool again with "
                       "corrected arguments."}]}]

class _Bill:
    """The tokens of every request of one operation, priced."""

    def __init__(self, settings: ClaudeSettings) -> None:
        self.price = settings.price()
        self.micros = 0.0
        self.input_tokens = 0
        self.output_tokens = 0

    def add(self, usage: Usage | None, upper_bound: int) -> None:
        if usage is None:  # unknown: charge the most the request could have cost
            self.micros += upper_bound * self.price.output_per_mtok
            return
        written = usage.cache_creation_input_tokens or 0
        read = usage.cache_read_input_tokens or 0
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.micros += (usage.input_tokens * self.price.input_per_mtok
                        + written * self.price.input_per_mtok * self.price.cache_write_factor
                        + read * self.price.input_per_mtok * self.price.cache_read_factor
                        + usage.output_tokens * self.price.output_per_mtok)

    def cost(self) -> float:
        return round(self.micros / 1_000_000, 9)


def _past(deadline: float) -> bool:
    return time.monotonic() >= deadline


def _retry_after(exc: anthropic.APIStatusError) -> float | None:
    value = exc.response.headers.get("retry-after") if exc.response is not None else None
    try:
        return max(float(value), 0.0) if value is not None else None
    except ValueError:
        return None


def _error_message(exc: anthropic.APIStatusError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    error: dict[str, Any] = body["error"] if isinstance(body.get("error"), dict) else {}
    return str(error.get("message") or exc.message)
