"""The wall-time cap stops a run in the middle of a sandboxed test, and the run goes on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.sandbox_support import needs_sandbox, processes_with
from tests.solve import scripts

SLEEP_SECONDS = 25
CAP_SECONDS = 6


@needs_sandbox
@pytest.mark.slow
def test_the_cap_interrupts_a_sandbox_step_and_resume_finishes_it(data_dir: Path,
                                                                   tmp_path: Path) -> None:
    token = f"test_cap_{uuid.uuid4().hex[:12]}"
    script = tmp_path / "slow.script.yaml"
    scripts.slow_test(script, f"{token}.py", SLEEP_SECONDS)
    env = {**os.environ, "KERNEL_DATA_DIR": str(data_dir),
           "KERNEL_GRAPH_NAME": f"cap-{token}", "COLUMNS": "120"}

    def kernel(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", "from kernel.cli.app import main; main()",
                               *args], env=env, capture_output=True, text=True, timeout=300,
                              check=False)

    capped = subprocess.Popen(
        [sys.executable, "-c", "from kernel.cli.app import main; main()", "solve",
         "Wait for a slow test", "--proposer", "scripted", "--script", str(script),
         "--budget", "1", "--max-wall", str(CAP_SECONDS), "--json"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not processes_with(token) and capped.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_with(token), "the sandboxed test never started before the cap"
    test_started = time.monotonic()
    stdout, stderr = capped.communicate(timeout=120)
    # The cap ended the test well before its sleep would have.
    assert time.monotonic() - test_started < SLEEP_SECONDS - 5, stderr
    assert capped.returncode == 3, stderr
    outcome = json.loads(stdout)
    assert outcome["stopped"] == "wall-time cap" and outcome["status"] == "verifying"
    assert processes_with(token) == []
    runs = json.loads(kernel("runs", "--json").stdout)
    assert runs[0]["status"] == "wall-time cap", runs[0]
    story = json.loads(kernel("log", "latest", "--json").stdout)
    assert [r["reasons"] for r in story["refusals"]] == [["WALL_TIME_EXCEEDED"]]

    resumed = kernel("resume", "latest", "--max-wall", "120", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["status"] == "resolved"
    replayed = kernel("replay", "latest")
    assert replayed.returncode == 0 and "replay identical" in replayed.stdout, replayed.stderr
    verified = kernel("ledger", "verify", "latest")
    assert verified.returncode == 0 and "ledger intact" in verified.stdout, verified.stdout
