"""Recorded Messages API traffic for the Claude adapter, routed by respx.

The ``anthropic`` SDK sends through ``httpx2``; respx routes ``httpx`` requests. This
bridge hands each ``httpx2`` request to a respx router (which matches, records and
answers it) and converts the answer back, so tests work at the HTTP layer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anthropic
import httpx
import httpx2
import respx

RECORDED = Path(__file__).parent / "recorded" / "claude"
MESSAGES_URL = "https://api.anthropic.com/v1/messages"


def recorded(name: str, status: int = 200, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, json=json.loads((RECORDED / f"{name}.json").read_text()),
                          headers=headers)


@contextmanager
def mocked_claude(max_retries: int = 2) -> Iterator[tuple[respx.MockRouter, anthropic.Anthropic]]:
    router = respx.MockRouter(using=None, assert_all_called=False, assert_all_mocked=True)

    def handler(request: httpx2.Request) -> httpx2.Response:
        forwarded = httpx.Request(request.method, str(request.url),
                                  headers=list(request.headers.multi_items()),
                                  content=request.read())
        answer = router.handler(forwarded)
        answer.read()
        return httpx2.Response(answer.status_code, headers=list(answer.headers.multi_items()),
                               content=answer.content)

    client = anthropic.Anthropic(api_key="sk-ant-test-not-a-real-key", max_retries=max_retries,
                                 http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    yield router, client
