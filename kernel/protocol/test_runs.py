"""The shape of a request to run tests in the sandbox, as the kernel and the runner both
read it: ``{"files", "setup", "first_commands", "commands", "first", "tests"}``. The
``setup`` is a repository's dependency install (requirements.py), run before the rest
unless an earlier install of the same requirements is kept. The ``first`` parts are the
tests a change impacts, run before the rest, which does not run when they fail."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def runs_in(payload: Mapping[str, Any]) -> int:
    """How many commands a payload may start (each is charged; the setup only when it
    runs, not when its cache serves it)."""
    tests = 1 if payload.get("tests") else 0
    first = 1 if payload.get("first") and tests else 0
    setup = 1 if payload.get("setup") else 0
    return max(len(payload.get("commands", [])) + len(payload.get("first_commands", []))
               + tests + first + setup, 1)


__all__ = ["runs_in"]
