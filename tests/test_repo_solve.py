"""A goal that changes a repository (``kernel solve --repo``), on both stores: the bugfix
example resolves through a wrong diff, the failing test's feedback and a right diff; its
patch applies with ``git apply --check`` to a clean copy, whose tests then pass under
plain pytest; replay reaches the same summary hash; the resolve prompt shows the files
the goal and the failing test point at; a tree changed since the snapshot is refused by
replay and by ``--apply``; bad input exits 2 with nothing stored."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kernel import api
from kernel.codebase.edits import sha256_of
from kernel.codebase.ingest import repo_id
from kernel.core.attempts import Attempts
from kernel.core.run import Run
from kernel.errors import ConfigError
from kernel.lookup import find_node
from kernel.protocol import Resolution, ResolveRequest
from kernel.repositories import code_graph
from kernel.settings import KernelSettings
from kernel.solve.repo_delivery import PACK_NAME, PATCH_NAME, deliver
from kernel.solve.session import replay
from kernel.store.base import GraphStore
from resolvers.claude.adapter import render_prompt
from resolvers.scripted import ScriptedProposer
from tests.conftest import store_env, store_settings
from tests.sandbox_support import needs_sandbox

EXAMPLE = Path(__file__).parents[1] / "seeds" / "examples" / "bugfix"
GOAL = "Fix the word count: any run of whitespace separates words"


def recording_proposer(monkeypatch: pytest.MonkeyPatch) -> _Recording:
    """The bugfix example's scripted proposer, made the run's, keeping each request."""
    from kernel.runtime import proposers

    recording = _Recording.from_file(EXAMPLE / "script.yaml")
    assert isinstance(recording, _Recording)
    recording.requests = []
    real = proposers.make_proposer
    monkeypatch.setattr(proposers, "make_proposer",
                        lambda *a, **kw: (recording, real(*a, **kw)[1]))
    return recording


def solve_repo_cli(store: GraphStore, data_dir: Path, repo: Path, env: dict[str, str]
                   ) -> subprocess.CompletedProcess[str]:
    """``kernel solve GOAL --repo REPO`` with the bugfix example's script, as a process."""
    return subprocess.run(
        [sys.executable, "-c", "from kernel.cli.app import main; main()", "solve", GOAL,
         "--repo", str(repo), "--proposer", "scripted", "--script",
         str(EXAMPLE / "script.yaml"), "--progress", "none"],
        capture_output=True, text=True, check=False,
        env={**os.environ, **store_env(store, data_dir), **env, "COLUMNS": "300"})


def _copy(tmp_path: Path, name: str = "repo") -> Path:
    return Path(shutil.copytree(EXAMPLE / "repo", tmp_path / name))


def _solve(store: GraphStore, settings: KernelSettings, repo: Path) -> api.Outcome:
    request = api.SolveRequest.checked(goal=GOAL, proposer="scripted",
                                       script=EXAMPLE / "script.yaml", repo=repo)
    return api.solve(store, request, settings)


def _plain_pytest(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                          cwd=root, capture_output=True, text=True, check=False, timeout=300,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})


