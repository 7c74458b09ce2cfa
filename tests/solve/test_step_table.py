"""The step table in docs/solve-loop.md names the module and function that run each step;
``kernel.solve.steps.STEPS`` is the table the code uses. They must say the same thing."""

from __future__ import annotations

import re
from pathlib import Path

from kernel.solve.dispatch import HANDLERS
from kernel.solve.steps import STEPS

DOC = Path(__file__).resolve().parents[2] / "docs" / "solve-loop.md"
ROW = re.compile(r"^\| (?P<number>\w+)[^|]*\| `steps/(?P<module>\w+)\.py`: `(?P<function>\w+)` \|")


def _documented() -> list[tuple[str, str, str]]:
    rows = [ROW.match(line) for line in DOC.read_text(encoding="utf-8").splitlines()]
    return [(m["number"], m["module"], m["function"]) for m in rows if m]


def _coded() -> list[tuple[str, str, str]]:
    return [(s.number, s.handler.__module__.rsplit(".", 1)[-1], s.handler.__name__)
            for s in STEPS]


def test_the_documented_step_table_is_the_code_table() -> None:
    assert _documented() == _coded()


def test_every_step_lives_in_its_own_module_under_steps() -> None:
    for step in STEPS:
        assert step.handler.__module__.startswith("kernel.solve.steps."), step
    modules = [s.handler.__module__ for s in STEPS]
    assert len(set(modules)) == len(modules)


def test_dispatch_runs_the_handlers_the_table_names() -> None:
    assert set(HANDLERS.values()) <= {s.handler for s in STEPS}


def test_the_row_pattern_reads_a_row() -> None:
    assert ROW.match("| 6 verify | `steps/verify.py`: `verify` | per constraint |")
    assert _documented()[0][0] == "1"
