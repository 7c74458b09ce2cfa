"""An export taken while a solve writes is one committed state of the graph: it
imports cleanly, every ledger in it verifies, and a run caught half-way resumes in
the new deployment to the outcome the uninterrupted run reached."""

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
from kernel.graph_io import export_graph, import_graph
from kernel.schema import init_schema
from kernel.settings import KernelSettings
from kernel.store import open_store
from kernel.store.base import GraphStore
from tests.conftest import embedded_settings

LAUNCH = next(e for e in EXAMPLES if e.name == "launch-plan")


def _import_and_verify(settings: KernelSettings, path: Path) -> list[dict]:
    """Import into an empty graph; every run's ledger chain must verify."""
    with open_store(settings) as target:
        target.drop_all()
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


def test_writes_wait_while_an_export_holds_the_graph(embedded_store: GraphStore) -> None:
    """The pause is real: a write from another thread lands only after the export."""
    init_schema(embedded_store)
    landed = threading.Event()

    def write() -> None:
        embedded_store.run("admin/create_graph")
        landed.set()

    with embedded_store.writes_paused() as paused:
        assert paused
        writer = threading.Thread(target=write)
        writer.start()
        assert not landed.wait(0.5), "a write landed while writes were paused"
    writer.join(timeout=10)
    assert landed.is_set()