@needs_sandbox
@pytest.mark.slow  # two sandboxed test runs and a replay per store
def test_the_bugfix_example_resolves_delivers_a_patch_and_replays(
        initialised: GraphStore, data_dir: Path, tmp_path: Path) -> None:
    settings = store_settings(initialised, data_dir)
    repo = _copy(tmp_path)
    assert _plain_pytest(repo).returncode == 1  # the bug is real
    outcome = _solve(initialised, settings, repo)
    assert outcome.status == "resolved"
    root = api.root_goal(initialised, outcome.run_id)
    assert root["attempt_count"] == 2  # the wrong diff, then the right one
    assert code_graph.known_files(initialised, repo_id(repo.resolve()))  # ingested
    _assert_failing_tests_are_diagnostics(initialised, outcome)
    out = tmp_path / "out"
    deliver(initialised, settings, outcome.run_id, root, out, apply=False)
    pack = json.loads((out / PACK_NAME).read_text())
    assert pack["summary_hash"] == api.summary_hash(initialised, outcome.run_id)
    assert pack["replay"] == f"kernel replay {outcome.run_id}"
    suite = next(t for t in pack["tests"] if t["tests"] == {"suite": "PASSED"})
    # the edits change wordstats/count.py: the tests reaching its functions are named
    assert suite["impacted_tests"] == [f"tests/test_count.py::{name}" for name in (
        "test_any_whitespace_separates_words", "test_empty_text_has_no_words",
        "test_single_spaces", "test_summary")]
    assert suite["impacted_first"] == {"exit_code": 0, "suite_ran": True}
    assert sorted(suite["verdicts"]) == sorted(
        f"tests/test_count.py::{name}" for name in (
            "test_single_spaces", "test_any_whitespace_separates_words",
            "test_empty_text_has_no_words", "test_summary"))
    clean = _copy(tmp_path, "clean")
    checked = subprocess.run(["git", "apply", "--check", str(out / PATCH_NAME)], cwd=clean,
                             capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
    subprocess.run(["git", "apply", str(out / PATCH_NAME)], cwd=clean, check=True)
    assert _plain_pytest(clean).returncode == 0
    assert (repo / "wordstats/count.py").read_text() == \
        (EXAMPLE / "repo/wordstats/count.py").read_text()  # the user's tree is untouched
    replayed = replay(settings, outcome.run_id)
    assert replayed.replay_hash == replayed.original_hash and replayed.divergence is None
    deliver(initialised, settings, outcome.run_id, root, None, apply=True)
    assert _plain_pytest(repo).returncode == 0  # --apply: written, the tree being unchanged


def _assert_failing_tests_are_diagnostics(store: GraphStore, outcome: api.Outcome) -> None:
    """The wrong diff's failing test is a Diagnostic fact the first attempt REPORTED, in
    its verification's commit, and ``kernel show`` of the attempt lists it; the right
    diff's attempt reports none."""
    wrong, right = Attempts(Run.load(store, outcome.run_id)).of_goal(outcome.root_id)
    rows = store.execute_adhoc(
        "MATCH (a:Attempt {id: $id})-[:REPORTED]->(d:Diagnostic) RETURN d.severity, "
        "d.file, d.line, d.code, d.message ORDER BY d.id", {"id": wrong.id}, write=False).rows
    assert [list(r[:4]) for r in rows] == [["error", "tests/test_count.py", 10, "test_failed"]]
    assert rows[0][4] == "AssertionError: assert 2 == 4"  # the traceback says why
    assert not store.execute_adhoc("MATCH (:Attempt {id: $id})-[:REPORTED]->(d) RETURN d.id",
                                   {"id": right.id}, write=False).rows
    shown = find_node(store, wrong.id)["neighbours"]
    assert [e["caption"] for e in shown if e["type"] == "REPORTED"] == [
        "error test_failed tests/test_count.py:10"]


@needs_sandbox
@pytest.mark.slow
def test_a_tree_changed_since_the_snapshot_is_refused_by_replay_and_apply(
        embedded_store: GraphStore, data_dir: Path, tmp_path: Path) -> None:
    settings = store_settings(embedded_store, data_dir)
    repo = _copy(tmp_path)
    outcome = _solve(embedded_store, settings, repo)
    root = api.root_goal(embedded_store, outcome.run_id)
    (repo / "README.md").write_text("changed by hand\n")
    count_before = (repo / "wordstats/count.py").read_text()
    with pytest.raises(ConfigError, match="changed since the run started"):
        deliver(embedded_store, settings, outcome.run_id, root, None, apply=True)
    assert (repo / "wordstats/count.py").read_text() == count_before
    with pytest.raises(ConfigError, match="changed since the run started"):
        replay(settings, outcome.run_id)


@needs_sandbox
@pytest.mark.slow
def test_a_refused_edit_fails_the_tests_with_its_reason_and_the_retry_fixes_it(
        embedded_store: GraphStore, data_dir: Path, tmp_path: Path) -> None:
    script = yaml.safe_load((EXAMPLE / "script.yaml").read_text())
    first = next(p for p in script["proposals"] if p["operation"] == "resolve")
    edits = json.loads(first["output"]["content"])
    edits[0]["before_sha256"] = "0" * 64  # made against another version of the file
    first["output"]["content"] = json.dumps(edits)
    (tmp_path / "stale.yaml").write_text(yaml.safe_dump(script))
    repo = _copy(tmp_path)
    request = api.SolveRequest.checked(goal=GOAL, proposer="scripted",
                                       script=tmp_path / "stale.yaml", repo=repo)
    outcome = api.solve(embedded_store, request, store_settings(embedded_store, data_dir))
    assert outcome.status == "resolved"
    first_try, second_try = Attempts(Run.load(embedded_store, outcome.run_id)).of_goal(
        outcome.root_id)
    assert first_try.verdict == "UNSAT" and second_try.verdict == "SAT"
    assert first_try.verification is not None
    refused = [c.detail for c in first_try.verification.checks if not c.passed]
    assert refused and all(d["failure_mode"] == "edit_refused" for d in refused)
    assert [r["reason"] for r in refused[0]["edits_refused"]] == ["before_hash_mismatch"]
    assert (repo / "wordstats/count.py").read_text() == \
        (EXAMPLE / "repo/wordstats/count.py").read_text()


class _Recording(ScriptedProposer):
    requests: list[ResolveRequest]

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
        self.requests.append(request)
        return super().propose(request, occurrence)


@needs_sandbox
@pytest.mark.slow
def test_the_resolve_prompt_shows_the_map_the_named_files_and_the_failing_test(
        embedded_store: GraphStore, data_dir: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    recording = recording_proposer(monkeypatch)
    outcome = _solve(embedded_store, store_settings(embedded_store, data_dir), _copy(tmp_path))
    assert outcome.status == "resolved"
    first, second = [r for r in recording.requests if r.operation == "resolve"]
    shown = first.payload["repository"]
    assert "wordstats/count.py" in shown["map"] and "    def count(text)" in shown["map"]
    assert shown["named_by_goal"] == ["wordstats/count.py"]  # "count", "words"
    assert shown["named_by_failing_tests"] == []
    assert shown["near_goal"] == ["wordstats/report.py"]  # by meaning, named by no word
    assert set(shown["files"]) == {"wordstats/count.py", "wordstats/report.py"}
    assert "before_sha256" in shown["edit_contract"]
    assert "format edits" in first.payload["sandbox"] and "main.py" not in first.payload["sandbox"]
    again = second.payload["repository"]
    assert "tests/test_count.py" in again["named_by_failing_tests"]
    assert "tests/test_count.py" in again["files"]
    prompt = render_prompt(second)
    assert "The repository this goal changes" in prompt and "def test_any_whitespace" in prompt


@pytest.mark.slow  # a kernel process per case
@pytest.mark.parametrize("bad", ["not_a_dir", "over_files", "missing"])
def test_bad_repository_input_exits_2_and_stores_nothing(
        initialised: GraphStore, data_dir: Path, tmp_path: Path, bad: str) -> None:
    repo = _copy(tmp_path)
    target = {"not_a_dir": repo / "README.md", "missing": tmp_path / "nowhere"}.get(bad, repo)
    env = {"KERNEL_REPO_MAX_FILES": "2"} if bad == "over_files" else {}
    done = solve_repo_cli(initialised, data_dir, target, env)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: ") and ("give the path" in line or "KERNEL_REPO_MAX" in line)
    assert api.list_runs(initialised) == []
    assert code_graph.known_files(initialised, repo_id(repo.resolve())) == {}


@needs_sandbox
@pytest.mark.slow
def test_the_command_writes_the_patch_and_applies_it(
        embedded_store: GraphStore, data_dir: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from kernel.cli.app import app

    repo = _copy(tmp_path)
    args = ["solve", GOAL, "--repo", str(repo), "--proposer", "scripted", "--script",
            str(EXAMPLE / "script.yaml"), "--progress", "none", "--json"]
    env = store_env(embedded_store, data_dir)
    alone = CliRunner().invoke(app, [*args[:2], "--apply"], env=env)
    assert isinstance(alone.exception, ConfigError)  # exit 2 once main() maps it
    assert "give --repo PATH too" in str(alone.exception)
    done = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "fix"), "--apply"], env=env)
    assert done.exit_code == 0, done.output
    shown = json.loads(done.output)
    assert shown["delivered"]["applied_to"] == str(repo.resolve())
    assert (tmp_path / "fix" / PATCH_NAME).read_text().startswith("diff --git a/wordstats/")
    assert _plain_pytest(repo).returncode == 0


