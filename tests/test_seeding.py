"""Seeding a deployment from an export: contents travel, tools run, artifacts come out.

The source deployment builds a tool, resolves goals and makes a plan; its export is
imported through ``kernel graph import -`` into an empty graph with its own data dir
(its own blob store), where every artifact shows, the plan report renders and a new
goal uses the built tool through lookup-before-build without building it again.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernel.cli.app import app
from kernel.core.artifacts import BlobStore
from kernel.core.ledger import load_entries
from kernel.errors import KernelError
from kernel.graph_io import export_graph, import_graph
from kernel.plan.session import example_goal, example_script, plan_goal
from kernel.schema import LATEST_VERSION, schema_version
from kernel.solve.dispatch import solve
from kernel.store import GraphStore, open_store
from resolvers.scripted import ScriptedProposer
from tests.conftest import embedded_settings, store_env
from tests.sandbox_support import needs_sandbox
from tests.solve import scripts as s
from tests.solve.test_grow import (
    _build_entries,
    _resolver,
    _start,
    needs_the_built_tool_entries,
)

_names = itertools.count()


class Deployment:
    """``kernel ...`` against one graph on the session's server, with its own data dir."""

    def __init__(self, env: dict[str, str]) -> None:
        self.data_dir = Path(env["KERNEL_DATA_DIR"])
        self.env = {**env, "COLUMNS": "200"}

    def __call__(self, *args: str, stdin: str | None = None, code: int = 0) -> str:
        result = CliRunner().invoke(app, list(args), env=self.env, input=stdin)
        if isinstance(result.exception, KernelError):  # main() prints it and exits 2
            assert code == 2, result.exception
            return str(result.exception)
        assert result.exit_code == code, (result.output, result.exception)
        return result.output


@pytest.fixture
def target(data_dir: Path, tmp_path: Path) -> Iterator[tuple[GraphStore, Deployment]]:
    name = f"seed-target-{next(_names)}"
    (tmp_path / "target").mkdir()
    store = open_store(embedded_settings(data_dir, name))
    # The target graph lives on the session's server; its artifacts in their own data dir.
    yield store, Deployment({"KERNEL_GRAPH": f"embedded://{data_dir}",
                             "KERNEL_DATA_DIR": str(tmp_path / "target"),
                             "KERNEL_GRAPH_NAME": name})
    store.drop_all()
    store.close()


def _source(tmp_path: Path) -> Path:
    (tmp_path / "source").mkdir(exist_ok=True)
    return tmp_path / "source"


def _release_note(graph: GraphStore, tmp_path: Path) -> None:
    """A small resolved run in the source deployment: one artifact with contents."""
    kernel, root = _start(graph, _source(tmp_path), "Write a release note", [
        s.identify("write a release*", "names the version"),
        s.resolve("write a release*", "Version 2 is out."),
        s.judge("write a release*", "names the version", True, 0.9),
        s.leaf("write a release*", True)], "note")
    assert solve(kernel, root).status == "resolved"


def _export(store: GraphStore, data_dir: Path | None) -> str:
    buffer = io.StringIO()
    export_graph(store, buffer, blobs=BlobStore.of_data_dir(data_dir) if data_dir else None)
    return buffer.getvalue()


