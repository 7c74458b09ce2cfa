"""Tests that run commands need bubblewrap; where it is missing they are skipped with the
sandbox's own reason, unless KERNEL_REQUIRE_SANDBOX is set (``make test`` sets it, so CI
cannot pass by skipping them)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from resolvers.sandbox.runner import isolation_problem

_PROBLEM = isolation_problem()
if _PROBLEM and os.environ.get("KERNEL_REQUIRE_SANDBOX"):
    raise RuntimeError(f"KERNEL_REQUIRE_SANDBOX is set but {_PROBLEM}")

needs_sandbox = pytest.mark.skipif(_PROBLEM is not None, reason=_PROBLEM or "")


def processes_with(token: str) -> list[int]:
    """Host pids (other than ours) whose command line contains ``token``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            with contextlib.suppress(OSError):
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
    return found
