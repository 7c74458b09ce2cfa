"""Static check of tool code the system writes for itself, before it may be registered.

Code is parsed, never run. Forbidden: importing modules that reach the OS, the network
or the interpreter's internals; calling dynamic-execution builtins; opening files for
writing; touching dunder attributes (the usual sandbox escapes).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

FORBIDDEN_MODULES = frozenset({
    "os", "sys", "subprocess", "socket", "shutil", "ctypes", "importlib", "multiprocessing",
    "threading", "signal", "pty", "pathlib", "io", "requests", "urllib", "http", "httpx",
    "ftplib", "telnetlib", "smtplib", "asyncio", "pickle", "marshal", "builtins", "gc",
    "inspect", "code", "codeop", "resource", "tempfile", "glob", "webbrowser",
})
FORBIDDEN_CALLS = frozenset({"eval", "exec", "compile", "__import__", "getattr", "setattr",
                             "delattr", "globals", "locals", "vars", "breakpoint", "input"})
WRITE_MODES = frozenset("wax+")


@dataclass(frozen=True)
class Violation:
    code: str
    line: int
    detail: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.code}: {self.detail}"


def check_tool_code(source: str) -> list[Violation]:
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [Violation("SYNTAX_ERROR", exc.lineno or 0, str(exc.msg))]
    found: list[Violation] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) \
                else [node.module or ""]
            for name in names:
                if name.split(".")[0] in FORBIDDEN_MODULES:
                    found.append(Violation("FORBIDDEN_IMPORT", node.lineno, name))
        elif isinstance(node, ast.Call):
            called = node.func.id if isinstance(node.func, ast.Name) else None
            if called in FORBIDDEN_CALLS:
                found.append(Violation("FORBIDDEN_CALL", node.lineno, f"{called}()"))
            if called == "open" and _writes(node):
                found.append(Violation("FILE_WRITE", node.lineno, "open() for writing"))
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__") \
                and node.attr.endswith("__"):
            found.append(Violation("DUNDER_ACCESS", node.lineno, node.attr))
        elif isinstance(node, ast.Name) and node.id in ("__builtins__", "__loader__", "__spec__"):
            found.append(Violation("DUNDER_ACCESS", node.lineno, node.id))
    return sorted(found, key=lambda v: (v.line, v.code, v.detail))


def _writes(call: ast.Call) -> bool:
    mode = call.args[1] if len(call.args) > 1 else next(
        (k.value for k in call.keywords if k.arg == "mode"), None)
    if mode is None:
        return False
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return bool(WRITE_MODES & set(mode.value))
    return True  # a computed mode cannot be proven read-only
