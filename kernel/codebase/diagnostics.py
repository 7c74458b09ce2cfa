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


_TLS = re.compile(r"CERTIFICATE_VERIFY_FAILED|SSLError", re.IGNORECASE)
_TLS_WHY = re.compile(r"certificate verify failed:?\s*([^'\"()\n]*)", re.IGNORECASE)
_UNREACHABLE = re.compile(r"(ProxyError|NewConnectionError|Failed to establish a new connection"
                          r"|Name or service not known|Temporary failure in name resolution"
                          r"|Connection refused|Network is unreachable|timed out)", re.IGNORECASE)


def install_failure(setup: Mapping[str, Any]) -> str:
    """Why the dependencies could not be installed, in one clause: the setup's reason and
    the cause the installer's output shows, a certificate the index's connection could
    not be verified with or an index that could not be reached before its last line (pip
    ends on "No matching distribution found" for both), and what setting to look at."""
    said = [line.strip() for line in str(setup.get("output_tail") or "").splitlines()
            if line.strip()]
    reason = str(setup.get("reason"))
    if not said:
        return reason
    tail = "\n".join(said)
    if _TLS.search(tail) is not None:
        why = _TLS_WHY.search(tail)
        what = (why.group(1).strip(" :") if why else "") or "certificate verify failed"
        return (f"{reason}: the index's certificate could not be verified "
                f"(CERTIFICATE_VERIFY_FAILED: {what}); set KERNEL_REGISTRY_CERT to the CA "
                "bundle (PEM) that signs it")
    unreachable = _UNREACHABLE.search(tail)
    if unreachable is not None:
        return (f"{reason}: the index could not be reached ({unreachable.group(1)}); check "
                "KERNEL_REGISTRY_INDEX_URL and KERNEL_REGISTRY_HOSTS")
    return f"{reason} ({said[-1]})"


def install_advice(setup: Mapping[str, Any]) -> str:
    """What would let the install succeed, from why it failed: the setting to change, or
    the requirements to check against the index."""
    tail = str(setup.get("output_tail") or "")
    if _TLS.search(tail) is not None:
        return ("set KERNEL_REGISTRY_CERT to the CA bundle (PEM) that signs the index's "
                "certificate (behind a TLS-intercepting proxy, the proxy's CA)")
    if "KERNEL_REGISTRY_HOSTS is empty" in str(setup.get("reason")):
        return ("grant the index's hosts in KERNEL_REGISTRY_HOSTS (its default is "
                '["pypi.org", "files.pythonhosted.org"])')
    if _UNREACHABLE.search(tail) is not None:
        return ("check that KERNEL_REGISTRY_INDEX_URL names an index this machine reaches "
                "and that KERNEL_REGISTRY_HOSTS grants its hosts")
    return (f"check that each requirement in {setup.get('source')} exists on the index "
            "KERNEL_REGISTRY_INDEX_URL names, for this Python, and that KERNEL_REGISTRY_HOSTS "
            "grants the hosts its files come from (KERNEL_REGISTRY_CERT: a CA it needs)")


def setup_failed(setup: Mapping[str, Any] | None) -> list[Diagnostic]:
    """An error when the repository's dependencies could not be installed (its setup run
    failed, or was refused), placed on the file they are read from, with why."""
    if not setup or setup.get("installed"):
        return []
    message = f"the dependencies could not be installed: {install_failure(setup)}"
    return [{"severity": ERROR, "file": setup.get("source"), "line": None,
             "code": "dependencies_not_installed", "message": message[:MESSAGE_LIMIT]}]


def blocking(diagnostics: Iterable[Mapping[str, Any]]) -> bool:
    return any(d.get("severity") == ERROR for d in diagnostics)


__all__ = ["ERROR", "Diagnostic", "blocking", "failing_tests", "install_advice", "install_failure",
           "setup_failed",
           "syntax_errors"]
