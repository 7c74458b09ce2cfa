"""The shape of a request to run tests in the sandbox, as the kernel and the runner both
read it: ``{"files", "first_commands", "commands", "first", "tests"}``. The ``first``
parts are the tests a change impacts, run before the rest, which does not run when they
fail."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def runs_in(payload: Mapping[str, Any]) -> int:
    """How many commands a payload may start (each is charged)."""
    tests = 1 if payload.get("tests") else 0
    first = 1 if payload.get("first") and tests else 0
    return max(len(payload.get("commands", [])) + len(payload.get("first_commands", []))
               + tests + first, 1)


__all__ = ["runs_in"]
