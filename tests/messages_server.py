"""A local HTTP server that speaks the Messages API, answering every request with one
chosen fault, so the real ``anthropic`` client meets what a misbehaving model or proxy
sends: bodies that are not JSON, truncated or oversized, wrong shapes, negative token
counts, lone surrogates, answers cut at max_tokens, persistent 429/500/529, resets.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic
import httpx2

USAGE = {"input_tokens": 1000, "output_tokens": 200}


def _message(content: list[dict[str, Any]], usage: Any = USAGE,
             stop_reason: str = "tool_use") -> dict[str, Any]:
    return {"id": "msg_local", "type": "message", "role": "assistant", "model": "claude-opus-5",
            "content": content, "stop_reason": stop_reason, "usage": usage}


def _tool(name: str, arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_local", "name": name, "input": arguments}


def _body(kind: str, tool: str) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of one faulty answer to a request that forces ``tool``."""
    def js(value: Any, status: int = 200) -> tuple[int, dict[str, str], bytes]:
        return status, {"content-type": "application/json"}, json.dumps(value).encode()

    error = {"type": "error", "error": {"type": "api_error", "message": "it broke"}}
    bodies = {
        "not_json": lambda: (200, {"content-type": "application/json"}, b"<html>bad gateway"),
        "null": lambda: js(None),
        "array": lambda: js([]),
        "empty": lambda: (200, {"content-type": "application/json"}, b""),
        "no_usage": lambda: js({k: v for k, v in _message([_tool(tool, {})]).items()
                                if k != "usage"}),
        "truncated": lambda: (200, {"content-type": "application/json"},
                              json.dumps(_message([_tool(tool, {"x": "y" * 50})])).encode()[:70]),
        "negative_tokens": lambda: js(_message([_tool(tool, {})],
                                               {"input_tokens": -5, "output_tokens": -1})),
        "string_tokens": lambda: js(_message([_tool(tool, {})],
                                             {"input_tokens": "many", "output_tokens": 1})),
        "content_not_list": lambda: js(_message("hello")),  # type: ignore[arg-type]
        "text_only": lambda: js(_message([{"type": "text", "text": "I would rather not."}],
                                         stop_reason="end_turn")),
        "wrong_tool": lambda: js(_message([_tool("some_other_tool", {})])),
        "schema_mismatch": lambda: js(_message([_tool(tool, {"unexpected": True})])),
        "input_is_string": lambda: js(_message([_tool(tool, "not an object")])),
        "max_tokens": lambda: js(_message([_tool(tool, {"constraints": []})],
                                          stop_reason="max_tokens")),
        "oversized": lambda: js(_message([{"type": "text", "text": "x" * 5_000_000}])),
        "lone_surrogate": lambda: (200, {"content-type": "application/json"}, (
            '{"type":"message","role":"assistant","model":"m","stop_reason":"tool_use",'
            '"usage":{"input_tokens":10,"output_tokens":5},"content":[{"type":"tool_use",'
            f'"id":"t1","name":"{tool}","input":{{"bad":"\\ud800"}}}}]}}').encode()),
        "invalid_utf8": lambda: (200, {"content-type": "application/json"},
                                 b'{"content": "\xff\xfe"}'),
        # valid JSON, 400 KB, nested 200,000 deep in the tool's input
        "deep": lambda: (200, {"content-type": "application/json"},
                         json.dumps(_message([_tool(tool, {"x": "DEEP"})])).encode().replace(
                             b'"DEEP"', b"[" * 200_000 + b"]" * 200_000)),
        "error_object_200": lambda: js(error),
        "http_500": lambda: js(error, 500),
        "http_529": lambda: js({"type": "error", "error": {"type": "overloaded_error",
                                                           "message": "overloaded"}}, 529),
        "http_429": lambda: (429, {"content-type": "application/json", "retry-after": "0"},
                             json.dumps(error).encode()),
        "http_400": lambda: js({"type": "error", "error": {
            "type": "invalid_request_error", "message": "prompt is too long"}}, 400),
        "http_401": lambda: js({"type": "error", "error": {
            "type": "authentication_error", "message": "invalid x-api-key"}}, 401),
    }
    return bodies[kind]()


KINDS = ("not_json", "null", "array", "empty", "no_usage", "truncated", "negative_tokens",
         "string_tokens", "content_not_list", "text_only", "wrong_tool", "schema_mismatch",
         "input_is_string", "max_tokens", "oversized", "lone_surrogate", "invalid_utf8",
         "error_object_200", "http_500", "http_529", "http_429", "http_400", "http_401",
         "reset", "short_body", "deep")
DRIBBLE_SECONDS = 2.0  # "dribble": headers, then one byte of the body every this often


class QuietHandler(BaseHTTPRequestHandler):
    """A Messages API endpoint's plumbing: the request as JSON, an answer as bytes."""

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def read_request(self) -> dict[str, Any]:
        return dict(json.loads(self.rfile.read(int(self.headers["content-length"]))))

    def answer(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Handler(QuietHandler):
    server: _Server

    def do_POST(self) -> None:
        request = self.read_request()
        self.server.requests.append(request)
        tool = request.get("tool_choice", {}).get("name", "tool")
        kind = self.server.kind
        if kind == "reset":  # close the connection without an answer
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       b"\x01\x00\x00\x00\x00\x00\x00\x00")
            self.connection.close()
            return
        if kind == "dribble":  # a body that never ends, a byte at a time
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", "100000000")
            self.end_headers()
            try:
                while True:
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(DRIBBLE_SECONDS)
            except OSError:  # the client gave up
                return
        if kind == "short_body":  # promise more than is sent, then hang up
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", "5000")
            self.end_headers()
            self.wfile.write(b'{"content": [')
            self.wfile.flush()
            self.connection.close()
            return
        self.answer(*_body(kind, tool))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    kind = "null"
    requests: list[dict[str, Any]]


@contextmanager
def messages_server(kind: str) -> Iterator[tuple[_Server, anthropic.Anthropic]]:
    """The server answering every request with ``kind``, and a real client pointed at it."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.kind, server.requests = kind, []
    with local_client(server, max_retries=1, timeout=10) as client:
        yield server, client


@contextmanager
def local_client(server: ThreadingHTTPServer, max_retries: int,
                 timeout: float) -> Iterator[anthropic.Anthropic]:
    """``server`` serving in a thread, and a real client pointed at it; shut down after."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    client = anthropic.Anthropic(api_key="sk-ant-local-test", max_retries=max_retries,
                                 timeout=timeout, base_url=f"http://127.0.0.1:{server.server_port}",
                                 http_client=httpx2.Client(timeout=timeout))
    try:
        yield client
    finally:
        server.shutdown()
        server.server_close()
