"""An export taken while a solve writes is a snapshot: it imports cleanly and every
ledger in it verifies."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kernel.core.ledger import load_entries, verify_chain
from kernel.graph_io import export_graph, import_graph
from kernel.schema import init_schema
from kernel.store import open_store
from tests.conftest import embedded_settings

SCRIPT = Path(__file__).resolve().parents[1] / "seeds" / "examples" / "launch-plan.script.yaml"


def test_exports_taken_during_a_solve_import_and_verify(data_dir: Path, tmp_path: Path) -> None:
    source = embedded_settings(data_dir, "export-live")
    env = {**os.environ, "KERNEL_DATA_DIR": str(data_dir), "KERNEL_GRAPH_NAME": "export-live"}
    with open_store(source) as store:
        init_schema(store)
        solving = subprocess.Popen(
            [sys.executable, "-c", "from kernel.cli.app import main; main()", "solve",
             "Plan a product launch", "--proposer", "scripted", "--script", str(SCRIPT),
             "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        mid_run, exports = 0, 0
        try:
            while solving.poll() is None or exports == 0:
                path = tmp_path / f"export-{exports}.jsonl"
                with store.snapshot() as snapshot, path.open("w") as handle:
                    export_graph(snapshot, handle)
                exports += 1
                target = open_store(embedded_settings(data_dir, f"export-into-{exports}"))
                try:
                    target.drop_all()
                    init_schema(target)
                    import_graph(target, path)
                    runs = [r["id"] for r in target.run("run/list")]
                    for run_id in runs:
                        head, size, entries = load_entries(target, run_id)
                        assert verify_chain(entries, head=head, size=size) == [], run_id
                    if any(r["status"] not in ("resolved", None) for r in
                           target.run("run/list")):
                        mid_run += 1
                finally:
                    target.drop_all()
                    target.close()
        finally:
            _, err = solving.communicate(timeout=300)
        assert solving.returncode == 0, err.decode()[-500:]
        store.drop_all()
    assert mid_run >= 1, f"no export of {exports} caught the run unfinished"
