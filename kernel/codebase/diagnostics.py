"""Diagnostics of a repository goal's verification: each failing test, each Python file
the edits leave unparseable, and dependencies that could not be installed, as one fact
(severity, file, line, code, message).

A test's verdict comes from the kernel's test report, never from what the run printed;
only where it failed (the line of its test file in the traceback) and why (the
traceback's first ``E`` line) are read from the output, and are left out when the
output does not show them. An ``error`` blocks resolution.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from typing import Any, TypedDict

ERROR = "error"
_SECTION = re.compile(r"^_{3,} (.+?) _{3,}$", re.MULTILINE)
_SUMMARY = re.compile(r"^(?:FAILED|ERROR) (\S+?)(?: - (.*))?$", re.MULTILINE)
MESSAGE_LIMIT = 300


class Diagnostic(TypedDict):
    severity: str
    file: str | None
    line: int | None
    code: str
    message: str


def syntax_errors(files: Mapping[str, str], paths: Iterable[str]) -> list[Diagnostic]:
    """One error per Python file among ``paths`` that does not parse."""
    found: list[Diagnostic] = []
    for path in sorted(set(paths)):
        if not path.endswith(".py") or path not in files:
            continue
        try:
            ast.parse(files[path], filename=path)
        except SyntaxError as exc:
            found.append({"severity": ERROR, "file": path, "line": exc.lineno,
                          "code": "syntax_error", "message": str(exc.msg)[:MESSAGE_LIMIT]})
    return found


def failing_tests(verdicts: Mapping[str, str], printed: str) -> list[Diagnostic]:
    """One error per test the report says failed or errored, placed and explained by
    the run's output where it shows them: the last line of its file in its traceback,
    the traceback's first ``E`` line (else pytest's short summary)."""
    reasons = {m.group(1): (m.group(2) or "").strip() for m in _SUMMARY.finditer(printed)}
    found: list[Diagnostic] = []
    for node, verdict in sorted(verdicts.items()):
        if verdict not in ("failed", "error"):
            continue
        path = node.split("::")[0]
        section = _section(node, printed)
        lines = re.findall(rf"^{re.escape(path)}:(\d+): ", section, re.MULTILINE)
        said = re.search(r"^E +(\S.*)$", section, re.MULTILINE)
        message = said.group(1).strip() if said else reasons.get(node) or f"{node} {verdict}"
        found.append({"severity": ERROR, "file": path if path.endswith(".py") else None,
                      "line": int(lines[-1]) if lines else None,
                      "code": f"test_{verdict}", "message": message[:MESSAGE_LIMIT]})
    return found


def _section(node: str, printed: str) -> str:
    """The traceback section pytest prints for ``node`` (empty when it shows none)."""
    title = ".".join(node.split("::")[1:])
    starts = list(_SECTION.finditer(printed))
    for index, match in enumerate(starts):
        if match.group(1) in (title, f"ERROR at setup of {title}"):
            end = starts[index + 1].start() if index + 1 < len(starts) else len(printed)
            return printed[match.end():end]
    return ""


def setup_failed(setup: Mapping[str, Any] | None) -> list[Diagnostic]:
    """An error when the repository's dependencies could not be installed (its setup run
    failed, or was refused), placed on the file they are read from, with why and the end
    of what the installer said."""
    if not setup or setup.get("installed"):
        return []
    said = [line for line in str(setup.get("output_tail") or "").splitlines() if line.strip()]
    message = f"the dependencies could not be installed: {setup.get('reason')}" + \
        (f" ({said[-1].strip()})" if said else "")
    return [{"severity": ERROR, "file": setup.get("source"), "line": None,
             "code": "dependencies_not_installed", "message": message[:MESSAGE_LIMIT]}]


def blocking(diagnostics: Iterable[Mapping[str, Any]]) -> bool:
    return any(d.get("severity") == ERROR for d in diagnostics)


__all__ = ["ERROR", "Diagnostic", "blocking", "failing_tests", "setup_failed", "syntax_errors"]
