"""The ``kernel`` command, driven as a user would, against the embedded store."""

from __future__ import annotations

import itertools
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernel.cli.app import app
from kernel.errors import ConfigError, KernelError
from kernel.schema import LATEST_VERSION

_names = itertools.count()


class Kernel:
    """Runs ``kernel ...`` in-process with its own graph on the session's server."""

    def __init__(self, data_dir: Path) -> None:
        self.runner = CliRunner()
        self.env = {"KERNEL_DATA_DIR": str(data_dir), "KERNEL_GRAPH_NAME": f"cli-{next(_names)}",
                    "COLUMNS": "200"}

    def __call__(self, *args: str, ok: bool = True) -> tuple[int, str]:
        result = self.runner.invoke(app, list(args), env=self.env, catch_exceptions=True)
        if isinstance(result.exception, KernelError):
            return 2, str(result.exception)
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        if ok:
            assert result.exit_code == 0, result.output
        # --json is stdout alone; progress lines, on stderr, are in the terminal's output
        return result.exit_code, result.stdout if "--json" in args else result.output


@pytest.fixture
def kernel(data_dir: Path) -> Iterator[Kernel]:
    k = Kernel(data_dir)
    yield k
    k("db", "reset", "--yes")


def test_init_then_status(kernel: Kernel) -> None:
    _, out = kernel("db", "init")
    assert f"schema v0 -> v{LATEST_VERSION}" in out
    _, out = kernel("db", "init")
    assert f"already at v{LATEST_VERSION}" in out
    _, out = kernel("status", "--json")
    status = json.loads(out)
    assert status["nodes"]["Resolver"] == 3
    assert status["relationships"]["PROVIDES"] == 24
    assert status["store"]["schema"] == LATEST_VERSION


def test_query_is_read_only_unless_asked(kernel: Kernel) -> None:
    kernel("db", "init")
    code, message = kernel("query", "CREATE (:Run {id: 'run:1'})", ok=False)
    assert code == 2 and "--write" in message
    kernel("query", "CREATE (:Run {id: $id, n: $n})", "--write", "-p", "id=run:1", "-p", "n=3")
    _, out = kernel("query", "MATCH (r:Run {id: $id}) RETURN r.n AS n", "-p", "id=run:1", "--json")
    assert json.loads(out) == [{"n": 3}]
    _, out = kernel("query", "MATCH (r:Resolver) RETURN r.id AS id ORDER BY id")
    assert "resolver:claude-code-0" in out
    code, message = kernel("query", "RETURN 1", "-p", "oops", ok=False)
    assert code == 2 and "name=value" in message


def test_export_import_round_trip(kernel: Kernel, tmp_path: Path) -> None:
    kernel("db", "init")
    first = tmp_path / "a.jsonl"
    _, out = kernel("graph", "export", str(first))
    assert "exported 28 nodes and 24 relationships" in out
    kernel("db", "reset", "--yes")
    _, out = kernel("graph", "import", str(first))
    assert "imported 28 nodes" in out
    second = tmp_path / "b.jsonl"
    kernel("graph", "export", str(second))
    assert first.read_text() == second.read_text()


def test_a_malformed_file_is_named_by_line(kernel: Kernel, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind":"header","format":"kernel-graph","version":1}\n{"kind":"node"\n')
    code, message = kernel("graph", "import", str(bad), ok=False)
    assert code == 2 and message.startswith(f"{bad}:2:") and "not valid JSON" in message


def test_bad_settings_say_how_to_fix_them(kernel: Kernel) -> None:
    code, message = kernel("--graph", "postgres://x", "status", ok=False)
    assert code == 2 and "neo4j://host:7687" in message
    kernel.env["NEO4J_PASSWORD"] = "secret"
    code, message = kernel("--graph", "bolt://127.0.0.1:9", "status", ok=False)
    assert code == 2 and "docker compose up -d" in message
    code, message = kernel("db", "reset", ok=False)
    assert code == 2 and "--yes" in message


def test_errors_exit_2_with_one_line_on_stderr(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from kernel.cli.app import main; main()", "--graph", "ftp://x",
         "status"], capture_output=True, text=True, check=False,
        env={**os.environ, "KERNEL_DATA_DIR": str(tmp_path), "COLUMNS": "40"})
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: graph URI 'ftp://x' is not understood")


