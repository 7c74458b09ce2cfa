"""The step table is code: ``kernel.solve.steps.STEPS`` drives dispatch, each step's return
annotation names the moves it makes, and docs/solve-loop.md's table is rendered from it.
Steps never import each other."""

from __future__ import annotations

import ast
import doctest
import typing
from pathlib import Path

from kernel.solve import moves
from kernel.solve.dispatch import FIRST_MOVE
from kernel.solve.steps import BY_MOVE, STEPS, table
from kernel.solve.steps.__main__ import BEGIN, DOC, END, rendered

STEPS_DIR = Path(__file__).resolve().parents[2] / "kernel" / "solve" / "steps"


def test_the_documented_step_table_is_rendered_from_the_code_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert text == rendered(text), "run: python -m kernel.solve.steps"
    assert text.split(BEGIN, 1)[1].split(END, 1)[0] == table()


def test_rendering_replaces_a_stale_table() -> None:
    stale = f"intro\n{BEGIN}| old |\n{END}after\n"
    assert rendered(stale) == f"intro\n{BEGIN}{table()}{END}after\n"


def test_every_move_has_exactly_one_step_and_every_step_its_own_move() -> None:
    declared = {c for c in vars(moves).values()
                if isinstance(c, type) and issubclass(c, moves.Move) and c is not moves.Move}
    assert set(BY_MOVE) == declared
    assert len(BY_MOVE) == len(STEPS)


def test_each_step_takes_its_move_and_names_moves_the_table_knows() -> None:
    for step in STEPS:
        hints = typing.get_type_hints(step.run)
        params = [v for k, v in hints.items() if k != "return"]
        assert params[-1] is step.move, step
        for target in step.goes_to():
            assert target is None or target in BY_MOVE, (step, target)


def test_every_step_is_reached_from_a_turn_start() -> None:
    starts = {*FIRST_MOVE.values(), moves.Intake, moves.HireAnswered, moves.BuildDone,
              moves.Compose, moves.Hire}
    reached, frontier = set(starts), list(starts)
    while frontier:
        for target in BY_MOVE[frontier.pop()].goes_to():
            if target is not None and target not in reached:
                reached.add(target)
                frontier.append(target)
    assert reached == set(BY_MOVE)


def test_the_moves_module_examples_hold() -> None:
    assert doctest.testmod(moves).failed == 0


def test_the_edges_the_design_names_are_in_the_table() -> None:
    edges = {(s.move, t) for s in STEPS for t in s.goes_to()}
    for edge in [(moves.Verify, moves.Leaf), (moves.Verify, moves.Retry),
                 (moves.Leaf, moves.Gate), (moves.Retry, moves.Grow), (moves.Grow, moves.Hire),
                 (moves.Compose, moves.Consistency), (moves.Consistency, moves.Assemble)]:
        assert edge in edges, edge


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.update(f"{node.module}.{a.name}" for a in node.names)
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_no_solve_step_imports_another() -> None:
    steps = {p.stem for p in STEPS_DIR.glob("*.py") if not p.stem.startswith("_")}
    reaching = sorted(
        f"{path.stem} -> {name}" for path in STEPS_DIR.glob("*.py")
        if path.stem in steps
        for name in _imports(path)
        if name.startswith("kernel.solve.steps")
        and name.removeprefix("kernel.solve.steps").lstrip(".").split(".")[0] not in ("", "_shared"))
    assert reaching == []


def test_the_import_check_sees_a_step_importing_another(tmp_path: Path) -> None:
    path = tmp_path / "verify.py"
    path.write_text("from kernel.solve.steps import leaf\nfrom kernel.solve.steps.retry import retry\n")
    names = _imports(path)
    assert "kernel.solve.steps.leaf" in names and "kernel.solve.steps.retry.retry" in names