@pytest.mark.slow
@needs_sandbox
def test_a_seeded_deployment_shows_every_artifact_renders_plans_and_reuses_built_tools(
        initialised_graph: GraphStore, tmp_path: Path,
        target: tuple[GraphStore, Deployment]) -> None:
    source_dir = _source(tmp_path)
    kernel, root = _start(initialised_graph, source_dir, "Summarise the sales CSV",
                          _build_entries(), "build")
    assert solve(kernel, root).status == "resolved"
    tool = _resolver(initialised_graph, "csv_summary")
    script = example_script("swe-agent")
    goal, checks = example_goal(script)
    plan = plan_goal(initialised_graph, source_dir, goal, ScriptedProposer.from_file(script),
                     {}, 5.0, 600, checks)
    usage = initialised_graph.run("registry/get", {"id": "resolver:claude-code-0"})[0][
        "resolver"]["usage_count"]
    exported = _export(initialised_graph, source_dir)

    graph, deployment = target
    said = deployment("graph", "import", "-", stdin=exported)
    assert f"schema v{LATEST_VERSION}" in said and "standard input" in said
    assert schema_version(graph) == LATEST_VERSION
    # What the source learnt survives: the boot graph is not loaded over it again.
    assert graph.run("registry/get", {"id": "resolver:claude-code-0"})[0]["resolver"][
        "usage_count"] == usage > 0
    ids = [r["id"] for r in graph.execute_adhoc("MATCH (a:Artifact) RETURN a.id AS id", {},
                                                write=False).records()]
    assert len(ids) >= 5
    for artifact_id in ids:
        shown = json.loads(deployment("artifact", "show", artifact_id, "--json"))
        assert shown["id"] == artifact_id and shown["files"]
    report = deployment.data_dir.parent / "plan.html"
    deployment("plan-report", plan["run_id"][len("run:"):][:12], "--html", str(report))
    assert plan["goal"] in report.read_text() or "critical" in report.read_text()

    # A later goal in the seeded deployment finds the built tool: nothing is built again,
    # and the tool's code, read from the imported contents, really runs.
    kernel2, root2 = _start(graph, deployment.data_dir, "Tally the refund ledger",
                            needs_the_built_tool_entries(), "later", max_attempts=1)
    assert solve(kernel2, root2).status == "resolved"
    attempts = kernel2.attempts.of_goal(root2)
    assert [a.resolver_id for a in attempts] == ["resolver:claude-code-0", tool["id"]]
    output = json.loads(kernel2.artifacts.read(attempts[-1].output_artifact_id))
    assert output["content"] == "summary tool read 4 words of the goal"
    ops = [e.operation for e in load_entries(graph, kernel2.run.run_id)[2]]
    assert "hire" not in ops and len(graph.run("goal/tree", {"run_id": kernel2.run.run_id})) == 1


@pytest.mark.slow
@needs_sandbox
@pytest.mark.neo4j
def test_an_embedded_export_seeds_neo4j_and_comes_back_byte_identical(
        embedded_store: GraphStore, neo4j_store: GraphStore, data_dir: Path, tmp_path: Path,
        target: tuple[GraphStore, Deployment]) -> None:
    """Embedded -> Neo4j -> embedded: each re-export is the same bytes as the first, and
    the Neo4j deployment seeded that way finds the built tool instead of building it."""
    from kernel.schema import init_schema

    init_schema(embedded_store)
    source_dir = _source(tmp_path)
    kernel, root = _start(embedded_store, source_dir, "Summarise the sales CSV",
                          _build_entries(), "build")
    assert solve(kernel, root).status == "resolved"
    tool = _resolver(embedded_store, "csv_summary")
    first = _export(embedded_store, source_dir)

    (tmp_path / "neo4j").mkdir()
    on_neo4j = Deployment(store_env(neo4j_store, tmp_path / "neo4j"))
    on_neo4j("graph", "import", "-", stdin=first)
    second = _export(neo4j_store, on_neo4j.data_dir)
    assert second == first

    graph, back = target
    back("graph", "import", "-", stdin=second)
    assert _export(graph, back.data_dir) == first

    kernel2, root2 = _start(neo4j_store, on_neo4j.data_dir, "Tally the refund ledger",
                            needs_the_built_tool_entries(), "later", max_attempts=1)
    assert solve(kernel2, root2).status == "resolved"
    assert [a.resolver_id for a in kernel2.attempts.of_goal(root2)] == [
        "resolver:claude-code-0", tool["id"]]
    assert "hire" not in [e.operation for e in load_entries(neo4j_store, kernel2.run.run_id)[2]]


def test_an_export_without_contents_says_what_the_seeded_deployment_lacks(
        initialised_graph: GraphStore, tmp_path: Path,
        target: tuple[GraphStore, Deployment]) -> None:
    _release_note(initialised_graph, tmp_path)
    graph, deployment = target
    path = tmp_path / "bare.jsonl"
    path.write_text(_export(initialised_graph, None))
    assert '"contents":false' in path.read_text().splitlines()[0]
    report = import_graph(graph, path, blobs=BlobStore.of_data_dir(deployment.data_dir))
    artifacts = [r["id"] for r in graph.execute_adhoc(
        "MATCH (a:Artifact) RETURN a.id AS id ORDER BY id", {}, write=False).records()]
    assert report.lacking_contents == artifacts and artifacts
    said = deployment("artifact", "show", artifacts[0], code=2)
    assert "not in this deployment" in said and "--no-contents" in said