def _unittest_script(tmp_path: Path) -> tuple[Path, Path]:
    """A repository tested with unittest, and a script whose first replacement is wrong."""
    repo = tmp_path / "calc"
    (repo / "tests").mkdir(parents=True)
    buggy = "def add(a, b):\n    return a - b\n"
    (repo / "calc.py").write_text(buggy)
    (repo / "tests/__init__.py").write_text("")
    (repo / "tests/test_calc.py").write_text(
        "import unittest\n\nfrom calc import add\n\n\nclass Adds(unittest.TestCase):\n"
        "    def test_adds(self):\n        self.assertEqual(add(2, 3), 5)\n")

    def edit(text: str) -> str:
        return json.dumps([{"path": "calc.py", "kind": "replace",
                            "before_sha256": sha256_of(buggy.encode()),
                            "after_sha256": sha256_of(text.encode()), "content": text}])

    entry = {"goal": "make add*", "output": {"artifact_type": "code", "format": "edits"}}
    script = {"version": 1, "proposals": [
        {"operation": "identify_constraints", "goal": "make add*",
         "output": {"constraints": []}},
        {**entry, "operation": "resolve",
         "output": {**entry["output"], "content": edit("def add(a, b):\n    return b - a\n")}},
        {"operation": "generate_feedback", "goal": "make add*",
         "output": {"summary": "add subtracts", "failure_mode": "subtracts"}},
        {**entry, "operation": "resolve",
         "output": {**entry["output"], "content": edit("def add(a, b):\n    return a + b\n")}}],
        "fallback": {"classify_leaf": {"output": {"is_leaf": True, "leaf_kind": "atomic",
                                                  "leaf_reason": "one function"}}}}
    (tmp_path / "calc.yaml").write_text(yaml.safe_dump(script))
    return repo, tmp_path / "calc.yaml"


