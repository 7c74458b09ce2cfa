"""A bug in a repository of more than 50 files fixed through the real Claude adapter and
SDK and the prompt-reading model double (tests/model_double.py), on both stores. The
double edits only a file the prompt shows whole, and learns the unit the failing test
wants only from that test's file, shown because the failure points at it: without the
files the goal points at (by name and by meaning), or without those the failing tests
name, the run does not resolve; without the names alone, meaning still finds the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel.codebase import repo_prompt
from kernel.schema import init_schema
from kernel.solve import repo_goal
from kernel.solve.dispatch import Outcome, solve
from kernel.solve.session import replay
from kernel.store.base import GraphStore
from resolvers.sandbox.runner import default_workspace_root
from tests.conftest import store_settings
from tests.model_double import model_double
from tests.sandbox_support import needs_sandbox
from tests.starting import start

GOAL = "Fix parse_duration: a unit it does not know must be refused, not read as seconds"
TIMEPARSE = ('"""Durations written like 90s, 15m or 2h."""\n\n'
             'UNITS = {"s": 1, "m": 60, "h": 3600}\n\n\n'
             "def parse_duration(text):\n"
             '    """Seconds in a duration such as \'15m\'."""\n'
             "    number, unit = text[:-1], text[-1]\n"
             "    return int(number) * UNITS.get(unit, 1)\n")
TESTS = ("import pytest\n\nfrom pkg.timeparse import parse_duration\n\n\n"
         "def test_minutes():\n    assert parse_duration('15m') == 900\n\n\n"
         "def test_days():\n    assert parse_duration('2d') == 172800\n\n\n"
         "def test_an_unknown_unit_is_refused():\n"
         "    with pytest.raises(KeyError):\n        parse_duration('3x')\n")


def _repository(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg/__init__.py").write_text("")
    for n in range(50):
        (root / f"pkg/part_{n:02d}.py").write_text(
            f'"""Part {n} of the package."""\n\n\ndef value_{n:02d}():\n    return {n}\n')
    (root / "pkg/timeparse.py").write_text(TIMEPARSE)
    (root / "tests/test_timeparse.py").write_text(TESTS)
    return root


def _solve(store: GraphStore, data_dir: Path, tmp_path: Path) -> tuple[Outcome, str]:
    root = _repository(tmp_path / "repo")
    repo = repo_goal.repo_input(root, store_settings(store, data_dir))
    repo_goal.prepare(store, repo, data_dir)
    core = repo_goal.with_repo_tests([])
    with model_double() as (_, proposer):
        kernel, goal = start(store, GOAL, core, 2.0, 900, proposer, data_dir,
                             default_workspace_root(), max_attempts=2,
                             extra={"repo": repo})
        return solve(kernel, goal), kernel.run.run_id


@needs_sandbox
@pytest.mark.slow  # two sandboxed runs of the repository's tests
def test_a_bug_in_a_fifty_file_repository_is_fixed_from_what_the_prompt_shows(
        initialised: GraphStore, data_dir: Path, tmp_path: Path) -> None:
    outcome, run_id = _solve(initialised, data_dir, tmp_path)
    assert outcome.status == "resolved"
    assert len(list((tmp_path / "repo").rglob("*.py"))) >= 52
    replayed = replay(store_settings(initialised, data_dir), run_id)
    assert replayed.replay_hash == replayed.original_hash


@needs_sandbox
@pytest.mark.slow
@pytest.mark.parametrize("without", ["related_files", "named_by_failing_tests"])
def test_without_the_files_the_goal_or_the_failing_tests_point_at_the_double_fails(
        embedded_store: GraphStore, data_dir: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, without: str) -> None:
    if without == "related_files":
        monkeypatch.setattr(repo_prompt, "related", lambda *_: [])
        monkeypatch.setattr(repo_prompt, "files_near_goal", lambda *_: [])
    else:
        monkeypatch.setattr(repo_prompt, "pointed_at", lambda *_: [])
    init_schema(embedded_store)
    outcome, _ = _solve(embedded_store, data_dir, tmp_path)
    assert outcome.status != "resolved"


@needs_sandbox
@pytest.mark.slow
def test_without_the_names_the_goal_mentions_meaning_finds_the_file(
        embedded_store: GraphStore, data_dir: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The name match left out, the vector index over the symbols still brings
    pkg/timeparse.py (its function parses durations) into the prompt."""
    monkeypatch.setattr(repo_prompt, "related", lambda *_: [])
    init_schema(embedded_store)
    outcome, _ = _solve(embedded_store, data_dir, tmp_path)
    assert outcome.status == "resolved"
