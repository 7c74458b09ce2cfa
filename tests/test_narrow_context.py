"""The code below the SOLVE loop takes the parts of the run's context it uses (the
repositories it reads, or a small Protocol naming the parts), never the whole ``Kernel``:
what a function may touch is then read from its signature."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Each module (or package) that takes parts of the context, with the functions that still
# take the whole of it, and why.
NARROW = {
    "kernel/solve/prompt_inputs.py": set(),
    "kernel/solve/repo_goal.py": set(),
    "kernel/solve/composite.py": set(),
    "kernel/solve/tools.py": set(),
    "kernel/solve/sandbox_runs.py": set(),
    "kernel/runtime/gate.py": set(),
    "kernel/runtime/start.py": set(),
    "kernel/plan": set(),
    "kernel/solve/session.py": {"_drive"},  # hands the run to dispatch.solve
}


def takes_the_context(path: Path) -> list[str]:
    """The functions and methods under ``path`` (a module or a package) with a parameter
    annotated ``Kernel`` (quoted or not), as ``file:line name``."""
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    found = []
    for file in files:
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            a = node.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg))]
            if any(p.annotation is not None and ast.unparse(p.annotation).strip("'\"") == "Kernel"
                   for p in params):
                found.append(f"{file.name}:{node.lineno} {node.name}")
    return found


@pytest.mark.parametrize("where", sorted(NARROW))
def test_a_function_below_the_loop_takes_only_the_parts_it_uses(where: str) -> None:
    allowed = NARROW[where]
    assert [f for f in takes_the_context(ROOT / where) if f.split()[-1] not in allowed] == []


def test_the_check_sees_a_function_taking_the_whole_context(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def a(k: Kernel) -> None: ...\n"
                      "async def b(x: int, *, k: 'Kernel') -> None: ...\n"
                      "class C:\n    def __init__(self, k: Kernel) -> None: ...\n"
                      "def d(k: Gated, run: KernelView) -> None: ...\n")
    assert takes_the_context(module) == ["m.py:1 a", "m.py:2 b", "m.py:4 __init__"]


# The only functions that take the whole context: the loop that performs every effect
# (dispatch, look-ahead, perform, the step table's ``take``), the view steps read it
# through, and the session that hands the run to the loop. No step takes it.
LOOP = {
    "dispatch.py": {"solve", "_drive", "_capped", "_step", "escalate", "_run_step", "_handled"},
    "lookahead.py": {"look_ahead", "_take_ahead", "_advance", "_start"},
    "perform.py": {"drive", "perform", "_ask_person", "proposer_of", "apply", "_refuse"},
    "__init__.py": {"take"},
    "view.py": {"__init__"},
    "session.py": {"_drive"},
}


def test_only_the_loop_takes_the_whole_context() -> None:
    found = takes_the_context(ROOT / "kernel")
    beyond = [f for f in found
              if f.split()[-1] not in LOOP.get(f.split(":")[0], set())]
    assert beyond == [] and len(found) <= 20, found
    assert takes_the_context(ROOT / "kernel" / "solve" / "steps") == [
        f for f in takes_the_context(ROOT / "kernel" / "solve" / "steps" / "__init__.py")]
