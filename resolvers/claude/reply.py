"""A Messages API answer, read from its raw bytes and checked before anything uses it.

The SDK's own parsing trusts the body: ``null``, a truncated document, a missing
``usage`` or a negative token count surface as AttributeError or ValidationError deep in
a call. Here the body is read up to a size cap, decoded, parsed and validated against a
strict model of the fields the adapter uses; any problem is a :class:`MalformedReply`
with a one-line reason. Lone surrogates (valid JSON escapes, invalid text) become U+FFFD
so nothing downstream fails to encode them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kernel.protocol.json_depth import too_deep

# A message is an object of content blocks whose tool input is an operation's model: a
# few levels, never hundreds.
MAX_ANSWER_DEPTH = 64


class MalformedReply(Exception):
    """The answer cannot be used as a Messages API response."""

    def __init__(self, reason: str, usage: Usage | None = None) -> None:
        super().__init__(reason)
        self.usage = usage  # known when the body said what it billed


class Usage(BaseModel):
    model_config = ConfigDict(extra="allow")

    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    cache_creation_input_tokens: int | None = Field(default=None, ge=0)
    cache_read_input_tokens: int | None = Field(default=None, ge=0)


class Block(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str
    id: str | None = None
    name: str | None = None
    input: Any = None
    text: str | None = None


class Reply(BaseModel):
    model_config = ConfigDict(extra="allow")

    content: list[Block]
    usage: Usage
    stop_reason: str | None = None
    model: str = ""


class LateReply(Exception):
    """The answer was still arriving when its deadline came."""


def read_capped(chunks: Iterable[bytes], limit: int, deadline: float | None = None) -> bytes:
    """The body, or MalformedReply as soon as it passes ``limit`` bytes, or LateReply
    once ``deadline`` (``time.monotonic``) has passed, however steadily bytes arrive."""
    body = bytearray()
    for chunk in chunks:
        body += chunk
        if len(body) > limit:
            raise MalformedReply(f"the answer is larger than {limit:,} bytes")
        if deadline is not None and time.monotonic() >= deadline:
            raise LateReply(f"{len(body):,} bytes had arrived")
    return bytes(body)


def parse_reply(body: bytes) -> Reply:
    deep = too_deep(body, MAX_ANSWER_DEPTH)
    if deep is not None:
        raise MalformedReply(f"the answer cannot be read: {deep}")
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        raise MalformedReply("the answer is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        what = "is empty" if not body.strip() else f"is not JSON ({exc.msg} at byte {exc.pos})"
        raise MalformedReply(f"the answer {what}") from None
    if not isinstance(data, dict):
        raise MalformedReply(f"the answer is JSON {type(data).__name__}, not a message object")
    data = without_lone_surrogates(data)
    try:
        return Reply.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(message)"
        raise MalformedReply(f"the answer's {where}: {first['msg']}",
                             usage=_usage_of(data)) from None


def _usage_of(data: dict[str, Any]) -> Usage | None:
    try:
        return Usage.model_validate(data.get("usage"))
    except ValidationError:
        return None


def without_lone_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace") \
            if any("\ud800" <= ch <= "\udfff" for ch in value) else value
    if isinstance(value, list):
        return [without_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {without_lone_surrogates(k): without_lone_surrogates(v) for k, v in value.items()}
    return value