@pytest.mark.parametrize("problem", ["a file", "under a file"])
def test_a_data_dir_that_cannot_be_a_directory_is_one_line_exit_2(tmp_path: Path,
                                                                  problem: str) -> None:
    """A data dir that is a file (or sits under one) names itself and the setting to
    change; before, the store's lock file raised and even the crash log could not be
    written."""
    blocker = tmp_path / "data"
    blocker.write_text("not a directory")
    data_dir = blocker if problem == "a file" else blocker / "kernel"
    line = _refused_status(data_dir)
    assert line.startswith(f"error: cannot use {data_dir}") and "KERNEL_DATA_DIR" in line
    assert blocker.read_text() == "not a directory"


def _refused_status(data_dir: Path) -> str:
    """The one line `kernel status` answers a data dir it cannot use with (exit 2)."""
    done = subprocess.run(
        [sys.executable, "-c", "from kernel.cli.app import main; main()", "status"],
        capture_output=True, text=True, check=False,
        env={**os.environ, "KERNEL_DATA_DIR": str(data_dir), "KERNEL_GRAPH": "embedded",
             "COLUMNS": "300"})
    assert done.returncode == 2 and done.stdout == "", done.stderr
    (line,) = done.stderr.strip().splitlines()
    return line


def test_a_shared_directory_is_refused_as_a_data_dir(tmp_path: Path) -> None:
    """A directory with the sticky bit (as /tmp) is refused and left as it was; before,
    the kernel closed it to everyone else (a data dir of /tmp made /tmp 0700)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    line = _refused_status(shared)
    assert line.startswith(f"error: cannot use {shared} as a directory (it is shared")
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777 and not any(shared.iterdir())


def test_only_an_empty_existing_directory_is_closed_to_others(tmp_path: Path) -> None:
    """A directory that already holds something (a project, a home) keeps its mode; an
    empty one made for the kernel is closed, as a new one is made closed."""
    from kernel.paths import private_dir

    project, empty = tmp_path / "project", tmp_path / "empty"
    for folder in (project, empty):
        folder.mkdir()
        folder.chmod(0o755)
    (project / "README").write_text("mine")
    private_dir(project)
    private_dir(empty)
    assert stat.S_IMODE(project.stat().st_mode) == 0o755
    assert stat.S_IMODE(empty.stat().st_mode) == 0o700
    assert stat.S_IMODE(private_dir(tmp_path / "new" / "dir").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700


def test_an_empty_setting_means_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    """``KERNEL_DATA_DIR=`` is the default data dir, not the current directory."""
    from kernel.settings import KernelSettings, default_data_dir

    monkeypatch.setenv("KERNEL_DATA_DIR", "")
    monkeypatch.setenv("KERNEL_GRAPH", "")
    settings = KernelSettings()
    assert settings.data_dir == default_data_dir() and settings.graph == "embedded"


def test_db_status_and_stop(tmp_path: Path) -> None:
    k = Kernel(tmp_path)
    k("db", "init")
    _, out = k("db", "status")
    assert "running (pid" in out and f"v{LATEST_VERSION} (this kernel: v{LATEST_VERSION})" in out
    _, out = k("db", "stop")
    assert "stopped" in out
    _, out = k("db", "status")
    assert "stopped" in out


def test_bench_store_prints_figures(kernel: Kernel) -> None:
    _, out = kernel("bench", "store", "--rows", "200", "--repeats", "5", "--elements", "300")
    for figure in ("RETURN 1 round trip", "single-node MERGE", "200-row batched MERGE",
                   "export (", "import, merging (",
                   "export peak heap", "import peak heap"):
        assert figure in out


def test_tree_and_runs_show_a_run(kernel: Kernel, data_dir: Path) -> None:
    from kernel.core.budget import Amount, BudgetEnforcer
    from kernel.core.goals import GoalSpec, GoalTree
    from kernel.core.run import Run
    from kernel.store import open_store
    from tests.conftest import embedded_settings

    kernel("db", "init")
    store = open_store(embedded_settings(data_dir, kernel.env["KERNEL_GRAPH_NAME"]))
    try:
        run = Run.start(store, "cli tree")
        tree = GoalTree(run)
        root = tree.create_root(GoalSpec("Build a CSV CLI"))
        BudgetEnforcer(run).allocate_root(root, Amount(2_000_000, 60_000))
        child = tree.create_child(root, GoalSpec("Parse arguments"))
        BudgetEnforcer(run).allocate_children(root, {child: 1})
        BudgetEnforcer(run).record(child, Amount(250_000, 1_500), "resolver:claude-code-0", "x")
        run.flush()
    finally:
        store.close()
    _, out = kernel("tree", run.run_id.removeprefix("run:"))
    assert "Build a CSV CLI" in out and "Parse arguments" in out
    assert "$0.2500/$1.6000" in out and "1.5s/48s" in out and "σv=-" in out
    _, out = kernel("tree", run.run_id, "--json")
    goals = json.loads(out)
    assert [g["depth"] for g in goals] == [0, 1]
    # USD and seconds, as in `kernel status --json`; no micro-dollars or milliseconds
    assert goals[1]["cost_spent_usd"] == 0.25 and goals[1]["time_spent_seconds"] == 1.5
    assert "cost_spent" not in goals[1]
    _, out = kernel("runs", "--json")
    listed = json.loads(out)[0]
    assert (listed["id"], listed["kind"], listed["spent_usd"]) == (run.run_id, "solve", 0.25)
    _, out = kernel("status", run.run_id[4:12], "--json")  # a unique prefix
    assert json.loads(out)["run"] == run.run_id and json.loads(out)["spent_usd"] == 0.25
    _, out = kernel("tree", "latest")
    assert f"{run.run_id}  spent $0.2500" in out
    code, message = kernel("tree", "run:nope", ok=False)
    assert code == 2 and "kernel runs" in message


def test_writing_benches_need_an_empty_scratch_neo4j_database(
        kernel: Kernel, initialised_graph: object) -> None:
    from kernel.cli.bench import require_empty, scratch_database
    for command in ("core", "solve", "kg", "flywheel"):
        code, message = kernel("--graph", "neo4j://127.0.0.1:9", "bench", command, ok=False)
        assert code == 2 and "?database=scratch" in message, command
    code, message = kernel("--graph", "neo4j://127.0.0.1:9?database=system", "bench", "kg",
                           ok=False)
    assert code == 2 and "scratch database" in message
    assert scratch_database("bench1", "runs") == "bench1"
    with pytest.raises(KernelError, match=r"holds \d+ nodes; .* give it an empty one"):
        require_empty(initialised_graph, "bench1")  # type: ignore[arg-type]


def test_bench_core_prints_figures(kernel: Kernel) -> None:
    _, out = kernel("bench", "core", "--repeats", "3", "--goals", "300")
    for figure in ("state transition", "budget record", "dependency check",
                   "topological order of 300 goals", "critical path"):
        assert figure in out


def test_a_bench_keeps_the_graph_an_embedded_uri_names(data_dir: Path) -> None:
    """The scratch graph of ``--graph embedded:///DIR?graph=NAME`` is NAME-bench; before,
    the URI's own graph was the scratch graph, so the bench emptied the user's graph."""
    name = f"cli-{next(_names)}"
    uri = f"embedded://{data_dir}?graph={name}"
    runner = CliRunner()
    assert runner.invoke(app, ["--graph", uri, "db", "init"]).exit_code == 0
    before = json.loads(runner.invoke(app, ["--graph", uri, "status", "--json"]).stdout)
    done = runner.invoke(app, ["--graph", uri, "bench", "core", "--repeats", "2",
                               "--goals", "20"], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    after = json.loads(runner.invoke(app, ["--graph", uri, "status", "--json"]).stdout)
    assert sum(after["nodes"].values()) == sum(before["nodes"].values()) > 0
    assert after["store"]["schema"] == LATEST_VERSION
    assert stat.S_IMODE((data_dir / f"{name}-bench.lock").stat().st_mode) == 0o600


def test_two_benches_on_one_scratch_graph_are_refused(kernel: Kernel, data_dir: Path) -> None:
    """A second benchmark would empty the first's scratch graph under it."""
    import fcntl

    with (data_dir / f"{kernel.env['KERNEL_GRAPH_NAME']}-bench.lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        code, message = kernel("bench", "core", "--repeats", "2", "--goals", "20", ok=False)
    assert code == 2 and "another benchmark is using the scratch graph" in message
    kernel("bench", "core", "--repeats", "2", "--goals", "20")  # free again


def test_ledger_verify_and_export(kernel: Kernel, data_dir: Path, tmp_path: Path) -> None:
    from kernel.core.ledger import Ledger
    from kernel.core.run import Run
    from kernel.store import open_store
    from tests.conftest import embedded_settings

    kernel("db", "init")
    store = open_store(embedded_settings(data_dir, kernel.env["KERNEL_GRAPH_NAME"]))
    try:
        run = Run.start(store, "ledger cli")
        book = Ledger(run)
        for i in range(3):
            book.append("proposal", "resolve", "resolver:claude-code-0", {"i": i})
        run.flush()
    finally:
        store.close()
    _, out = kernel("ledger", "verify", run.run_id)
    assert "ledger intact (3 entries)" in out
    exported = tmp_path / "ledger.jsonl"
    kernel("ledger", "export", run.run_id, str(exported))
    _, out = kernel("ledger", "verify", "--file", str(exported))
    assert "ledger intact" in out
    _, printed = kernel("ledger", "export", run.run_id, "-")  # standard output, not a file "-"
    assert printed == exported.read_text() and not Path("-").exists()
    exported.write_text(exported.read_text().replace('{\\"i\\":1}', '{\\"i\\":7}'))
    code, out = kernel("ledger", "verify", "--file", str(exported), ok=False)
    assert code == 1 and "entry 1: altered" in out
    code, message = kernel("ledger", "verify", ok=False)
    assert code == 2 and "RUN id or --file" in message


@pytest.mark.slow
def test_solve_replay_and_resume_from_the_cli(kernel: Kernel, tmp_path: Path) -> None:
    from tests.solve import scripts as s
    from tests.solve.test_paths import ESSAY, direct_leaf

    script = s.write(tmp_path / "essay.yaml", direct_leaf())
    code, out = kernel("solve", ESSAY, "-c", "logic:cost:cost_usd <= 5", "--proposer",
                       "scripted", "--script", str(script), "--budget", "1", "--json", ok=False)
    outcome = json.loads(out)
    assert code == 1 and outcome["status"] == "infeasible"  # no scripted selection
    assert [r["reasons"] for r in outcome["refusals"]] == [["NO_PROPOSALS"]]
    code, out = kernel("resume", outcome["run"], ok=False)  # nothing changed: refused again
    assert code == 1 and "refused" in out and "to proceed" in out
    _, out = kernel("solve", ESSAY, "--proposer", "scripted", "--script", str(script), "--json")
    outcome = json.loads(out)
    assert (outcome["status"], outcome["sigma_system"]) == ("resolved", 0.9)
    _, out = kernel("replay", outcome["run"])
    assert f"replay identical (summary hash {outcome['summary_hash']})" in out
    exported = tmp_path / "ledger.jsonl"
    kernel("ledger", "export", outcome["run"], str(exported))
    _, out = kernel("replay", outcome["run"], "--ledger", str(exported))
    assert "replay identical" in out
    lines = exported.read_text().splitlines(keepends=True)
    exported.write_text("".join(lines[:-1]))  # a ledger missing its last proposal
    code, out = kernel("replay", outcome["run"], "--ledger", str(exported), ok=False)
    assert code == 1 and "replay diverged" in out and "ledger ends at" in out
    tampered = "".join(lines).replace("--column.", "--columns.")
    assert tampered != "".join(lines)
    exported.write_text(tampered)
    code, message = kernel("replay", outcome["run"], "--ledger", str(exported), ok=False)
    assert code == 1 and "tampered" in message and "altered" in message
    _, out = kernel("resume", outcome["run"], "--json")
    assert json.loads(out)["summary_hash"] == outcome["summary_hash"]
    _, out = kernel("status", outcome["run"], "--json")
    status = json.loads(out)
    assert (status["status"], status["sigma_system"]) == ("resolved", 0.9)
    assert status["goals"] == {"resolved": 1} and status["refusals"] == []
    assert status["summary_hash"] == outcome["summary_hash"]
    runs = json.loads(kernel("runs", "--json")[1])
    refused = next(r["id"] for r in runs if r["status"] == "infeasible")
    _, out = kernel("status", refused)
    assert "refused" in out and "NO_PROPOSALS" in out and "to proceed" in out
    code, message = kernel("solve", ESSAY, ok=False)
    assert code == 2 and "ANTHROPIC_API_KEY" in message and "--proposer scripted" in message
    code, message = kernel("solve", ESSAY, "-c", "cost under five", ok=False)
    assert code == 2 and "TYPE[:DOMAIN]:TEXT" in message
    code, message = kernel("solve", ESSAY, "-c", "logic:cost:cost_usd <=", ok=False)
    assert code == 2 and "cannot parse 'cost_usd <='" in message and "cost_usd <= 5" in message
    code, message = kernel("solve", ESSAY, "--max-attempts", "0", "--proposer", "scripted",
                           "--script", str(script), ok=False)
    assert code == 2 and message.startswith("--max-attempts:") and "greater than or equal to 1" \
        in message and "Traceback" not in message
    assert json.loads(kernel("runs", "--json")[1]) == runs  # nothing was stored


@pytest.mark.slow
def test_bench_solve_prints_figures(kernel: Kernel) -> None:
    _, out = kernel("bench", "solve", "--goals", "13")
    assert "scripted run of 13 goals (fan-out 3)" in out
    assert "kernel overhead per dispatch step" in out


@pytest.mark.slow
def test_bench_solve_json_reports_the_store_round_trips_and_writes_of_a_step(
        kernel: Kernel) -> None:
    _, out = kernel("bench", "solve", "--goals", "13", "--json")
    figures = {f["name"]: f["value"] for f in json.loads(out)["figures"]}
    steps = figures["dispatch steps"]
    trips = figures["store round trips per step (mean)"]
    writes = figures["store writes per step (mean; each one fsync'd on the embedded store)"]
    assert steps > 13 and 0 < writes < trips
    # the per-statement lines add up to no more than the total
    listed = sum(v for k, v in figures.items() if k.endswith(" per step") and "/" in k)
    assert 0 < listed <= trips + 1e-6
    assert figures["durable checkpoint step of a LangGraph-style SQLite peer (median)"] > 0


def test_a_pathological_constraint_is_one_short_line_and_stores_nothing(kernel: Kernel) -> None:
    deep = "(" * 3000 + "x" + ")" * 3000 + " < 1"
    code, out = kernel("solve", "sum things", "--proposer", "scripted", "-c", f"logic:deep:{deep}",
                       ok=False)
    assert code == 2 and "nested" in out and len(out) < 400
    _, runs = kernel("runs", "--json")
    assert json.loads(runs) == []


def test_an_unknown_embedding_backend_is_refused_before_anything_is_stored(
        kernel: Kernel) -> None:
    kernel.env["KERNEL_EMBEDDINGS"] = "gpu"
    code, out = kernel("solve", "sum things", "--proposer", "scripted", ok=False)
    assert code == 2 and "KERNEL_EMBEDDINGS=" in out and "'onnx' or 'torch'" in out
    del kernel.env["KERNEL_EMBEDDINGS"]
    assert json.loads(kernel("runs", "--json")[1]) == []


def test_an_out_dir_this_user_cannot_write_is_refused_before_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As an ordinary user; root may write anywhere, so the check is driven here by what
    ``os.access`` answers for the directory."""
    from kernel.cli.solve import check_out_dir

    closed = tmp_path / "closed"
    closed.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != closed
                        and real_access(path, mode))
    for target in (closed, closed / "new"):
        with pytest.raises(ConfigError, match="is not writable by this user"):
            check_out_dir(target)
    check_out_dir(tmp_path / "open")


def test_bad_inputs_are_one_line_exit_2_and_store_nothing(kernel: Kernel, tmp_path: Path) -> None:
    """Each input named in the CLI issue: exit 2, one line naming what is wrong and how to
    fix it, no run created, nothing written where it was not asked."""
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    misnamed = tmp_path / "misnamed.yaml"  # a judgment naming a constraint nobody proposes
    misnamed.write_text(
        "version: 1\nproposals:\n- operation: identify_constraints\n  output:\n"
        "    constraints: [{type: semantic, domain: docs, title: is clear, explicit: true}]\n"
        "- operation: verify_semantic\n  output:\n    checks: [{constraint_id: is clean, "
        "passed: true, sigma: 0.9, rubric_trace: ok}]\n")
    cases = {
        ("solve", "x", "--script", str(misnamed)): "'is clean' names no constraint",
        ("solve", "   "): "the goal is empty",
        ("solve", "x", "-c", "foo:bar:baz"): "must be 'logic'",
        ("solve", "x", "--proposer", "scripted", "--script", str(empty)): "a YAML mapping",
        ("solve", "x", "--proposer", "scripted", "--script", str(tmp_path)): "is a directory",
        ("solve", "x", "--proposer", "scripted", "--script", "/dev/zero"):
            "is not a regular file",
        ("solve", "x", "--out", str(tmp_path / "no" / "such")): "does not exist",
        ("ledger", "verify", "--file", str(tmp_path / "nope.jsonl")): "no such file",
        ("ledger", "verify", "--file", str(tmp_path)): "is a directory",
        ("replay", "latest", "--ledger", str(tmp_path / "nope")): "no such file",
        ("plan", "--example", "swe-agent", "--out", str(tmp_path / "missing" / "p.json")):
            "does not exist",
        ("plan", "   "): "the goal is empty",
        ("solve", "x", "--budget", "inf"): "--budget must be a number above 0",
        ("solve", "x", "--time", "nan"): "--time must be a number above 0",
        ("solve", "x", "--budget", "1e300"): "at most 1,000,000,000",
        ("solve", "x", "--max-attempts", "99999999999999999999"): "--max-attempts:",
        ("plan", "--example", "swe-agent", "--budget", "-5"): "--budget must be",
        ("plan", "--example", "swe-agent", "--time", "inf"): "--time must be",
        ("resume", "latest", "--max-wall", "inf"): "--max-wall must be",
        ("plan-report", "latest", "--html", str(tmp_path)): "is a directory",
        ("check-plan", str(tmp_path)): "is a directory",
        ("graph", "export", str(tmp_path / "nonexistent" / "g.jsonl")): "does not exist",
        ("graph", "export", str(tmp_path)): "is a directory",
        ("graph", "import", str(tmp_path)): "is a directory",
        ("artifact", "show", "zz"): "no artifact 'zz'",
        ("tree", "latest"): "names no run",
        ("status", "01"): "no run '01'",
    }
    for args, expected in cases.items():
        code, message = kernel(*args, ok=False)
        assert code == 2 and expected in message and "\n" not in message.strip(), (args, message)
    assert json.loads(kernel("runs", "--json")[1]) == []
    assert not (tmp_path / "nonexistent").exists() and not (tmp_path / "missing").exists()


def test_ids_are_taken_as_unique_prefixes_and_ambiguity_is_named(kernel: Kernel,
                                                                  data_dir: Path) -> None:
    from kernel.core.run import Run
    from kernel.store import open_store
    from tests.conftest import embedded_settings

    store = open_store(embedded_settings(data_dir, kernel.env["KERNEL_GRAPH_NAME"]))
    try:
        first, second = Run.start(store, "one"), Run.start(store, "two")
    finally:
        store.close()
    common = os.path.commonprefix([first.run_id, second.run_id])  # noqa: RUF071 (characters)
    code, message = kernel("status", common[4:], ok=False)
    assert code == 2 and "matches several runs" in message and first.run_id in message
    _, out = kernel("status", second.run_id[4:len(common) + 1].lower(), "--json")
    assert json.loads(out)["run"] == second.run_id  # lower case is fine: ULIDs are not
    _, out = kernel("status", "latest", "--json")
    assert json.loads(out)["run"] == max(first.run_id, second.run_id)


def test_queries_say_how_to_write_and_what_a_write_changed(kernel: Kernel) -> None:
    code, message = kernel("query", "CREATE (:Run {id: 'run:q'})", ok=False)
    assert code == 2 and "pass --write" in message and "RO_QUERY" not in message
    _, out = kernel("query", "CREATE (:Run {id: 'run:q', n: 1})", "--write")
    assert "1 nodes created" in out and "2 properties set" in out
    _, out = kernel("query", "MATCH (r:Run {id: 'run:nothing'}) SET r.n = 2", "--write")
    assert "nothing changed" in out


def _main(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from kernel.cli.app import main; main()", *args],
        capture_output=True, text=True, check=False,
        env={**os.environ, "KERNEL_DATA_DIR": str(tmp_path / "unused"), "COLUMNS": "120"})


@pytest.mark.slow
def test_cli_conventions_version_short_help_words_and_options_after_the_command(
        tmp_path: Path, data_dir: Path) -> None:
    from kernel import __version__

    for flag in ("--version", "-V"):
        done = _main(tmp_path, flag)
        assert (done.returncode, done.stdout.strip()) == (0, f"kernel {__version__}")
    done = _main(tmp_path, "solve", "-h")
    assert done.returncode == 0 and "Usage: kernel solve [OPTIONS] GOAL" in done.stdout
    assert "--install-completion" in _main(tmp_path, "--help").stdout
    for command in (["solve"], ["plan"], ["graph", "export"], ["bench", "solve"], ["runs"],
                    ["artifact", "save"], ["query"], ["hire", "answer"]):
        shown = _main(tmp_path, *command, "--help").stdout
        assert not any(t in shown for t in ("<bool>", "<str>", "<int>", "<float>", "<path>",
                                            "list[", "{", "``")), (command, shown)
    # --data-dir after the subcommand is taken as if typed before it
    done = _main(tmp_path, "db", "status", "--data-dir", str(data_dir))
    assert done.returncode == 0 and str(data_dir) in done.stdout


def test_analytics_lists_runs_and_refuses_unknown_names(kernel: Kernel) -> None:
    kernel("db", "init")
    _, listed = kernel("analytics", "--json")
    names = json.loads(listed)
    assert names.get("failure_modes")
    _, rows = kernel("analytics", "cost_by_capability", "--json")
    assert isinstance(json.loads(rows), list)
    code, message = kernel("analytics", "nope", ok=False)
    assert code == 2 and "no analytics query 'nope'" in message and "failure_modes" in message


def test_the_tree_does_not_show_a_failed_verification_as_confidence() -> None:
    from kernel.cli.tree import _confidence

    goal = {"status": "infeasible", "sigma_v": 1.0, "sigma_path": 1.0, "verdict": "UNSAT"}
    assert _confidence(goal) == "σv=failed σpath=-"
    passed = {"status": "resolved", "sigma_v": 0.85, "sigma_path": 0.85, "verdict": "SAT"}
    assert _confidence(passed) == "σv=0.85 σpath=0.85"
    assert _confidence({"status": "pending", "sigma_v": None, "sigma_path": 1.0,
                        "verdict": None}) == "σv=- σpath=-"


def test_a_bad_setting_is_one_line_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """What pydantic-settings says spans lines and names fields, not variables. (The
    command fails while reading its settings, before it opens any store.)"""
    from kernel.settings import KernelSettings

    cases = {
        "KERNEL_EMBEDDED_FSYNC": ("bogus", "KERNEL_EMBEDDED_FSYNC='bogus': Input should be"),
        "KERNEL_TAU_LOCAL": ("2", "KERNEL_TAU_LOCAL='2': Input should be less than"),
        "KERNEL_CLAUDE_RETRY_DELAYS": ("[a]", "KERNEL_CLAUDE_RETRY_DELAYS: its value is not JSON"),
    }
    for name, (value, expected) in cases.items():
        with monkeypatch.context() as env:
            env.setenv(name, value)
            with pytest.raises(ConfigError) as caught:
                KernelSettings.load()
            assert expected in str(caught.value) and "\n" not in str(caught.value)
            failed = CliRunner().invoke(app, ["status"], env={name: value}).exception
            assert isinstance(failed, ConfigError) and expected in str(failed)
    with pytest.raises(ConfigError, match=r"^invalid setting --graph=7: Input should be"):
        KernelSettings.load(graph=7)  # an option names itself as typed


def test_text_that_looks_like_console_markup_is_printed_as_written(
        kernel: Kernel, data_dir: Path) -> None:
    """A goal or an argument holding ``[/]`` (a closing tag to the console) or ``:x:`` (an
    emoji code) is shown as the user wrote it: no traceback, no icon."""
    from kernel.core.goals import GoalSpec, GoalTree
    from kernel.core.run import Run
    from kernel.store import open_store
    from tests.conftest import embedded_settings

    kernel("db", "init")
    goal = "Build [/] a [link=http://x.invalid]CLI[/link] for :x: rows"
    store = open_store(embedded_settings(data_dir, kernel.env["KERNEL_GRAPH_NAME"]))
    try:
        run = Run.start(store, "markup")
        GoalTree(run).create_root(GoalSpec(goal))
        run.flush()
    finally:
        store.close()
    env = {**os.environ, **kernel.env, "COLUMNS": "200"}
    main = [sys.executable, "-c", "from kernel.cli.app import main; main()"]
    listed = subprocess.run([*main, "runs"], env=env, capture_output=True, text=True,
                            check=False)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert goal in listed.stdout and "❌" not in listed.stdout
    missing = subprocess.run([*main, "status", "[/]x:x:"], env=env, capture_output=True,
                             text=True, check=False)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr, missing.stderr
    assert "[/]x:x:" in missing.stderr and len(missing.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_an_empty_goal_is_named_as_the_argument_it_is(tmp_path: Path) -> None:
    from kernel.paths import seeds_dir

    done = _main(tmp_path, "solve", "", "--proposer", "scripted", "--script",
                 str(seeds_dir() / "examples" / "csv-cli.script.yaml"))
    assert done.returncode == 2 and "GOAL" in done.stderr and "--goal" not in done.stderr, \
        done.stderr


def test_a_mistyped_command_line_is_one_line_naming_the_help_to_read(tmp_path: Path) -> None:
    """An option's value of the wrong kind, an unknown option or command, a missing
    argument: exit 2, one line saying what is wrong and which ``--help`` lists what the
    command takes (no usage box), nothing stored; no arguments at all still shows the
    help."""
    cases = {
        ("solve", "x", "--budget", "five"): "Invalid value for '--budget'",
        ("solve", "x", "--no-such-option"): "No such option: --no-such-option",
        ("solve",): "Missing argument 'GOAL'",
        ("db", "no-such-command"): "No such command 'no-such-command'",
    }
    for args, expected in cases.items():
        done = _main(tmp_path, *args)
        said = done.stderr.strip()
        assert done.returncode == 2 and expected in said, (args, done.stderr)
        assert len(said.splitlines()) == 1 and "--help lists what it takes" in said, said
    assert not (tmp_path / "unused").exists()
    bare = _main(tmp_path)
    assert bare.returncode == 2 and "Usage: kernel [OPTIONS] COMMAND" in bare.stdout + bare.stderr