def test_altered_contents_are_refused_by_line_before_anything_is_written(
        initialised_graph: GraphStore, tmp_path: Path,
        target: tuple[GraphStore, Deployment]) -> None:
    _release_note(initialised_graph, tmp_path)
    lines = _export(initialised_graph, tmp_path / "source").splitlines()
    number, blob = next((i, line) for i, line in enumerate(lines) if '"kind":"blob"' in line)
    record = json.loads(blob)
    record["data"] = record["data"][:-8] + "AAAAAAA="
    lines[number] = json.dumps(record, sort_keys=True, separators=(",", ":"))
    path = tmp_path / "altered.jsonl"
    path.write_text("\n".join(lines) + "\n")
    graph, deployment = target
    said = deployment("graph", "import", str(path), code=2)
    assert f"altered.jsonl:{number + 1}:" in said
    assert "does not hash to its sha256" in said or "size says" in said
    assert graph.run("admin/count_by_label") == []
    assert not (deployment.data_dir / "artifacts").exists()


def test_version_1_files_still_import_and_may_not_carry_blobs(
        initialised: GraphStore, tmp_path: Path) -> None:
    header = {"kind": "header", "format": "kernel-graph", "version": 1}
    node = {"kind": "node", "label": "Capability", "id": "capability:v1", "props": {"tag": "v1"}}
    path = tmp_path / "v1.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in [
        header, node, {"kind": "footer", "nodes": 1, "relationships": 0}]) + "\n")
    report = import_graph(initialised, path, blobs=BlobStore(tmp_path / "blobs"))
    assert (report.nodes, report.source_schema) == (1, 1)
    blob = {"kind": "blob", "sha256": hashlib.sha256(b"").hexdigest(), "size": 0, "data": ""}
    path.write_text("\n".join(json.dumps(x) for x in [
        header, node, blob, {"kind": "footer", "nodes": 1, "relationships": 0}]) + "\n")
    from kernel.errors import GraphFileError

    with pytest.raises(GraphFileError, match=r"v1\.jsonl:3: blob lines need a version 2"):
        import_graph(initialised, path)


def test_a_file_from_a_newer_schema_is_refused(initialised: GraphStore, tmp_path: Path) -> None:
    from kernel.errors import GraphFileError
    from kernel.schema import seed_graph

    path = tmp_path / "newer.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in [
        {"kind": "header", "format": "kernel-graph", "version": 2, "schema": LATEST_VERSION + 1,
         "contents": True},
        {"kind": "footer", "nodes": 0, "relationships": 0, "blobs": 0}]) + "\n")
    with pytest.raises(GraphFileError, match="upgrade the kernel"):
        seed_graph(initialised, path)


@pytest.mark.slow
@needs_sandbox
def test_the_csv_example_saved_from_the_store_passes_its_tests_outside_the_kernel(
        initialised_graph: GraphStore, data_dir: Path, tmp_path: Path) -> None:
    from kernel.paths import seeds_dir

    deployment = Deployment(store_env(initialised_graph, data_dir))
    out = tmp_path / "deliverable"
    said = deployment(
        "solve", "Build a Python CLI tool that reads a CSV file and outputs the top 10 rows "
        "sorted by a user-specified column", "--proposer", "scripted", "--script",
        str(seeds_dir() / "examples" / "csv-cli.script.yaml"), "--out", str(out))
    assert "saved 2 file(s)" in said
    assert sorted(p.name for p in out.iterdir()) == ["main.py", "test_main.py"]
    again = tmp_path / "again"
    deployment("artifact", "save", "latest", str(again))
    assert (again / "main.py").read_bytes() == (out / "main.py").read_bytes()
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                           cwd=again, capture_output=True, text=True, timeout=300, check=False)
    assert tests.returncode == 0, tests.stdout[-2000:]
    assert "4 passed" in tests.stdout
    shown = deployment("artifact", "show", "latest")
    assert shown.startswith("import argparse")
    said = deployment("artifact", "save", "latest", str(again), code=2)
    assert "already exists" in said and "--force" in said
    said = deployment("artifact", "save", "latest", "/proc/kernel-test", code=2)  # not even root
    assert said.startswith("cannot write /proc/kernel-test/") and "\n" not in said
    # --out into a place that turns out unwritable only at the end: the run stands, its
    # outcome is printed and one line says how to get the files (an ordinary user is
    # refused up front instead: /proc is not writable)
    again = ("solve", "Build a Python CLI tool that reads a CSV file and outputs the top 10 "
             "rows sorted by a user-specified column", "--proposer", "scripted", "--script",
             str(seeds_dir() / "examples" / "csv-cli.script.yaml"), "--out",
             "/proc/kernel-test", "--json", "--progress", "none")
    if os.geteuid() != 0:
        assert "not writable" in deployment(*again, code=2)
        return
    outcome = json.loads(deployment(*again))
    assert outcome["status"] == "resolved" and "saved_files" not in outcome
    assert outcome["save_error"].startswith("cannot write /proc/kernel-test/")
    assert f"kernel artifact save {outcome['final_artifact']} DIR" in outcome["save_error"]


