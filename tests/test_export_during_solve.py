"""An export taken while a solve writes is one committed state of the graph, on either
store: it imports cleanly, every ledger in it verifies (the chain, and the committed
state against a replay), and a run caught half-way resumes in the new deployment to the
outcome the uninterrupted run reached."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from ulid import ULID

from kernel.bench.crash import EXAMPLES, _Child, _drop, _outcome
from kernel.core.ledger import load_entries, verify_chain
from kernel.core.summary import summary_hash
from kernel.graph_io import export_graph, import_graph
from kernel.schema import init_schema
from kernel.settings import KernelSettings
from kernel.solve.session import replay
from kernel.store import open_store
from kernel.store.base import GraphStore
from tests.conftest import embedded_settings, store_env, store_settings

LAUNCH = next(e for e in EXAMPLES if e.name == "launch-plan")


def _import_and_verify(settings: KernelSettings, path: Path) -> list[dict]:
    """Import into an empty graph, initialised as a new deployment is (emptied, not
    dropped, so its indexes are built once); every run's ledger chain must verify."""
    with open_store(settings) as target:
        target.empty()
        init_schema(target)
        import_graph(target, path)
        runs = target.run("run/list")
        for run in runs:
            head, size, entries = load_entries(target, run["id"])
            assert verify_chain(entries, head=head, size=size) == [], run["id"]
        return runs


@pytest.mark.slow
def test_exports_taken_during_a_solve_import_verify_and_resume(data_dir: Path,
                                                                tmp_path: Path) -> None:
    ulid = ULID()
    run_id = f"run:{ulid}"
    source = embedded_settings(data_dir, "export-live")
    env = {**os.environ, "KERNEL_DATA_DIR": str(data_dir), "KERNEL_GRAPH": "embedded",
           "KERNEL_GRAPH_NAME": source.graph_name, "KERNEL_CRASH_ULID": str(ulid),
           "KERNEL_CRASH_AT": "0"}
    exports: list[Path] = []
    with open_store(source) as store:
        init_schema(store)
        solving = subprocess.Popen([sys.executable, "-m", "kernel.cli.crash_child",
                                    *LAUNCH.command()], env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        try:
            while solving.poll() is None or not exports:
                path = tmp_path / f"export-{len(exports)}.jsonl"
                with path.open("w", encoding="utf-8") as handle:
                    assert export_graph(store, handle).consistent
                exports.append(path)
                time.sleep(0.25)  # let the solve move on between exports
        finally:
            _, err = solving.communicate(timeout=600)
    assert solving.returncode == 0, err[-500:]

    target = embedded_settings(data_dir, "export-into")
    child = _Child(data_dir, ulid, sys.executable)
    caught_mid_run: Path | None = None
    try:
        for path in exports:
            runs = _import_and_verify(target, path)
            # The whole check, replay included: a run caught between recording proposals
            # and committing them is intact with them pending, never a mismatch.
            for run in runs:
                verified = child.run(target.graph_name, ["ledger", "verify", run["id"], "--json"])
                assert verified.returncode == 0, (path.name, verified.stdout, verified.stderr)
            if caught_mid_run is None and any(r["status"] not in ("resolved", None)
                                              for r in runs):
                caught_mid_run = path
        assert caught_mid_run is not None, f"no export of {len(exports)} caught the run " \
                                           "unfinished"
        runs = _import_and_verify(target, caught_mid_run)
        assert [r["id"] for r in runs] == [run_id]
        listed = child.run(target.graph_name, ["runs", "--json"])
        assert json.loads(listed.stdout)[0]["status"] == "interrupted", listed.stdout
        resumed = child.run(target.graph_name, ["resume", run_id, "--json"])
        assert resumed.returncode == 0, resumed.stderr[-500:]
        assert _outcome(target, run_id, False) == _outcome(source, run_id, False)
    finally:
        _drop(target)
        _drop(source)


def test_writes_wait_while_an_export_holds_the_graph(store: GraphStore, data_dir: Path) -> None:
    """The pause is real on each store, opened as the kernel opens it: a write from
    another thread lands only after the export."""
    with open_store(store_settings(store, data_dir)) as gated:
        init_schema(gated)
        landed = threading.Event()

        def write() -> None:
            gated.run("admin/create_graph")
            landed.set()

        with gated.writes_paused() as paused:
            assert paused
            writer = threading.Thread(target=write)
            writer.start()
            assert not landed.wait(0.5), "a write landed while writes were paused"
        writer.join(timeout=10)
        assert landed.is_set()


EXPORTS = 50


def _solving(settings: KernelSettings, data_dir: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    """The launch plan solved by another process, writing to the graph ``settings`` opens."""
    return subprocess.Popen(
        [sys.executable, "-m", "kernel.cli.crash_child", *LAUNCH.command()],
        env={**os.environ, "KERNEL_GRAPH": "embedded", **env, "KERNEL_DATA_DIR": str(data_dir),
             "KERNEL_CRASH_ULID": str(ULID()), "KERNEL_CRASH_AT": "0"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _state_problems(target: KernelSettings, run_id: str) -> list[str]:
    """What `kernel ledger verify RUN` checks: the chain, then the committed state against
    the run replayed from its ledger (proposals recorded but not committed are pending)."""
    with open_store(target) as store:
        head, size, entries = load_entries(store, run_id)
        problems = [str(p) for p in verify_chain(entries, head=head, size=size)]
    if problems:
        return problems
    result = replay(target, run_id)
    return [f"tampered: {result.tampered}"] if result.tampered else list(result.differences)


@pytest.mark.slow
def test_every_export_taken_in_a_tight_loop_during_runs_imports_and_verifies(
        store: GraphStore, data_dir: Path, tmp_path: Path) -> None:
    """Exports back to back while runs write, on each store, each imported into an empty
    graph: every one is a commit boundary, so every run in it verifies."""
    init_schema(store)
    settings = store_settings(store, data_dir)
    exports: list[Path] = []
    with open_store(settings) as source:  # as `kernel graph export` opens it
        while len(exports) < EXPORTS:
            solving = _solving(settings, data_dir, store_env(store, data_dir))
            try:
                while solving.poll() is None and len(exports) < EXPORTS:
                    if not any(r["status"] != "resolved" for r in source.run("run/list")):
                        time.sleep(0.05)  # the process is still starting
                        continue
                    path = tmp_path / f"export-{len(exports)}.jsonl"
                    with path.open("w", encoding="utf-8") as handle:
                        assert export_graph(source, handle).consistent
                    exports.append(path)
                    time.sleep(0.02)  # a writer waiting on the gate gets its turn
            finally:
                _, err = solving.communicate(timeout=600)
            assert solving.returncode == 0, err[-500:]

    target = embedded_settings(data_dir, "export-verify")
    verified: set[str] = set()  # summary hashes of run states already verified
    unfinished = 0
    try:
        for path in exports:
            for run in _import_and_verify(target, path):
                with open_store(target) as imported:
                    state = summary_hash(imported, run["id"])
                if state in verified:
                    continue
                assert _state_problems(target, run["id"]) == [], path.name
                verified.add(state)
                unfinished += run["status"] not in ("resolved", None)
    finally:
        _drop(target)
    assert unfinished >= EXPORTS // 2, f"only {unfinished} distinct states caught mid-run"