@needs_sandbox
@pytest.mark.slow
def test_a_test_command_decides_the_suite_by_its_exit_status(
        embedded_store: GraphStore, data_dir: Path, tmp_path: Path) -> None:
    repo, script = _unittest_script(tmp_path)
    request = api.SolveRequest.checked(goal="make add add", proposer="scripted", script=script,
                                       repo=repo, test_cmd="python3 -m unittest -v")
    outcome = api.solve(embedded_store, request, store_settings(embedded_store, data_dir))
    assert outcome.status == "resolved"
    tries = Attempts(Run.load(embedded_store, outcome.run_id)).of_goal(outcome.root_id)
    assert [t.verdict for t in tries] == ["UNSAT", "SAT"]
    checks = [c for t in tries for c in (t.verification.checks if t.verification else [])]
    assert [c.detail["verdicts"] for c in checks] == [
        {"python3 -m unittest -v": "failed"}, {"python3 -m unittest -v": "passed"}]
    assert not any("impacted_first" in c.detail for c in checks)  # not pytest: as given


@needs_sandbox
@pytest.mark.slow
def test_a_file_the_edits_leave_unparseable_is_an_error_that_blocks_resolution(
        initialised: GraphStore, data_dir: Path, tmp_path: Path) -> None:
    """The right fix, shipped with a new module that does not parse (no test imports it,
    so the tests pass): the syntax error is a Diagnostic of the attempt and keeps it
    from resolving; the next attempt, without it, resolves."""
    script = yaml.safe_load((EXAMPLE / "script.yaml").read_text())
    first, second = [p for p in script["proposals"] if p["operation"] == "resolve"]
    broken = "def half(n):\n    return n /\n"
    first["output"]["content"] = json.dumps([
        *json.loads(second["output"]["content"]),
        {"path": "wordstats/extra.py", "kind": "replace", "before_sha256": None,
         "after_sha256": sha256_of(broken.encode()), "content": broken}])
    (tmp_path / "broken.yaml").write_text(yaml.safe_dump(script))
    request = api.SolveRequest.checked(goal=GOAL, proposer="scripted",
                                       script=tmp_path / "broken.yaml", repo=_copy(tmp_path))
    outcome = api.solve(initialised, request, store_settings(initialised, data_dir))
    assert outcome.status == "resolved"
    blocked, fixed = Attempts(Run.load(initialised, outcome.run_id)).of_goal(outcome.root_id)
    assert blocked.verdict == "UNSAT" and fixed.verdict == "SAT"
    assert blocked.verification is not None
    suite = next(c for c in blocked.verification.checks if "verdicts" in c.detail)
    assert not suite.passed and suite.detail["tests"] == {"suite": "PASSED"}  # tests passed
    rows = initialised.execute_adhoc(
        "MATCH (:Attempt {id: $id})-[:REPORTED]->(d:Diagnostic) RETURN d.severity, d.file, "
        "d.line, d.code", {"id": blocked.id}, write=False).rows
    assert [list(r) for r in rows] == [["error", "wordstats/extra.py", 2, "syntax_error"]]