def test_saving_never_follows_a_link_in_the_target_directory(tmp_path: Path) -> None:
    """A folder that is a link, a file that is a link (even with --force) and a planted
    temporary name: nothing lands or is overwritten outside the directory."""
    from kernel.artifact_files import save_files
    from kernel.errors import ConfigError

    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("untouched")
    target = tmp_path / "target"
    target.mkdir()
    (target / "pkg").symlink_to(outside)
    with pytest.raises(ConfigError, match="pkg is a symbolic link"):
        save_files({"pkg/mod.py": b"x"}, target)
    assert sorted(p.name for p in outside.iterdir()) == ["victim.txt"]
    (target / "main.py").symlink_to(victim)
    with pytest.raises(ConfigError, match=r"main\.py is a symbolic link"):
        save_files({"main.py": b"x"}, target, overwrite=True)
    (target / "main.py").unlink()
    (target / ".main.py.partial").symlink_to(victim)
    assert save_files({"main.py": b"print(1)"}, target) == [target / "main.py"]
    assert victim.read_text() == "untouched"
    assert (target / "main.py").read_text() == "print(1)" and not (target / "main.py").is_symlink()
    (target / "sub").write_text("a file")
    with pytest.raises(ConfigError, match="needs it to be a directory"):
        save_files({"sub/a.py": b"x"}, target)


def test_an_imported_sha256_that_is_not_one_is_refused_with_its_line(
        initialised: GraphStore, tmp_path: Path) -> None:
    """sha256 names the file the contents are read from: '/dev/zero' or a relative path
    would be read without bound."""
    from kernel.errors import GraphFileError
    from kernel.graph_io import import_graph

    for bad in ("/dev/zero", "../../../../../../dev/zero", "A" * 64, "a" * 63 + "\n"):
        path = tmp_path / "bad.jsonl"
        path.write_text("\n".join(json.dumps(x) for x in [
            {"kind": "header", "format": "kernel-graph", "version": 2,
             "schema": LATEST_VERSION, "contents": False},
            {"kind": "node", "label": "Artifact", "id": "artifact:1",
             "props": {"sha256": bad, "format": "text"}},
            {"kind": "footer", "nodes": 1, "relationships": 0, "blobs": 0}]) + "\n")
        with pytest.raises(GraphFileError, match="sha256 must be 64 lowercase hex") as info:
            import_graph(initialised, path)
        assert info.value.line == 2


def test_file_names_from_a_model_cannot_leave_the_directory(tmp_path: Path) -> None:
    from kernel.artifact_files import UnsafePathError, artifact_files

    record = {"id": "artifact:x", "format": "json", "metadata": {"content_format": "python"}}
    for name in ("../escape.py", "/etc/passwd", "a/../../b.py", "C:/x.py"):
        data = json.dumps({"artifact_type": "code", "content": "print(1)", "format": "python",
                           "files": {name: "x"}}).encode()
        with pytest.raises(UnsafePathError):
            artifact_files(record, data)
    data = json.dumps({"artifact_type": "code", "content": "print(1)", "format": "python",
                       "files": {"pkg/util.py": "x"}, "tests": {"test_a.py": "y"}}).encode()
    assert sorted(artifact_files(record, data)) == ["main.py", "pkg/util.py", "test_a.py"]
