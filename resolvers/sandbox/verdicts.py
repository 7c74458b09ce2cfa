"""Test verdicts as the kernel's test supervisor sends them, never from what a run prints.

The supervisor (runtime/pytest_launcher.py) writes one JSON document to a pipe only it
holds inside the sandbox; the kernel reads it from the other end, so there is no report
file to rewrite, replace with a link, a directory or a FIFO. It is still read as
untrusted input: size-capped and checked for shape.
"""

from __future__ import annotations

import json
from typing import Any

REPORT_LIMIT = 4 << 20
OUTCOMES = ("passed", "failed", "error", "skipped")


def read_verdicts(data: bytes, truncated: bool = False) -> dict[str, Any]:
    """``{"tests": {node id: outcome}, "counts": {...}}``, or ``{"error": why}``."""
    if truncated:
        return {"error": f"the test report is larger than {REPORT_LIMIT} bytes"}
    if not data:
        return {"error": "the test run wrote no report"}
    try:
        sent = json.loads(data)
    except ValueError:
        return {"error": "the test report is not what the kernel's supervisor writes"}
    if isinstance(sent, dict) and isinstance(sent.get("error"), str):
        return {"error": sent["error"]}
    tests = sent.get("tests") if isinstance(sent, dict) else None
    if not isinstance(tests, dict) or not all(
            isinstance(k, str) and v in OUTCOMES for k, v in tests.items()):
        return {"error": "the test report is not what the kernel's supervisor writes"}
    counts = {name: sum(1 for o in tests.values() if o == name) for name in OUTCOMES}
    return {"tests": dict(sorted(tests.items())), "counts": counts}