OTHER_TEST = "def test_nothing_to_do_with_the_change():\n    assert 'a' * 2 == 'aa'\n"
OTHER = "tests/test_other.py::test_nothing_to_do_with_the_change"
PYTEST_CMD = "python3 -m pytest -q -p no:cacheprovider"


def _first_runs(store: GraphStore, data_dir: Path, request: api.SolveRequest
                ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The wrong and the right attempt's repository test check details."""
    outcome = api.solve(store, request, store_settings(store, data_dir))
    assert outcome.status == "resolved"
    wrong, right = Attempts(Run.load(store, outcome.run_id)).of_goal(outcome.root_id)
    assert wrong.verification is not None and right.verification is not None
    first = next(c.detail for c in wrong.verification.checks if "impacted_first" in c.detail)
    then = next(c.detail for c in right.verification.checks if "impacted_first" in c.detail)
    assert first["impacted_first"] == {"exit_code": 1, "suite_ran": False}
    assert then["impacted_first"] == {"exit_code": 0, "suite_ran": True}
    assert OTHER not in first["impacted_tests"]
    return first, then


@needs_sandbox
@pytest.mark.slow  # three sandboxed runs
def test_the_impacted_tests_run_first_by_node_id_and_their_failure_ends_the_run(
        embedded_store: GraphStore, data_dir: Path, tmp_path: Path) -> None:
    """A test the change does not reach (tests/test_other.py) is left out of the first
    run: the wrong diff's impacted tests fail there and the suite never runs; the right
    diff's pass, and the whole suite runs after them."""
    repo = _copy(tmp_path)
    (repo / "tests/test_other.py").write_text(OTHER_TEST)
    request = api.SolveRequest.checked(goal=GOAL, proposer="scripted",
                                       script=EXAMPLE / "script.yaml", repo=repo)
    first, then = _first_runs(embedded_store, data_dir, request)
    assert OTHER not in first["verdicts"]  # only the impacted tests ran
    assert "tests/test_count.py::test_any_whitespace_separates_words" in first["verdicts"]
    assert then["verdicts"][OTHER] == "passed"  # the whole suite, after them


@needs_sandbox
@pytest.mark.slow
def test_a_pytest_test_command_runs_the_impacted_node_ids_first(
        embedded_store: GraphStore, data_dir: Path, tmp_path: Path) -> None:
    """The node ids are added to a pytest test command for the first run; a command that
    is not pytest (unittest above) runs only as given."""
    repo, script = _unittest_script(tmp_path)
    (repo / "tests/test_other.py").write_text(OTHER_TEST)
    request = api.SolveRequest.checked(goal="make add add", proposer="scripted", script=script,
                                       repo=repo, test_cmd=PYTEST_CMD)
    first, then = _first_runs(embedded_store, data_dir, request)
    assert first["verdicts"] == {f"{PYTEST_CMD} tests/test_calc.py::Adds::test_adds": "failed"}
    assert then["verdicts"] == {PYTEST_CMD: "passed"}
