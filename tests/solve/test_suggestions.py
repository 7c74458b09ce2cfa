"""``--suggest``: a person's candidates weighed with the model's own output on merit alone,
on the embedded store. A candidate that violates a core constraint is rejected with its
trace; one that satisfies them competes; swapping who offered which content changes
nothing about which content wins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kernel.cli.app import app
from kernel.core.envelopes import Check, Verification
from kernel.core.ledger import load_entries
from kernel.errors import ConfigError
from kernel.protocol.solve_models import ResolutionOutput
from kernel.solve.session import replay
from kernel.solve.suggestions import Candidate, Weighed, pooled_tests, rank
from kernel.store import GraphStore
from tests.conftest import store_env, store_settings
from tests.graph_round_trip import assert_export_round_trips
from tests.solve import scripts as s

GOAL = "write the release note"
CORE = ["-c", "logic:size:words <= 50", "-c", "logic:quality:typos == 0"]
SHORT_WITH_TYPOS = {"artifact_type": "doc", "format": "markdown",
                    "content": "Release 2.0: fastr imports.", "metrics": {"words": 30, "typos": 2}}
# words are counted by the kernel; typos are the output's own claim
CLEAN = {"artifact_type": "doc", "format": "markdown",
         "content": "Release 2.0 makes imports faster.", "metrics": {"typos": 0}}
TOO_LONG = {"artifact_type": "doc", "format": "markdown",
            "content": " ".join(["A very long release note."] * 16), "metrics": {"typos": 0}}


def _script(path: Path, model_output: dict[str, Any]) -> Path:
    return s.write(path, [
        {"operation": "identify_constraints", "goal": "*", "output": {"constraints": []}},
        {"operation": "select_constraints", "goal": "*", "output": {
            "constraint_ids": ["words <= 50", "typos == 0"], "rationale": "the core"}},
        {"operation": "resolve", "goal": "*", "cost_usd": 0.05, "seconds": 5,
         "output": model_output},
        s.leaf("*", True)])


def _file(path: Path, output: dict[str, Any]) -> str:
    path.write_text(json.dumps(output))
    return f"@{path}"


def _solve(graph: GraphStore, data_dir: Path, *args: str, code: int = 0) -> Any:
    env = {**store_env(graph, data_dir), "COLUMNS": "200"}
    result = CliRunner().invoke(app, ["solve", GOAL, *CORE, "--proposer", "scripted",
                                      *args], env=env)
    if code == 2:
        assert isinstance(result.exception, ConfigError), result.output
        return str(result.exception)
    assert result.exit_code == code, result.output[-2500:]
    return json.loads(result.stdout) if "--json" in args else result.output


def _weighed(graph: GraphStore, data_dir: Path, run_id: str) -> list[dict[str, Any]]:
    root = graph.run("run/get", {"run_id": run_id})[0]["root_id"]
    return [{"content": json.loads(_content(graph, data_dir, r["artifact_id"]))["content"],
             "status": r["status"], "rank": r["rank"], "author": r["author"],
             "kind": r["author_kind"]}
            for r in graph.run("suggestion/of_goal", {"goal_id": root})]


def _content(graph: GraphStore, data_dir: Path, artifact_id: str) -> str:
    """An artifact's bytes, from the data dir's blob store."""
    sha = graph.run("artifact/get", {"artifact_id": artifact_id})[0]["artifact"]["sha256"]
    return (data_dir / "artifacts" / sha[:2] / sha).read_text()


def test_a_suggestion_violating_a_core_constraint_is_rejected_with_its_trace(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    script = _script(tmp_path / "note.yaml", CLEAN)
    text = _solve(initialised_graph, data_dir, "--script", str(script),
                  "--suggest", _file(tmp_path / "long.json", TOO_LONG), "--suggested-by", "alice")
    assert "suggestion 1 by alice: rejected (UNSAT" in text
    assert "failed 'words <= 50': violated by {\"words\": 80.0}" in text
    out = _solve(initialised_graph, data_dir, "--script", str(script), "--json",
                 "--suggest", _file(tmp_path / "long.json", TOO_LONG), "--suggested-by", "alice")
    assert out["status"] == "resolved"
    rejected = [c for c in out["weighed"] if c["suggestion"]]
    assert rejected == [{**rejected[0], "status": "rejected", "verdict": "UNSAT",
                         "author": "alice",
                         "violations": [{"constraint": "words <= 50",
                                         "why": 'violated by {"words": 80.0}'}]}]
    # the violation is in the graph: an edge from the suggestion to the core constraint
    edges = initialised_graph.execute_adhoc(
        "MATCH (art:Artifact {id: $id})-[v:VIOLATED]->(c:Constraint) "
        "RETURN c.title AS title, v.check AS check", {"id": rejected[0]["artifact"]},
        write=False).records()
    assert edges == [{"title": "words <= 50", "check": "z3"}]
    assert [w["status"] for w in _weighed(initialised_graph, data_dir, out["run"])] == \
        ["chosen", "rejected"]
    final = json.loads(_content(initialised_graph, data_dir, out["final_artifact"]))
    assert final["content"] == CLEAN["content"]  # the model's own output stands
    # the analytics statement docs/knowledge-graph.md shows answers from the same graph
    doc = (Path(__file__).parents[2] / "docs" / "knowledge-graph.md").read_text()
    shown = next(b.split("```")[0] for b in doc.split("```cypher\n") if "kind: 'human'" in b)
    rows = initialised_graph.execute_adhoc(shown, {}, write=False).records()
    assert [(r["who.name"], r["art.status"], r["violated"]) for r in rows] == \
        [("alice", "rejected", ["words <= 50"])] * 2


@pytest.mark.slow
def test_a_passing_suggestion_competes_and_the_author_does_not_decide(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    """The same two contents, offered once as (model, person) and once swapped: the same
    content wins both times, and renaming the person changes no rank."""
    worse, better = _file(tmp_path / "typos.json", SHORT_WITH_TYPOS), \
        _file(tmp_path / "clean.json", CLEAN)
    first = _solve(initialised_graph, data_dir, "--json", "--suggested-by", "alice",
                   "--script", str(_script(tmp_path / "a.yaml", SHORT_WITH_TYPOS)),
                   "--suggest", better)
    swapped = _solve(initialised_graph, data_dir, "--json", "--suggested-by", "bob",
                     "--script", str(_script(tmp_path / "b.yaml", CLEAN)), "--suggest", worse)
    renamed = _solve(initialised_graph, data_dir, "--json", "--suggested-by", "carol",
                     "--script", str(_script(tmp_path / "c.yaml", SHORT_WITH_TYPOS)),
                     "--suggest", better)
    by_content = {run["run"]: [(w["content"], w["status"], w["rank"])
                               for w in _weighed(initialised_graph, data_dir, run["run"])]
                  for run in (first, swapped, renamed)}
    expected = [(CLEAN["content"], "chosen", 1), (SHORT_WITH_TYPOS["content"], "rejected", 2)]
    assert all(ranking == expected for ranking in by_content.values()), by_content
    for run in (first, swapped, renamed):
        assert run["status"] == "resolved"
        final = json.loads(_content(initialised_graph, data_dir, run["final_artifact"]))
        assert final["content"] == CLEAN["content"]
    winner = _weighed(initialised_graph, data_dir, first["run"])[0]
    assert (winner["kind"], winner["author"]) == ("human", "alice")  # recorded, not ranked
    chose = initialised_graph.execute_adhoc(
        "MATCH (a:Attempt)-[:CHOSE]->(art:Artifact)-[:PROPOSED_BY]->(who:Actor) "
        "WHERE a.run_id = $run RETURN who.name AS name, a.chosen AS chosen",
        {"run": first["run"]}, write=False).records()
    assert chose == [{"name": "alice", "chosen": "suggestion"}]
    # history is content's: by the second run, the clean note had passed once and the
    # one with typos failed once, whoever offered them
    history = [e.data()["rows"] for e in load_entries(initialised_graph, swapped["run"])[2]
               if e.operation == "suggestion/history"]
    assert sorted((r["passed"], r["total"]) for r in history[0]) == [(0, 1), (1, 1)]
    for run in (first, swapped):
        result = replay(store_settings(initialised_graph, data_dir), run["run"])
        assert result.divergence is None and result.identical


def test_two_passing_candidates_are_ranked_by_sigma_then_history_never_by_author() -> None:
    def weighed(content: str, passed: bool, sigma: float, history: tuple[int, int]) -> Weighed:
        output = ResolutionOutput(artifact_type="doc", format="text", content=content)
        check = Check(constraint_id="c", passed=passed, sigma_i=sigma)
        return Weighed(Candidate(f"artifact:{content}", content.encode().hex(), output),
                       Verification.from_checks([check]), *history)

    high = weighed("judged better", True, 0.95, (0, 0))
    low = weighed("judged worse", True, 0.8, (5, 5))
    proven = weighed("passed before", True, 0.8, (9, 9))
    failing = weighed("fails", False, 1.0, (9, 9))
    below = weighed("below tau", True, 0.5, (0, 0))
    assert rank([failing, below, low, proven, high], 0.7) == [high, proven, low, below, failing]


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.text(min_size=1, max_size=8), st.booleans(),
                          st.floats(0, 1), st.integers(0, 5)), min_size=1, max_size=6),
       st.randoms())
def test_the_ranking_is_a_function_of_content_and_verdicts_alone(
        specs: list[tuple[str, bool, float, int]], rng: Any) -> None:
    """Shuffling the candidates (and so who offered them, in whatever order) gives the
    same ranking: nothing but content, verdicts and history goes in."""
    candidates = [Weighed(Candidate(f"artifact:{n}", f"{text}-{n}".encode().hex(),
                                    ResolutionOutput(artifact_type="doc", format="text",
                                                     content=text)),
                          Verification.from_checks([Check(constraint_id="c", passed=ok,
                                                          sigma_i=sigma)]), seen, seen)
                  for n, (text, ok, sigma, seen) in enumerate(specs)]
    shuffled = list(candidates)
    rng.shuffle(shuffled)
    assert rank(shuffled, 0.7) == rank(candidates, 0.7)


def test_every_candidate_meets_every_test_file_its_own_first() -> None:
    def candidate(sha: str, tests: dict[str, str]) -> Candidate:
        return Candidate(f"artifact:{sha}", sha, ResolutionOutput(
            artifact_type="code", format="python", content="x = 1", tests=tests))

    pooled = pooled_tests([candidate("b", {"test_a.py": "from b", "test_b.py": "b"}),
                           candidate("a", {"test_a.py": "from a"}),
                           candidate("c", {})])
    assert pooled == {"test_a.py": "from a", "test_b.py": "b"}


@pytest.mark.parametrize(("args", "message"), [
    (["--suggest", "@/nonexistent/idea.json"], "no such file"),
    (["--suggest", "   "], "--suggest is empty"),
    (["--suggested-by", "alice"], "give at least one --suggest"),
    (["--suggest", "an idea", "--suggested-by", "x" * 201], "1 to 200 characters"),
    (["--suggest", "@{bad}"], "content: Field required"),
    (["--suggest", "@{notjson}"], "is not valid JSON"),
])
def test_a_bad_suggestion_is_one_line_naming_it_and_nothing_is_stored(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path,
        args: list[str], message: str) -> None:
    (tmp_path / "bad.json").write_text(json.dumps({"artifact_type": "doc", "format": "md"}))
    (tmp_path / "notjson.json").write_text("{nope")
    args = [a.format(bad=tmp_path / "bad.json", notjson=tmp_path / "notjson.json")
            for a in args]
    script = _script(tmp_path / "note.yaml", CLEAN)
    error = _solve(initialised_graph, data_dir, "--script", str(script), *args, code=2)
    assert message in error and "\n" not in error
    assert initialised_graph.run("run/list", {}) == []


ADD_TEST = "from main import add\n\n\ndef test_adds():\n    assert add(2, 3) == 5\n"


@pytest.mark.slow  # the sandbox runs each candidate's tests
def test_a_code_suggestion_is_run_against_the_model_s_tests_in_the_sandbox(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path) -> None:
    """A .py suggestion brings no tests: it meets the ones the model's output brought, so
    a wrong one is rejected naming the failing test, and a right one ties on merit."""
    script = s.write(tmp_path / "add.yaml", [
        {"operation": "identify_constraints", "goal": "*", "output": {"constraints": [
            {"type": "logic", "domain": "software", "title": "adds correctly",
             "explicit": True, "payload": {"check": "test", "tests": ["test_adds"]}}]}},
        {"operation": "resolve", "goal": "*", "output": {
            "artifact_type": "code", "format": "python",
            "content": "def add(a, b):\n    return a + b\n", "tests": {"test_add.py": ADD_TEST}}},
        s.leaf("*", True)])
    (tmp_path / "wrong.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "right.py").write_text("def add(a, b):\n    return sum((a, b))\n")
    env = {**store_env(initialised_graph, data_dir), "COLUMNS": "200"}
    result = CliRunner().invoke(app, [
        "solve", "Write a Python function add(a, b)", "--proposer", "scripted",
        "--script", str(script), "--json", "--suggested-by", "dana",
        "--suggest", f"@{tmp_path / 'wrong.py'}", "--suggest", f"@{tmp_path / 'right.py'}"],
        env=env)
    assert result.exit_code == 0, result.output[-2000:]
    out = json.loads(result.stdout)
    by_number = {c["suggestion"]: c for c in out["weighed"] if c["suggestion"]}
    assert by_number[1]["status"] == "rejected"
    assert by_number[1]["violations"] == [{"constraint": "adds correctly",
                                           "why": "tests not passing: test_adds"}]
    assert by_number[2]["verdict"] == "SAT"  # it passed the model's test
    assert sorted(c["status"] for c in out["weighed"]) == ["chosen", "outranked", "rejected"]
    replayed = replay(store_settings(initialised_graph, data_dir), out["run"])
    assert replayed.divergence is None and replayed.identical


@pytest.mark.slow  # kernel solve killed with kill -9 in a child process, then resumed
@pytest.mark.parametrize(("statement", "number"), [
    ("artifact/create", 1),  # the suggestions registered (one commit), none weighed yet
    ("suggestion/history", 1),  # the history read (its entry not yet stored), nothing weighed
    ("suggestion/weigh", 1),  # weighed, the attempt's verification not yet recorded
])
def test_a_run_killed_while_weighing_resumes_to_the_same_state(
        data_dir: Path, tmp_path: Path, statement: str, number: int) -> None:
    import sys

    from ulid import ULID

    from kernel.bench.crash import _Child, _outcome
    from kernel.settings import KernelSettings
    from kernel.store import open_store

    script = _script(tmp_path / "note.yaml", SHORT_WITH_TYPOS)
    args = ["solve", GOAL, *CORE, "--proposer", "scripted", "--script", str(script),
            "--json", "--progress", "none", "--suggested-by", "erin",
            "--suggest", _file(tmp_path / "clean.json", CLEAN),
            "--suggest", _file(tmp_path / "long.json", TOO_LONG)]
    ulid = ULID()
    run_id, child = f"run:{ulid}", _Child(data_dir, ulid, sys.executable)
    tag = f"{statement.replace('/', '-')}-{number}"
    reference, crashed = (KernelSettings(data_dir=data_dir, graph="embedded",
                                         graph_name=f"suggest-{name}-{tag}")
                          for name in ("ref", "crash"))
    try:
        assert child.run(reference.graph_name, args).returncode == 0
        killed = child.run(crashed.graph_name, args, kill_at=number, only=statement)
        assert killed.returncode == -9, killed.stderr[-500:]
        resumed = child.run(crashed.graph_name, ["resume", run_id, "--json"])
        assert resumed.returncode == 0, resumed.stderr[-500:]
        assert _outcome(crashed, run_id, False) == _outcome(reference, run_id, False)
        with open_store(crashed) as store:
            assert [r["status"] for r in store.run("suggestion/of_goal", {
                "goal_id": store.run("run/get", {"run_id": run_id})[0]["root_id"]})] == \
                ["chosen", "rejected", "rejected"]
    finally:
        for settings_ in (reference, crashed):
            with open_store(settings_) as store:
                store.drop_all()


@pytest.mark.slow
def test_the_shipped_suggestion_example_chooses_the_clean_note(
        initialised_graph: GraphStore, data_dir: Path, tmp_path: Path) -> None:
    from kernel.paths import seeds_dir

    example = seeds_dir() / "examples" / "suggest"
    out = _solve(initialised_graph, data_dir, "--script", str(example / "script.yaml"),
                 "--json", "--suggested-by", "pat",
                 "--suggest", f"@{example / 'clean-note.json'}",
                 "--suggest", f"@{example / 'long-note.json'}")
    assert out["status"] == "resolved"
    first, *rest = [(c["suggestion"], c["status"]) for c in out["weighed"]]
    assert first == (1, "chosen")
    assert sorted(rest, key=str) == [(2, "rejected"), (None, "rejected")]
    assert {v["constraint"] for c in out["weighed"] for v in c["violations"]} == \
        {"words <= 50", "typos == 0"}
    # The graph it leaves exports, and the record of the choice survives the round trip.
    lines = assert_export_round_trips(initialised_graph, data_dir, tmp_path)
    chose = [json.loads(line) for line in lines if '"type":"CHOSE"' in line]
    assert [(c["from"]["label"], c["to"]["label"]) for c in chose] == [("Attempt", "Artifact")]


@pytest.mark.slow
def test_a_run_stopped_after_the_weighing_reads_the_winner_s_verification_back(
        initialised_graph: GraphStore, tmp_path: Path, data_dir: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process: the step fails between the weighing's commit and the attempt's
    verification; the resumed run verifies nothing again and ends as it would have."""
    from kernel.core.attempts import Attempts

    recorded = Attempts.record_verification

    def fail_once(self: Attempts, *args: Any, **kwargs: Any) -> None:
        monkeypatch.setattr(Attempts, "record_verification", recorded)
        raise KeyboardInterrupt  # as Ctrl-C would, right after the weighing's commit

    monkeypatch.setattr(Attempts, "record_verification", fail_once)
    script = _script(tmp_path / "note.yaml", SHORT_WITH_TYPOS)
    env = {**store_env(initialised_graph, data_dir), "COLUMNS": "200"}
    stopped = CliRunner().invoke(app, [
        "solve", GOAL, *CORE, "--proposer", "scripted", "--script", str(script),
        "--suggested-by", "fay", "--suggest", _file(tmp_path / "clean.json", CLEAN)], env=env)
    assert type(stopped.exception).__name__ == "RunInterrupted"  # exit 3 from main()
    run_id = initialised_graph.run("run/list", {})[0]["id"]
    result = CliRunner().invoke(app, ["resume", run_id, "--json"], env=env)
    assert result.exit_code == 0, result.output[-2000:]
    out = json.loads(result.stdout)
    assert [(c["suggestion"], c["status"]) for c in out["weighed"]] == \
        [(1, "chosen"), (None, "rejected")]
    assert [e.operation for e in load_entries(initialised_graph, run_id)[2]].count(
        "suggestion/history") == 1
    replayed = replay(store_settings(initialised_graph, data_dir), run_id)
    assert replayed.divergence is None and replayed.identical
