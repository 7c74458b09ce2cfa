"""Test verdicts from the JUnit XML report pytest writes, never from what a run prints.

The report is untrusted input written inside the sandbox: it is size-capped and parsed
with defusedxml (no entity expansion, no external references).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from defusedxml import ElementTree
from defusedxml.common import DefusedXmlException

REPORT_LIMIT = 4 << 20
_OUTCOMES = (("failure", "failed"), ("error", "error"), ("skipped", "skipped"))


def read_report(path: Path) -> dict[str, Any]:
    """``{"tests": {node id: outcome}, "counts": {...}}``, or ``{"error": why}``."""
    if not path.is_file():
        return {"error": "the test run wrote no report"}
    if path.stat().st_size > REPORT_LIMIT:
        return {"error": f"the test report is larger than {REPORT_LIMIT} bytes"}
    try:
        root = ElementTree.fromstring(path.read_bytes())
    except (ElementTree.ParseError, DefusedXmlException, ValueError) as exc:
        return {"error": f"the test report is not valid JUnit XML: {exc}"}
    tests: dict[str, str] = {}
    for case in root.iter("testcase"):
        tests[_node_id(case.attrib)] = _outcome(case)
    counts = {name: sum(1 for o in tests.values() if o == name)
              for name in ("passed", "failed", "error", "skipped")}
    return {"tests": dict(sorted(tests.items())), "counts": counts}


def _outcome(case: Any) -> str:
    for tag, outcome in _OUTCOMES:
        if case.find(tag) is not None:
            return outcome
    return "passed"


def _node_id(attrib: dict[str, str]) -> str:
    """pytest's node id (``file::Class::name``) from xunit1 attributes."""
    name = attrib.get("name", "")
    classname = attrib.get("classname", "")
    file = attrib.get("file", "")
    if not file:
        return f"{classname}::{name}" if classname else name
    module = file.removesuffix(".py").replace("/", ".")
    inner = classname[len(module) + 1:] if classname.startswith(module + ".") else ""
    return "::".join([file, *(inner.split(".") if inner else []), name])
