"""kill -9 during a run, then resume: the same committed result as an uninterrupted run
(same summary hash), no attempt or spend lost or doubled."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from ulid import ULID

from kernel.core.summary import summary_hash
from kernel.schema import init_schema
from kernel.solve.dispatch import solve
from kernel.solve.session import resume
from kernel.store import open_store
from resolvers.sandbox.runner import default_workspace_root
from resolvers.scripted import ScriptedProposer
from tests.conftest import embedded_settings
from tests.solve import scripts as s
from tests.solve.test_paths import PLAN, plan_entries
from tests.starting import start

pytestmark = pytest.mark.slow  # runs killed with kill -9 and resumed

CRASHING_RUN = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from ulid import ULID
    from kernel.core.budget import BudgetEnforcer
    from kernel.schema import init_schema
    from kernel.settings import KernelSettings
    from kernel.solve.dispatch import solve
    from tests.starting import start
    from kernel.store import open_store
    from resolvers.sandbox.runner import default_workspace_root
    from resolvers.scripted import ScriptedProposer

    data_dir, graph, script, ulid, mode, when, goal = sys.argv[1:8]
    store = open_store(KernelSettings(data_dir=data_dir, graph_name=graph))
    init_schema(store)
    die = lambda: os.kill(os.getpid(), signal.SIGKILL)
    calls = {"n": 0}
    if mode == "mid-step":  # after a proposal is recorded, before it is paid for
        original = BudgetEnforcer.record
        def record(self, *args, **kwargs):
            calls["n"] += 1
            if calls["n"] == int(when):
                die()
            return original(self, *args, **kwargs)
        BudgetEnforcer.record = record
    kernel, root = start(store, goal, [], 5.0, 600,
                         ScriptedProposer.from_file(Path(script)), Path(data_dir) / "blobs",
                         default_workspace_root(), ulid=ULID.from_str(ulid))
    steps = {"n": 0}
    def on_step(goal_id):
        steps["n"] += 1
        if mode == "between-steps" and steps["n"] == int(when):
            die()
    solve(kernel, root, on_step)
    print("finished without crashing")
""")


@pytest.fixture
def script(tmp_path: Path) -> Path:
    return s.write(tmp_path / "plan.yaml", plan_entries())


def _reference(data_dir: Path, script: Path, ulid: ULID, tmp_path: Path) -> str:
    store = open_store(embedded_settings(data_dir, f"reference-{ulid}"))
    try:
        init_schema(store)
        kernel, root = start(store, PLAN, [], 5.0, 600, ScriptedProposer.from_file(script),
                             tmp_path / "blobs", default_workspace_root(), ulid=ulid)
        assert solve(kernel, root).status == "resolved"
        return summary_hash(store, kernel.run.run_id)
    finally:
        store.drop_all()
        store.close()


@pytest.mark.parametrize(("mode", "when"), [("between-steps", 3), ("between-steps", 9),
                                            ("mid-step", 2), ("mid-step", 7)])
def test_resume_after_kill_9_matches_an_uninterrupted_run(
        data_dir: Path, tmp_path: Path, script: Path, mode: str, when: int) -> None:
    ulid = ULID()
    expected = _reference(data_dir, script, ulid, tmp_path)
    graph = f"crash-{ulid}"
    done = subprocess.run([sys.executable, "-c", CRASHING_RUN, str(data_dir), graph, str(script),
                           str(ulid), mode, str(when), PLAN],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == -9, done.stdout + done.stderr
    store = open_store(embedded_settings(data_dir, graph))
    try:
        run_id = f"run:{ulid}"
        outcome = resume(store, run_id, tmp_path / "blobs",
                         proposer=ScriptedProposer.from_file(script))
        assert outcome.status == "resolved"
        assert summary_hash(store, run_id) == expected
    finally:
        store.drop_all()
        store.close()
